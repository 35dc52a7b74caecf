//===- GemmTemplate.cpp - The kiln-cuda-gemm pass (Hopper TMA + wgmma) ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Kiln's GEMM kernel template for sm_90a, emitted as nvgpu IR inside a host
// gpu.launch (kernel outlining runs later: a gpu.func taking tensor-map
// descriptors does not legalize, a launch capturing them does).
//
// Parameters (the heuristic, DESIGN.md's measured recipe): a 128x128 output
// tile per block of one warpgroup (128 threads), k steps of 64 (one 128-byte
// swizzled row of f16/bf16 per TMA box row), `stages` shared-memory buffers
// (3 by default, 2 when K has a single k step), so shared memory is
// stages * 32 KiB for A and B, at least the 64 KiB the f32 epilogue tile
// needs. Partial tiles at the edges read zeros (TMA out-of-bounds fill) and
// store under a predicate; N and K must be multiples of 8 (TMA's 16-byte
// row strides), else the generic SIMT kernel stays. An unbatched product's
// rows M may be symbolic (a classifier's after the flatten of a symbolic
// batch): the grid's x is ceil(M / 128) and the row guard compares with M,
// both read from A at run time; a batch may be symbolic (the grid's z).
//
// A K-major B (maps of C = A * B^T, which kiln-cuda-lower-precision makes
// for tf32, whose wgmma reads both operands K-major, and for convolutions:
// W x im2col^T per image, A then shared by the batch): one TMA box of 128
// rows by 128 bytes per operand and stage, k steps of 128 bytes (64
// f16/bf16 or 32 f32 elements), and the products issued as NVVM wgmma ops
// (m64n128k16 f16/bf16, m64n128k8 tf32) on hand-built shared-memory
// descriptors: nvgpu.warpgroup.mma assumes an N-major B. N then has no
// alignment rule (an N not a multiple of 4 is stored element by element).
// f32 operands take this path only with the option `tf32`. A B made
// K-major at run time (a linalg.transpose) gets a tiled transpose kernel.
//
//===----------------------------------------------------------------------===//

#include "GemmEmitter.h"
#include "GemmNeighbours.h"
#include "GemvEmitter.h"
#include "Im2colKernel.h"
#include "TiledTranspose.h"
#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/Host/BufferAnalysis.h"
#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAGEMMPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;
using namespace cuda_gemm;

/// The maps of C = A * B^T ([b,] m, n, k) -> A[[b,] m, k], B[[b,] n, k],
/// C[[b,] m, n], or with `broadcastA` (batched only) A[m, k].
SmallVector<AffineMap> transposedBMaps(MLIRContext *context, bool batched, bool broadcastA) {
  unsigned base = batched ? 1 : 0;
  auto map = [&](unsigned x, unsigned y, bool withBatch) {
    SmallVector<AffineExpr> results;
    if (withBatch)
      results.push_back(getAffineDimExpr(0, context));
    results.push_back(getAffineDimExpr(base + x, context));
    results.push_back(getAffineDimExpr(base + y, context));
    return AffineMap::get(base + 3, 0, results, context);
  };
  return {map(0, 2, batched && !broadcastA), map(1, 2, batched), map(0, 1, batched)};
}


std::optional<Gemm> matchGemm(Operation *op, bool tf32) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureBufferSemantics())
    return std::nullopt;
  bool batched = isa<linalg::BatchMatmulOp>(op);
  bool userMaps;
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
    userMaps = matmul.hasUserDefinedMaps();
  else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op))
    userMaps = batch.hasUserDefinedMaps();
  else
    return std::nullopt;
  Gemm g;
  if (userMaps) {
    SmallVector<AffineMap> maps = linalgOp.getIndexingMapsArray();
    MLIRContext *context = op->getContext();
    if (maps == transposedBMaps(context, batched, false))
      g.kMajorB = true;
    else if (batched && maps == transposedBMaps(context, batched, true))
      g.kMajorB = g.broadcastA = true;
    else
      return std::nullopt;
  }
  g.a = linalgOp.getDpsInputs()[0];
  g.b = linalgOp.getDpsInputs()[1];
  g.c = linalgOp.getDpsInits()[0];
  auto a = dyn_cast<MemRefType>(g.a.getType());
  auto b = dyn_cast<MemRefType>(g.b.getType());
  auto c = dyn_cast<MemRefType>(g.c.getType());
  // A batch may be symbolic (a convolution's images): the grid's z. A
  // matmul's rows M may be symbolic (A's and C's first size): the grid's x
  // and the row guards read M at run time.
  if (!a || !b || !c || !isDenseRowMajor(a, !g.broadcastA) || !isDenseRowMajor(b, batched) ||
      !isDenseRowMajor(c, true))
    return std::nullopt;
  g.element = a.getElementType();
  // f32 operands only as tf32 (kilnc --precision=tf32), which reads both
  // operands K-major.
  bool f32 = g.element.isF32() && tf32 && g.kMajorB;
  if (!(f32 || g.element.isF16() || g.element.isBF16()) || b.getElementType() != g.element ||
      !c.getElementType().isF32())
    return std::nullopt;
  unsigned base = batched ? 1 : 0;
  if (batched)
    g.batch = b.getDimSize(0);
  g.m = c.getDimSize(base);
  g.k = b.getDimSize(g.kMajorB ? base + 1 : base);
  g.n = c.getDimSize(base + 1);
  // TMA needs 16-byte row strides: K a multiple of 8 (16-bit) or 4 (f32).
  int64_t rowElements = 16 / g.elementBytes();
  if ((!ShapedType::isDynamic(g.m) && g.m < 1) || g.n < 1 || g.k < rowElements ||
      g.k % rowElements || (!ShapedType::isDynamic(g.batch) && g.batch < 1))
    return std::nullopt;
  if (g.kMajorB) {
    // K is both operands' inner dimension, so the TMA's zero fill pads it
    // even with a batch; rows past M or N (the next batch's) land in
    // products never stored; an N not a multiple of 4 stores one element at
    // a time.
    return g;
  }
  // B's rows are N elements: N a multiple of 8. Partial tiles read zeros
  // past the edges (TMA out-of-bounds fill) and store under a predicate.
  // With a batch, A's rows past M are the next batch's (products never
  // stored), but B's rows past K would be multiplied by A's zero columns: K
  // must then be a multiple of 64.
  if (g.n % 8 || (g.batch != 1 && g.k % g.tileK()))
    return std::nullopt;
  return g;
}


/// The linalg.transpose that writes `b` (a K-major B) as its last writer
/// before `gemm`, when it swaps the last two dimensions of dense static
/// buffers; else null.
linalg::TransposeOp transposeWriting(Value b, Operation *gemm) {
  for (Operation *op = gemm->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
      if (transpose.getInit() != b)
        continue;
      auto in = dyn_cast<MemRefType>(transpose.getInput().getType());
      ArrayRef<int64_t> perm = transpose.getPermutation();
      int64_t rank = perm.size();
      bool swapsLast = (rank == 2 && perm[0] == 1) ||
                       (rank == 3 && perm[0] == 0 && perm[1] == 2);
      if (!transpose.hasPureBufferSemantics() || !in || !swapsLast ||
          !isDenseRowMajor(in) || !isDenseRowMajor(cast<MemRefType>(b.getType())))
        return {};
      return transpose;
    }
    if (op->getNumRegions() != 0 && !isa<linalg::LinalgOp>(op))
      return {};
    for (Value operand : op->getOperands())
      if (operand == b && !isa<memref::DeallocOp>(op))
        return {};
  }
  return {};
}

/// The epilogues the dispatch stage marked (kiln-form-gemm-epilogues), by
/// the id of their dispatch.
DenseMap<int64_t, linalg::GenericOp> markedEpilogues(func::FuncOp func) {
  DenseMap<int64_t, linalg::GenericOp> epilogues;
  func.walk([&](linalg::GenericOp generic) {
    std::optional<int64_t> id = dispatchId(generic);
    if (id && epilogueInput(generic))
      epilogues[*id] = generic;
  });
  return epilogues;
}

/// Why the kernel cannot apply `epilogue` (over C's loops, reading C
/// itself) to `gemm` with zero init `zeroInit`, or empty: C's loops all
/// parallel, C and one dense output through identity maps (the output not
/// read), other inputs through projected permutations, not the output's
/// buffer, an arith/math body; C a temporary only the product and the
/// epilogue use (or the epilogue's output).
std::string epilogueMismatch(linalg::GenericOp epilogue, Operation *gemmOp, const Gemm &gemm,
                             Operation *zeroInit) {
  auto cType = cast<MemRefType>(gemm.c.getType());
  if (!epilogue.hasPureBufferSemantics() || epilogue.getNumDpsInits() != 1 ||
      epilogue.getNumLoops() != static_cast<unsigned>(cType.getRank()) ||
      epilogue.getNumParallelLoops() != epilogue.getNumLoops())
    return "its loops are not C's parallel loops";
  OpOperand *init = epilogue.getDpsInitOperand(0);
  auto initType = dyn_cast<MemRefType>(init->get().getType());
  if (!initType ||
      !isDenseRowMajor(initType,
                       ShapedType::isDynamic(gemm.batch) || ShapedType::isDynamic(gemm.m)) ||
      !epilogue.getMatchingIndexingMap(init).isIdentity() ||
      epilogue.payloadUsesValueFromOperand(init) ||
      !(initType.getElementType().isF32() || initType.getElementType().isF16() ||
        initType.getElementType().isBF16()))
    return "its output is not a dense f32/f16/bf16 buffer written with the identity map";
  bool readsC = false;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (input->get() == gemm.c) {
      if (!map.isIdentity())
        return "it reads C through a map other than the identity";
      readsC = true;
    } else if (!isa<MemRefType>(input->get().getType()) || !map.isProjectedPermutation() ||
               rootOf(input->get()) == rootOf(init->get())) {
      return "an input other than C is not a buffer read by loops apart from its output";
    }
  }
  if (!readsC)
    return "it does not read C";
  for (Operation &op : epilogue.getBlock()->without_terminator())
    if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      return "its body is not arith/math";
  if (init->get() == gemm.c)
    return "";
  if (!gemm.c.getDefiningOp<memref::AllocOp>())
    return "C is not a temporary buffer";
  // An expand_shape of C that only shape queries read (the epilogue's view
  // of C, whose dims size a later buffer) reads no element.
  auto onlyShapes = [](Operation *user) {
    return isa<memref::ExpandShapeOp>(user) &&
           llvm::all_of(user->getUsers(), [](Operation *reader) {
             return isa<memref::DimOp>(reader);
           });
  };
  for (Operation *user : gemm.c.getUsers())
    if (user != zeroInit && user != gemmOp && user != epilogue &&
        !isa<memref::DeallocOp, memref::DimOp>(user) && !onlyShapes(user))
      return "C is read by another op";
  return "";
}

/// The epilogue of `op`'s dispatch as the kernel applies it: over C's
/// loops, reading C itself (an epilogue that reads C through an
/// expand_shape is rewritten over C's rank first). Null when the dispatch
/// has none; failure, with an error, when the kernel cannot apply it.
FailureOr<linalg::GenericOp> takeEpilogue(Operation *op, const Gemm &gemm, Operation *zeroInit,
                                          const DenseMap<int64_t, linalg::GenericOp> &epilogues,
                                          IRRewriter &rewriter) {
  std::optional<int64_t> id = dispatchId(op);
  linalg::GenericOp epilogue = id ? epilogues.lookup(*id) : linalg::GenericOp();
  if (!epilogue)
    return linalg::GenericOp();
  auto fail = [&](const Twine &why) {
    op->emitError() << "kiln-cuda-gemm: the epilogue of dispatch " << *id
                    << " cannot be applied by the GEMM kernel: " << why;
    return failure();
  };
  if (!zeroInit)
    return fail("the product does not start from a zero fill of C");
  Value cInput = epilogue.getDpsInputs()[*epilogueInput(epilogue)];
  if (auto expand = cInput.getDefiningOp<memref::ExpandShapeOp>();
      expand && expand.getSrc() == gemm.c) {
    epilogue = collapseOntoProduct(epilogue, expand, rewriter);
    if (!epilogue)
      return fail("it reads C through an expand_shape it cannot be collapsed through");
  }
  std::string mismatch = epilogueMismatch(epilogue, op, gemm, zeroInit);
  if (!mismatch.empty())
    return fail(mismatch);
  return epilogue;
}

/// The size of `shape`'s dim `index`: a constant, or the `dynamic` value
/// that gives it.
Value sizeOf(OpBuilder &b, Location loc, ShapedType shape, ValueRange dynamic, int64_t index) {
  if (!shape.isDynamicDim(index))
    return arith::ConstantIndexOp::create(b, loc, shape.getDimSize(index));
  int64_t before = llvm::count_if(shape.getShape().take_front(index), ShapedType::isDynamic);
  return dynamic[before];
}

/// Shape queries of C (a temporary about to go) and of its expand_shapes
/// answered by C's allocation sizes and the reshapes' output shapes.
void resolveShapeQueries(memref::AllocOp c, IRRewriter &rewriter) {
  auto answer = [&](memref::DimOp dim, ShapedType shape, ValueRange dynamic) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return;
    rewriter.setInsertionPoint(dim);
    rewriter.replaceOp(dim, sizeOf(rewriter, dim.getLoc(), shape, dynamic, *index));
  };
  for (Operation *user : llvm::make_early_inc_range(c->getUsers())) {
    if (auto dim = dyn_cast<memref::DimOp>(user))
      answer(dim, c.getType(), c.getDynamicSizes());
    auto expand = dyn_cast<memref::ExpandShapeOp>(user);
    if (!expand)
      continue;
    SmallVector<Value> outputSizes;
    for (OpFoldResult size : expand.getMixedOutputShape())
      if (auto value = dyn_cast<Value>(size))
        outputSizes.push_back(value);
    for (Operation *reader : llvm::make_early_inc_range(expand->getUsers()))
      if (auto dim = dyn_cast<memref::DimOp>(reader))
        answer(dim, expand.getResultType(), outputSizes);
  }
}

/// Erases the zero initial value of C that the kernel replaces: a zero
/// fill, or a copy of a zero-filled buffer (that buffer goes with its last
/// copy).
void eraseZeroInit(Operation *zeroInit, IRRewriter &rewriter) {
  auto copy = dyn_cast<linalg::CopyOp>(zeroInit);
  if (!copy) {
    rewriter.eraseOp(zeroInit);
    return;
  }
  Value source = copy.getInputs()[0];
  rewriter.eraseOp(copy);
  auto alloc = source.getDefiningOp<memref::AllocOp>();
  if (!alloc || !llvm::all_of(alloc->getUsers(), [](Operation *user) {
        return isa<linalg::FillOp, memref::DeallocOp>(user);
      }))
    return;
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    rewriter.eraseOp(user);
  rewriter.eraseOp(alloc);
}

/// When what the kernel writes (`epilogue`'s output, else C) is copied to
/// a model output right after: the kernel writes the output instead.
void writeFinalOutputDirectly(Operation *op, Gemm &gemm, linalg::GenericOp epilogue,
                              IRRewriter &rewriter) {
  Operation *producer = epilogue ? epilogue.getOperation() : op;
  Value result = epilogue ? epilogue.getDpsInits()[0] : gemm.c;
  Operation *copy = finalCopyOf(result, producer, op);
  if (!copy)
    return;
  Value buffer = copy->getOperand(0), target = copy->getOperand(1);
  rewriter.eraseOp(copy);
  Operation *alloc = buffer.getDefiningOp();
  for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
    if (isa<memref::DeallocOp>(user))
      rewriter.eraseOp(user);
  rewriter.replaceAllUsesWith(buffer, target);
  rewriter.eraseOp(alloc);
  if (buffer == gemm.c)
    gemm.c = target;
}

/// Replaces `op` (and `epilogue`) by the kernel (with `gemvSwitch`, by the
/// one-row kernel when A has one row: always, or at run time for symbolic
/// rows); a product the epilogue consumed in registers loses its buffer.
void replaceByKernel(Operation *op, const Gemm &gemm, int64_t stages, bool gemvSwitch,
                     int64_t gemvBlocks, bool accumulate, linalg::GenericOp epilogue,
                     IRRewriter &rewriter) {
  rewriter.setInsertionPoint(op);
  if (epilogue) {
    // The kernel replaces both ops at the epilogue (its output may be
    // allocated in between); buffers freed in between are freed after.
    for (Operation *between = op->getNextNode(); between != epilogue;) {
      Operation *next = between->getNextNode();
      if (isa<memref::DeallocOp>(between))
        between->moveAfter(epilogue);
      between = next;
    }
    rewriter.setInsertionPoint(epilogue);
  }
  // One k step leaves nothing to prefetch: two buffers suffice.
  int64_t depth = gemm.k <= gemm.tileK() ? 2 : stages;
  Location loc = op->getLoc();
  if (gemvSwitch && gemvApplies(gemm) && !ShapedType::isDynamic(gemm.m)) {
    emitGemvKernel(rewriter, loc, gemm, gemvBlocks, accumulate, epilogue);
  } else if (gemvSwitch && gemvApplies(gemm)) {
    // Symbolic rows: one row (a decode step) takes the one-row kernel, more
    // rows the template. Both are launched, the other with an empty grid,
    // which the runtime skips (no host branches around launches).
    Value rows = memref::DimOp::create(rewriter, loc, gemm.a, 0);
    Value one = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, rows,
                                      arith::ConstantIndexOp::create(rewriter, loc, 1));
    Value more = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne, rows,
                                       arith::ConstantIndexOp::create(rewriter, loc, 1));
    emitGemvKernel(rewriter, loc, gemm, gemvBlocks, accumulate, epilogue, one);
    emitGemmKernel(rewriter, loc, gemm, depth, accumulate, epilogue, more);
  } else {
    emitGemmKernel(rewriter, loc, gemm, depth, accumulate, epilogue);
  }
  rewriter.eraseOp(op);
  if (!epilogue)
    return;
  bool inPlace = epilogue.getDpsInits()[0] == gemm.c;
  rewriter.eraseOp(epilogue);
  if (inPlace)
    return;
  auto alloc = gemm.c.getDefiningOp<memref::AllocOp>();
  resolveShapeQueries(alloc, rewriter);
  for (Operation *user : llvm::make_early_inc_range(gemm.c.getUsers()))
    rewriter.eraseOp(user);
  rewriter.eraseOp(alloc);
}

struct KilnCUDAGemmPass final : impl::KilnCUDAGemmPassBase<KilnCUDAGemmPass> {
  using Base::Base;

  void runOnOperation() override {
    if (!static_cast<const Chip &>(chip).hasWgmma())
      return; // wgmma exists only on sm_90a
    if (stages < 2 || stages > 4) {
      getOperation().emitError() << "kiln-cuda-gemm: stages=" << static_cast<int64_t>(stages)
                                 << ", expected 2, 3 or 4";
      return signalPassFailure();
    }
    if (gemvBlocks < 1) {
      getOperation().emitError() << "kiln-cuda-gemm: gemv-blocks="
                                 << static_cast<int64_t>(gemvBlocks) << ", expected at least 1";
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    eraseDeadFills(getOperation(), rewriter);
    SmallVector<std::pair<Operation *, Gemm>> gemms;
    getOperation().walk([&](Operation *op) {
      if (std::optional<Gemm> gemm = matchGemm(op, tf32))
        gemms.emplace_back(op, *gemm);
    });
    // A zero initial value: a zero fill, or a copy of a zero-filled buffer
    // (found before any kernel is emitted: the searches do not step over
    // kernels).
    SmallVector<Operation *> zeroInits;
    for (auto &[op, gemm] : gemms) {
      Operation *init = zeroFillBefore(op, gemm.c);
      zeroInits.push_back(init ? init : zeroCopyBefore(op, gemm.c).getOperation());
    }
    DenseMap<int64_t, linalg::GenericOp> epilogues = markedEpilogues(getOperation());
    for (auto [index, entry] : llvm::enumerate(gemms)) {
      auto &[op, gemm] = entry;
      Operation *zeroInit = zeroInits[index];
      FailureOr<linalg::GenericOp> epilogue =
          takeEpilogue(op, gemm, zeroInit, epilogues, rewriter);
      if (failed(epilogue))
        return signalPassFailure();
      // B made K-major at run time: a tiled transpose kernel (after the
      // searches above, which step over linalg ops but not over kernels).
      if (gemm.kMajorB)
        if (linalg::TransposeOp transpose = transposeWriting(gemm.b, op))
          emitTiledTranspose(rewriter, transpose);
      if (zeroInit)
        eraseZeroInit(zeroInit, rewriter);
      writeFinalOutputDirectly(op, gemm, *epilogue, rewriter);
      replaceByKernel(op, gemm, stages, gemv, gemvBlocks, /*accumulate=*/!zeroInit, *epilogue,
                      rewriter);
    }
    // An epilogue whose product the template did not take would be a
    // kernel of its own, which the dispatch stage did not count. (Row
    // groups are kiln-cuda-row-kernels' business, later.)
    if (failed(verifyDispatchGroupsFused(getOperation(), /*rowGroups=*/false)))
      return signalPassFailure();
    // Convolutions' im2col generics (after the searches above, which step
    // over linalg ops but not over kernels).
    SmallVector<linalg::GenericOp> im2cols;
    getOperation().walk([&](linalg::GenericOp generic) {
      if (generic->hasAttr(kIm2colAttrName))
        im2cols.push_back(generic);
    });
    for (linalg::GenericOp generic : im2cols)
      emitIm2colKernel(rewriter, generic);
  }
};

} // namespace
} // namespace kiln
