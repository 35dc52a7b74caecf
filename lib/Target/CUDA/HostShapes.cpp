//===- HostShapes.cpp - The kiln-cuda-host-shapes pass --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Shape arithmetic stays on the host. A model with computed shapes (Shape ->
// Gather -> Concat -> Reshape/Expand/ConstantOfShape/Range) reads elements of
// small tensors where the host needs them: to size an allocation, to bound a
// loop, as a reshape's shape. On the CUDA target every tensor becomes a device
// buffer, so those reads would be host loads of device memory. Here, on
// tensors, each such read (a top-level tensor.extract at constant indices) is
// replaced by the scalar computation of that one element: through the
// producing linalg op's body (reductions unrolled), slices, inserts and
// reshapes, down to tensor.dim values and constants. The tensors then have no
// host readers left (and usually no readers at all); a reshape to a computed
// shape becomes views sized by such scalars.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAHOSTSHAPESPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// Shape vectors are a rank's worth of entries: larger tensors are data.
constexpr int64_t kMaxElements = 64;
/// Steps of a reduction unrolled for one element (a shape's product).
constexpr int64_t kMaxReductionSteps = 64;
/// Rewrites per function (the decoders' shape chains need a few hundred).
constexpr int64_t kMaxRewrites = 100000;

/// A static tensor of at most kMaxElements integers, indices or floats.
bool isSmall(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || tensor.getNumElements() > kMaxElements)
    return false;
  Type element = tensor.getElementType();
  return element.isIntOrIndexOrFloat();
}

/// The indices of `extract` if it is a host read (directly in a function
/// body) of a small tensor at constant, in-range indices.
std::optional<SmallVector<int64_t>> hostRead(tensor::ExtractOp extract) {
  if (!isa_and_nonnull<func::FuncOp>(extract->getParentOp()) ||
      !isSmall(extract.getTensor().getType()))
    return std::nullopt;
  ArrayRef<int64_t> shape = extract.getTensor().getType().getShape();
  SmallVector<int64_t> indices;
  for (auto [i, index] : llvm::enumerate(extract.getIndices())) {
    std::optional<int64_t> value = getConstantIntValue(index);
    if (!value || *value < 0 || *value >= shape[i])
      return std::nullopt;
    indices.push_back(*value);
  }
  return indices;
}

/// tensor.extract of `tensor` at constant `indices`.
Value extractAt(PatternRewriter &rewriter, Location loc, Value tensor,
                ArrayRef<int64_t> indices) {
  SmallVector<Value> values;
  for (int64_t index : indices)
    values.push_back(arith::ConstantIndexOp::create(rewriter, loc, index));
  return tensor::ExtractOp::create(rewriter, loc, tensor, values);
}

/// Row-major linear position of `indices` in `shape`, and back.
int64_t linearize(ArrayRef<int64_t> indices, ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (auto [index, size] : llvm::zip_equal(indices, shape))
    linear = linear * size + index;
  return linear;
}
SmallVector<int64_t> delinearize(int64_t linear, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> indices(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    indices[i] = linear % shape[i];
    linear /= shape[i];
  }
  return indices;
}

/// Whether the host may run `op` of a linalg body for one element.
bool isScalarOp(Operation &op) {
  if (op.getNumRegions() != 0)
    return false;
  return isa<linalg::IndexOp, linalg::YieldOp, tensor::ExtractOp>(op) || isMemoryEffectFree(&op);
}

/// extract(linalg op, I) -> its body for the iteration that writes I, the
/// reduction dims unrolled (their accumulator chained through the steps).
struct ExtractOfStructured final : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> indices = hostRead(extract);
    auto result = dyn_cast<OpResult>(extract.getTensor());
    if (!indices || !result)
      return failure();
    auto op = dyn_cast<linalg::LinalgOp>(result.getOwner());
    if (!op || !op.hasPureTensorSemantics() || op->getNumRegions() != 1 ||
        !llvm::all_of(op.getBlock()->getOperations(), isScalarOp))
      return failure();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return failure();
    // The written element fixes the dims of its output map (a projected
    // permutation); the others must be reductions, enumerated below.
    OpOperand *init = op.getDpsInitOperand(result.getResultNumber());
    AffineMap outMap = op.getMatchingIndexingMap(init);
    if (!outMap.isProjectedPermutation() || outMap.getNumSymbols() != 0)
      return failure();
    SmallVector<int64_t> point(ranges.size(), 0);
    SmallVector<bool> fixed(ranges.size(), false);
    for (auto [k, expr] : llvm::enumerate(outMap.getResults())) {
      unsigned dim = cast<AffineDimExpr>(expr).getPosition();
      point[dim] = (*indices)[k];
      fixed[dim] = true;
    }
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    SmallVector<unsigned> reductionDims;
    int64_t steps = 1;
    for (unsigned dim = 0; dim < ranges.size(); ++dim) {
      if (fixed[dim])
        continue;
      if (iterators[dim] != utils::IteratorType::reduction)
        return failure();
      reductionDims.push_back(dim);
      steps *= ranges[dim];
      if (steps > kMaxReductionSteps)
        return failure();
    }
    if (steps == 0)
      return failure(); // an empty reduction: the init's element (rare; left as is)

    Location loc = extract.getLoc();
    Block *body = op.getBlock();
    unsigned numInputs = op.getNumDpsInputs();
    // Output block arguments: the inits' elements, then each step's yields.
    SmallVector<Value> accumulators(op.getNumDpsInits());
    for (OpOperand &out : op.getDpsInitsMutable()) {
      unsigned i = out.getOperandNumber() - numInputs;
      if (body->getArgument(numInputs + i).use_empty())
        continue;
      SmallVector<int64_t> at = op.getMatchingIndexingMap(&out).compose(point);
      accumulators[i] = extractAt(rewriter, loc, out.get(), at);
    }
    for (int64_t step = 0; step < steps; ++step) {
      int64_t rest = step;
      for (unsigned dim : llvm::reverse(reductionDims)) {
        point[dim] = rest % ranges[dim];
        rest /= ranges[dim];
      }
      IRMapping mapping;
      for (OpOperand *in : op.getDpsInputOperands()) {
        BlockArgument arg = body->getArgument(in->getOperandNumber());
        if (arg.use_empty())
          continue;
        if (!isa<ShapedType>(in->get().getType())) {
          mapping.map(arg, in->get());
          continue;
        }
        SmallVector<int64_t> at = op.getMatchingIndexingMap(in).compose(point);
        mapping.map(arg, extractAt(rewriter, loc, in->get(), at));
      }
      for (auto [i, accumulator] : llvm::enumerate(accumulators))
        if (accumulator)
          mapping.map(body->getArgument(numInputs + i), accumulator);
      for (Operation &bodyOp : body->without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(bodyOp)) {
          Value position = arith::ConstantIndexOp::create(rewriter, loc, point[index.getDim()]);
          mapping.map(index.getResult(), position);
          continue;
        }
        rewriter.clone(bodyOp, mapping);
      }
      auto yield = cast<linalg::YieldOp>(body->getTerminator());
      for (auto [i, value] : llvm::enumerate(yield.getValues()))
        accumulators[i] = mapping.lookupOrDefault(value);
    }
    rewriter.replaceOp(extract, accumulators[result.getResultNumber()]);
    return success();
  }
};

/// A host read of a slice op's result with static offsets, sizes and
/// strides: the op, the read's indices, and the slice.
template <typename SliceOp>
struct SliceRead {
  SliceOp op;
  SmallVector<int64_t> indices, offsets, sizes, strides;
  llvm::SmallBitVector dropped; // dims of the larger tensor the other lacks

  static std::optional<SliceRead> match(tensor::ExtractOp extract) {
    std::optional<SmallVector<int64_t>> indices = hostRead(extract);
    auto op = extract.getTensor().getDefiningOp<SliceOp>();
    if (!indices || !op)
      return std::nullopt;
    SliceRead read{op, *indices, SmallVector<int64_t>(op.getStaticOffsets()),
                   SmallVector<int64_t>(op.getStaticSizes()),
                   SmallVector<int64_t>(op.getStaticStrides()), op.getDroppedDims()};
    auto dynamic = [](int64_t v) { return ShapedType::isDynamic(v); };
    if (llvm::any_of(read.offsets, dynamic) || llvm::any_of(read.sizes, dynamic) ||
        llvm::any_of(read.strides, dynamic))
      return std::nullopt;
    return read;
  }
};

/// extract(insert_slice(src into dst), I) -> extract(src, ...) inside the
/// slice, extract(dst, I) outside it (a concat's inputs).
struct ExtractOfInsertSlice final : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto read = SliceRead<tensor::InsertSliceOp>::match(extract);
    if (!read)
      return failure();
    SmallVector<int64_t> inner;
    bool inside = true;
    for (auto [dim, index] : llvm::enumerate(read->indices)) {
      int64_t relative = index - read->offsets[dim], stride = read->strides[dim];
      if (relative < 0 || relative % stride != 0 || relative / stride >= read->sizes[dim]) {
        inside = false;
        break;
      }
      if (!read->dropped.test(dim))
        inner.push_back(relative / stride);
    }
    Location loc = extract.getLoc();
    rewriter.replaceOp(extract, inside ? extractAt(rewriter, loc, read->op.getSource(), inner)
                                       : extractAt(rewriter, loc, read->op.getDest(),
                                                   read->indices));
    return success();
  }
};

/// extract(extract_slice(src), I) -> extract(src, offsets + I * strides).
struct ExtractOfExtractSlice final : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    auto read = SliceRead<tensor::ExtractSliceOp>::match(extract);
    if (!read)
      return failure();
    SmallVector<int64_t> outer;
    unsigned next = 0;
    for (unsigned dim = 0; dim < read->offsets.size(); ++dim) {
      int64_t index = read->dropped.test(dim) ? 0 : read->indices[next++];
      outer.push_back(read->offsets[dim] + index * read->strides[dim]);
    }
    rewriter.replaceOp(extract,
                       extractAt(rewriter, extract.getLoc(), read->op.getSource(), outer));
    return success();
  }
};

/// extract(reshape-like(src), I) -> extract(src, same row-major position),
/// both shapes static (collapse_shape, expand_shape, reshape, cast).
struct ExtractOfReshape final : OpRewritePattern<tensor::ExtractOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractOp extract,
                                PatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> indices = hostRead(extract);
    Operation *op = extract.getTensor().getDefiningOp();
    if (!indices || !isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                                     tensor::ReshapeOp, tensor::CastOp>(op))
      return failure();
    auto source = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (!source || !source.hasStaticShape())
      return failure();
    int64_t linear = linearize(*indices, extract.getTensor().getType().getShape());
    rewriter.replaceOp(extract, extractAt(rewriter, extract.getLoc(), op->getOperand(0),
                                          delinearize(linear, source.getShape())));
    return success();
  }
};

/// tensor.reshape to a computed shape (dynamic result, small static shape
/// operand) -> a collapse to one dim and an expand sized by the shape's
/// elements, which the patterns above turn into host scalars.
struct ReshapeToViews final : OpRewritePattern<tensor::ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ReshapeOp reshape,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(reshape.getResult().getType());
    auto input = dyn_cast<RankedTensorType>(reshape.getSource().getType());
    if (!type || type.hasStaticShape() || !input || input.getRank() == 0 ||
        !isSmall(reshape.getShape().getType()) ||
        !isa_and_nonnull<func::FuncOp>(reshape->getParentOp()))
      return failure();
    Location loc = reshape.getLoc();
    Value flat = reshape.getSource();
    auto flatType = RankedTensorType::get({ShapedType::kDynamic}, type.getElementType());
    if (input.getRank() > 1) {
      ReassociationIndices all(llvm::to_vector(llvm::seq<int64_t>(0, input.getRank())));
      int64_t count = input.hasStaticShape() ? input.getNumElements() : ShapedType::kDynamic;
      flat = tensor::CollapseShapeOp::create(
          rewriter, loc, RankedTensorType::get({count}, type.getElementType()), flat,
          ArrayRef<ReassociationIndices>{all});
    }
    if (flat.getType() != flatType)
      flat = tensor::CastOp::create(rewriter, loc, flatType, flat);
    if (type.getRank() == 1) {
      rewriter.replaceOp(reshape, flat);
      return success();
    }
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < type.getRank(); ++i) {
      if (!type.isDynamicDim(i)) {
        sizes.push_back(rewriter.getIndexAttr(type.getDimSize(i)));
        continue;
      }
      Value entry = extractAt(rewriter, loc, reshape.getShape(), {i});
      if (!entry.getType().isIndex())
        entry = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), entry);
      sizes.push_back(entry);
    }
    ReassociationIndices all(llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        reshape, type, flat, ArrayRef<ReassociationIndices>{all}, sizes);
    return success();
  }
};

struct KilnCUDAHostShapesPass final : impl::KilnCUDAHostShapesPassBase<KilnCUDAHostShapesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Only the host reads and what replaces them are rewritten (and
    // folded): the rest of the function stays as the earlier stages left it.
    SmallVector<Operation *> reads;
    for (Operation &op : func.getBody().front())
      if (isa<tensor::ExtractOp, tensor::ReshapeOp>(op))
        reads.push_back(&op);
    if (reads.empty())
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<ExtractOfStructured, ExtractOfInsertSlice, ExtractOfExtractSlice,
                 ExtractOfReshape, ReshapeToViews>(&getContext());
    tensor::ExtractOp::getCanonicalizationPatterns(patterns, &getContext());
    arith::IndexCastOp::getCanonicalizationPatterns(patterns, &getContext());
    // Each rewrite moves a read one producer up; the cap bounds compile time
    // on pathological chains. Reads left over (not converged, or not
    // computable) are valid IR that kiln-cuda-serial-kernels diagnoses.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps)
        .enableFolding()
        .setMaxNumRewrites(kMaxRewrites);
    (void)applyOpPatternsGreedily(reads, std::move(patterns), config);
    // The shape tensors no one reads any more (users after producers, so
    // one backward sweep removes whole chains).
    Block &body = func.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isOpTriviallyDead(&op))
        op.erase();
  }
};

} // namespace
} // namespace kiln
