//===- RotateHalfToLinalg.cpp - A concat that rotates one tensor ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Rotary position embeddings (Llama, Mistral, Qwen, ...) compute
// rotate_half(x) = concat(-x[..., h:], x[..., :h]) along the last axis, which
// exporters write as two slices of x, a neg and a concat. Lowered piece by
// piece that is a neg kernel writing half a buffer and a copy kernel
// writing the other half before the rotary product can read it. Here a
// concat of two slices of one tensor along the sliced axis that together
// rotate it, concat(x[h:n], x[0:h]) (either piece possibly negated), is one
// linalg.generic reading x at (j + h) mod n with the sign chosen by the
// output index: an elementwise producer that kiln-fuse-elementwise folds
// into its reader, so the rotary embedding of q (or k) is one kernel.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace kiln {
namespace {

/// One concat input: a slice [start, end) of `source` along one axis, step
/// 1, possibly negated.
struct Piece {
  Value source;
  int64_t start = 0, end = 0;
  bool negated = false;
};

std::optional<Piece> matchPiece(Value input, int64_t axis) {
  Piece piece;
  if (auto neg = input.getDefiningOp<NegOp>()) {
    piece.negated = true;
    input = neg.getInput();
  }
  auto slice = input.getDefiningOp<SliceOp>();
  if (!slice || slice.getAxes().size() != 1 || slice.getSteps()[0] != 1)
    return std::nullopt;
  auto sourceType = cast<RankedTensorType>(slice.getInput().getType());
  int64_t rank = sourceType.getRank();
  int64_t sliced = slice.getAxes()[0] < 0 ? slice.getAxes()[0] + rank : slice.getAxes()[0];
  if (sliced != axis || !sourceType.hasStaticShape() || !slice.getType().hasStaticShape())
    return std::nullopt;
  int64_t size = sourceType.getDimSize(axis);
  int64_t start = slice.getStarts()[0];
  if (start < 0)
    start = std::max<int64_t>(start + size, 0);
  piece.source = slice.getInput();
  piece.start = std::min(start, size);
  piece.end = piece.start + slice.getType().getDimSize(axis);
  return piece;
}

struct RotateHalfToLinalg final : OpConversionPattern<ConcatOp> {
  RotateHalfToLinalg(MLIRContext *context)
      : OpConversionPattern(context, /*benefit=*/2) {}

  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto result = cast<RankedTensorType>(op.getType());
    if (op.getInputs().size() != 2 || !result.hasStaticShape() ||
        !isa<FloatType>(result.getElementType()))
      return failure();
    int64_t rank = result.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    std::optional<Piece> high = matchPiece(op.getInputs()[0], axis);
    std::optional<Piece> low = matchPiece(op.getInputs()[1], axis);
    if (!high || !low || high->source != low->source ||
        high->source.getType() != RankedTensorType(result))
      return failure();
    // concat(x[h:n], x[0:h]) with 0 < h < n.
    int64_t n = result.getDimSize(axis), h = high->start;
    if (h <= 0 || h >= n || high->end != n || low->start != 0 || low->end != h)
      return failure();

    Location loc = op.getLoc();
    Value source = rewriter.getRemappedValue(high->source);
    if (!source)
      return failure();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr dim = rewriter.getAffineDimExpr(d);
      exprs.push_back(d == axis ? (dim + h) % n : dim);
    }
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, rewriter.getContext()),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    bool highNegated = high->negated, lowNegated = low->negated;
    Value init = lowering::createInit(rewriter, loc, result, {});
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, source, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value value = args[0];
          if (highNegated || lowNegated) {
            Value negated = arith::NegFOp::create(b, l, value);
            Value index = linalg::IndexOp::create(b, l, axis);
            Value inHigh = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, index,
                arith::ConstantIndexOp::create(b, l, n - h));
            value = arith::SelectOp::create(b, l, inHigh, highNegated ? negated : value,
                                            lowNegated ? negated : value);
          }
          linalg::YieldOp::create(b, l, value);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void populateRotateHalfToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<RotateHalfToLinalg>(patterns.getContext());
}

} // namespace kiln
