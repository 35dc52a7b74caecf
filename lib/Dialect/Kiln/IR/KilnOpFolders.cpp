//===- KilnOpFolders.cpp - Folders and canonicalization patterns of kiln ops ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Each rewrite states its law. Folders on values only fire on small tensors
// (kMaxFoldElements): folding is for shape arithmetic and tiny constants; the
// graph stage's constant-folding pass handles large ones under its own limit.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/CommonFolders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;

namespace kiln {

static constexpr int64_t kMaxFoldElements = 1 << 16;

/// True when `attr` is a splat constant equal to `value` (integer or float).
static bool isSplatOf(Attribute attr, double value) {
  auto splat = dyn_cast_or_null<SplatElementsAttr>(attr);
  if (!splat)
    return false;
  Type element = splat.getElementType();
  if (isa<FloatType>(element))
    return splat.getSplatValue<APFloat>().convertToDouble() == value;
  if (isa<IntegerType>(element))
    return splat.getSplatValue<APInt>().getSExtValue() == static_cast<int64_t>(value);
  return false;
}

/// Elementwise fold of two equally typed constants into the result type.
template <typename IntFn, typename FloatFn>
static Attribute foldSameTypeBinary(ArrayRef<Attribute> operands, Value lhs,
                                    Value rhs, Type resultType, IntFn intFn,
                                    FloatFn floatFn) {
  if (lhs.getType() != rhs.getType() || lhs.getType() != resultType)
    return {};
  auto type = cast<RankedTensorType>(resultType);
  if (!type.hasStaticShape() || type.getNumElements() > kMaxFoldElements)
    return {};
  if (isa<IntegerType>(type.getElementType()))
    return constFoldBinaryOp<IntegerAttr, APInt, void>(operands, resultType, intFn);
  if (isa<FloatType>(type.getElementType()))
    return constFoldBinaryOp<FloatAttr, APFloat, void>(operands, resultType, floatFn);
  return {};
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValueAttr(); }

// neg(neg(x)) = x
OpFoldResult NegOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NegOp>())
    return inner.getInput();
  return {};
}

// not(not(x)) = x
OpFoldResult NotOp::fold(FoldAdaptor) {
  if (auto inner = getInput().getDefiningOp<NotOp>())
    return inner.getInput();
  return {};
}

/// Elementwise fold of a small float constant by `fn` (same type in and out).
template <typename FloatFn>
static Attribute foldFloatUnary(Attribute operand, Type resultType, FloatFn fn) {
  auto type = cast<RankedTensorType>(resultType);
  if (!type.hasStaticShape() || type.getNumElements() > kMaxFoldElements ||
      !isa<FloatType>(type.getElementType()))
    return {};
  return constFoldUnaryOp<FloatAttr, APFloat, void>(ArrayRef<Attribute>{operand},
                                                    fn);
}

// floor(c) = c' and ceil(c) = c' on constants
OpFoldResult FloorOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getInput(), getType(), [](const APFloat &a) {
    APFloat r = a;
    r.roundToIntegral(APFloat::rmTowardNegative);
    return r;
  });
}
OpFoldResult CeilOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getInput(), getType(), [](const APFloat &a) {
    APFloat r = a;
    r.roundToIntegral(APFloat::rmTowardPositive);
    return r;
  });
}

// relu(c) = max(c, 0) on float constants (NaN stays NaN)
OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  return foldFloatUnary(adaptor.getInput(), getType(), [](const APFloat &a) {
    return a.isNegative() && !a.isNaN() ? APFloat::getZero(a.getSemantics()) : a;
  });
}

// clip(x, -inf, inf) = x
OpFoldResult ClipOp::fold(FoldAdaptor) {
  if (!getMin() && !getMax())
    return getInput();
  return {};
}

/// Whether every value of element type `from` converts to `to` and back
/// unchanged (integer widening of the same signedness, float widening,
/// integers into a float mantissa that holds them).
static bool isLosslessConversion(Type from, Type to) {
  if (from == to)
    return true;
  auto fromInt = dyn_cast<IntegerType>(from), toInt = dyn_cast<IntegerType>(to);
  if (fromInt && toInt) {
    if (fromInt.getWidth() == 1)
      return true; // 0 and 1 survive any integer type
    return fromInt.getSignedness() == toInt.getSignedness() &&
           toInt.getWidth() > fromInt.getWidth();
  }
  auto toFloat = dyn_cast<FloatType>(to);
  if (!toFloat)
    return false;
  if (auto fromFloat = dyn_cast<FloatType>(from))
    return APFloat::isRepresentableBy(fromFloat.getFloatSemantics(),
                                      toFloat.getFloatSemantics());
  if (fromInt)
    return fromInt.getWidth() <= toFloat.getFPMantissaWidth();
  return false;
}

/// cast(c) for a small float constant into a float, a signless integer (in
/// range values only: out-of-range conversion is not defined) or a bool
/// (c != 0), and for a small integer constant into a float; integer to
/// integer casts are the shape folder's (import) or the constant-folding
/// pass's. Not into floats of 8 bits or fewer: their saturation, NaN and
/// rounding rules (kiln.cast's `saturate`, `round_mode`) are not APFloat's.
static Attribute foldConstantCast(Attribute operand, RankedTensorType type) {
  if (!type.hasStaticShape() || type.getNumElements() > kMaxFoldElements)
    return {};
  Type to = type.getElementType();
  if (isa<FloatType>(to) && to.getIntOrFloatBitWidth() <= 8)
    return {};
  // Integers into floats (signless as signed, i1 and unsigned as unsigned).
  if (auto ints = dyn_cast_or_null<DenseIntElementsAttr>(operand)) {
    auto toFloat = dyn_cast<FloatType>(to);
    if (!toFloat)
      return {};
    auto from = cast<IntegerType>(ints.getElementType());
    bool isSigned = !from.isUnsigned() && from.getWidth() > 1;
    SmallVector<APFloat> out;
    for (const APInt &v : ints.getValues<APInt>()) {
      APFloat f(toFloat.getFloatSemantics());
      f.convertFromAPInt(v, isSigned, APFloat::rmNearestTiesToEven);
      out.push_back(f);
    }
    return DenseFPElementsAttr::get(type, out);
  }
  auto value = dyn_cast_or_null<DenseFPElementsAttr>(operand);
  if (!value)
    return {};
  if (auto toFloat = dyn_cast<FloatType>(to)) {
    SmallVector<APFloat> out;
    for (APFloat v : value.getValues<APFloat>()) {
      bool lost;
      v.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(v);
    }
    return DenseFPElementsAttr::get(type, out);
  }
  auto toInt = dyn_cast<IntegerType>(to);
  if (!toInt || toInt.isUnsigned())
    return {};
  SmallVector<APInt> out;
  for (const APFloat &v : value.getValues<APFloat>()) {
    if (toInt.getWidth() == 1) {
      out.push_back(APInt(1, v.isZero() ? 0 : 1));
      continue;
    }
    APSInt result(toInt.getWidth(), /*isUnsigned=*/false);
    bool exact;
    if (v.convertToInteger(result, APFloat::rmTowardZero, &exact) & APFloat::opInvalidOp)
      return {};
    out.push_back(result);
  }
  return DenseIntElementsAttr::get(type, out);
}

// cast(x : T -> T) = x;
// cast(cast(x : A -> B) -> C) = cast(x : A -> C) when A -> B is lossless
OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (Attribute folded = foldConstantCast(adaptor.getInput(), getType()))
    return folded;
  if (auto inner = getInput().getDefiningOp<CastOp>()) {
    Type a = inner.getInput().getType().getElementType();
    Type b = inner.getType().getElementType();
    if (isLosslessConversion(a, b)) {
      if (inner.getInput().getType() == getType())
        return inner.getInput();
      getInputMutable().assign(inner.getInput());
      return getResult();
    }
  }
  return {};
}

// select(c, x, x) = x
OpFoldResult SelectOp::fold(FoldAdaptor) {
  if (getOnTrue() == getOnFalse() && getOnTrue().getType() == getType())
    return getOnTrue();
  return {};
}

// x + 0 = x;  c1 + c2 = c
OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0) && getLhs().getType() == getType())
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 0) && getRhs().getType() == getType())
    return getRhs();
  return foldSameTypeBinary(
      adaptor.getOperands(), getLhs(), getRhs(), getType(),
      [](const APInt &a, const APInt &b) { return a + b; },
      [](const APFloat &a, const APFloat &b) { return a + b; });
}

// x - 0 = x;  c1 - c2 = c;  x - x = 0 for integers only (NaN - NaN and
// inf - inf are NaN, so not for floats)
OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 0) && getLhs().getType() == getType())
    return getLhs();
  if (getLhs() == getRhs() && isa<IntegerType>(getType().getElementType()) &&
      getType().hasStaticShape())
    return DenseElementsAttr::get(getType(),
                                  IntegerAttr::get(getType().getElementType(), 0));
  return foldSameTypeBinary(
      adaptor.getOperands(), getLhs(), getRhs(), getType(),
      [](const APInt &a, const APInt &b) { return a - b; },
      [](const APFloat &a, const APFloat &b) { return a - b; });
}

// x * 1 = x;  c1 * c2 = c
OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1) && getLhs().getType() == getType())
    return getLhs();
  if (isSplatOf(adaptor.getLhs(), 1) && getRhs().getType() == getType())
    return getRhs();
  return foldSameTypeBinary(
      adaptor.getOperands(), getLhs(), getRhs(), getType(),
      [](const APInt &a, const APInt &b) { return a * b; },
      [](const APFloat &a, const APFloat &b) { return a * b; });
}

// x / 1 = x;  c1 / c2 = c (integer division by zero is left alone)
OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1) && getLhs().getType() == getType())
    return getLhs();
  bool divByZero = false;
  Attribute folded = foldSameTypeBinary(
      adaptor.getOperands(), getLhs(), getRhs(), getType(),
      [&](const APInt &a, const APInt &b) {
        if (b.isZero()) {
          divByZero = true;
          return a;
        }
        return a.sdiv(b);
      },
      [](const APFloat &a, const APFloat &b) { return a / b; });
  return divByZero ? Attribute() : folded;
}

// pow(x, 1) = x
OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  if (isSplatOf(adaptor.getRhs(), 1) && getLhs().getType() == getType())
    return getLhs();
  return {};
}

namespace {
// pow(x, 2) = x * x (a multiply instead of exp/log)
struct PowTwoToMul final : OpRewritePattern<PowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(PowOp op, PatternRewriter &rewriter) const override {
    Attribute exponent;
    if (!matchPattern(op.getRhs(), m_Constant(&exponent)) || !isSplatOf(exponent, 2) ||
        op.getLhs().getType() != op.getType())
      return failure();
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getLhs(), op.getLhs());
    return success();
  }
};

// x / c = x * (1 / c) for a float splat c whose reciprocal is finite
struct DivByConstantToMul final : OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(DivOp op, PatternRewriter &rewriter) const override {
    SplatElementsAttr splat;
    if (!matchPattern(op.getRhs(), m_Constant(&splat)) ||
        !isa<FloatType>(splat.getElementType()))
      return failure();
    APFloat reciprocal(splat.getSplatValue<APFloat>().getSemantics(), 1);
    if (reciprocal.divide(splat.getSplatValue<APFloat>(), APFloat::rmNearestTiesToEven) &
        (APFloat::opDivByZero | APFloat::opOverflow | APFloat::opInvalidOp))
      return failure();
    auto type = cast<RankedTensorType>(op.getRhs().getType());
    Value scale = ConstantOp::create(
        rewriter, op.getLoc(),
        DenseElementsAttr::get(type, FloatAttr::get(type.getElementType(), reciprocal)));
    rewriter.replaceOpWithNewOp<MulOp>(op, op.getType(), op.getLhs(), scale);
    return success();
  }
};
} // namespace

void PowOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<PowTwoToMul>(context);
}

void DivOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<DivByConstantToMul>(context);
}

namespace {
/// gather(dequantize_linear(x, s, z), i) = dequantize_linear(gather(x, i), s, z)
/// for a per-tensor s and z: the rows are gathered as 8-bit values and only
/// they are dequantized (quantize_static's embedding tables: a [30522, 768]
/// table was dequantized whole on every run for 128 rows).
struct GatherOfDequantize final : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    auto dq = op.getInput().getDefiningOp<DequantizeLinearOp>();
    if (!dq || !dq->hasOneUse())
      return failure();
    for (Value v : {dq.getScale(), dq.getZeroPoint()}) {
      auto type = cast<RankedTensorType>(v.getType());
      if (!type.hasStaticShape() || type.getNumElements() != 1)
        return failure();
    }
    auto quantized = cast<RankedTensorType>(dq.getInput().getType());
    Value rows = GatherOp::create(rewriter, op.getLoc(),
                                  op.getType().clone(quantized.getElementType()),
                                  dq.getInput(), op.getIndices(), op.getAxisAttr());
    rewriter.replaceOpWithNewOp<DequantizeLinearOp>(op, op.getType(), rows, dq.getScale(),
                                                    dq.getZeroPoint(), dq.getAxisAttr());
    return success();
  }
};
} // namespace

void GatherOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<GatherOfDequantize>(context);
}

// reshape(x : T -> T) = x;  reshape(reshape(x)) = reshape(x);
// reshape(constant) = constant with the new shape
OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    if (!getShape() || getType().hasStaticShape()) {
      getInputMutable().assign(inner.getInput());
      return getResult();
    }
  }
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    if (getType().hasStaticShape())
      return dense.reshape(getType());
  return {};
}

namespace {
/// A reshape with a static result type no longer needs its shape operand.
struct DropStaticReshapeShape final : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getShape() || !op.getType().hasStaticShape())
      return failure();
    rewriter.modifyOpInPlace(op, [&] { op.getShapeMutable().clear(); });
    return success();
  }
};
} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                            MLIRContext *context) {
  patterns.add<DropStaticReshapeShape>(context);
}

// transpose(x, identity) = x;
// transpose(transpose(x, p), q) = transpose(x, p∘q) with (p∘q)[i] = p[q[i]]
OpFoldResult TransposeOp::fold(FoldAdaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())) &&
      getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t q : perm)
      composed.push_back(inner.getPerm()[q]);
    setPerm(composed);
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  return {};
}

// squeeze(unsqueeze(x)) = x when the squeeze removes exactly the inserted dims
OpFoldResult SqueezeOp::fold(FoldAdaptor) {
  auto inner = getInput().getDefiningOp<UnsqueezeOp>();
  if (!inner || inner.getInput().getType() != getType() || getAxes().empty())
    return {};
  int64_t rank = getInput().getType().getRank();
  auto normalize = [&](ArrayRef<int64_t> axes) {
    SmallVector<int64_t> out;
    for (int64_t a : axes)
      out.push_back(a < 0 ? a + rank : a);
    llvm::sort(out);
    return out;
  };
  if (normalize(getAxes()) != normalize(inner.getAxes()))
    return {};
  return inner.getInput();
}

// concat(x) = x
OpFoldResult ConcatOp::fold(FoldAdaptor) {
  if (getInputs().size() == 1 && getInputs().front().getType() == getType())
    return getInputs().front();
  return {};
}

// expand(x : T -> T) = x
OpFoldResult ExpandOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

// shape(x) = constant when the requested dims are static
OpFoldResult ShapeOp::fold(FoldAdaptor) {
  RankedTensorType input = getInput().getType();
  int64_t rank = input.getRank();
  auto clamp = [&](int64_t v) {
    if (v < 0)
      v += rank;
    return std::min(std::max<int64_t>(v, 0), rank);
  };
  int64_t start = clamp(getStart().value_or(0));
  int64_t end = std::max(start, clamp(getEnd().value_or(rank)));
  ArrayRef<int64_t> dims = input.getShape().slice(start, end - start);
  if (llvm::any_of(dims, ShapedType::isDynamic))
    return {};
  return DenseIntElementsAttr::get(getType(), dims);
}

// size(x) = constant when x has a static shape
OpFoldResult SizeOp::fold(FoldAdaptor) {
  std::optional<int64_t> count =
      staticElementCount(getInput().getType().getShape());
  if (!count)
    return {};
  return DenseIntElementsAttr::get(getType(), ArrayRef<int64_t>{*count});
}

} // namespace kiln
