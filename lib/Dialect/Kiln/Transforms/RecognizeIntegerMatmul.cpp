//===- RecognizeIntegerMatmul.cpp - The kiln-recognize-integer-matmul pass -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Quantized matmuls, Gemms and convs as exact integer products (an integer
// kiln.matmul): the 8-bit operands minus their zero points as i16, i16 x
// i16 products summed in i32, for the target's integer matmul kernel:
//
// - QDQ (onnxruntime's quantize_static): QuantizeLinear(MatMul(
//   DequantizeLinear(x), DequantizeLinear(w))) with per-tensor x and y
//   parameters and a per-tensor or per-column w. The float product becomes
//   acc = (x - zx) @ (w - zw) in i32, requantized as onnxruntime's
//   QLinearMatMul does: f32(acc) * (sx * sw / sy) rounded half to even, plus
//   zy, saturated. So the result is onnxruntime's int8 one, not the float
//   product's quantization. Without the QuantizeLinear (`kilnc quantize`
//   leaves the product float) the result is f32(acc) * (sx * sw).
// - QDQ Gemm (quantize_static's classifier heads, B usually transposed)
//   and QDQ Conv (one image, group 1, 2-D; a Relu or Clip before the
//   QuantizeLinear clamps the 8-bit result, Q being monotonic): the same,
//   plus quantize_static's int32 bias added to the i32 sums as onnxruntime
//   does. A conv is the matmul of its weights [M, KH * KW * C] (tap-major,
//   folded at compile time) and the im2col columns of its input
//   [KH * KW * C, OH * OW] (slices of the padded input joined tap after
//   tap), requantized per output channel (a row).
// - QDQ depthwise Conv: i32 sums of the 8-bit input's taps, requantized
//   (IntegerDepthwiseConv.cpp).
// - The importer's MatMulInteger / QLinearMatMul: an f64 matmul of
//   operands cast from 8-bit integers minus 8-bit zero points (exact
//   integers of at most 9 bits). The f64 product becomes
//   f64(matmul(i16(lhs), i16(rhs))), the same integers.
//
// All need a static depth K <= 33025, so that no i32 sum of K products of
// at most 255 * 255 can wrap where the f64 or float one would not.
//
//===----------------------------------------------------------------------===//

#include "QuantizedProducts.h"

#include "kiln/Dialect/Kiln/IR/ByteOperands.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNRECOGNIZEINTEGERMATMULPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace quantized {


/// The largest K whose sums of K products of 9-bit values stay in i32.
constexpr int64_t kMaxDepth = 2147483647LL / (255 * 255);
/// The most groups of a grouped conv written as one product per group.
constexpr int64_t kMaxGroups = 64;

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

/// The lowest value of `x` - zero_point (x 8-bit, u8 or s8 as `unsignedX`),
/// when the zero point is one constant: every element then lies in [low,
/// low + 255].
std::optional<int64_t> byteWindow(bool unsignedX, Value zeroPoint) {
  DenseElementsAttr values;
  if (!matchPattern(zeroPoint, m_Constant(&values)) || values.getNumElements() == 0)
    return std::nullopt;
  std::optional<double> zero;
  for (Attribute v : values.getValues<Attribute>()) {
    double z;
    if (auto i = dyn_cast<IntegerAttr>(v))
      z = i.getType().isUnsignedInteger() ? static_cast<double>(i.getUInt())
          : i.getType().isSignedInteger() ? static_cast<double>(i.getSInt())
                                          : static_cast<double>(i.getInt());
    else if (auto f = dyn_cast<FloatAttr>(v))
      z = f.getValueAsDouble();
    else
      return std::nullopt;
    if (z != std::nearbyint(z) || (zero && *zero != z))
      return std::nullopt;
    zero = z;
  }
  return (unsignedX ? 0 : -128) - static_cast<int64_t>(*zero);
}

/// byteWindow of x - zero_point for an 8-bit x.
std::optional<int64_t> byteWindow(Value x, Value zeroPoint) {
  return byteWindow(tensorOf(x).getElementType().isUnsignedInteger(), zeroPoint);
}

/// The integer product of i16 `lhs` and `rhs`: a kiln.matmul of i16
/// operands has an i32 result (exact products, i32 sums). `lhsBytes` and
/// `rhsBytes` are the operands' byte windows (kiln.lhs_bytes, kiln.rhs_bytes).
Value integerProduct(PatternRewriter &b, Location loc, Value lhs, Value rhs,
                     std::optional<int64_t> lhsBytes = std::nullopt,
                     std::optional<int64_t> rhsBytes = std::nullopt) {
  auto product = MatmulOp::create(b, loc, lhs, rhs);
  if (lhsBytes)
    product->setAttr(kLhsBytesAttr, b.getI64IntegerAttr(*lhsBytes));
  if (rhsBytes)
    product->setAttr(kRhsBytesAttr, b.getI64IntegerAttr(*rhsBytes));
  return product;
}

/// The 8-bit range of quantize_linear `q`'s result.
std::pair<float, float> outputRange(QuantizeLinearOp q) {
  bool isUnsigned = q.getType().getElementType().isUnsignedInteger();
  return isUnsigned ? std::pair(0.0f, 255.0f) : std::pair(-128.0f, 127.0f);
}

/// onnxruntime's requantization of the i32 `acc` into `q`'s result:
/// f32(acc) * factor (f32), rounded half to even, plus the zero point,
/// clamped to `range` (the 8-bit range, or a narrower one), cast.
Value requantize(PatternRewriter &b, Location loc, Value acc, Value factor,
                 QuantizeLinearOp q, std::pair<float, float> range) {
  Type f32 = b.getF32Type();
  Value y = MulOp::create(b, loc, castTo(b, loc, acc, f32), factor);
  y = RoundOp::create(b, loc, y);
  y = AddOp::create(b, loc, y, castTo(b, loc, q.getZeroPoint(), f32));
  y = MaxOp::create(b, loc, y, scalar(b, loc, range.first));
  y = MinOp::create(b, loc, y, scalar(b, loc, range.second));
  return castTo(b, loc, y, q.getType().getElementType());
}

/// onnxruntime's requantization scale of a quantized product: sx * sw / sy
/// in f32 (per tensor, or per output channel with w's scale).
Value requantizationFactor(PatternRewriter &b, Location loc, DequantizeLinearOp x,
                           DequantizeLinearOp w, QuantizeLinearOp q) {
  return DivOp::create(b, loc, MulOp::create(b, loc, x.getScale(), w.getScale()), q.getScale());
}

/// dequantize_linear(x) and dequantize_linear(w) as a quantized product's
/// operands: f32 scales, 8-bit values, x per tensor, w per tensor or per
/// output channel, w's dim `channelAxis` (a matmul's columns, 1; a conv's
/// or a transposed Gemm B's rows, 0).
bool isDequantizedPair(DequantizeLinearOp x, DequantizeLinearOp w, int64_t channelAxis) {
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
  RankedTensorType wScale = tensorOf(w.getScale()), wType = tensorOf(w.getInput());
  int64_t n = wType.getDimSize(channelAxis);
  auto axis = static_cast<int64_t>(w.getAxis());
  bool perChannel = wScale.getRank() == 1 && wScale.getDimSize(0) == n && n != 1 &&
                    (axis == channelAxis || axis + wType.getRank() == channelAxis);
  if (!isOneElement(w.getScale()) && !perChannel)
    return false;
  return tensorOf(w.getZeroPoint()).getShape() == wScale.getShape() ||
         isOneElement(w.getZeroPoint());
}

/// A quantize_linear to 8 bits with a per-tensor f32 scale.
bool isPerTensorQuantize(QuantizeLinearOp op) {
  return tensorOf(op.getScale()).getElementType().isF32() &&
         isEightBit(tensorOf(op.getZeroPoint()).getElementType()) &&
         isOneElement(op.getScale()) && isOneElement(op.getZeroPoint());
}

/// The values of a constant `v` (dense or a resource blob).
std::optional<consteval::Literal> constantValues(Value v) {
  ElementsAttr values;
  if (!matchPattern(v, m_Constant(&values)))
    return std::nullopt;
  return consteval::readLiteral(values);
}

/// The f32 values of a constant `v`.
std::optional<SmallVector<float>> constantFloats(Value v) {
  std::optional<consteval::Literal> values = constantValues(v);
  if (!values || !tensorOf(v).getElementType().isF32())
    return std::nullopt;
  return llvm::map_to_vector(values->floats, [](double x) { return static_cast<float>(x); });
}

/// A conv's int32 bias written by quantize_static, dequantize_linear(b, sx *
/// sw, 0): the i32 values to add to the accumulators ([M, 1]), or null when
/// the bias is not that (onnxruntime adds b to the i32 sums and ignores its
/// scale, so the rewrite needs the scale to be sx * sw: equal in f32 up to
/// a relative 2^-20, quantize_static's rounding of the product).
Value integerBias(PatternRewriter &b, Location loc, Value bias, DequantizeLinearOp x,
                  DequantizeLinearOp w, int64_t channels, ArrayRef<int64_t> shape) {
  auto dq = bias.getDefiningOp<DequantizeLinearOp>();
  if (!dq || !tensorOf(dq.getInput()).getElementType().isInteger(32))
    return {};
  std::optional<SmallVector<float>> sx = constantFloats(x.getScale()),
                                    sw = constantFloats(w.getScale()),
                                    sb = constantFloats(dq.getScale());
  std::optional<consteval::Literal> zero = constantValues(dq.getZeroPoint());
  if (!sx || !sw || !sb || !zero || !llvm::all_of(zero->ints, [](int64_t z) { return z == 0; }))
    return {};
  for (int64_t c = 0; c < channels; ++c) {
    float expected = (*sx)[0] * (*sw)[sw->size() == 1 ? 0 : c];
    float got = (*sb)[sb->size() == 1 ? 0 : c];
    if (std::abs(got - expected) > std::abs(expected) * 0x1p-20f)
      return {};
  }
  RankedTensorType type = tensorOf(dq.getInput());
  if (!type.hasStaticShape() || (type.getNumElements() != channels && type.getNumElements() != 1))
    return {};
  return ReshapeOp::create(b, loc, RankedTensorType::get(shape, type.getElementType()),
                           dq.getInput(), Value());
}

/// The range of `q`'s result left by the activation between a conv and
/// q (relu: from Q(0) = zy; clip: [Q(min), Q(max)]), Q being monotonic:
/// Q(act(v)) = clamp(Q(v), Q(lo), Q(hi)). Sets `conv` to the conv read.
std::optional<std::pair<float, float>> activationRange(QuantizeLinearOp q, Value input,
                                                       ConvOp &conv) {
  std::pair<float, float> range = outputRange(q);
  std::optional<SmallVector<float>> sy = constantFloats(q.getScale());
  std::optional<consteval::Literal> zy = constantValues(q.getZeroPoint());
  auto quantized = [&](double v) { // saturate(round(v / sy) + zy)
    float y = std::nearbyint(static_cast<float>(v) / (*sy)[0]) + static_cast<float>(zy->ints[0]);
    return std::clamp(y, range.first, range.second);
  };
  Operation *act = input.getDefiningOp();
  if (act && isa<ReluOp, ClipOp>(act)) {
    if (!act->hasOneUse() || !sy || !zy)
      return std::nullopt;
    input = act->getOperand(0);
    if (isa<ReluOp>(act)) {
      range.first = std::max(range.first, quantized(0.0));
    } else {
      auto clip = cast<ClipOp>(act);
      if (clip.getMin())
        range.first = std::max(range.first, quantized(clip.getMin()->convertToDouble()));
      if (clip.getMax())
        range.second = std::min(range.second, quantized(clip.getMax()->convertToDouble()));
    }
  }
  conv = input.getDefiningOp<ConvOp>();
  if (!conv || !conv->hasOneUse())
    return std::nullopt;
  return range;
}

} // namespace quantized

namespace {

using namespace quantized;

/// quantize_linear(matmul(dequantize_linear(x), dequantize_linear(w))).
struct QDQMatmul final : OpRewritePattern<QuantizeLinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeLinearOp op, PatternRewriter &rewriter) const override {
    auto matmul = op.getInput().getDefiningOp<MatmulOp>();
    if (!matmul || !matmul->hasOneUse() || !isIntegerShape(matmul))
      return failure();
    auto x = matmul.getLhs().getDefiningOp<DequantizeLinearOp>();
    auto w = matmul.getRhs().getDefiningOp<DequantizeLinearOp>();
    if (!isDequantizedPair(x, w) || !isPerTensorQuantize(op))
      return failure();
    Location loc = rewriter.getFusedLoc({x.getLoc(), w.getLoc(), matmul.getLoc(), op.getLoc()});
    Value acc = integerProduct(rewriter, loc,
                               shiftedI16(rewriter, loc, x.getInput(), x.getZeroPoint()),
                               shiftedI16(rewriter, loc, w.getInput(), w.getZeroPoint()),
                               byteWindow(x.getInput(), x.getZeroPoint()),
                               byteWindow(w.getInput(), w.getZeroPoint()));
    Value factor = requantizationFactor(rewriter, loc, x, w, op);
    Value y = requantize(rewriter, loc, acc, factor, op, outputRange(op));
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
                               shiftedI16(rewriter, loc, w.getInput(), w.getZeroPoint()),
                               byteWindow(x.getInput(), x.getZeroPoint()),
                               byteWindow(w.getInput(), w.getZeroPoint()));
    Value factor = MulOp::create(rewriter, loc, x.getScale(), w.getScale());
    Value y = MulOp::create(rewriter, loc, castTo(rewriter, loc, acc, rewriter.getF32Type()),
                            factor);
    if (y.getType() != op.getType())
      return failure();
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// The columns of the conv [1, C, H, W] -> [1, M, OH, OW] of the 8-bit x
/// minus its zero point as an integer matmul's B, [T * C, OH * OW] (i16)
/// with row t * C + c the window of tap t (its kh x kw offsets, row-major)
/// of channel c: the input itself for a 1x1 stride-1 conv without padding
/// (reshaped before the shift, so the shift is a loop over [C, H * W], not
/// over rows of W, and reads what the producer wrote in that shape), else
/// slices of the padded input joined tap after tap (im2col).
Value convColumns(PatternRewriter &b, Location loc, ConvOp conv, Value x, Value zeroPoint,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> out) {
  ArrayRef<int64_t> strides = conv.getStrides(), dilations = conv.getDilations(),
                    pads = conv.getPads();
  RankedTensorType type = tensorOf(x);
  int64_t channels = type.getDimSize(1), taps = kernel[0] * kernel[1];
  auto columnsType = RankedTensorType::get({taps * channels, out[0] * out[1]}, b.getI16Type());
  bool padded = llvm::any_of(pads, [](int64_t p) { return p != 0; });
  if (taps == 1 && !padded && strides[0] == 1 && strides[1] == 1)
    return shiftedI16(b, loc,
                      ReshapeOp::create(b, loc, columnsType.clone(type.getElementType()), x,
                                        Value()),
                      zeroPoint);
  x = shiftedI16(b, loc, x, zeroPoint);
  if (padded)
    x = PadOp::create(b, loc, x, PadMode::constant,
                      ArrayRef<int64_t>{0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]},
                      APFloat(0.0));
  SmallVector<Value> windows;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j) {
      SmallVector<int64_t> starts{i * dilations[0], j * dilations[1]};
      SmallVector<int64_t> ends{starts[0] + (out[0] - 1) * strides[0] + 1,
                                starts[1] + (out[1] - 1) * strides[1] + 1};
      windows.push_back(SliceOp::create(b, loc, x, b.getDenseI64ArrayAttr(starts),
                                        b.getDenseI64ArrayAttr(ends),
                                        b.getDenseI64ArrayAttr({2, 3}),
                                        b.getDenseI64ArrayAttr(strides)));
    }
  Value joined = windows.size() == 1 ? windows[0]
                                     : ConcatOp::create(b, loc, windows, b.getI64IntegerAttr(0));
  return ReshapeOp::create(b, loc, columnsType, joined, Value());
}

/// quantize_linear([relu | clip](conv(dequantize_linear(x),
/// dequantize_linear(w)[, dequantize_linear(b_i32)]))): a 2-D conv of one
/// image, group 1, static shapes, as the integer matmul
/// (w - zw)[M, T * C] @ columns(x - zx)[T * C, OH * OW] (+ b), requantized
/// per output channel (a row).
struct QDQConv final : OpRewritePattern<QuantizeLinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeLinearOp op, PatternRewriter &rewriter) const override {
    ConvOp conv;
    std::optional<std::pair<float, float>> range = activationRange(op, op.getInput(), conv);
    if (!range)
      return failure();
    auto x = conv.getInput().getDefiningOp<DequantizeLinearOp>();
    auto w = conv.getWeight().getDefiningOp<DequantizeLinearOp>();
    RankedTensorType xType = tensorOf(conv.getInput()), wType = tensorOf(conv.getWeight()),
                     yType = tensorOf(conv.getOutput());
    Type f32 = rewriter.getF32Type();
    if (!x || !w || xType.getRank() != 4 || !xType.hasStaticShape() ||
        !wType.hasStaticShape() || !yType.hasStaticShape() || xType.getDimSize(0) != 1 ||
        !isPerTensorQuantize(op) || !isDequantizedPair(x, w, 0))
      return failure();
    int64_t channels = wType.getDimSize(0), depth = wType.getNumElements() / channels;
    auto groups = static_cast<int64_t>(conv.getGroup());
    // Grouped convs: one product per group (at most kMaxGroups); depthwise
    // ones (group = C = M) are IntegerDepthwiseConv.cpp's.
    bool depthwise = groups == xType.getDimSize(1) && groups == channels;
    if (groups < 1 || groups > kMaxGroups || depthwise || channels % groups ||
        xType.getDimSize(1) != groups * wType.getDimSize(1))
      return failure();
    bool perChannel = !isOneElement(w.getScale());
    if (depth > kMaxDepth)
      return failure();
    Location loc = rewriter.getFusedLoc({x.getLoc(), w.getLoc(), conv.getLoc(), op.getLoc()});
    Value bias;
    if (conv.getBias() &&
        !(bias = integerBias(rewriter, loc, conv.getBias(), x, w, channels, {channels, 1})))
      return failure();

    // A: the weights [M, C, KH, KW] minus their zero points as
    // [M, KH * KW * C] (tap-major, the columns' row order).
    auto perRow = [&](Value v) -> Value {
      if (isOneElement(v))
        return v;
      RankedTensorType t = tensorOf(v);
      return ReshapeOp::create(rewriter, loc, RankedTensorType::get({channels, 1, 1, 1},
                                                                     t.getElementType()),
                               v, Value());
    };
    Value weights = shiftedI16(rewriter, loc, w.getInput(), perRow(w.getZeroPoint()));
    weights = TransposeOp::create(rewriter, loc, weights, rewriter.getDenseI64ArrayAttr({0, 2, 3, 1}));
    weights = ReshapeOp::create(
        rewriter, loc, RankedTensorType::get({channels, depth}, rewriter.getIntegerType(16)),
        weights, Value());
    SmallVector<int64_t> kernel{wType.getDimSize(2), wType.getDimSize(3)};
    SmallVector<int64_t> out{yType.getDimSize(2), yType.getDimSize(3)};
    // Group g: its rows of A times the columns of its input channels.
    int64_t rows = channels / groups, inputs = wType.getDimSize(1);
    auto group = [&](Value v, int64_t axis, int64_t size, int64_t g) -> Value {
      if (groups == 1)
        return v;
      return SliceOp::create(rewriter, loc, v, rewriter.getDenseI64ArrayAttr({g * size}),
                             rewriter.getDenseI64ArrayAttr({(g + 1) * size}),
                             rewriter.getDenseI64ArrayAttr({axis}),
                             rewriter.getDenseI64ArrayAttr({1}));
    };
    Value factor = requantizationFactor(rewriter, loc, x, w, op);
    if (perChannel)
      factor = ReshapeOp::create(rewriter, loc, RankedTensorType::get({channels, 1}, f32), factor,
                                 Value());
    // Each group's product requantized (its rows of the bias and factor),
    // so each is a kernel with its epilogue; the 8-bit results joined.
    SmallVector<Value> results;
    for (int64_t g = 0; g < groups; ++g) {
      Value columns = convColumns(rewriter, loc, conv, group(x.getInput(), 1, inputs, g),
                                  x.getZeroPoint(), kernel, out);
      Value acc = integerProduct(rewriter, loc, group(weights, 0, rows, g), columns,
                                 byteWindow(w.getInput(), w.getZeroPoint()),
                                 byteWindow(x.getInput(), x.getZeroPoint()));
      if (bias)
        acc = AddOp::create(rewriter, loc, acc, group(bias, 0, rows, g));
      results.push_back(requantize(rewriter, loc, acc,
                                   perChannel ? group(factor, 0, rows, g) : factor, op, *range));
    }
    Value y = results.size() == 1
                  ? results.front()
                  : ConcatOp::create(rewriter, loc, results, rewriter.getI64IntegerAttr(0));
    y = ReshapeOp::create(rewriter, loc, op.getType(), y, Value());
    rewriter.replaceOp(op, y);
    return success();
  }
};


/// quantize_linear(gemm(dequantize_linear(x), dequantize_linear(w)[,
/// dequantize_linear(b_i32)])) with alpha = beta = 1 and x not transposed
/// (quantize_static's classifier heads): the integer matmul of x [M, K]
/// and w [K, N] (w^T for trans_b, folded at compile time) plus b in i32,
/// requantized per tensor or per column.
struct QDQGemm final : OpRewritePattern<QuantizeLinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeLinearOp op, PatternRewriter &rewriter) const override {
    auto gemm = op.getInput().getDefiningOp<GemmOp>();
    if (!gemm || !gemm->hasOneUse() || gemm.getTransA() || gemm.getAlpha().convertToFloat() != 1 ||
        gemm.getBeta().convertToFloat() != 1 || !isPerTensorQuantize(op))
      return failure();
    auto x = gemm.getA().getDefiningOp<DequantizeLinearOp>();
    auto w = gemm.getB().getDefiningOp<DequantizeLinearOp>();
    bool transposed = gemm.getTransB();
    if (!x || !w || tensorOf(x.getInput()).getRank() != 2 ||
        tensorOf(w.getInput()).getRank() != 2 || !isDequantizedPair(x, w, transposed ? 0 : 1))
      return failure();
    RankedTensorType wType = tensorOf(w.getInput());
    int64_t k = wType.getDimSize(transposed ? 1 : 0), n = wType.getDimSize(transposed ? 0 : 1);
    if (ShapedType::isDynamic(k) || ShapedType::isDynamic(n) || k > kMaxDepth)
      return failure();
    Location loc = rewriter.getFusedLoc({x.getLoc(), w.getLoc(), gemm.getLoc(), op.getLoc()});
    Value bias;
    if (gemm.getC() && !(bias = integerBias(rewriter, loc, gemm.getC(), x, w, n, {n})))
      return failure();
    Value zw = w.getZeroPoint();
    if (transposed && !isOneElement(zw))
      zw = ReshapeOp::create(rewriter, loc,
                             RankedTensorType::get({n, 1}, tensorOf(zw).getElementType()), zw,
                             Value());
    Value weights = shiftedI16(rewriter, loc, w.getInput(), zw);
    if (transposed)
      weights = TransposeOp::create(rewriter, loc, weights, rewriter.getDenseI64ArrayAttr({1, 0}));
    Value acc = integerProduct(rewriter, loc,
                               shiftedI16(rewriter, loc, x.getInput(), x.getZeroPoint()), weights,
                               byteWindow(x.getInput(), x.getZeroPoint()),
                               byteWindow(w.getInput(), w.getZeroPoint()));
    if (bias)
      acc = AddOp::create(rewriter, loc, acc, bias);
    Value factor = requantizationFactor(rewriter, loc, x, w, op);
    Value y = requantize(rewriter, loc, acc, factor, op, outputRange(op));
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

/// The byte window of an f64 operand isShiftedEightBit accepts: cast(x)
/// or cast(x) - z with a constant z, one value.
std::optional<int64_t> shiftedByteWindow(Value v) {
  Value zero;
  if (auto sub = v.getDefiningOp<SubOp>()) {
    zero = sub.getRhs();
    while (isa_and_nonnull<ReshapeOp, CastOp>(zero.getDefiningOp()))
      zero = zero.getDefiningOp()->getOperand(0);
    v = sub.getLhs();
  }
  auto cast = v.getDefiningOp<CastOp>();
  if (!cast)
    return std::nullopt;
  bool unsignedX = tensorOf(cast.getInput()).getElementType().isUnsignedInteger();
  if (!zero)
    return unsignedX ? 0 : -128;
  return byteWindow(unsignedX, zero);
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
                               castTo(rewriter, loc, op.getRhs(), i16),
                               shiftedByteWindow(op.getLhs()), shiftedByteWindow(op.getRhs()));
    rewriter.replaceOp(op, castTo(rewriter, loc, acc, op.getType().getElementType()));
    return success();
  }
};

struct KilnRecognizeIntegerMatmulPass final
    : impl::KilnRecognizeIntegerMatmulPassBase<KilnRecognizeIntegerMatmulPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<QDQMatmul, QDQConv, QDQGemm, DQMatmul, ShiftedIntegerMatmul>(&getContext());
    populateIntegerDepthwiseConvPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

} // namespace kiln
