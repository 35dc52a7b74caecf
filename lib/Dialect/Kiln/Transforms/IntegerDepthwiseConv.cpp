//===- IntegerDepthwiseConv.cpp - QDQ depthwise convs as integer sums -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln-recognize-integer-matmul's pattern for a QDQ depthwise conv
// (quantize_static's MobileNet blocks): the sums of the taps' products in
// i32 on the 8-bit input itself, requantized per channel as onnxruntime
// does, one elementwise chain on 8-bit inputs (the activation stays 8-bit;
// the conv, its requantization and its Relu/Clip clamp are one loop):
//
//   acc[c, p] = sum_t i32(xp[c, p + off_t]) * (w[c, t] - zw[c])
//               + b[c] - zx * sum_t (w[c, t] - zw[c])
//
// with xp the input padded with zx, whose taps add zx * (w - zw), taken out
// again by the constant term; equal to onnxruntime's sum_t (x - zx) (w - zw)
// + b in wrapping i32 arithmetic. How the windows are laid out decides how
// the loop vectorizes (along its innermost, contiguous dim):
//
// - rows: stride 1 with OW = W ("same" padding, MobileNet's 3x3 convs): the
//   input flattened, padded with zx by pt * W + pl elements in front and
//   pb * W + pr behind; tap (i, j) is the window at i * dh * W + j * dw of
//   OH * W elements, the columns a row wraps into (x + j * dw - pl outside
//   [0, W)) replaced by zx. The result is [N, C, OH * W], contiguous, so
//   its readers' loops run over whole images too.
// - pitched: other stride-1 convs at the padded row pitch Wp (windows of
//   OH * Wp rounded up to a multiple of 16, the Wp - OW columns past each
//   row computed and dropped).
// - strided: stride 2 rows computed at every column (2 OW - 1 rounded up
//   to a multiple of 16; strided loads do not vectorize) and every other
//   column kept; other strides read strided windows.
//
//===----------------------------------------------------------------------===//

#include "QuantizedProducts.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace kiln::quantized {
namespace {

enum class Layout { rows, pitched, strided };

/// One value of a constant integer tensor of one element or `c`'s of a
/// per-channel one.
int64_t channelValue(const consteval::Literal &values, int64_t c) {
  return values.ints[values.size() == 1 ? 0 : c];
}

/// `values` [C] as an i32 constant of `shape` (C in dim 1).
Value channelConstant(PatternRewriter &b, Location loc, ArrayRef<int32_t> values,
                      ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, b.getI32Type());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
}

DenseI64ArrayAttr i64s(PatternRewriter &b, ArrayRef<int64_t> values) {
  return b.getDenseI64ArrayAttr(values);
}

/// The conv's geometry and the windows of its 8-bit input.
struct Windows {
  PatternRewriter &b;
  Location loc;
  Layout layout;
  int64_t n, channels, h, w, kh, kw, oh, ow;
  ArrayRef<int64_t> strides, dilations, pads;
  int64_t zx;
  Value input;                  // the padded (and flattened) input
  int64_t pitch = 0, length = 0; // rows, pitched: the row pitch and window length
  int64_t columns = 0, kept = 0, columnStep = 1; // strided

  /// The windows of `conv`'s input (zero point `zx`) in the layout its
  /// stride and padding allow.
  static Windows of(PatternRewriter &b, Location loc, ConvOp conv, int64_t zx) {
    RankedTensorType x = tensorOf(conv.getInput()), w = tensorOf(conv.getWeight()),
                     y = tensorOf(conv.getOutput());
    ArrayRef<int64_t> strides = conv.getStrides();
    Layout layout = strides[0] != 1 || strides[1] != 1 ? Layout::strided
                    : y.getDimSize(3) == x.getDimSize(3) ? Layout::rows
                                                         : Layout::pitched;
    return Windows{b,
                   loc,
                   layout,
                   x.getDimSize(0),
                   x.getDimSize(1),
                   x.getDimSize(2),
                   x.getDimSize(3),
                   w.getDimSize(2),
                   w.getDimSize(3),
                   y.getDimSize(2),
                   y.getDimSize(3),
                   strides,
                   conv.getDilations(),
                   conv.getPads(),
                   zx,
                   Value()};
  }

  /// The shape of the sums, and of a per-channel operand.
  SmallVector<int64_t> accShape() const {
    if (layout == Layout::strided)
      return {n, channels, oh, columns};
    return {n, channels, length};
  }
  SmallVector<int64_t> channelShape() const {
    if (layout == Layout::strided)
      return {1, channels, 1, 1};
    return {1, channels, 1};
  }

  Value pad(Value x, ArrayRef<int64_t> amounts) {
    return PadOp::create(b, loc, x, PadMode::constant, amounts,
                         APFloat(static_cast<double>(zx)));
  }

  /// Pads (and flattens) the input for `layout`.
  void prepare(Value x) {
    Type element = tensorOf(x).getElementType();
    if (layout == Layout::rows) {
      length = oh * w;
      Value flat = ReshapeOp::create(
          b, loc, RankedTensorType::get({n, channels, h * w}, element), x, Value());
      input = pad(flat, {0, 0, pads[0] * w + pads[1], 0, 0, pads[2] * w + pads[3]});
      return;
    }
    int64_t hp = h + pads[0] + pads[2];
    int64_t wp = w + pads[1] + pads[3];
    if (layout == Layout::strided) {
      columnStep = strides[1] == 2 ? 1 : strides[1];
      kept = (ow - 1) * strides[1] / columnStep + 1;
      columns = strides[1] == 2 ? llvm::alignTo(kept, 16) : kept;
      wp = std::max(wp, (kw - 1) * dilations[1] + (columns - 1) * columnStep + 1);
    } else {
      length = llvm::alignTo(oh * wp, 16);
      int64_t lastTap = (kh - 1) * dilations[0] * wp + (kw - 1) * dilations[1];
      hp = std::max<int64_t>(hp, llvm::divideCeil(lastTap + length, wp));
    }
    pitch = wp;
    input = hp == h && wp == w
                ? x
                : pad(x, {0, 0, pads[0], pads[1], 0, 0, hp - h - pads[0], wp - w - pads[1]});
    if (layout == Layout::pitched)
      input = ReshapeOp::create(b, loc, RankedTensorType::get({n, channels, hp * wp}, element),
                                input, Value());
  }

  /// The window of tap (i, j), in the sums' shape.
  Value window(int64_t i, int64_t j) {
    if (layout == Layout::strided) {
      SmallVector<int64_t> starts{i * dilations[0], j * dilations[1]};
      SmallVector<int64_t> ends{starts[0] + (oh - 1) * strides[0] + 1,
                                starts[1] + (columns - 1) * columnStep + 1};
      return SliceOp::create(b, loc, input, i64s(b, starts), i64s(b, ends), i64s(b, {2, 3}),
                             i64s(b, {strides[0], columnStep}));
    }
    int64_t row = layout == Layout::rows ? w : pitch;
    int64_t offset = i * dilations[0] * row + j * dilations[1];
    Value window = SliceOp::create(b, loc, input, i64s(b, {offset}), i64s(b, {offset + length}),
                                   i64s(b, {2}), i64s(b, {1}));
    int64_t shift = j * dilations[1] - pads[1];
    if (layout != Layout::rows || shift == 0)
      return window;
    // The columns that wrap into the next or previous row read zx:
    // (x & keep) | fill with keep = 0xff, fill = 0 where the column is in
    // the image, keep = 0, fill = zx where not (bytes: a select's i1 mask
    // would keep the loop scalar).
    auto type = RankedTensorType::get({1, 1, length}, tensorOf(window).getElementType());
    SmallVector<char> keep(length), fill(length);
    for (int64_t p = 0; p < length; ++p) {
      bool inside = p % w + shift >= 0 && p % w + shift < w;
      keep[p] = static_cast<char>(inside ? 0xff : 0);
      fill[p] = static_cast<char>(inside ? 0 : zx & 0xff);
    }
    auto bytes = [&](ArrayRef<char> values) -> Value {
      return ConstantOp::create(b, loc, DenseElementsAttr::getFromRawBuffer(type, values));
    };
    return OrOp::create(b, loc, AndOp::create(b, loc, window, bytes(keep)), bytes(fill));
  }

  /// The requantized 8-bit sums in the conv's result shape.
  Value output(Value y, RankedTensorType type) {
    Type element = type.getElementType();
    if (layout == Layout::rows)
      return ReshapeOp::create(b, loc, type, y, Value());
    if (layout == Layout::strided)
      return columns == ow ? y
                           : SliceOp::create(b, loc, y, i64s(b, {0}), i64s(b, {kept}),
                                             i64s(b, {3}), i64s(b, {strides[1] / columnStep}));
    if (length != oh * pitch)
      y = SliceOp::create(b, loc, y, i64s(b, {0}), i64s(b, {oh * pitch}), i64s(b, {2}),
                          i64s(b, {1}));
    y = ReshapeOp::create(b, loc, RankedTensorType::get({n, channels, oh, pitch}, element), y,
                          Value());
    return pitch == ow ? y
                       : SliceOp::create(b, loc, y, i64s(b, {0}), i64s(b, {ow}), i64s(b, {3}),
                                         i64s(b, {1}));
  }
};

/// The weights minus their zero points per tap ([tap][channel]) and the
/// zero point's term per channel, -zx * sum_t (w - zw).
struct TapWeights {
  SmallVector<SmallVector<int32_t>> perTap;
  SmallVector<int32_t> shift;
};

TapWeights tapWeights(const consteval::Literal &wq, const consteval::Literal &zw,
                      const Windows &windows) {
  int64_t taps = windows.kh * windows.kw;
  TapWeights weights{SmallVector<SmallVector<int32_t>>(
                         taps, SmallVector<int32_t>(windows.channels)),
                     SmallVector<int32_t>(windows.channels)};
  for (int64_t c = 0; c < windows.channels; ++c) {
    int64_t sum = 0;
    for (int64_t t = 0; t < taps; ++t) {
      int64_t v = wq.ints[c * taps + t] - channelValue(zw, c);
      weights.perTap[t][c] = static_cast<int32_t>(v);
      sum += v;
    }
    weights.shift[c] = static_cast<int32_t>(-windows.zx * sum);
  }
  return weights;
}

/// sum_t i32(window t) * (w - zw)[t] + shift: the i32 sums of the conv
/// (without its bias).
Value tapSums(Windows &windows, const TapWeights &weights) {
  PatternRewriter &b = windows.b;
  Location loc = windows.loc;
  SmallVector<int64_t> channelShape = windows.channelShape();
  auto accType = RankedTensorType::get(windows.accShape(), b.getI32Type());
  Value acc;
  for (int64_t i = 0; i < windows.kh; ++i)
    for (int64_t j = 0; j < windows.kw; ++j) {
      Value product = MulOp::create(
          b, loc, CastOp::create(b, loc, accType, windows.window(i, j)),
          channelConstant(b, loc, weights.perTap[i * windows.kw + j], channelShape));
      acc = acc ? AddOp::create(b, loc, acc, product).getResult() : product;
    }
  return AddOp::create(b, loc, acc, channelConstant(b, loc, weights.shift, channelShape));
}

/// quantize_linear([relu | clip](conv(dequantize_linear(x),
/// dequantize_linear(w)[, dequantize_linear(b_i32)]))) of a depthwise 2-D
/// conv (group = C = M, w [C, 1, KH, KW] constant, per tensor or per
/// channel), static shapes.
struct QDQDepthwiseConv final : OpRewritePattern<QuantizeLinearOp> {
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
    if (!x || !w || xType.getRank() != 4 || !xType.hasStaticShape() || !wType.hasStaticShape() ||
        !yType.hasStaticShape() || !isPerTensorQuantize(op) || !isDequantizedPair(x, w, 0))
      return failure();
    int64_t channels = xType.getDimSize(1);
    if (static_cast<int64_t>(conv.getGroup()) != channels || channels == 1 ||
        wType.getDimSize(0) != channels || wType.getDimSize(1) != 1)
      return failure();
    std::optional<consteval::Literal> wq = constantValues(w.getInput()),
                                      zw = constantValues(w.getZeroPoint()),
                                      zx = constantValues(x.getZeroPoint());
    if (!wq || !zw || !zx || wq->isFloat() || zw->isFloat() || zx->isFloat())
      return failure();
    Location loc = rewriter.getFusedLoc({x.getLoc(), w.getLoc(), conv.getLoc(), op.getLoc()});
    Value bias;
    if (conv.getBias() && !(bias = integerBias(rewriter, loc, conv.getBias(), x, w, channels,
                                               {1, channels, 1, 1})))
      return failure();

    Windows windows = Windows::of(rewriter, loc, conv, channelValue(*zx, 0));
    windows.prepare(x.getInput());
    SmallVector<int64_t> channelShape = windows.channelShape();
    Value acc = tapSums(windows, tapWeights(*wq, *zw, windows));
    auto perChannel = [&](Value v, Type element) -> Value {
      return ReshapeOp::create(rewriter, loc, RankedTensorType::get(channelShape, element), v,
                               Value());
    };
    if (bias)
      acc = AddOp::create(rewriter, loc, acc, perChannel(bias, rewriter.getI32Type()));
    Value factor = requantizationFactor(rewriter, loc, x, w, op);
    if (!isOneElement(factor))
      factor = perChannel(factor, rewriter.getF32Type());
    Value y = windows.output(requantize(rewriter, loc, acc, factor, op, *range), op.getType());
    if (y.getType() != op.getType())
      return failure();
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void populateIntegerDepthwiseConvPatterns(RewritePatternSet &patterns) {
  patterns.add<QDQDepthwiseConv>(patterns.getContext());
}

} // namespace kiln::quantized
