//===- MatmulCodegen.cpp - The kiln-cpu-matmul pass -----------------------===//
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
// masked loads/stores instead of scalar code.
//
// A matmul whose elementwise consumer the dispatch stage marked as its
// epilogue (kiln/Dispatch/Epilogue.h: bias, activation, residual add, cast)
// applies it in the last depth block to the accumulators before storing:
// the other inputs are loaded at the tile's rows and columns, the generic's
// body is applied to whole vectors, and the result goes to the generic's
// output instead of C. The generic is then erased; a marked epilogue that
// could not be fused is an error, so a dispatch counted as one kernel by
// --report=fusion is one kernel here.
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

#include "MatmulConstants.h"
#include "MatmulEpilogue.h"
#include "MatmulKernel.h"
#include "MatmulPrologue.h"

#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <cstring>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNCPUMATMULPASS
#include "kiln/Target/CPU/Passes.h.inc"

using namespace matmul_kernel;

namespace {

/// Parallel tasks a matmul aims for when its column blocks are fewer, and
/// the fewest rows a row group gets: each group packs its own copy of the B
/// block, which only pays off over at least two cache blocks of rows.
constexpr int64_t kTargetTasks = 4;
constexpr int64_t kMinGroupBlocks = 2;

/// B of a conv's taps (the `kiln.conv_taps` generic of the dispatch
/// stage): B[k][p] = X[c][at(p, i, j)] for k = (c*kh + i)*kw + j, X the
/// image's flattened padded input [C, Hp*Wp], at() its ConvTapsLayout.
struct ConvTaps {
  Value x;
  int64_t kh, kw;
  ConvTapsLayout layout;
  /// The conv taps generic when it has a B prologue (MatmulPrologue.h).
  linalg::GenericOp prologue = nullptr;
};

struct MatmulRewriter {
  const KilnCPUMatmulPassOptions &options;
  /// Set when B is the virtual matrix of a conv's taps.
  std::optional<ConvTaps> taps = std::nullopt;

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

  /// The offsets in X's rows of the pixels of columns [p0, p0 + vw):
  /// (p / width)*yStep + (p % width)*xStep (p*xStep without a width), as
  /// i32 lanes for a gather.
  Value pixelOffsets(OpBuilder &b, Location loc, Value p0) {
    int64_t vw = options.vectorWidth;
    auto lanesType = VectorType::get({vw}, b.getI32Type());
    auto splat = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(lanesType, b.getI32IntegerAttr(v)))
          .getResult();
    };
    SmallVector<int32_t> iota(vw);
    for (int64_t l = 0; l < vw; ++l)
      iota[l] = static_cast<int32_t>(l);
    Value lanes = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(lanesType, ArrayRef(iota)));
    Value first = arith::IndexCastOp::create(b, loc, b.getI32Type(), p0);
    Value firstLanes = vector::BroadcastOp::create(b, loc, lanesType, first);
    Value p = arith::AddIOp::create(b, loc, firstLanes, lanes);
    const ConvTapsLayout &layout = taps->layout;
    if (!layout.width)
      return arith::MulIOp::create(b, loc, p, splat(layout.xStep));
    Value y = arith::DivUIOp::create(b, loc, p, splat(layout.width));
    Value x = arith::RemUIOp::create(b, loc, p, splat(layout.width));
    Value rowOffset = arith::MulIOp::create(b, loc, y, splat(layout.yStep));
    Value columnOffset = arith::MulIOp::create(b, loc, x, splat(layout.xStep));
    return arith::AddIOp::create(b, loc, rowOffset, columnOffset);
  }

  /// Bpack[p][kk][0:NR] = B[pc+kk, jc+p*NR : +NR], zero past the columns.
  void packB(OpBuilder &b, Location loc, Value bMatrix, Value bPacked, Value pc,
             Value depth, Value jc, Value jcEnd) {
    int64_t vw = options.vectorWidth, nr = options.tileVectors * vw;
    auto vectorType = VectorType::get({vw}, b.getF32Type());
    Value zero = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vectorType, b.getF32FloatAttr(0.0f)));
    forLoop(b, loc, jc, jcEnd, index(b, loc, nr), [&](OpBuilder &b1, Value jr) {
      Value panel = arith::DivUIOp::create(b1, loc, arith::SubIOp::create(b1, loc, jr, jc),
                                           index(b1, loc, nr));
      Value base = mul(b1, loc, panel, mul(b1, loc, depth, index(b1, loc, nr)));
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
          pixels.push_back(pixelOffsets(b1, loc, add(b1, loc, jr, index(b1, loc, v * vw))));
      std::optional<BPrologue> prologue;
      if (taps && taps->prologue)
        prologue.emplace(taps->prologue);
      // `wrapped`: some vector of the panel spans two image rows (RowWrap).
      auto packRows = [&](OpBuilder &b1, bool wrapped) {
      forLoop(b1, loc, index(b1, loc, 0), depth, index(b1, loc, 1), [&](OpBuilder &b2, Value kk) {
        Value row = add(b2, loc, pc, kk);
        Value source = bMatrix, shift;
        if (taps) {
          source = taps->x;
          std::tie(row, shift) = tapRow(b2, loc, row);
        }
        if (prologue)
          prologue->beginRow(b2, loc, row);
        Value at = add(b2, loc, base, mul(b2, loc, kk, index(b2, loc, nr)));
        for (int64_t v = 0; v < options.tileVectors; ++v) {
          auto load = [&](Value from) -> Value {
            if (!wraps.empty())
              return wraps[v].load(b2, loc, from, row, shift, vectorType, wrapped);
            if (!pixels.empty())
              return vector::GatherOp::create(b2, loc, vectorType, from, ValueRange{row, shift},
                                              pixels[v], masks[v], zero);
            Value col = add(b2, loc, jr, index(b2, loc, v * vw));
            if (shift)
              col = add(b2, loc, col, shift);
            return vector::MaskedLoadOp::create(b2, loc, vectorType, from, ValueRange{row, col},
                                                masks[v], zero);
          };
          Value value;
          if (prologue) {
            // B's elements computed from the prologue's inputs; zero past
            // the columns, as loaded.
            SmallVector<Value> xs = llvm::map_to_vector(prologue->xInputs(), load);
            value = arith::SelectOp::create(b2, loc, masks[v],
                                            prologue->evaluate(b2, loc, xs, vw), zero);
          } else {
            value = load(source);
          }
          vector::StoreOp::create(b2, loc, value, bPacked,
                                  ValueRange{add(b2, loc, at, index(b2, loc, v * vw))});
        }
      });
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

  /// Apack[q][kk][0:rows] = A[begin+q*rows : +rows, pc+kk] for the row panels
  /// of height `rows` in [begin, end); panel q starts at
  /// (begin - ic) / rows + q panels of MR rows into the block.
  void packA(OpBuilder &b, Location loc, Value aMatrix, Value aPacked, Value pc, Value depth,
             Value ic, Value begin, Value end, int64_t rows) {
    int64_t mr = options.tileRows;
    forLoop(b, loc, begin, end, index(b, loc, rows), [&](OpBuilder &b1, Value ir) {
      Value panel = arith::DivUIOp::create(b1, loc, arith::SubIOp::create(b1, loc, ir, ic),
                                           index(b1, loc, mr));
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

  /// With `fresh`, C's previous contents are not read: the first depth
  /// block overwrites it (used when C was only zero-filled). With an
  /// `epilogue` (right after `op`, reading its C), the last depth block
  /// applies it and writes its output; the epilogue is erased.
  void rewrite(linalg::MatmulOp op, bool fresh = false,
               linalg::GenericOp epilogue = nullptr) {
    rewrite(op, op.getDpsInputs()[0], op.getDpsInputs()[1], op.getDpsInits()[0], fresh,
            epilogue);
  }

  /// C (+)= A B for `op` (a matmul, or a conv's taps with `taps` set and
  /// `bMatrix` unused), which is erased. `aConstant` is A packed at
  /// compile time (packConstantA's layout, 1-D; A of static shape), else A
  /// is packed per cache block at run time.
  void rewrite(Operation *op, Value aMatrix, Value bMatrix, Value c, bool fresh,
               linalg::GenericOp epilogue, Value aConstant = {}) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value M = b.createOrFold<memref::DimOp>(loc, aMatrix, 0);
    Value K = b.createOrFold<memref::DimOp>(loc, aMatrix, 1);
    Value N = b.createOrFold<memref::DimOp>(loc, taps ? c : bMatrix, 1);
    int64_t vw = options.vectorWidth, nv = options.tileVectors, nr = nv * vw,
            mr = options.tileRows;
    int64_t tileN = llvm::divideCeil(options.tileN, nr) * nr;
    int64_t tileM = llvm::divideCeil(options.tileM, mr) * mr;
    auto packType = [&](int64_t size) {
      return MemRefType::get({size}, b.getF32Type());
    };
    IntegerAttr alignment = b.getI64IntegerAttr(64);
    auto minimum = [&](OpBuilder &nb, Value x, Value y) -> Value {
      return arith::MinSIOp::create(nb, loc, x, y);
    };

    // Constant weights are packed now, once, instead of on every run.
    int64_t numK = 0;
    FlatSymbolRefAttr packedB =
        taps ? FlatSymbolRefAttr()
             : packConstantB(op, bMatrix, tileN, options.tileK, nr, numK);
    Value bConstant;
    if (packedB) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(op, packedB);
      bConstant = memref::GetGlobalOp::create(b, loc, global.getType(), packedB.getValue());
    }

    int64_t aRows = aConstant ? cast<MemRefType>(aMatrix.getType()).getDimSize(0) : 0;

    // (column block, row group) tasks are independent: they run in parallel
    // (kiln-outline-parallel-loops), each with its own packing buffers. Row
    // groups split M when there are too few column blocks to keep the
    // threads busy and M has at least 2 cache blocks per group.
    std::optional<int64_t> staticM = getConstantIntValue(M), staticN = getConstantIntValue(N);
    int64_t rowGroups = 1, groupRows = 0;
    if (staticM && staticN && *staticM > 0) {
      int64_t columnBlocks = llvm::divideCeil(*staticN, tileN);
      int64_t panels = llvm::divideCeil(*staticM, mr);
      int64_t maxGroups = std::max<int64_t>(1, *staticM / (kMinGroupBlocks * tileM));
      rowGroups = std::clamp<int64_t>(llvm::divideCeil(kTargetTasks, columnBlocks), 1,
                                      std::min(panels, maxGroups));
      groupRows = llvm::divideCeil(panels, rowGroups) * mr;
      rowGroups = llvm::divideCeil(*staticM, groupRows);
    }
    // Rows past the last full MR-row panel: a packed kernel of exactly that
    // height when M is static, one-row kernels on unpacked A otherwise.
    int64_t leftover = staticM ? *staticM % mr : 0;
    // Columns of the one partial panel (the last), N static.
    int64_t rest = staticN ? *staticN % nr : 0;
    Value blocks = arith::CeilDivUIOp::create(b, loc, N, index(b, loc, tileN));
    Value tasks = mul(b, loc, blocks, index(b, loc, rowGroups));
    auto taskLoop = scf::ParallelOp::create(
        b, loc, ValueRange{index(b, loc, 0)}, ValueRange{tasks}, ValueRange{index(b, loc, 1)},
        [&](OpBuilder &b1, Location, ValueRange ivs) {
      Value block = ivs[0], rowBegin = index(b1, loc, 0), rowEnd = M;
      if (rowGroups > 1) {
        block = arith::DivUIOp::create(b1, loc, ivs[0], index(b1, loc, rowGroups));
        Value group = arith::RemUIOp::create(b1, loc, ivs[0], index(b1, loc, rowGroups));
        rowBegin = mul(b1, loc, group, index(b1, loc, groupRows));
        rowEnd = minimum(b1, add(b1, loc, rowBegin, index(b1, loc, groupRows)), M);
      }
      Value jc = mul(b1, loc, block, index(b1, loc, tileN));
      Value jcEnd = minimum(b1, add(b1, loc, jc, index(b1, loc, tileN)), N);
      Value bPacked = bConstant ? bConstant
                                : memref::AllocOp::create(b1, loc,
                                                          packType(tileN * options.tileK),
                                                          ValueRange{}, alignment)
                                      .getResult();
      Value aPacked = aConstant ? aConstant
                                : memref::AllocOp::create(b1, loc,
                                                          packType(tileM * options.tileK),
                                                          ValueRange{}, alignment)
                                      .getResult();
      forLoop(b1, loc, index(b1, loc, 0), K, index(b1, loc, options.tileK),
              [&](OpBuilder &b2, Value pc) {
        Value depth = arith::SubIOp::create(
            b2, loc, minimum(b2, add(b2, loc, pc, index(b2, loc, options.tileK)), K), pc);
        // Where this (column, depth) block's panels start in bPacked.
        Value blockBase = index(b2, loc, 0);
        if (bConstant)
          blockBase = mul(b2, loc,
                          add(b2, loc, mul(b2, loc, block, index(b2, loc, numK)),
                              arith::DivUIOp::create(b2, loc, pc, index(b2, loc, options.tileK))),
                          index(b2, loc, tileN * options.tileK));
        else
          packB(b2, loc, bMatrix, bPacked, pc, depth, jc, jcEnd);
        forLoop(b2, loc, rowBegin, rowEnd, index(b2, loc, tileM), [&](OpBuilder &b3, Value ic) {
          Value icEnd = minimum(b3, add(b3, loc, ic, index(b3, loc, tileM)), rowEnd);
          Value fullRows = mul(b3, loc,
                               arith::DivUIOp::create(b3, loc,
                                                      arith::SubIOp::create(b3, loc, icEnd, ic),
                                                      index(b3, loc, mr)),
                               index(b3, loc, mr));
          Value fullEnd = add(b3, loc, ic, fullRows);
          if (!aConstant) {
            packA(b3, loc, aMatrix, aPacked, pc, depth, ic, ic, fullEnd, mr);
            if (leftover)
              packA(b3, loc, aMatrix, aPacked, pc, depth, ic, fullEnd, icEnd, leftover);
          }
          forLoop(b3, loc, jc, jcEnd, index(b3, loc, nr), [&](OpBuilder &b4, Value jr) {
            Value cols = arith::SubIOp::create(b4, loc, jcEnd, jr);
            Value panel = arith::DivUIOp::create(b4, loc, arith::SubIOp::create(b4, loc, jr, jc),
                                                 index(b4, loc, nr));
            KernelSource src;
            src.bPacked = bPacked;
            src.bPanel = add(b4, loc, blockBase,
                             mul(b4, loc, panel, mul(b4, loc, depth, index(b4, loc, nr))));
            src.depth = depth;
            src.k0 = pc;
            if (fresh)
              src.fresh = arith::CmpIOp::create(b4, loc, arith::CmpIPredicate::eq, pc,
                                                index(b4, loc, 0));
            if (epilogue) {
              src.epilogue = epilogue;
              src.last = arith::CmpIOp::create(b4, loc, arith::CmpIPredicate::eq,
                                               add(b4, loc, pc, depth), K);
            }
            auto packedKernels = [&](OpBuilder &nb, Value begin, Value end, int64_t rows,
                                     int64_t vectors, ArrayRef<Value> masks) {
              forLoop(nb, loc, begin, end, index(nb, loc, rows), [&](OpBuilder &kb, Value ir) {
                KernelSource packed = src;
                packed.a = aPacked;
                if (aConstant) {
                  // Row ir's panel of this depth block (packConstantA).
                  packed.aPanel = add(kb, loc, mul(kb, loc, pc, index(kb, loc, aRows)),
                                      mul(kb, loc, ir, depth));
                } else {
                  Value q = arith::DivUIOp::create(
                      kb, loc, arith::SubIOp::create(kb, loc, ir, ic), index(kb, loc, mr));
                  packed.aPanel = mul(kb, loc, q, mul(kb, loc, depth, index(kb, loc, mr)));
                }
                emitKernel(kb, loc, c, packed, {vw, vectors, rows, nr}, ir, jr, masks);
              });
            };
            auto rowLoops = [&](OpBuilder &nb, int64_t vectors, ArrayRef<Value> masks) {
              packedKernels(nb, ic, fullEnd, mr, vectors, masks);
              if (leftover) {
                packedKernels(nb, fullEnd, icEnd, leftover, vectors, masks);
                return;
              }
              forLoop(nb, loc, fullEnd, icEnd, index(nb, loc, 1), [&](OpBuilder &kb, Value ir) {
                KernelSource direct = src;
                direct.a = aMatrix;
                emitKernel(kb, loc, c, direct, {vw, vectors, 1, nr}, ir, jr, masks);
              });
            };
            Value full = arith::CmpIOp::create(b4, loc, arith::CmpIPredicate::sge, cols,
                                               index(b4, loc, nr));
            scf::IfOp::create(
                b4, loc, full,
                [&](OpBuilder &tb, Location) {
                  rowLoops(tb, nv, {});
                  scf::YieldOp::create(tb, loc);
                },
                [&](OpBuilder &eb, Location) {
                  // With N static, the one partial panel (the last) gets
                  // only the vectors its columns need, unmasked when they
                  // fill them (196 columns: 1 vector, not 4 mostly masked).
                  int64_t vectors = rest ? llvm::divideCeil(rest, vw) : nv;
                  if (rest && rest % vw == 0)
                    rowLoops(eb, vectors, {});
                  else
                    rowLoops(eb, vectors, columnMasks(eb, loc, cols, vw, vectors));
                  scf::YieldOp::create(eb, loc);
                });
          });
        });
      });
      if (!aConstant)
        memref::DeallocOp::create(b1, loc, aPacked);
      if (!bConstant)
        memref::DeallocOp::create(b1, loc, bPacked);
    });
    taskLoop->setAttr(kHeavyLoopAttr, b.getUnitAttr());
    Operation *bSource = taps ? nullptr : bMatrix.getDefiningOp();
    op->erase();
    if (epilogue)
      epilogue.erase();
    // The unpacked weights are dead once nothing else reads them.
    if (packedB && bSource->use_empty()) {
      auto getGlobal = cast<memref::GetGlobalOp>(bSource);
      auto module = getGlobal->getParentOfType<ModuleOp>();
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          getGlobal, getGlobal.getNameAttr());
      getGlobal.erase();
      if (global && SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
    }
  }
};

/// `type` with a dynamic offset, so views at different offsets share it.
MemRefType withDynamicOffset(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return type;
  return MemRefType::get(type.getShape(), type.getElementType(),
                         StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic,
                                                strides));
}

/// Whether a shared kernel function can take `epilogue` (or none): its
/// view of C, if an expansion, has a static shape it can rebuild.
bool shareable(linalg::GenericOp epilogue) {
  if (!epilogue)
    return true;
  Value c = epilogue.getDpsInputs()[*epilogueInput(epilogue)];
  auto expand = c.getDefiningOp<memref::ExpandShapeOp>();
  return !expand || expand.getResultType().hasStaticShape();
}

/// The `{kiln.host}` argument of the function around `op`, or null.
Value hostOf(Operation *op) {
  auto func = op->getParentOfType<func::FuncOp>();
  if (!func)
    return nullptr;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, kHostArgAttr))
      return func.getArgument(i);
  return nullptr;
}

/// Matmuls on operands of the same shapes and strides share one kernel
/// function (the taps of a conv, repeated layers, the images of a batch):
/// each becomes a call with its operands cast to dynamic offsets. Keeps the
/// generated code, and the compile time, proportional to the distinct
/// shapes rather than to the matmul count.
struct SharedKernels {
  ModuleOp module;
  const KilnCPUMatmulPassOptions &options;
  llvm::StringMap<func::FuncOp> functions;
  /// Constant A matrices packed at compile time (packConstantA),
  /// and the unpacked weights' views that may have become dead.
  llvm::StringMap<FlatSymbolRefAttr> &packedA;
  llvm::SetVector<Operation *> &unpacked;

  void call(linalg::MatmulOp op, Value host, bool fresh, linalg::GenericOp epilogue) {
    // Operands: host, A, B, C, then the epilogue's other inputs and output.
    SmallVector<Value> operands(op->getOperands());
    // A constant A (a 1x1 conv's weights) is passed packed, viewed as [M, K].
    OpBuilder b(op);
    auto aType = cast<MemRefType>(operands[0].getType());
    FlatSymbolRefAttr packed;
    if (aType.hasStaticShape() && aType.getLayout().isIdentity())
      packed = packConstantA(operands[0], aType.getDimSize(0), aType.getDimSize(1),
                             options.tileRows, options.tileK, packedA);
    if (packed) {
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(op, packed);
      Value flat = memref::GetGlobalOp::create(b, op.getLoc(), global.getType(), packed.getValue());
      if (Operation *source = operands[0].getDefiningOp())
        unpacked.insert(source);
      operands[0] = memref::ExpandShapeOp::create(b, op.getLoc(), aType.getShape(), flat,
                                                  ArrayRef<ReassociationIndices>{{0, 1}});
    }
    unsigned cIndex = epilogue ? epilogueInput(epilogue).value_or(0) : 0;
    if (epilogue) {
      for (auto [i, input] : llvm::enumerate(epilogue.getDpsInputs()))
        if (i != cIndex)
          operands.push_back(input);
      operands.push_back(epilogue.getDpsInits()[0]);
    }
    SmallVector<Type> types = {host.getType()};
    for (Value operand : operands)
      types.push_back(withDynamicOffset(cast<MemRefType>(operand.getType())));
    auto type = b.getFunctionType(types, {});
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto function = func::FuncOp::create(mb, op.getLoc(), "kiln_matmul", type);
    function.setPrivate();
    function.setArgAttr(0, kHostArgAttr, mb.getUnitAttr());
    for (unsigned i = 1; i < types.size(); ++i)
      function.setArgAttr(i, kNoCaptureArgAttr, mb.getUnitAttr());
    Block *entry = function.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    auto matmul = linalg::MatmulOp::create(fb, op.getLoc(), entry->getArguments().slice(1, 2),
                                           entry->getArguments().slice(3, 1));
    linalg::GenericOp body;
    if (epilogue) {
      IRMapping map;
      unsigned next = 4;
      // C, or the epilogue's static expansion of it.
      Value c = entry->getArgument(3);
      if (auto expand = epilogue.getDpsInputs()[cIndex].getDefiningOp<memref::ExpandShapeOp>())
        c = memref::ExpandShapeOp::create(fb, op.getLoc(), expand.getResultType().getShape(), c,
                                          expand.getReassociationIndices());
      for (auto [i, input] : llvm::enumerate(epilogue.getDpsInputs()))
        map.map(input, i == cIndex ? c : entry->getArgument(next++));
      map.map(epilogue.getDpsInits()[0], entry->getArgument(next));
      // The scalar constants its body uses from outside, before the matmul
      // (whose kernel takes its place).
      OpBuilder cb = OpBuilder::atBlockBegin(entry);
      epilogue.getRegion().walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (Operation *def = v.getDefiningOp();
              def && !epilogue->isProperAncestor(def) && !map.contains(v))
            map.map(v, cb.clone(*def)->getResult(0));
      });
      body = cast<linalg::GenericOp>(fb.clone(*epilogue, map));
      // The function is shared by dispatches: their ids stay at the calls.
      body->removeAttr(kDispatchAttr);
    }
    // Its A argument holds the packed panels (a 1-D view of them).
    Value aConstant;
    if (packed) {
      OpBuilder ab(matmul);
      aConstant = memref::CollapseShapeOp::create(ab, op.getLoc(), entry->getArgument(1),
                                                  ArrayRef<ReassociationIndices>{{0, 1}});
    }
    func::ReturnOp::create(fb, op.getLoc());
    // Same text, same kernel: one function per distinct matmul + epilogue.
    std::string key = fresh ? "fresh " : "";
    if (packed)
      key += "packed-a ";
    llvm::raw_string_ostream os(key);
    function.print(os);
    func::FuncOp &existing = functions[key];
    if (existing) {
      function.erase();
    } else {
      function.setName("kiln_matmul_" + std::to_string(functions.size() - 1));
      MatmulRewriter{options}.rewrite(matmul, matmul.getDpsInputs()[0],
                                      matmul.getDpsInputs()[1], matmul.getDpsInits()[0], fresh,
                                      body, aConstant);
      existing = function;
    }
    SmallVector<Value> args = {host};
    for (auto [operand, to] : llvm::zip(operands, ArrayRef(types).drop_front()))
      args.push_back(operand.getType() == to
                         ? operand
                         : memref::CastOp::create(b, op.getLoc(), to, operand).getResult());
    func::CallOp::create(b, op.getLoc(), existing, args);
    op.erase();
    if (epilogue)
      epilogue.erase();
  }
};

struct KilnCPUMatmulPass final : impl::KilnCPUMatmulPassBase<KilnCPUMatmulPass> {
  using KilnCPUMatmulPassBase::KilnCPUMatmulPassBase;
  void runOnOperation() override {
    SmallVector<linalg::BatchMatmulOp> batched;
    getOperation().walk([&](linalg::BatchMatmulOp op) {
      if (op.hasPureBufferSemantics() && !op.hasUserDefinedMaps() &&
          llvm::all_of(op->getOperandTypes(), [](Type t) {
            auto type = dyn_cast<MemRefType>(t);
            return type && type.getRank() == 3 && type.getElementType().isF32();
          }))
        batched.push_back(op);
    });
    llvm::SmallPtrSet<Operation *, 16> freshBatches;
    for (linalg::BatchMatmulOp op : batched)
      splitBatches(op, freshBatches);
    // A batched conv's taps: one loop over the images of per-image taps.
    SmallVector<linalg::GenericOp> batchedConvs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics() && isBatchedConvTaps(op))
        batchedConvs.push_back(op);
    });
    for (linalg::GenericOp op : batchedConvs)
      splitConvTapsBatch(op, freshBatches);
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp op) {
      if (op.hasPureBufferSemantics() && !op.hasUserDefinedMaps() &&
          isKernelBuffer(op.getDpsInputs()[0], /*unitInner=*/false) &&
          isKernelBuffer(op.getDpsInputs()[1], /*unitInner=*/true) &&
          isKernelBuffer(op.getDpsInits()[0], /*unitInner=*/true))
        matmuls.push_back(op);
    });
    KilnCPUMatmulPassOptions options{vectorWidth, tileRows, tileVectors, tileM, tileN, tileK};
    // A conv's taps: one matmul with K = C*kh*kw, A the weights [F, C*kh*kw]
    // and B packed from the shifted rows of the padded input (gathered
    // through the conv's index map where it is strided or wraps rows).
    SmallVector<linalg::GenericOp> convs;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kConvTapsAttr) && op.hasPureBufferSemantics() && convTapsLayout(op) &&
          cast<MemRefType>(op.getDpsInputs()[0].getType()).getLayout().isIdentity() &&
          isKernelBuffer(op.getDpsInputs()[1], /*unitInner=*/true) &&
          isKernelBuffer(op.getDpsInits()[0], /*unitInner=*/true) &&
          (!hasConvTapsPrologue(op) ||
           llvm::all_of(BPrologue(op).xInputs(),
                        [](Value x) { return isKernelBuffer(x, /*unitInner=*/true); })))
        convs.push_back(op);
    });
    llvm::StringMap<FlatSymbolRefAttr> packedA;
    llvm::SetVector<Operation *> unpacked;
    for (linalg::GenericOp op : convs) {
      ConvTapsLayout layout = *convTapsLayout(op);
      Value weights = op.getDpsInputs()[0], c = op.getDpsInits()[0];
      auto wType = cast<MemRefType>(weights.getType());
      bool fresh = dropZeroFill(op, c) || freshBatches.contains(op);
      linalg::GenericOp epilogue = takeConvTapsEpilogue(op);
      OpBuilder b(op);
      Value a = memref::CollapseShapeOp::create(b, op.getLoc(), weights,
                                                ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
      MatmulRewriter rewriter{
          options, ConvTaps{op.getDpsInputs()[1], wType.getDimSize(2), wType.getDimSize(3), layout,
                            hasConvTapsPrologue(op) ? op : nullptr}};
      // Constant weights are packed into the kernels' A panels once, at
      // compile time (the weights are not re-packed per column block).
      FlatSymbolRefAttr packed;
      if (wType.hasStaticShape())
        packed = packConstantA(weights, wType.getDimSize(0),
                               wType.getNumElements() / wType.getDimSize(0), options.tileRows,
                               options.tileK, packedA);
      Value aConstant;
      if (packed) {
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(op, packed);
        aConstant = memref::GetGlobalOp::create(b, op.getLoc(), global.getType(), packed.getValue());
      }
      rewriter.rewrite(op, a, Value(), c, fresh, epilogue, aConstant);
      if (packed)
        unpacked.insert(a.getDefiningOp());
    }
    SharedKernels shared{getOperation(), options, {}, packedA, unpacked};
    for (linalg::MatmulOp op : matmuls) {
      bool fresh = dropZeroFill(op) || freshBatches.contains(op);
      linalg::GenericOp epilogue = takeEpilogue(op);
      Value host = hostOf(op);
      if (host && !constantValues(op.getDpsInputs()[1]) && shareable(epilogue))
        shared.call(op, host, fresh, epilogue);
      else
        MatmulRewriter{options}.rewrite(op, fresh, epilogue);
    }
    // The unpacked weights (and their views) are dead once nothing else
    // reads them.
    for (Operation *source : unpacked) {
      if (auto collapse = dyn_cast<memref::CollapseShapeOp>(source)) {
        if (!collapse->use_empty())
          continue;
        source = collapse.getSrc().getDefiningOp();
        collapse.erase();
      }
      auto getGlobal = dyn_cast_or_null<memref::GetGlobalOp>(source);
      if (!getGlobal || !getGlobal->use_empty())
        continue;
      auto module = getGlobal->getParentOfType<ModuleOp>();
      auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
          getGlobal, getGlobal.getNameAttr());
      getGlobal.erase();
      if (global && SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
    }
    // The dispatch stage counted each marked epilogue as part of its
    // matmul's kernel, and each row group (kiln-cpu-row-kernels ran before
    // this pass) as one kernel: one left over would make that count untrue.
    if (failed(verifyDispatchGroupsFused(getOperation())))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
