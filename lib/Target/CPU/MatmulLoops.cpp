//===- MatmulLoops.cpp - The loop nest of one CPU matmul -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// C += A B as cache blocks around a register-blocked micro-kernel:
//
//   for jc in N step NC; for pc in K step KC; for ic in M step MC:
//     for jr in [jc, jc+NC) step NR:           // NR = 2 vectors
//       for ir in full MR-row blocks: kernel<MR>  // MR x 2 accumulators
//       for ir in the leftover rows:  kernel<1>
//
// The accumulators are iter_args of the k loop, so they live in registers;
// per k step the kernel loads two vectors of B, broadcasts MR scalars of A
// and issues 2 MR FMAs. The B panel (KC x NR) stays in L1 across the MR-row
// blocks of one MC block; the A block (MC x KC) in L2. Column edges use
// masked loads/stores instead of scalar code. Each loop level is one named
// step of MatmulRewriter (emitTask, emitDepthBlock, emitRowBlock,
// emitColumnPanel, emitRowKernels).
//
// A conv's taps (`kiln.conv_taps`) are a matmul whose B is virtual: B's
// row (c, i, j) is read from the conv's input at the tap's offset, with
// masked vector loads where consecutive columns are consecutive input
// elements (stride 1 at the row pitch), else with gathers whose lane
// offsets are computed once per column panel (an implicit GEMM).
//
// A constant A (a conv's weights, in conv taps or a 1x1 conv's matmul) is
// packed at compile time into MR-row panels, depth block after depth block
// (MatmulConstants.h), so the kernels read it in place instead of packing an
// A block per column block.
//
//===----------------------------------------------------------------------===//

#include "MatmulLoops.h"

#include "MatmulConstants.h"
#include "MatmulKernel.h"
#include "MatmulPrologue.h"
#include "MatmulTailColumns.h"

#include "kiln/Target/CPU/MatmulTuning.h"
#include "kiln/Target/Host/ABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>

using namespace mlir;

namespace kiln::matmul_loops {

using namespace matmul_kernel;

namespace {

/// How one matmul's loops are blocked (MatmulRewriter::planBlocking).
struct MatmulBlocking {
  /// Lanes of a vector, vectors of a register tile, its columns and rows.
  int64_t vw = 0, nv = 0, nr = 0, mr = 0;
  /// Cache blocks of columns and rows, whole register tiles.
  int64_t tileN = 0, tileM = 0;
  /// Row groups per column block (tasks); with static M and N also the
  /// column blocks, spread evenly over the column panels when `balanced`
  /// (else the tileN grid), and the panels both are made of (planSplit).
  int64_t rowGroups = 1, columnBlocks = 0, columnPanels = 0, rowPanels = 0;
  bool balanced = false;
  /// Rows past the last full MR-row panel (M static), else 0.
  int64_t leftover = 0;
  /// Columns of the one partial column panel (N static), else 0.
  int64_t rest = 0;
  /// N is dynamic: the partial panel's vector count is chosen at run time.
  bool dynamicN = false;
  /// M is dynamic: rows past the full panels run one-row kernels on A.
  bool dynamicM = false;
  /// Columns past the partial panel's whole vectors that the tail kernel
  /// computes (MatmulTailColumns.h), else 0 (a masked vector).
  int64_t tail = 0;
};

/// What the loops of one matmul read, fixed before its task loop.
struct MatmulValues {
  Location loc;
  Value aMatrix, bMatrix, c;
  bool fresh;
  linalg::GenericOp epilogue;
  /// A packed at compile time (1-D) and its rows, else null and 0.
  Value aConstant;
  int64_t aRows = 0;
  /// B packed at compile time (1-D) and its depth blocks, else null and 0.
  Value bConstant;
  int64_t numK = 0;
  Value M, K, N;
};

/// Where the loop nest is: each step fills its level (task, depth block,
/// row block) and hands a copy to the next.
struct LoopPosition {
  /// The task's column block [jc, jcEnd), rows [rowBegin, rowEnd), packing
  /// buffers (or the constant panels).
  Value block, jc, jcEnd, rowBegin, rowEnd, aPacked, bPacked;
  /// The tail columns' repeated B (MatmulTailColumns.h) for MR-row panels
  /// and for the leftover rows' panel, or null.
  Value tailPacked, tailPackedLeftover;
  /// The depth block [pc, pc + depth) and where its B panels start;
  /// packedDepth: the k rows of its panels (bf16: whole pairs).
  Value pc, depth, packedDepth, blockBase;
  /// The cache block of rows [ic, icEnd); its full MR-row panels end at fullEnd.
  Value ic, icEnd, fullEnd;
};

/// Beyond 3 windows per vector of B (two masked loads and a permute
/// each), a gather is not slower.
constexpr int64_t kMaxTapWindows = 3;

Value minIndex(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}

struct MatmulRewriter {
  const KilnCPUMatmulPassOptions &options;
  /// Set when B is the virtual matrix of a conv's taps.
  std::optional<ConvTaps> taps = std::nullopt;
  /// The kernels read bf16 panels (isa=avx512bf16).
  bool bf16 = false;
  /// Windows per vector where a gathered B is read through TapWindows
  /// (MatmulPrologue.h), else 0.
  int64_t tapWindowCount = 0;

  /// The row of B that row `row` is in X and the column offset into it.
  std::pair<Value, Value> tapRow(OpBuilder &b, Location loc, Value row) {
    Value window = index(b, loc, taps->kh * taps->kw);
    Value channel = arith::DivUIOp::create(b, loc, row, window);
    Value t = arith::RemUIOp::create(b, loc, row, window);
    Value i = arith::DivUIOp::create(b, loc, t, index(b, loc, taps->kw));
    Value j = arith::RemUIOp::create(b, loc, t, index(b, loc, taps->kw));
    Value offset = add(b, loc, mul(b, loc, i, index(b, loc, taps->layout.rowStep)),
                       mul(b, loc, j, index(b, loc, taps->layout.colStep)));
    return {channel, offset};
  }

  /// bf16 B panel at `base` of `depth` rows: pair kp holds rows 2kp and
  /// 2kp + 1 (zero past an odd depth) interleaved per column,
  /// Bpack[kp][j][h] = B[2kp + h][j]: each vector of 16 f32 columns of the
  /// two rows becomes 32 bf16 lanes, the layout vdpbf16ps multiplies.
  void packRowPairs(OpBuilder &b, Location loc, Value bPacked, Value base, Value depth,
                    function_ref<SmallVector<Value>(OpBuilder &, Value)> rowVectors) {
    int64_t vw = options.vectorWidth, nr = options.tileVectors * vw;
    auto halfType = VectorType::get({vw}, b.getBF16Type());
    Value pairs = arith::CeilDivUIOp::create(b, loc, depth, index(b, loc, 2));
    forLoop(b, loc, index(b, loc, 0), pairs, index(b, loc, 1), [&](OpBuilder &b2, Value kp) {
      Value first = mul(b2, loc, kp, index(b2, loc, 2));
      Value second = add(b2, loc, first, index(b2, loc, 1));
      Value inside = arith::CmpIOp::create(b2, loc, arith::CmpIPredicate::ult, second, depth);
      SmallVector<Value> evens = rowVectors(b2, first);
      // Past an odd depth the first row is read again (in bounds) and zeroed.
      SmallVector<Value> odds =
          rowVectors(b2, arith::SelectOp::create(b2, loc, inside, second, first));
      Value at = add(b2, loc, base, mul(b2, loc, kp, index(b2, loc, 2 * nr)));
      for (int64_t v = 0; v < options.tileVectors; ++v) {
        Value zero = arith::ConstantOp::create(
            b2, loc, DenseElementsAttr::get(cast<ShapedType>(odds[v].getType()), b2.getF32FloatAttr(0.0f)));
        Value odd = arith::SelectOp::create(b2, loc, inside, odds[v], zero);
        Value interleaved = vector::InterleaveOp::create(
            b2, loc, arith::TruncFOp::create(b2, loc, halfType, evens[v]),
            arith::TruncFOp::create(b2, loc, halfType, odd));
        vector::StoreOp::create(b2, loc, interleaved, bPacked,
                                ValueRange{add(b2, loc, at, index(b2, loc, 2 * v * vw))});
      }
    });
  }

  /// packB's f32 layout for B rows read as contiguous columns (a matmul's
  /// B, a stride-1 conv's shifted taps): row by row, each row's columns
  /// across the block's panels (one tap row and one sequential read of the
  /// input per row, instead of one per row and panel), the full panels with
  /// plain loads, the partial last one masked.
  void packBRowMajor(OpBuilder &b, Location loc, Value bMatrix, Value bPacked, Value pc,
                     Value depth, Value jc, Value jcEnd, Value zero) {
    int64_t vw = options.vectorWidth, nr = options.tileVectors * vw;
    auto vectorType = cast<VectorType>(zero.getType());
    Value panelSize = mul(b, loc, depth, index(b, loc, nr));
    Value fullEnd = add(b, loc, jc,
                        mul(b, loc,
                            arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, jcEnd, jc),
                                                   index(b, loc, nr)),
                            index(b, loc, nr)));
    Value restMasksCols = arith::SubIOp::create(b, loc, jcEnd, fullEnd);
    SmallVector<Value> masks = columnMasks(b, loc, restMasksCols, vw, options.tileVectors);
    Value partial = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, fullEnd, jcEnd);
    forLoop(b, loc, index(b, loc, 0), depth, index(b, loc, 1), [&](OpBuilder &b2, Value kk) {
      Value row = add(b2, loc, pc, kk), source = bMatrix, shift;
      if (taps) {
        source = taps->x;
        std::tie(row, shift) = tapRow(b2, loc, row);
      }
      Value rowBase = mul(b2, loc, kk, index(b2, loc, nr));
      // Panel p's row kk starts at p * depth * NR + kk * NR.
      auto copyPanel = [&](OpBuilder &b3, Value jr, bool masked) {
        Value panel = arith::DivUIOp::create(b3, loc, arith::SubIOp::create(b3, loc, jr, jc),
                                             index(b3, loc, nr));
        Value at = add(b3, loc, mul(b3, loc, panel, panelSize), rowBase);
        for (int64_t v = 0; v < options.tileVectors; ++v) {
          Value col = add(b3, loc, jr, index(b3, loc, v * vw));
          if (shift)
            col = add(b3, loc, col, shift);
          Value value =
              masked ? vector::MaskedLoadOp::create(b3, loc, vectorType, source,
                                                    ValueRange{row, col}, masks[v], zero)
                           .getResult()
                     : vector::LoadOp::create(b3, loc, vectorType, source, ValueRange{row, col})
                           .getResult();
          vector::StoreOp::create(b3, loc, value, bPacked,
                                  ValueRange{add(b3, loc, at, index(b3, loc, v * vw))});
        }
      };
      forLoop(b2, loc, jc, fullEnd, index(b2, loc, nr),
              [&](OpBuilder &b3, Value jr) { copyPanel(b3, jr, false); });
      scf::IfOp::create(b2, loc, partial, [&](OpBuilder &tb, Location) {
        copyPanel(tb, fullEnd, true);
        scf::YieldOp::create(tb, loc);
      });
    });
  }

  /// Bpack[p][kk][0:NR] = B[pc+kk, jc+p*NR : +NR], zero past the columns
  /// (bf16: packRowPairs's layout).
  void packB(OpBuilder &b, Location loc, Value bMatrix, Value bPacked, Value pc,
             Value depth, Value jc, Value jcEnd) {
    int64_t vw = options.vectorWidth, nr = options.tileVectors * vw;
    auto vectorType = VectorType::get({vw}, b.getF32Type());
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vectorType, b.getF32FloatAttr(0.0f)));
    if (!bf16 && (!taps || (taps->layout.isContiguous() && !taps->prologue))) {
      packBRowMajor(b, loc, bMatrix, bPacked, pc, depth, jc, jcEnd, zero);
      return;
    }
    forLoop(b, loc, jc, jcEnd, index(b, loc, nr), [&](OpBuilder &b1, Value jr) {
      Value panel = arith::DivUIOp::create(b1, loc, arith::SubIOp::create(b1, loc, jr, jc),
                                           index(b1, loc, nr));
      Value packedDepth = bf16 ? pairedDepth(b1, loc, depth) : depth;
      Value base = mul(b1, loc, panel, mul(b1, loc, packedDepth, index(b1, loc, nr)));
      SmallVector<Value> masks = columnMasks(
          b1, loc, arith::SubIOp::create(b1, loc, jcEnd, jr), vw, options.tileVectors);
      // A strided (or row-wrapping) conv gathers each vector of columns:
      // its lanes' pixel offsets in X, computed once per panel.
      SmallVector<Value> pixels;
      // Unit column steps on rows of at least a vector: two masked loads
      // per vector instead (RowWrap, MatmulPrologue.h).
      SmallVector<RowWrap> wraps;
      if (taps && isRowWrapLayout(taps->layout, vw))
        for (int64_t v = 0; v < options.tileVectors; ++v)
          wraps.push_back(rowWrap(b1, loc, taps->layout,
                                  add(b1, loc, jr, index(b1, loc, v * vw)), masks[v], vw));
      else if (taps && !taps->layout.isContiguous())
        for (int64_t v = 0; v < options.tileVectors; ++v)
          pixels.push_back(pixelOffsets(b1, loc, taps->layout,
                                        add(b1, loc, jr, index(b1, loc, v * vw)), vw));
      // Pixels in few runs of 2 vw elements: permuted loads, not gathers.
      SmallVector<TapWindows> windows;
      if (tapWindowCount)
        for (auto [pixel, mask] : llvm::zip(pixels, masks))
          windows.push_back(tapWindows(b1, loc, pixel, mask, tapWindowCount));
      std::optional<BPrologue> prologue;
      if (taps && taps->prologue)
        prologue.emplace(taps->prologue);
      // The f32 vectors of B's row pc + kk in this panel, zero past the
      // columns. `wrapped`: some vector of the panel spans two image rows
      // (RowWrap).
      auto rowVectors = [&](OpBuilder &b2, Value kk, bool wrapped) {
        Value row = add(b2, loc, pc, kk);
        Value source = bMatrix, shift;
        if (taps) {
          source = taps->x;
          std::tie(row, shift) = tapRow(b2, loc, row);
        }
        if (prologue)
          prologue->beginRow(b2, loc, row);
        // f32 panels store each vector as it is loaded; bf16 ones pair rows.
        Value at = bf16 ? Value() : add(b2, loc, base, mul(b2, loc, kk, index(b2, loc, nr)));
        SmallVector<Value> values;
        for (int64_t v = 0; v < options.tileVectors; ++v) {
          auto load = [&](Value from) -> Value {
            if (!wraps.empty())
              return wraps[v].load(b2, loc, from, row, shift, vectorType, wrapped);
            if (!windows.empty() &&
                cast<MemRefType>(from.getType()).getElementType() == vectorType.getElementType())
              return windows[v].load(b2, loc, from, row, shift, vectorType);
            if (!pixels.empty())
              return vector::GatherOp::create(b2, loc, vectorType, from, ValueRange{row, shift},
                                              pixels[v], masks[v], zero);
            Value col = add(b2, loc, jr, index(b2, loc, v * vw));
            if (shift)
              col = add(b2, loc, col, shift);
            return vector::MaskedLoadOp::create(b2, loc, vectorType, from, ValueRange{row, col},
                                                masks[v], zero);
          };
          if (prologue) {
            // B's elements computed from the prologue's inputs; zero past
            // the columns, as loaded. In a panel where some vector wraps,
            // only the vectors that do take the second load of each input
            // (at rows of 56, one vector in 3.5; the panel of 64 columns
            // nearly always holds one that does).
            SmallVector<Value> xs =
                !wraps.empty() && wrapped && prologue->xInputs().size() > 1
                    ? wraps[v].loadEach(b2, loc, prologue->xInputs(), row, shift, vectorType)
                    : llvm::map_to_vector(prologue->xInputs(), load);
            values.push_back(arith::SelectOp::create(b2, loc, masks[v],
                                                     prologue->evaluate(b2, loc, xs, vw), zero));
          } else {
            values.push_back(load(source));
          }
          if (at)
            vector::StoreOp::create(b2, loc, values.back(), bPacked,
                                    ValueRange{add(b2, loc, at, index(b2, loc, v * vw))});
        }
        return values;
      };
      auto packRows = [&](OpBuilder &b1, bool wrapped) {
        if (bf16) {
          packRowPairs(b1, loc, bPacked, base, depth, [&](OpBuilder &b2, Value kk) {
            return rowVectors(b2, kk, wrapped);
          });
          return;
        }
        forLoop(b1, loc, index(b1, loc, 0), depth, index(b1, loc, 1),
                [&](OpBuilder &b2, Value kk) { rowVectors(b2, kk, wrapped); });
      };
      if (wraps.empty()) {
        packRows(b1, false);
        return;
      }
      // Most panels of wide rows wrap no vector (none where the width is a
      // multiple of the vector): one masked load per vector there.
      Value wrap = wraps[0].wraps;
      for (const RowWrap &w : ArrayRef(wraps).drop_front())
        wrap = arith::OrIOp::create(b1, loc, wrap, w.wraps);
      scf::IfOp::create(
          b1, loc, wrap,
          [&](OpBuilder &tb, Location) {
            packRows(tb, true);
            scf::YieldOp::create(tb, loc);
          },
          [&](OpBuilder &eb, Location) {
            packRows(eb, false);
            scf::YieldOp::create(eb, loc);
          });
    });
  }

  /// bf16 A panel `panel` (of MR rows' room) of the depth block [pc, pc +
  /// depth) for the `rows` rows from `ir`: Apack[kp][r][h] = A[ir + r, pc +
  /// 2kp + h], zero past an odd depth.
  void packAPairs(OpBuilder &b1, Location loc, Value aMatrix, Value aPacked, Value pc,
                  Value depth, Value ir, Value panel, int64_t rows) {
    Value base = mul(b1, loc, panel,
                     mul(b1, loc, pairedDepth(b1, loc, depth), index(b1, loc, options.tileRows)));
    Value pairs = arith::CeilDivUIOp::create(b1, loc, depth, index(b1, loc, 2));
    Value end = add(b1, loc, pc, depth);
    forLoop(b1, loc, index(b1, loc, 0), pairs, index(b1, loc, 1), [&](OpBuilder &b2, Value kp) {
      Value at = add(b2, loc, base, mul(b2, loc, kp, index(b2, loc, 2 * rows)));
      Value col = add(b2, loc, pc, mul(b2, loc, kp, index(b2, loc, 2)));
      for (int64_t r = 0; r < rows; ++r) {
        Value pair = loadPairAsBF16(b2, loc, aMatrix, add(b2, loc, ir, index(b2, loc, r)), col, end);
        vector::StoreOp::create(b2, loc, pair, aPacked,
                                ValueRange{add(b2, loc, at, index(b2, loc, 2 * r))});
      }
    });
  }

  /// Apack[q][kk][0:rows] = A[begin+q*rows : +rows, pc+kk] for the row panels
  /// of height `rows` in [begin, end); panel q starts at
  /// (begin - ic) / rows + q panels of MR rows into the block.
  void packA(OpBuilder &b, Location loc, Value aMatrix, Value aPacked, Value pc, Value depth,
             Value ic, Value begin, Value end, int64_t rows) {
    int64_t mr = options.tileRows;
    forLoop(b, loc, begin, end, index(b, loc, rows), [&](OpBuilder &b1, Value ir) {
      Value panel = arith::DivUIOp::create(b1, loc, arith::SubIOp::create(b1, loc, ir, ic),
                                           index(b1, loc, mr));
      if (bf16) {
        packAPairs(b1, loc, aMatrix, aPacked, pc, depth, ir, panel, rows);
        return;
      }
      Value base = mul(b1, loc, panel, mul(b1, loc, depth, index(b1, loc, mr)));
      forLoop(b1, loc, index(b1, loc, 0), depth, index(b1, loc, 1), [&](OpBuilder &b2, Value kk) {
        Value at = add(b2, loc, base, mul(b2, loc, kk, index(b2, loc, rows)));
        Value col = add(b2, loc, pc, kk);
        for (int64_t r = 0; r < rows; ++r) {
          Value value = memref::LoadOp::create(
              b2, loc, aMatrix, ValueRange{add(b2, loc, ir, index(b2, loc, r)), col});
          memref::StoreOp::create(b2, loc, value, aPacked,
                                  ValueRange{add(b2, loc, at, index(b2, loc, r))});
        }
      });
    });
  }

  /// C (+)= A B for `op` (a matmul, or a conv's taps with `taps` set and
  /// `bMatrix` unused), which is erased. `aConstant` is A packed at
  /// compile time (packConstantA's layout, 1-D; A of static shape), else A
  /// is packed per cache block at run time. The steps: plan the blocking,
  /// pack constant weights, emit the task loop, erase what it replaced.
  void rewrite(Operation *op, Value aMatrix, Value bMatrix, Value c, bool fresh,
               linalg::GenericOp epilogue, Value aConstant = {}) {
    OpBuilder b(op);
    MatmulValues v{op->getLoc(), aMatrix, bMatrix, c, fresh, epilogue, aConstant};
    v.M = b.createOrFold<memref::DimOp>(v.loc, aMatrix, 0);
    v.K = b.createOrFold<memref::DimOp>(v.loc, aMatrix, 1);
    v.N = b.createOrFold<memref::DimOp>(v.loc, taps ? c : bMatrix, 1);
    MatmulBlocking p =
        planBlocking(getConstantIntValue(v.M), getConstantIntValue(v.N), getConstantIntValue(v.K),
                     static_cast<bool>(aConstant),
                     !taps && isConstantMatrix(bMatrix));
    // Constant weights are packed now, once, instead of on every run.
    FlatSymbolRefAttr packedB =
        taps ? FlatSymbolRefAttr()
             : packConstantB(op, bMatrix, p.tileN, options.tileK, p.nr, bf16, v.numK);
    if (packedB) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(op, packedB);
      v.bConstant = memref::GetGlobalOp::create(b, v.loc, global.getType(), packedB.getValue());
    }
    v.aRows = aConstant ? cast<MemRefType>(aMatrix.getType()).getDimSize(0) : 0;
    std::optional<int64_t> staticN = getConstantIntValue(v.N);
    if (taps && staticN && !taps->layout.isContiguous() &&
        !isRowWrapLayout(taps->layout, options.vectorWidth))
      tapWindowCount = kiln::tapWindowCount(taps->layout, *staticN, options.vectorWidth,
                                            kMaxTapWindows);
    emitTaskLoop(b, v, p);
    eraseReplaced(op, v, packedB);
  }

  /// Cache blocks rounded to whole register tiles; with static M and N,
  /// the (column block, row group) tasks of planSplit (balanced over up to
  /// the configuration's task count of threads); the leftover rows and
  /// columns of static M and N.
  MatmulBlocking planBlocking(std::optional<int64_t> staticM, std::optional<int64_t> staticN,
                              std::optional<int64_t> staticK, bool constantA,
                              bool constantB) const {
    MatmulBlocking p;
    p.vw = options.vectorWidth;
    p.nv = options.tileVectors;
    p.nr = p.nv * p.vw;
    p.mr = options.tileRows;
    p.tileN = llvm::divideCeil(options.tileN, p.nr) * p.nr;
    p.tileM = llvm::divideCeil(options.tileM, p.mr) * p.mr;
    if (staticM && staticN && *staticM > 0 && *staticN > 0) {
      matmul_tuning::BPacking packing = matmul_tuning::BPacking::Contiguous;
      if (taps && (taps->prologue || !taps->layout.isContiguous()))
        packing = isRowWrapLayout(taps->layout, p.vw) && !taps->prologue
                      ? matmul_tuning::BPacking::RowWrap
                      : matmul_tuning::BPacking::Gather;
      matmul_tuning::MatmulConfig config{options.tileRows, options.tileVectors, options.tileM,
                                         options.tileN,    options.tileK,       options.parallelTasks};
      matmul_tuning::MatmulSplit split = matmul_tuning::planSplit(
          *staticM, *staticN, staticK.value_or(options.tileK), config,
          {options.vectorWidth, options.vectorRegisters}, constantA, constantB, packing);
      p.columnPanels = llvm::divideCeil(*staticN, p.nr);
      p.rowPanels = llvm::divideCeil(*staticM, p.mr);
      p.columnBlocks = split.columnBlocks;
      p.rowGroups = split.rowGroups;
      p.balanced = split.balanced;
      // Packing buffers hold the widest block.
      if (p.balanced)
        p.tileN = llvm::divideCeil(p.columnPanels, p.columnBlocks) * p.nr;
    }
    p.leftover = staticM ? *staticM % p.mr : 0;
    p.rest = staticN ? *staticN % p.nr : 0;
    p.dynamicN = !staticN;
    p.dynamicM = !staticM;
    // The partial panel's last columns, where they do not fill a vector,
    // by the tail kernel: B read element by element (no prologue, not
    // packed at compile time), for the full panels and the leftover rows.
    auto tailApplies = [&](int64_t rows) {
      return matmul_tail::tailKernelApplies(p.vw, rows, *staticK, options.tileK, p.rest % p.vw);
    };
    if (p.rest % p.vw && staticM && staticK && !bf16 && !constantB &&
        !(taps && taps->prologue) && tailApplies(p.mr) && (!p.leftover || tailApplies(p.leftover)))
      p.tail = p.rest % p.vw;
    return p;
  }

  /// The (column block, row group) tasks are independent: one parallel loop
  /// (kiln-outline-parallel-loops runs it on the pool), each task with its
  /// own packing buffers.
  void emitTaskLoop(OpBuilder &b, const MatmulValues &v, const MatmulBlocking &p) {
    Location loc = v.loc;
    Value tasks = p.columnBlocks
                      ? index(b, loc, p.columnBlocks * p.rowGroups)
                      : mul(b, loc, arith::CeilDivUIOp::create(b, loc, v.N, index(b, loc, p.tileN)),
                            index(b, loc, p.rowGroups));
    auto taskLoop = scf::ParallelOp::create(
        b, loc, ValueRange{index(b, loc, 0)}, ValueRange{tasks}, ValueRange{index(b, loc, 1)},
        [&](OpBuilder &b1, Location, ValueRange ivs) { emitTask(b1, v, p, ivs[0]); });
    taskLoop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
  }

  /// One task: its column block and rows, its packing buffers (or the
  /// constant panels), its depth blocks.
  void emitTask(OpBuilder &b1, const MatmulValues &v, const MatmulBlocking &p, Value task) {
    Location loc = v.loc;
    LoopPosition at;
    at.block = task;
    at.rowBegin = index(b1, loc, 0);
    at.rowEnd = v.M;
    // Part i of `total` panels split evenly into `parts`: its first panel.
    auto evenStart = [&](Value i, int64_t total, int64_t parts) -> Value {
      return arith::DivUIOp::create(b1, loc, mul(b1, loc, i, index(b1, loc, total)),
                                    index(b1, loc, parts));
    };
    if (p.rowGroups > 1) {
      at.block = arith::DivUIOp::create(b1, loc, task, index(b1, loc, p.rowGroups));
      Value group = arith::RemUIOp::create(b1, loc, task, index(b1, loc, p.rowGroups));
      Value next = add(b1, loc, group, index(b1, loc, 1));
      at.rowBegin = mul(b1, loc, evenStart(group, p.rowPanels, p.rowGroups), index(b1, loc, p.mr));
      at.rowEnd = minIndex(
          b1, loc, mul(b1, loc, evenStart(next, p.rowPanels, p.rowGroups), index(b1, loc, p.mr)),
          v.M);
    }
    if (p.balanced) {
      Value next = add(b1, loc, at.block, index(b1, loc, 1));
      at.jc = mul(b1, loc, evenStart(at.block, p.columnPanels, p.columnBlocks),
                  index(b1, loc, p.nr));
      at.jcEnd = minIndex(b1, loc,
                          mul(b1, loc, evenStart(next, p.columnPanels, p.columnBlocks),
                              index(b1, loc, p.nr)),
                          v.N);
    } else {
      at.jc = mul(b1, loc, at.block, index(b1, loc, p.tileN));
      at.jcEnd = minIndex(b1, loc, add(b1, loc, at.jc, index(b1, loc, p.tileN)), v.N);
    }
    Type element = bf16 ? b1.getBF16Type() : b1.getF32Type();
    auto packBuffer = [&](int64_t size) -> Value {
      return memref::AllocOp::create(b1, loc, MemRefType::get({size}, element),
                                     ValueRange{}, b1.getI64IntegerAttr(64))
          .getResult();
    };
    at.bPacked = v.bConstant ? v.bConstant : packBuffer(p.tileN * options.tileK);
    at.aPacked = v.aConstant ? v.aConstant : packBuffer(p.tileM * options.tileK);
    if (p.tail)
      at.tailPacked = packBuffer(p.tail * options.tileK * p.mr);
    if (p.tail && p.leftover)
      at.tailPackedLeftover = packBuffer(p.tail * options.tileK * p.leftover);
    forLoop(b1, loc, index(b1, loc, 0), v.K, index(b1, loc, options.tileK),
            [&](OpBuilder &b2, Value pc) { emitDepthBlock(b2, v, p, at, pc); });
    if (!v.aConstant)
      memref::DeallocOp::create(b1, loc, at.aPacked);
    if (!v.bConstant)
      memref::DeallocOp::create(b1, loc, at.bPacked);
    if (at.tailPacked)
      memref::DeallocOp::create(b1, loc, at.tailPacked);
    if (at.tailPackedLeftover)
      memref::DeallocOp::create(b1, loc, at.tailPackedLeftover);
  }

  /// One depth block [pc, pc + depth) of a task: its B panels packed (or
  /// found in the constant panels), then its cache blocks of rows.
  void emitDepthBlock(OpBuilder &b2, const MatmulValues &v, const MatmulBlocking &p,
                      LoopPosition at, Value pc) {
    Location loc = v.loc;
    at.pc = pc;
    at.depth = arith::SubIOp::create(
        b2, loc, minIndex(b2, loc, add(b2, loc, pc, index(b2, loc, options.tileK)), v.K), pc);
    at.packedDepth = bf16 ? pairedDepth(b2, loc, at.depth) : at.depth;
    // Where this (column, depth) block's panels start in bPacked.
    at.blockBase = index(b2, loc, 0);
    if (v.bConstant)
      at.blockBase = mul(b2, loc,
                         add(b2, loc, mul(b2, loc, at.block, index(b2, loc, v.numK)),
                             arith::DivUIOp::create(b2, loc, pc, index(b2, loc, options.tileK))),
                         index(b2, loc, p.tileN * options.tileK));
    else
      packB(b2, loc, v.bMatrix, at.bPacked, pc, at.depth, at.jc, at.jcEnd);
    forLoop(b2, loc, at.rowBegin, at.rowEnd, index(b2, loc, p.tileM),
            [&](OpBuilder &b3, Value ic) { emitRowBlock(b3, v, p, at, ic); });
  }

  /// One cache block of rows [ic, icEnd): its A panels packed (unless A is
  /// constant), then its column panels.
  void emitRowBlock(OpBuilder &b3, const MatmulValues &v, const MatmulBlocking &p,
                    LoopPosition at, Value ic) {
    Location loc = v.loc;
    at.ic = ic;
    at.icEnd = minIndex(b3, loc, add(b3, loc, ic, index(b3, loc, p.tileM)), at.rowEnd);
    Value fullRows = mul(b3, loc,
                         arith::DivUIOp::create(b3, loc,
                                                arith::SubIOp::create(b3, loc, at.icEnd, ic),
                                                index(b3, loc, p.mr)),
                         index(b3, loc, p.mr));
    at.fullEnd = add(b3, loc, ic, fullRows);
    if (!v.aConstant) {
      packA(b3, loc, v.aMatrix, at.aPacked, at.pc, at.depth, ic, ic, at.fullEnd, p.mr);
      if (p.leftover)
        packA(b3, loc, v.aMatrix, at.aPacked, at.pc, at.depth, ic, at.fullEnd, at.icEnd,
              p.leftover);
    }
    forLoop(b3, loc, at.jc, at.jcEnd, index(b3, loc, p.nr),
            [&](OpBuilder &b4, Value jr) { emitColumnPanel(b4, v, p, at, jr); });
  }

  /// One column panel [jr, jr + NR) of a row block: a full panel runs all
  /// its vectors unmasked; with N static, the one partial panel (the last)
  /// only the vectors its columns need, unmasked when they fill them (196
  /// columns: 1 vector, not 4 mostly masked).
  void emitColumnPanel(OpBuilder &b4, const MatmulValues &v, const MatmulBlocking &p,
                       const LoopPosition &at, Value jr) {
    Location loc = v.loc;
    Value cols = arith::SubIOp::create(b4, loc, at.jcEnd, jr);
    Value panel = arith::DivUIOp::create(b4, loc, arith::SubIOp::create(b4, loc, jr, at.jc),
                                         index(b4, loc, p.nr));
    KernelSource src;
    src.bPacked = at.bPacked;
    src.bPanel = add(b4, loc, at.blockBase,
                     mul(b4, loc, panel, mul(b4, loc, at.packedDepth, index(b4, loc, p.nr))));
    src.depth = at.depth;
    src.k0 = at.pc;
    if (v.fresh)
      src.fresh = arith::CmpIOp::create(b4, loc, arith::CmpIPredicate::eq, at.pc,
                                        index(b4, loc, 0));
    if (v.epilogue) {
      src.epilogue = v.epilogue;
      src.last = arith::CmpIOp::create(b4, loc, arith::CmpIPredicate::eq,
                                       add(b4, loc, at.pc, at.depth), v.K);
    }
    Value full = arith::CmpIOp::create(b4, loc, arith::CmpIPredicate::sge, cols,
                                       index(b4, loc, p.nr));
    scf::IfOp::create(
        b4, loc, full,
        [&](OpBuilder &tb, Location) {
          emitRowKernels(tb, v, p, at, src, jr, p.nv, {});
          scf::YieldOp::create(tb, loc);
        },
        [&](OpBuilder &eb, Location) {
          if (p.dynamicN) {
            emitDynamicPartialPanel(eb, v, p, at, src, jr, cols);
          } else if (p.tail) {
            emitTailPanel(eb, v, p, at, src, jr);
          } else {
            int64_t vectors = p.rest ? llvm::divideCeil(p.rest, p.vw) : p.nv;
            if (p.rest && p.rest % p.vw == 0)
              emitRowKernels(eb, v, p, at, src, jr, vectors, {});
            else
              emitRowKernels(eb, v, p, at, src, jr, vectors,
                             columnMasks(eb, loc, cols, p.vw, vectors));
          }
          scf::YieldOp::create(eb, loc);
        });
  }

  /// The partial column panel of a static N whose last p.tail columns do
  /// not fill a vector: its whole vectors unmasked, then per row panel the
  /// tail kernel (MatmulTailColumns.h) on the tail columns' B, packed
  /// repeated for this row block.
  void emitTailPanel(OpBuilder &eb, const MatmulValues &v, const MatmulBlocking &p,
                     const LoopPosition &at, const KernelSource &src, Value jr) {
    Location loc = v.loc;
    int64_t n = *getConstantIntValue(v.N), first = n - p.tail;
    const ConvTapsLayout *layout = taps ? &taps->layout : nullptr;
    auto element = [&](OpBuilder &b2, Value k, int64_t t) -> Value {
      Value row = add(b2, loc, at.pc, k);
      int64_t col = first + t;
      if (!layout)
        return memref::LoadOp::create(b2, loc, v.bMatrix, ValueRange{row, index(b2, loc, col)});
      auto [channel, shift] = tapRow(b2, loc, row);
      int64_t x = layout->width ? (col / layout->width) * layout->yStep +
                                      (col % layout->width) * layout->xStep
                                : col * layout->xStep;
      return memref::LoadOp::create(b2, loc, taps->x,
                                    ValueRange{channel, add(b2, loc, shift, index(b2, loc, x))});
    };
    int64_t vectors = p.rest / p.vw;
    Value tailCol = add(eb, loc, jr, index(eb, loc, vectors * p.vw));
    // The full row panels, then the leftover rows' panel (its own Brep).
    for (auto [rows, buffer, begin, end] :
         {std::tuple(p.mr, at.tailPacked, at.ic, at.fullEnd),
          std::tuple(p.leftover, at.tailPackedLeftover, at.fullEnd, at.icEnd)}) {
      if (!rows)
        continue;
      matmul_tail::packTailColumns(eb, loc, buffer, at.depth, options.tileK, rows, p.tail, element);
      emitPackedKernels(eb, v, p, at, src, begin, end, rows, jr, vectors, {}, tailCol, buffer);
    }
  }

  /// The partial column panel of a dynamic N (a symbolic sequence: the
  /// scores of attention): the kernels of as many vectors as its `cols`
  /// columns need, chosen at run time (one variant per count), as a static
  /// N's partial panel runs only those (32 columns: 2 vectors, not 4 of
  /// which 2 are masked off).
  void emitDynamicPartialPanel(OpBuilder &eb, const MatmulValues &v, const MatmulBlocking &p,
                               const LoopPosition &at, const KernelSource &src, Value jr,
                               Value cols) {
    Location loc = v.loc;
    Value needed = arith::CeilDivUIOp::create(eb, loc, cols, index(eb, loc, p.vw));
    SmallVector<int64_t> counts = llvm::to_vector(llvm::seq<int64_t>(1, p.nv));
    auto choice = scf::IndexSwitchOp::create(eb, loc, TypeRange{}, needed, counts, counts.size());
    auto emitVariant = [&](Region &region, int64_t vectors) {
      OpBuilder cb = OpBuilder::atBlockBegin(&region.emplaceBlock());
      emitRowKernels(cb, v, p, at, src, jr, vectors, columnMasks(cb, loc, cols, p.vw, vectors));
      scf::YieldOp::create(cb, loc);
    };
    for (auto [region, vectors] : llvm::zip(choice.getCaseRegions(), counts))
      emitVariant(region, vectors);
    emitVariant(choice.getDefaultRegion(), p.nv);
  }

  /// The kernels of a row block for one column panel: packed kernels over
  /// its full MR-row panels, then its leftover rows (a packed kernel of
  /// their height when M is static, one-row kernels on unpacked A else).
  void emitRowKernels(OpBuilder &nb, const MatmulValues &v, const MatmulBlocking &p,
                      const LoopPosition &at, const KernelSource &src, Value jr,
                      int64_t vectors, ArrayRef<Value> masks) {
    emitPackedKernels(nb, v, p, at, src, at.ic, at.fullEnd, p.mr, jr, vectors, masks);
    if (p.leftover) {
      emitPackedKernels(nb, v, p, at, src, at.fullEnd, at.icEnd, p.leftover, jr, vectors,
                        masks);
      return;
    }
    // A static M of whole panels has no rows left: no one-row loop, which
    // would never run and would keep a constant A's unpacked weights in
    // the artifact beside its packed panels.
    if (!p.dynamicM)
      return;
    Location loc = v.loc;
    forLoop(nb, loc, at.fullEnd, at.icEnd, index(nb, loc, 1), [&](OpBuilder &kb, Value ir) {
      KernelSource direct = src;
      direct.a = v.aMatrix;
      emitKernel(kb, loc, v.c, direct, {p.vw, vectors, 1, p.nr, bf16}, ir, jr, masks);
    });
  }

  /// Kernels of `rows` rows over [begin, end), reading A's packed panels.
  /// With `tailCol`, also the tail kernel of each row panel on the
  /// p.tail columns from tailCol, their repeated B in `tailBuffer`
  /// (`vectors` may then be 0).
  void emitPackedKernels(OpBuilder &nb, const MatmulValues &v, const MatmulBlocking &p,
                         const LoopPosition &at, const KernelSource &src, Value begin,
                         Value end, int64_t rows, Value jr, int64_t vectors,
                         ArrayRef<Value> masks, Value tailCol = {}, Value tailBuffer = {}) {
    Location loc = v.loc;
    forLoop(nb, loc, begin, end, index(nb, loc, rows), [&](OpBuilder &kb, Value ir) {
      KernelSource packed = src;
      packed.a = at.aPacked;
      if (v.aConstant) {
        // Row ir's panel of this depth block (packConstantA).
        packed.aPanel = add(kb, loc, mul(kb, loc, at.pc, index(kb, loc, v.aRows)),
                            mul(kb, loc, ir, at.packedDepth));
        // The weights come from memory: the next row panel's, a kernel
        // ahead (MatmulKernel.h).
        int64_t size = cast<MemRefType>(v.aConstant.getType()).getDimSize(0);
        if (!ShapedType::isDynamic(size)) {
          packed.aPrefetch = mul(kb, loc, at.packedDepth, index(kb, loc, rows));
          packed.aEnd = index(kb, loc, size - 1);
        }
      } else {
        Value q = arith::DivUIOp::create(kb, loc, arith::SubIOp::create(kb, loc, ir, at.ic),
                                         index(kb, loc, p.mr));
        packed.aPanel = mul(kb, loc, q, mul(kb, loc, at.packedDepth, index(kb, loc, p.mr)));
      }
      if (vectors)
        emitKernel(kb, loc, v.c, packed, {p.vw, vectors, rows, p.nr, bf16}, ir, jr, masks);
      if (tailCol)
        matmul_tail::emitTailKernel(kb, loc, v.c, packed, tailBuffer, options.tileK, rows,
                                    p.tail, p.vw, ir, tailCol);
    });
  }

  /// Erases `op` and its epilogue (the kernels replace both), and the
  /// unpacked weights once nothing else reads them.
  void eraseReplaced(Operation *op, const MatmulValues &v, FlatSymbolRefAttr packedB) {
    Operation *bSource = taps ? nullptr : v.bMatrix.getDefiningOp();
    op->erase();
    if (linalg::GenericOp epilogue = v.epilogue)
      epilogue.erase();
    if (packedB)
      eraseIfUnread(cast<memref::GetGlobalOp>(bSource));
  }
};

} // namespace

void rewriteMatmul(const KilnCPUMatmulPassOptions &options, Operation *op, Value aMatrix,
                   Value bMatrix, Value c, bool fresh, linalg::GenericOp epilogue,
                   Value aConstant, std::optional<ConvTaps> taps) {
  MatmulRewriter{options, taps, readsBF16(options.isa)}.rewrite(op, aMatrix, bMatrix, c, fresh,
                                                                epilogue, aConstant);
}

} // namespace kiln::matmul_loops
