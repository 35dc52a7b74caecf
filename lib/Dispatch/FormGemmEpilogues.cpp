//===- FormGemmEpilogues.cpp - The kiln-form-gemm-epilogues pass ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// For a GEMM kernel that stores each output tile through the product's
// elementwise consumer (a bias, an activation, a residual add, a cast):
// that consumer joins the product's dispatch as its `kiln.epilogue`, so
// the dispatch regions, the fusion report, the trace hooks and the kernel
// generator all see one kernel. The shapes the kernel takes are the target
// policy's answer (GemmEpilogueShapes), given as the pass options.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/KilnToLinalg/ContractionMaps.h"
#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Dispatch/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNFORMGEMMEPILOGUESPASS
#include "kiln/Dispatch/Passes.h.inc"

namespace {

/// Whether `value` is initialized by a +0.0 fill (the kernel's
/// accumulators start from zero and never read C).
bool isZeroFilled(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  auto constant = fill ? fill.getInputs()[0].getDefiningOp<arith::ConstantOp>() : nullptr;
  auto zero = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
  return zero && zero.getValue().isPosZero();
}

/// Whether the buffer `value` bufferizes to may be a slice of another one
/// (an offset, strides): a tensor.extract_slice, seen through reshapes.
bool mayBeSlice(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<tensor::ExtractSliceOp>(def))
      return true;
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(def))
      return false;
    value = def->getOperand(0);
  }
  return false;
}

/// The options as the policy's struct.
struct Shapes {
  int64_t k, n, batchedK;
  bool denseA;
};

/// Whether the kernel takes `op` as a product with an epilogue: an f32
/// matmul or batch_matmul with default maps (or a K-major B) and static shapes (a matmul's
/// rows M may be symbolic: a classifier's after a flatten of a symbolic
/// batch; the kernel's grid and row guards read M at run time), or a 2-D
/// NCHW conv with static filters and a batch that may be symbolic, starting
/// from zero.
bool isGemmProduct(linalg::LinalgOp op, const Shapes &shapes) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      !isZeroFilled(op.getDpsInits()[0]))
    return false;
  // A conv becomes an im2col and a product whose K the lowering pads, all
  // images in one launch.
  if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op.getOperation()))
    return isStaticF32(conv.getInputs()[1]) && isStaticButBatchF32(conv.getInputs()[0]) &&
           isStaticButBatchF32(conv.getOutputs()[0]);
  bool batched = isa<linalg::BatchMatmulOp>(op);
  if (!isStaticButRowsF32(op.getDpsInputs()[0], op.getDpsInputs()[1], op.getDpsInits()[0],
                          batched))
    return false;
  // A K-major B (C = A * B^T maps, a transposed B read where it lies) only
  // where it cannot be a strided view: the kernel reads dense rows.
  bool kMajor = hasKMajorB(op);
  if (kMajor && mayBeSlice(op.getDpsInputs()[1]))
    return false;
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
    if (matmul.hasUserDefinedMaps() && !kMajor)
      return false;
  } else if (!batched ||
             (cast<linalg::BatchMatmulOp>(op.getOperation()).hasUserDefinedMaps() && !kMajor)) {
    return false;
  }
  auto b = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  int64_t rank = b.getRank();
  int64_t k = b.getDimSize(rank - (kMajor ? 1 : 2)), n = b.getDimSize(rank - (kMajor ? 2 : 1));
  if (k < shapes.k || k % shapes.k || n % shapes.n)
    return false;
  // A K-major B's rows past K are zero-filled whatever the batch (K is its
  // inner dim): no batch rule.
  if (batched && !kMajor && b.getDimSize(0) > 1 && k % shapes.batchedK)
    return false;
  return !shapes.denseA || !mayBeSlice(op.getDpsInputs()[0]);
}

/// Whether `generic` is an epilogue the kernel applies to the product C,
/// which its input `cInput` reads as C expanded by `groups` (one group per
/// dim of C when it reads C itself; the kernel collapses the generic's
/// loops back onto C's): all parallel, C and the one output through
/// identity maps (the output not read, no tensor inserted into it), other
/// inputs through projected permutations of loops whose group is one loop
/// (a bias) or identity maps, an arith/math body.
bool isGemmEpilogue(linalg::GenericOp generic, OpOperand &cInput,
                    ArrayRef<ReassociationIndices> groups) {
  auto c = cast<RankedTensorType>(cInput.get().getType());
  if (!generic.hasPureTensorSemantics() || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != static_cast<unsigned>(c.getRank()) ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !generic.getMatchingIndexingMap(&cInput).isIdentity() ||
      !generic.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  OpOperand *init = generic.getDpsInitOperand(0);
  Type out = getElementTypeOrSelf(init->get().getType());
  if (!generic.getMatchingIndexingMap(init).isIdentity() ||
      generic.payloadUsesValueFromOperand(init) || !(out.isF32() || out.isF16() || out.isBF16()))
    return false;
  // A result inserted into a larger tensor gets a dense buffer of its own
  // (keepDenseWhenInserted); one that other tensors are inserted into would be
  // written in slices.
  for (OpOperand &use : generic->getResult(0).getUses())
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
        insert && use.get() == insert.getDest())
      return false;
  SmallVector<int64_t> groupSize(c.getRank());
  for (const ReassociationIndices &group : groups)
    for (int64_t d : group)
      groupSize[d] = static_cast<int64_t>(group.size());
  for (OpOperand *input : generic.getDpsInputOperands()) {
    if (input == &cInput)
      continue;
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (!isa<RankedTensorType>(input->get().getType()) || !map.isProjectedPermutation() ||
        input->get() == cInput.get())
      return false;
    // A full-size input inserted into a slice must get a dense buffer of
    // its own (keepDenseWhenInserted), which a chain from an empty tensor
    // only it uses can.
    if (map.isIdentity() && isInsertedIntoSlice(input->get()) &&
        !canKeepDense(input->get()))
      return false;
    if (!map.isIdentity())
      for (AffineExpr expr : map.getResults())
        if (groupSize[cast<AffineDimExpr>(expr).getPosition()] != 1)
          return false;
  }
  return llvm::all_of(generic.getBody()->without_terminator(), [](Operation &op) {
    return isa<arith::ArithDialect, math::MathDialect>(op.getDialect());
  });
}

/// The kernel never stores C, so C must be a buffer of its own: a zero
/// fill shared with other ops (CSE), or of an empty tensor other ops
/// fill too (bufferization would reuse that buffer), is replaced by a fill
/// of a new empty tensor right before `product`.
void giveOwnZeroFill(linalg::LinalgOp product) {
  OpOperand &init = product.getDpsInitsMutable()[0];
  auto fill = init.get().getDefiningOp<linalg::FillOp>();
  Value dest = fill.getDpsInits()[0];
  if (fill->hasOneUse() && dest.getDefiningOp<tensor::EmptyOp>() && dest.hasOneUse())
    return;
  OpBuilder b(product);
  Location loc = fill.getLoc();
  auto type = cast<RankedTensorType>(dest.getType());
  Value empty = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, dest),
                                        type.getElementType());
  init.set(linalg::FillOp::create(b, loc, fill.getInputs()[0], empty).getResult(0));
  if (fill->use_empty())
    fill->erase();
}

/// The groups of a conv's product [N, F, OH*OW] expanded to [N, F, OH, OW].
SmallVector<ReassociationIndices> convGroups() { return {{0}, {1}, {2, 3}}; }

void formGemmEpilogue(linalg::LinalgOp product, const Shapes &shapes) {
  if (!isGemmProduct(product, shapes))
    return;
  Value result = product->getResult(0);
  if (!result.hasOneUse())
    return;
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d)
    groups.push_back({d});
  if (isa<linalg::Conv2DNchwFchwOp>(product))
    groups = convGroups();
  OpOperand *use = &*result.use_begin();
  SmallVector<Operation *> views;
  // A product of rows read as [batch, rows, N] (a projection before its
  // bias and residual add): the kernel reads the generic collapsed.
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(use->getOwner())) {
    // (Symbolic rows are not split into [batch, rows]: the kernel collapses
    // the generic back onto C only with static sizes.)
    if (!expand->hasOneUse() || isa<linalg::Conv2DNchwFchwOp>(product) ||
        !cast<RankedTensorType>(result.getType()).hasStaticShape())
      return;
    groups = expand.getReassociationIndices();
    views.push_back(expand);
    use = &*expand->use_begin();
  }
  auto generic = dyn_cast<linalg::GenericOp>(use->getOwner());
  if (!generic || generic->hasAttr(kEpilogueAttr) || !generic.isDpsInput(use) ||
      !isGemmEpilogue(generic, *use, groups))
    return;
  giveOwnZeroFill(product);
  joinEpilogue(product, generic, *use, views);
  // An output or full-size input inserted into the next conv's zero padding
  // (most of a ResNet's) gets a dense buffer: the kernel's dense stores and
  // the collapse onto C's [N, F, P] need one; the insertion stays a copy,
  // which the padded conv's im2col kernel reads through.
  for (OpOperand *input : generic.getDpsInputOperands())
    if (generic.getMatchingIndexingMap(input).isIdentity())
      keepDenseWhenInserted(input->get());
  keepDenseWhenInserted(generic->getResult(0));
}

struct KilnFormGemmEpiloguesPass final
    : impl::KilnFormGemmEpiloguesPassBase<KilnFormGemmEpiloguesPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto [name, value] : {std::pair<StringRef, int64_t>{"k-multiple", kMultiple},
                               {"n-multiple", nMultiple},
                               {"batched-k-multiple", batchedKMultiple}}) {
      if (value < 1) {
        getOperation().emitError() << "kiln-form-gemm-epilogues: " << name << "=" << value
                                   << ", expected a positive element count";
        return signalPassFailure();
      }
    }
    Shapes shapes{kMultiple, nMultiple, batchedKMultiple, denseA};
    SmallVector<linalg::LinalgOp> products;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(op))
        products.push_back(op);
    });
    for (linalg::LinalgOp product : products)
      formGemmEpilogue(product, shapes);
  }
};

} // namespace
} // namespace kiln
