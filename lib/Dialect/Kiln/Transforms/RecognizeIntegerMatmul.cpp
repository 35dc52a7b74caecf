//===- RecognizeIntegerMatmul.cpp - The kiln-recognize-integer-matmul pass -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Quantized matmuls as exact integer products (an integer kiln.matmul): the
// 8-bit operands minus their zero points as i16, i16 x i16 products summed
// in i32, for the target's integer matmul kernel. Two forms:
//
// - QDQ (onnxruntime's quantize_static): QuantizeLinear(MatMul(
//   DequantizeLinear(x), DequantizeLinear(w))) with per-tensor x and y
//   parameters and a per-tensor or per-column w. The float product becomes
//   acc = (x - zx) @ (w - zw) in i32, requantized as onnxruntime's
//   QLinearMatMul does: f32(acc) * (sx * sw / sy) rounded half to even, plus
//   zy, saturated. So the result is onnxruntime's int8 one, not the float
//   product's quantization. Without the QuantizeLinear (`kilnc quantize`
//   leaves the product float) the result is f32(acc) * (sx * sw).
// - The importer's MatMulInteger / QLinearMatMul: an f64 matmul of
//   operands cast from 8-bit integers minus 8-bit zero points (exact
//   integers of at most 9 bits). The f64 product becomes
//   f64(matmul(i16(lhs), i16(rhs))), the same integers.
//
// Both need a static depth K <= 33025, so that no i32 sum of K products of
// at most 255 * 255 can wrap where the f64 or float one would not.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNRECOGNIZEINTEGERMATMULPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// The largest K whose sums of K products of 9-bit values stay in i32.
constexpr int64_t kMaxDepth = 2147483647LL / (255 * 255);

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isEightBit(Type t) { return t.isInteger(8); }

bool isOneElement(Value v) {
  RankedTensorType type = tensorOf(v);
  return type.hasStaticShape() && type.getNumElements() == 1;
}

/// lhs [..., M, K] and rhs [K, N] with a static K small enough.
bool isIntegerShape(MatmulOp op) {
  RankedTensorType lhs = tensorOf(op.getLhs()), rhs = tensorOf(op.getRhs());
  int64_t k = rhs.getRank() == 2 ? rhs.getDimSize(0) : ShapedType::kDynamic;
  return lhs.getRank() >= 2 && rhs.getRank() == 2 && !ShapedType::isDynamic(k) && k > 0 &&
         k <= kMaxDepth;
}

Value castTo(PatternRewriter &b, Location loc, Value v, Type element) {
  RankedTensorType type = tensorOf(v);
  if (type.getElementType() == element)
    return v;
  return CastOp::create(b, loc, type.clone(element), v);
}

Value scalar(PatternRewriter &b, Location loc, float value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(value)));
}

/// x - zero_point as i16 (exact: both are 8-bit integers).
Value shiftedI16(PatternRewriter &b, Location loc, Value x, Value zeroPoint) {
  Type i16 = b.getIntegerType(16);
  return SubOp::create(b, loc, castTo(b, loc, x, i16), castTo(b, loc, zeroPoint, i16));
}

/// The integer product of i16 `lhs` and `rhs`: a kiln.matmul of i16
/// operands has an i32 result (exact products, i32 sums).
Value integerProduct(PatternRewriter &b, Location loc, Value lhs, Value rhs) {
  return MatmulOp::create(b, loc, lhs, rhs);
}

/// dequantize_linear(x) and dequantize_linear(w) as a quantized matmul's
/// operands: f32 scales, 8-bit values, x per tensor, w ([K, N]) per tensor
/// or per column (axis 1).
bool isDequantizedPair(DequantizeLinearOp x, DequantizeLinearOp w) {
  if (!x || !w)
    return false;
  for (Value scale : {x.getScale(), w.getScale()})
    if (!tensorOf(scale).getElementType().isF32())
      return false;
  for (Value v : {x.getInput(), w.getInput()})
    if (!isEightBit(tensorOf(v).getElementType()))
      return false;
  if (!isOneElement(x.getScale()) || !isOneElement(x.getZeroPoint()))
    return false;
  RankedTensorType wScale = tensorOf(w.getScale());
  int64_t n = tensorOf(w.getInput()).getDimSize(1);
  auto axis = static_cast<int64_t>(w.getAxis());
  bool perColumn = wScale.getRank() == 1 && wScale.getDimSize(0) == n && n != 1 &&
                   (axis == 1 || axis == -1);
  if (!isOneElement(w.getScale()) && !perColumn)
    return false;
  return tensorOf(w.getZeroPoint()).getShape() == wScale.getShape() ||
         isOneElement(w.getZeroPoint());
}

/// quantize_linear(matmul(dequantize_linear(x), dequantize_linear(w))).
struct QDQMatmul final : OpRewritePattern<QuantizeLinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeLinearOp op, PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !isIntegerShape(matmul))
      return failure();
    auto x = matmul.getLhs().getDefiningOp<DequantizeLinearOp>();
    auto w = matmul.getRhs().getDefiningOp<DequantizeLinearOp>();
    Type f32 = rewriter.getF32Type();
    if (!isDequantizedPair(x, w) || tensorOf(op.getScale()).getElementType() != f32 ||
        !isEightBit(tensorOf(op.getZeroPoint()).getElementType()) ||
        !isOneElement(op.getScale()) || !isOneElement(op.getZeroPoint()))
      return failure();
    Location loc = rewriter.getFusedLoc({x.getLoc(), w.getLoc(), matmul.getLoc(), op.getLoc()});
    Value acc = integerProduct(rewriter, loc,
                               shiftedI16(rewriter, loc, x.getInput(), x.getZeroPoint()),
                               shiftedI16(rewriter, loc, w.getInput(), w.getZeroPoint()));
    // onnxruntime's requantization: the scale sx * sw / sy in f32.
    Value factor = DivOp::create(rewriter, loc,
                                 MulOp::create(rewriter, loc, x.getScale(), w.getScale()),
                                 op.getScale());
    Value y = MulOp::create(rewriter, loc, castTo(rewriter, loc, acc, f32), factor);
    y = RoundOp::create(rewriter, loc, y);
    y = AddOp::create(rewriter, loc, y, castTo(rewriter, loc, op.getZeroPoint(), f32));
    Type out = op.getType().getElementType();
    bool isUnsigned = out.isUnsignedInteger();
    y = MaxOp::create(rewriter, loc, y, scalar(rewriter, loc, isUnsigned ? 0.0f : -128.0f));
    y = MinOp::create(rewriter, loc, y, scalar(rewriter, loc, isUnsigned ? 255.0f : 127.0f));
    y = castTo(rewriter, loc, y, out);
    if (y.getType() != op.getType())
      return failure();
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// matmul(dequantize_linear(x), dequantize_linear(w)) with a float result
/// (`kilnc quantize` leaves the product float): f32(acc) * (sx * sw). Not
/// where a quantize_linear reads it (QDQMatmul takes that).
struct DQMatmul final : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    auto x = op.getLhs().getDefiningOp<DequantizeLinearOp>();
    auto w = op.getRhs().getDefiningOp<DequantizeLinearOp>();
    if (!isIntegerShape(op) || !isDequantizedPair(x, w) ||
        llvm::any_of(op->getUsers(), llvm::IsaPred<QuantizeLinearOp>))
      return failure();
    Location loc = rewriter.getFusedLoc({x.getLoc(), w.getLoc(), op.getLoc()});
    Value acc = integerProduct(rewriter, loc,
                               shiftedI16(rewriter, loc, x.getInput(), x.getZeroPoint()),
                               shiftedI16(rewriter, loc, w.getInput(), w.getZeroPoint()));
    Value factor = MulOp::create(rewriter, loc, x.getScale(), w.getScale());
    Value y = MulOp::create(rewriter, loc, castTo(rewriter, loc, acc, rewriter.getF32Type()),
                            factor);
    if (y.getType() != op.getType())
      return failure();
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// Whether `v` (f64) is an 8-bit integer tensor cast to f64, possibly
/// reshaped, or a dense constant of integers in [-255, 255].
bool isEightBitValued(Value v) {
  if (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  if (auto cast = v.getDefiningOp<CastOp>())
    return isEightBit(tensorOf(cast.getInput()).getElementType());
  DenseElementsAttr values;
  if (!matchPattern(v, m_Constant(&values)) || !isa<FloatType>(values.getElementType()))
    return false;
  return llvm::all_of(values.getValues<APFloat>(), [](const APFloat &x) {
    double d = x.convertToDouble();
    return d == std::nearbyint(d) && std::abs(d) <= 255;
  });
}

/// Whether `v` (f64) is cast(x) or cast(x) - z with 8-bit x and z, i.e.
/// an integer in [-255, 255].
bool isShiftedEightBit(Value v) {
  if (auto sub = v.getDefiningOp<SubOp>())
    return isEightBitValued(sub.getLhs()) && isEightBitValued(sub.getRhs()) &&
           sub.getLhs().getDefiningOp<CastOp>();
  auto cast = v.getDefiningOp<CastOp>();
  return cast && isEightBit(tensorOf(cast.getInput()).getElementType());
}

/// matmul(f64 operands that hold shifted 8-bit integers).
struct ShiftedIntegerMatmul final : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op, PatternRewriter &rewriter) const override {
    if (!op.getType().getElementType().isF64() || !isIntegerShape(op) ||
        !isShiftedEightBit(op.getLhs()) || !isShiftedEightBit(op.getRhs()))
      return failure();
    Location loc = op.getLoc();
    Type i16 = rewriter.getIntegerType(16);
    Value acc = integerProduct(rewriter, loc, castTo(rewriter, loc, op.getLhs(), i16),
                               castTo(rewriter, loc, op.getRhs(), i16));
    rewriter.replaceOp(op, castTo(rewriter, loc, acc, op.getType().getElementType()));
    return success();
  }
};

struct KilnRecognizeIntegerMatmulPass final
    : impl::KilnRecognizeIntegerMatmulPassBase<KilnRecognizeIntegerMatmulPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<QDQMatmul, DQMatmul, ShiftedIntegerMatmul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

} // namespace kiln
