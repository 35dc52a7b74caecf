//===- ComposedHandlers.cpp - ONNX ops built from other kiln ops ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Newer ONNX ops whose semantics are a short composition of existing kiln
// ops, built in the order of ONNX's reference implementation:
// RotaryEmbedding, CausalConvWithState, GroupNormalization, CenterCropPad,
// LRN, ScatterND, ReverseSequence, TensorScatter and BatchNormalization's
// training mode (called from NNHandlers.cpp's BatchNormalization). They need
// static shapes (the compositions slice, reshape and pad by the input dims).
//
//===----------------------------------------------------------------------===//

#include "ContribOps.h"
#include "NodeBinder.h"
#include "TensorLoader.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

/// Fails (unsupported) unless every operand has a static shape.
LogicalResult requireStatic(NodeBinder &b, ValueRange values) {
  for (Value v : values)
    if (v && !tensorType(v).hasStaticShape())
      return b.unsupported(b.opType() + " with dynamic input shapes");
  return success();
}

FailureOr<Value> reshapeTo(NodeBinder &b, Value x, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, tensorType(x).getElementType());
  if (type == x.getType())
    return x;
  return b.makeTyped<kiln::ReshapeOp>(type, x, b.i64Vector(shape));
}

FailureOr<Value> sliceAxis(NodeBinder &b, Value x, int64_t axis, int64_t start,
                           int64_t end, int64_t step = 1) {
  return b.make<kiln::SliceOp>(x, ArrayRef<int64_t>{start}, ArrayRef<int64_t>{end},
                               ArrayRef<int64_t>{axis}, ArrayRef<int64_t>{step});
}

FailureOr<Value> castTo(NodeBinder &b, Value x, Type element) {
  RankedTensorType type = tensorType(x);
  if (type.getElementType() == element)
    return x;
  return b.makeTyped<kiln::CastOp>(type.clone(element), x);
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding
//===----------------------------------------------------------------------===//

/// RotaryEmbedding (23): x as [B, S, heads, D] (4-D inputs are [B, heads, S,
/// D], 3-D ones [B, S, heads * D]); the first `rotary_embedding_dim` values of
/// each head are rotated by the cos/sin cache rows (picked by position_ids
/// when given), as halves or interleaved pairs.
LogicalResult rotaryEmbedding(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), cosCache = b.input(1), sinCache = b.input(2);
  Value positions = b.optionalInput(3);
  FailureOr<int64_t> interleaved = b.intAttr("interleaved", 0);
  FailureOr<int64_t> rotaryDim = b.intAttr("rotary_embedding_dim", 0);
  FailureOr<int64_t> numHeads = b.intAttr("num_heads", 0);
  if (failed(x) || failed(cosCache) || failed(sinCache) || failed(interleaved) ||
      failed(rotaryDim) || failed(numHeads) ||
      failed(b.checkRange("attribute 'interleaved'", *interleaved, 0, 1)) ||
      failed(requireStatic(b, {*x, *cosCache, *sinCache, positions})))
    return failure();
  RankedTensorType xType = tensorType(*x);
  ArrayRef<int64_t> shape = xType.getShape();
  int64_t rank = xType.getRank();
  if (rank != 3 && rank != 4)
    return b.emitError() << "input 0 has rank " << rank << ", expected 3 or 4";
  FailureOr<Value> t;
  if (rank == 4) {
    t = b.make<kiln::TransposeOp>(*x, ArrayRef<int64_t>{0, 2, 1, 3});
  } else {
    if (*numHeads <= 0 || shape[2] % *numHeads != 0)
      return b.emitError() << "a 3-D input needs attribute 'num_heads' dividing its hidden size "
                           << shape[2] << ", but it is " << *numHeads;
    t = reshapeTo(b, *x, {shape[0], shape[1], *numHeads, shape[2] / *numHeads});
  }
  if (failed(t))
    return failure();
  ArrayRef<int64_t> bshd = tensorType(*t).getShape();
  int64_t headSize = bshd[3];
  int64_t dim = *rotaryDim == 0 ? headSize : *rotaryDim;
  if (dim < 0 || dim > headSize || dim % 2 != 0)
    return b.emitError() << "attribute 'rotary_embedding_dim' is " << *rotaryDim
                         << ", expected an even value in [0, " << headSize << "]";

  // The cos/sin rows [B, S, >= dim/2], picked by position, rotate the first
  // `dim` values of each head (as com.microsoft's RotaryEmbedding does).
  auto gathered = [&](Value cache) -> FailureOr<Value> {
    if (!positions)
      return cache;
    return b.make<kiln::GatherOp>(cache, positions, static_cast<uint64_t>(0));
  };
  FailureOr<Value> cos = gathered(*cosCache), sin = gathered(*sinCache);
  if (failed(cos) || failed(sin))
    return failure();
  FailureOr<Value> out = contrib::rotate(b, *t, *cos, *sin, dim, *interleaved);
  if (failed(out))
    return failure();
  out = rank == 4 ? b.make<kiln::TransposeOp>(*out, ArrayRef<int64_t>{0, 2, 1, 3})
                  : reshapeTo(b, *out, shape);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// CausalConvWithState
//===----------------------------------------------------------------------===//

/// CausalConvWithState (27): a depthwise 1-D conv over past_state (zeros
/// when absent) ++ input, an optional SiLU (in f32), and the last k - 1
/// positions of that concatenation as the new state.
LogicalResult causalConvWithState(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), weight = b.input(1);
  Value bias = b.optionalInput(2), past = b.optionalInput(3);
  FailureOr<std::string> activation = b.stringAttr("activation", "none");
  if (failed(x) || failed(weight) || failed(activation) ||
      failed(requireStatic(b, {*x, *weight, bias, past})))
    return failure();
  if (*activation != "none" && *activation != "silu" && *activation != "swish")
    return b.emitError() << "attribute 'activation' value is '" << *activation
                         << "', accepted values are none, silu, swish";
  RankedTensorType xType = tensorType(*x), wType = tensorType(*weight);
  if (xType.getRank() != 3 || wType.getRank() != 3)
    return b.emitError() << "input and weight must have rank 3, but they are "
                         << xType << " and " << wType;
  int64_t channels = xType.getDimSize(1), k = wType.getDimSize(2);
  if (k < 1 || wType.getDimSize(0) != channels || wType.getDimSize(1) != 1)
    return b.emitError() << "weight has shape " << wType << ", expected ["
                         << channels << ", 1, k] with k >= 1";
  FailureOr<Value> padded =
      past ? b.make<kiln::ConcatOp>(ValueRange{past, *x}, static_cast<uint64_t>(2))
           : b.make<kiln::PadOp>(*x, PadMode::constant,
                                 ArrayRef<int64_t>{0, 0, k - 1, 0, 0, 0}, APFloat(0.0));
  if (failed(padded))
    return failure();
  FailureOr<Value> out = b.make<kiln::ConvOp>(
      *padded, *weight, bias, ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1},
      ArrayRef<int64_t>{0, 0}, static_cast<uint64_t>(channels));
  if (failed(out))
    return failure();
  if (*activation != "none") {
    FailureOr<Value> wide = castTo(b, *out, b.builder().getF32Type());
    if (failed(wide))
      return failure();
    FailureOr<Value> gate = b.make<kiln::SigmoidOp>(*wide);
    if (failed(gate))
      return failure();
    FailureOr<Value> silu = b.make<kiln::MulOp>(*wide, *gate);
    if (failed(silu))
      return failure();
    out = castTo(b, *silu, xType.getElementType());
    if (failed(out))
      return failure();
  }
  if (failed(b.setOutput(0, *out)))
    return failure();
  if (!b.outputUsed(1))
    return success();
  int64_t length = tensorType(*padded).getDimSize(2);
  FailureOr<Value> state = sliceAxis(b, *padded, 2, length - (k - 1), length);
  return failed(state) ? failure() : b.setOutput(1, *state);
}

//===----------------------------------------------------------------------===//
// GroupNormalization
//===----------------------------------------------------------------------===//

/// GroupNormalization (21): x as [N, G, rest], normalized by its mean and
/// variance over `rest` in f32, back to x's shape, then the per-channel
/// scale and bias.
LogicalResult groupNorm(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), scale = b.input(1), bias = b.input(2);
  FailureOr<int64_t> groups = b.intAttr("num_groups", std::nullopt);
  FailureOr<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  FailureOr<int64_t> stash = b.intAttr("stash_type", 1);
  if (failed(x) || failed(scale) || failed(bias) || failed(groups) ||
      failed(epsilon) || failed(stash) ||
      failed(requireStatic(b, {*x, *scale, *bias})))
    return failure();
  if (*stash != 1)
    return b.unsupported("GroupNormalization with 'stash_type' " + Twine(*stash) +
                         " (only 1, float, is supported)");
  RankedTensorType xType = tensorType(*x);
  if (xType.getRank() < 2)
    return b.emitError() << "input 0 has rank " << xType.getRank() << ", expected at least 2";
  ArrayRef<int64_t> shape = xType.getShape();
  int64_t channels = shape[1];
  if (*groups <= 0 || channels % *groups != 0)
    return b.emitError() << "attribute 'num_groups' value is " << *groups
                         << ", which does not divide the " << channels << " channels";
  int64_t rest = xType.getNumElements() / (shape[0] * *groups);
  Type f32 = b.builder().getF32Type();
  FailureOr<Value> wide = castTo(b, *x, f32);
  if (failed(wide))
    return failure();
  FailureOr<Value> grouped = reshapeTo(b, *wide, {shape[0], *groups, rest});
  if (failed(grouped))
    return failure();
  auto mean = [&](Value v) {
    return b.make<kiln::ReduceOp>(v, ReduceKind::mean, ArrayRef<int64_t>{2}, true);
  };
  FailureOr<Value> mu = mean(*grouped);
  if (failed(mu))
    return failure();
  FailureOr<Value> centered = b.make<kiln::SubOp>(*grouped, *mu);
  if (failed(centered))
    return failure();
  FailureOr<Value> square = b.make<kiln::MulOp>(*centered, *centered);
  if (failed(square))
    return failure();
  FailureOr<Value> var = mean(*square);
  if (failed(var))
    return failure();
  FailureOr<Value> shifted = b.make<kiln::AddOp>(*var, b.scalar(f32, *epsilon));
  if (failed(shifted))
    return failure();
  FailureOr<Value> inv = b.make<kiln::RsqrtOp>(*shifted);
  if (failed(inv))
    return failure();
  FailureOr<Value> normed = b.make<kiln::MulOp>(*centered, *inv);
  if (failed(normed))
    return failure();
  normed = reshapeTo(b, *normed, shape);
  if (failed(normed))
    return failure();
  normed = castTo(b, *normed, xType.getElementType());
  if (failed(normed))
    return failure();
  // scale/bias [C] -> [C, 1, ...] to broadcast over the spatial dims.
  SmallVector<int64_t> perChannel(xType.getRank() - 1, 1);
  perChannel[0] = channels;
  auto channelwise = [&](Value v) -> FailureOr<Value> {
    if (tensorType(v).getShape() != ArrayRef<int64_t>{channels})
      return b.emitError() << "scale and bias must have shape [" << channels
                           << "], but one is " << tensorType(v);
    return reshapeTo(b, v, perChannel);
  };
  FailureOr<Value> s = channelwise(*scale), t = channelwise(*bias);
  if (failed(s) || failed(t))
    return failure();
  FailureOr<Value> scaled = b.make<kiln::MulOp>(*normed, *s);
  if (failed(scaled))
    return failure();
  FailureOr<Value> out = b.make<kiln::AddOp>(*scaled, *t);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// CenterCropPad, LRN
//===----------------------------------------------------------------------===//

/// CenterCropPad (18): one `pad` whose negative amounts crop; the odd
/// element of a crop or pad goes to the end, like ONNX's reference.
LogicalResult centerCropPad(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<SmallVector<int64_t>> target = b.requireConstantInts(1, "'shape'");
  if (failed(x) || failed(target) || failed(requireStatic(b, {*x})))
    return failure();
  RankedTensorType xType = tensorType(*x);
  int64_t rank = xType.getRank();
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  FailureOr<SmallVector<int64_t>> axes = b.intsAttr("axes", ArrayRef(all));
  if (failed(axes))
    return failure();
  if (axes->size() != target->size())
    return b.emitError() << "input 'shape' has " << target->size()
                         << " values but there are " << axes->size() << " axes";
  SmallVector<int64_t> pads(2 * rank, 0);
  for (auto [axis, size] : llvm::zip(*axes, *target)) {
    FailureOr<int64_t> a = kiln::normalizeAxis(b.loc(), "axes", axis, rank);
    if (failed(a))
      return failure();
    if (size < 0)
      return b.emitError() << "input 'shape' has the negative size " << size;
    int64_t diff = size - xType.getDimSize(*a);
    int64_t front = diff >= 0 ? diff / 2 : -((-diff) / 2);
    pads[*a] = front;
    pads[*a + rank] = diff - front;
  }
  FailureOr<Value> out =
      b.make<kiln::PadOp>(*x, PadMode::constant, ArrayRef(pads), APFloat(0.0));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// LRN (13): x / (bias + alpha / size * sum of x^2 over a channel window)^beta,
/// the window sum as `size` shifted slices of the zero-padded squares.
LogicalResult lrn(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", 1e-4f), beta = b.floatAttr("beta", 0.75f),
                   bias = b.floatAttr("bias", 1.0f);
  FailureOr<int64_t> size = b.intAttr("size", std::nullopt);
  if (failed(x) || failed(alpha) || failed(beta) || failed(bias) || failed(size) ||
      failed(b.checkRange("attribute 'size'", *size, 1, 1024)) ||
      failed(requireStatic(b, {*x})))
    return failure();
  RankedTensorType xType = tensorType(*x);
  int64_t rank = xType.getRank();
  if (rank < 3)
    return b.emitError() << "input 0 has rank " << rank << ", expected at least 3";
  int64_t channels = xType.getDimSize(1);
  FailureOr<Value> square = b.make<kiln::MulOp>(*x, *x);
  if (failed(square))
    return failure();
  SmallVector<int64_t> pads(2 * rank, 0);
  pads[1] = (*size - 1) / 2;
  pads[1 + rank] = *size - 1 - pads[1];
  FailureOr<Value> padded =
      b.make<kiln::PadOp>(*square, PadMode::constant, ArrayRef(pads), APFloat(0.0));
  if (failed(padded))
    return failure();
  FailureOr<Value> sum = sliceAxis(b, *padded, 1, 0, channels);
  for (int64_t j = 1; j < *size && succeeded(sum); ++j) {
    FailureOr<Value> shifted = sliceAxis(b, *padded, 1, j, j + channels);
    if (failed(shifted))
      return failure();
    sum = b.make<kiln::AddOp>(*sum, *shifted);
  }
  if (failed(sum))
    return failure();
  Type element = xType.getElementType();
  FailureOr<Value> scaled =
      b.make<kiln::MulOp>(*sum, b.scalar(element, *alpha / static_cast<double>(*size)));
  if (failed(scaled))
    return failure();
  FailureOr<Value> base = b.make<kiln::AddOp>(*scaled, b.scalar(element, *bias));
  if (failed(base))
    return failure();
  FailureOr<Value> denom = b.make<kiln::PowOp>(*base, b.scalar(element, *beta));
  if (failed(denom))
    return failure();
  FailureOr<Value> out = b.make<kiln::DivOp>(*x, *denom);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// ScatterND
//===----------------------------------------------------------------------===//

/// ScatterND (11; reduction 16, max/min 18): data as [M, R] (M the product of
/// the k indexed dims, R of the rest), each k-tuple of indices as one row
/// number (negative values counted from the end), and a `scatter_elements`
/// along axis 0 of the updates as [n, R].
LogicalResult scatterND(NodeBinder &b) {
  FailureOr<Value> data = b.input(0), indices = b.input(1), updates = b.input(2);
  FailureOr<std::string> reduction = b.stringAttr("reduction", "none");
  if (failed(data) || failed(indices) || failed(updates) || failed(reduction) ||
      failed(requireStatic(b, {*data, *indices, *updates})))
    return failure();
  std::optional<ScatterReduction> kind = symbolizeScatterReduction(*reduction);
  if (!kind)
    return b.emitError() << "attribute 'reduction' value is '" << *reduction
                         << "', accepted values are none, add, mul, max, min";
  RankedTensorType dataType = tensorType(*data), indexType = tensorType(*indices);
  if (!isa<IntegerType>(indexType.getElementType()))
    return b.emitError() << "input 1 (indices) has element type "
                         << indexType.getElementType() << ", expected an integer type";
  ArrayRef<int64_t> dims = dataType.getShape();
  int64_t rank = dataType.getRank(), q = indexType.getRank();
  int64_t k = q == 0 ? 0 : indexType.getDimSize(q - 1);
  if (q < 1 || k < 1 || k > rank)
    return b.emitError() << "indices have shape " << indexType
                         << ", expected rank >= 1 and a last dim in [1, " << rank << "]";
  SmallVector<int64_t> expected(indexType.getShape().drop_back());
  int64_t n = 1, rows = 1, width = 1;
  for (int64_t d : expected)
    n *= d;
  for (int64_t d : dims.take_front(k))
    rows *= d;
  for (int64_t d : dims.drop_front(k)) {
    width *= d;
    expected.push_back(d);
  }
  if (tensorType(*updates).getShape() != ArrayRef(expected))
    return b.emitError() << "updates have shape " << tensorType(*updates)
                         << ", expected indices.shape[:-1] ++ data.shape[k:]";
  Type i64 = b.builder().getI64Type();
  FailureOr<Value> idx = castTo(b, *indices, i64);
  if (failed(idx))
    return failure();
  // Negative indices count from the end of their dim.
  SmallVector<int64_t> strides(k, 1);
  for (int64_t i = k - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  Value sizes = b.i64Vector(dims.take_front(k));
  FailureOr<Value> negative = b.make<kiln::LessOp>(*idx, b.scalar(i64, 0));
  FailureOr<Value> wrapped = b.make<kiln::AddOp>(*idx, sizes);
  if (failed(negative) || failed(wrapped))
    return failure();
  FailureOr<Value> positive = b.make<kiln::SelectOp>(*negative, *wrapped, *idx);
  if (failed(positive))
    return failure();
  FailureOr<Value> scaled = b.make<kiln::MulOp>(*positive, b.i64Vector(strides));
  if (failed(scaled))
    return failure();
  FailureOr<Value> row = b.make<kiln::ReduceOp>(*scaled, ReduceKind::sum,
                                                ArrayRef<int64_t>{q - 1}, false);
  if (failed(row))
    return failure();
  row = reshapeTo(b, *row, {n, 1});
  if (failed(row))
    return failure();
  auto rowsType = RankedTensorType::get({n, width}, i64);
  FailureOr<Value> rowIndex =
      b.makeTyped<kiln::ExpandOp>(rowsType, *row, b.i64Vector({n, width}));
  FailureOr<Value> table = reshapeTo(b, *data, {rows, width});
  FailureOr<Value> values = reshapeTo(b, *updates, {n, width});
  if (failed(rowIndex) || failed(table) || failed(values))
    return failure();
  FailureOr<Value> out = b.make<kiln::ScatterElementsOp>(
      *table, *rowIndex, *values, static_cast<uint64_t>(0), *kind);
  if (failed(out))
    return failure();
  out = reshapeTo(b, *out, dims);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// ReverseSequence
//===----------------------------------------------------------------------===//

/// ReverseSequence (10): gather_elements along the time axis with indices
/// t < len[b] ? len[b] - 1 - t : t, built at run time from sequence_lens.
LogicalResult reverseSequence(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), lens = b.input(1);
  FailureOr<int64_t> batchAxis = b.intAttr("batch_axis", 1);
  FailureOr<int64_t> timeAxis = b.intAttr("time_axis", 0);
  if (failed(x) || failed(lens) || failed(batchAxis) || failed(timeAxis) ||
      failed(b.checkRange("attribute 'batch_axis'", *batchAxis, 0, 1)) ||
      failed(b.checkRange("attribute 'time_axis'", *timeAxis, 0, 1)) ||
      failed(requireStatic(b, {*x, *lens})))
    return failure();
  if (*batchAxis == *timeAxis)
    return b.emitError() << "'batch_axis' and 'time_axis' are both " << *timeAxis;
  RankedTensorType type = tensorType(*x);
  if (type.getRank() < 2)
    return b.emitError() << "input 0 has rank " << type.getRank() << ", expected at least 2";
  int64_t steps = type.getDimSize(*timeAxis), batch = type.getDimSize(*batchAxis);
  if (tensorType(*lens).getShape() != ArrayRef<int64_t>{batch} ||
      !isa<IntegerType>(tensorType(*lens).getElementType()))
    return b.emitError() << "sequence_lens has type " << tensorType(*lens)
                         << ", expected " << batch << " integers";
  Type i64 = b.builder().getI64Type();
  FailureOr<Value> length = castTo(b, *lens, i64);
  if (failed(length))
    return failure();
  // [T, 1] times against [1, B] lengths (or [1, T] against [B, 1]).
  SmallVector<int64_t> iota = llvm::to_vector(llvm::seq<int64_t>(0, steps));
  SmallVector<int64_t> timeShape = {steps, 1}, lensShape = {1, batch};
  if (*timeAxis == 1) {
    std::swap(timeShape[0], timeShape[1]);
    std::swap(lensShape[0], lensShape[1]);
  }
  Value time = b.constant(DenseElementsAttr::get(RankedTensorType::get(timeShape, i64),
                                                 ArrayRef(iota)));
  length = reshapeTo(b, *length, lensShape);
  if (failed(length))
    return failure();
  FailureOr<Value> last = b.make<kiln::SubOp>(*length, b.scalar(i64, 1));
  if (failed(last))
    return failure();
  FailureOr<Value> reversed = b.make<kiln::SubOp>(*last, time);
  FailureOr<Value> inside = b.make<kiln::LessOp>(time, *length);
  if (failed(reversed) || failed(inside))
    return failure();
  FailureOr<Value> index = b.make<kiln::SelectOp>(*inside, *reversed, time);
  if (failed(index))
    return failure();
  SmallVector<int64_t> trailing(type.getShape().take_front(2));
  for (int64_t d = 2; d < type.getRank(); ++d)
    trailing.push_back(1);
  index = reshapeTo(b, *index, trailing);
  if (failed(index))
    return failure();
  index = b.makeTyped<kiln::ExpandOp>(type.clone(i64), *index, b.i64Vector(type.getShape()));
  if (failed(index))
    return failure();
  FailureOr<Value> out =
      b.make<kiln::GatherElementsOp>(*x, *index, static_cast<uint64_t>(*timeAxis));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// TensorScatter
//===----------------------------------------------------------------------===//

/// TensorScatter (24): update's positions s along `axis` written at
/// write_indices[batch] + s (mod the cache length when circular): a
/// scatter_elements with those positions expanded to update's shape.
LogicalResult tensorScatter(NodeBinder &b) {
  FailureOr<Value> cache = b.input(0), update = b.input(1);
  Value writeIndices = b.optionalInput(2);
  FailureOr<std::string> mode = b.stringAttr("mode", "linear");
  FailureOr<int64_t> axis = b.intAttr("axis", -2);
  if (failed(cache) || failed(update) || failed(mode) || failed(axis) ||
      failed(requireStatic(b, {*cache, *update, writeIndices})))
    return failure();
  if (*mode != "linear" && *mode != "circular")
    return b.emitError() << "attribute 'mode' value is '" << *mode
                         << "', accepted values are linear, circular";
  RankedTensorType type = tensorType(*cache), updateType = tensorType(*update);
  int64_t rank = type.getRank();
  FailureOr<int64_t> normalized = kiln::normalizeAxis(b.loc(), "axis", *axis, rank);
  if (failed(normalized))
    return failure();
  if (*normalized == 0)
    return b.emitError() << "'axis' must not be the batch dim 0";
  bool compatible = updateType.getRank() == rank;
  for (int64_t d = 0; compatible && d < rank; ++d)
    compatible = d == *normalized ? updateType.getDimSize(d) <= type.getDimSize(d)
                                  : updateType.getDimSize(d) == type.getDimSize(d);
  if (!compatible)
    return b.emitError() << "update has type " << updateType << ", which does not fit "
                         << type << " along axis " << *normalized;
  Type i64 = b.builder().getI64Type();
  int64_t batch = type.getDimSize(0), steps = updateType.getDimSize(*normalized);
  // Sequence positions along the axis, [1, .., steps, .., 1].
  SmallVector<int64_t> stepShape(rank, 1), batchShape(rank, 1);
  stepShape[*normalized] = steps;
  batchShape[0] = batch;
  SmallVector<int64_t> iota = llvm::to_vector(llvm::seq<int64_t>(0, steps));
  FailureOr<Value> position = b.constant(
      DenseElementsAttr::get(RankedTensorType::get(stepShape, i64), ArrayRef(iota)));
  if (writeIndices) {
    if (tensorType(writeIndices).getShape() != ArrayRef<int64_t>{batch} ||
        !isa<IntegerType>(tensorType(writeIndices).getElementType()))
      return b.emitError() << "write_indices has type " << tensorType(writeIndices)
                           << ", expected " << batch << " integers";
    FailureOr<Value> start = castTo(b, writeIndices, i64);
    if (failed(start))
      return failure();
    start = reshapeTo(b, *start, batchShape);
    if (failed(start))
      return failure();
    position = b.make<kiln::AddOp>(*position, *start);
    if (failed(position))
      return failure();
  }
  if (*mode == "circular") {
    position = b.make<kiln::ModOp>(*position, b.scalar(i64, type.getDimSize(*normalized)));
    if (failed(position))
      return failure();
  }
  FailureOr<Value> index = b.makeTyped<kiln::ExpandOp>(
      updateType.clone(i64), *position, b.i64Vector(updateType.getShape()));
  if (failed(index))
    return failure();
  FailureOr<Value> out = b.make<kiln::ScatterElementsOp>(
      *cache, *index, *update, static_cast<uint64_t>(*normalized), ScatterReduction::none);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

//===----------------------------------------------------------------------===//
// BatchNormalization in training mode
//===----------------------------------------------------------------------===//

/// BatchNormalization (14) with training_mode 1: the batch's mean and
/// (population) variance over every dim but the channels normalize x, and
/// outputs 1 and 2 are the running statistics updated with `momentum`.
LogicalResult batchNormTraining(NodeBinder &b, ArrayRef<Value> operands, float epsilon) {
  FailureOr<float> momentum = b.floatAttr("momentum", 0.9f);
  if (failed(momentum) || failed(requireStatic(b, operands)))
    return failure();
  Value x = operands[0];
  RankedTensorType type = tensorType(x);
  int64_t rank = type.getRank();
  if (rank < 2)
    return b.emitError() << "input 0 has rank " << rank << ", expected at least 2";
  int64_t channels = type.getDimSize(1);
  SmallVector<int64_t> axes = {0}, perChannel(rank, 1);
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  perChannel[1] = channels;
  auto mean = [&](Value v) {
    return b.make<kiln::ReduceOp>(v, ReduceKind::mean, ArrayRef(axes), true);
  };
  FailureOr<Value> mu = mean(x);
  if (failed(mu))
    return failure();
  FailureOr<Value> centered = b.make<kiln::SubOp>(x, *mu);
  if (failed(centered))
    return failure();
  FailureOr<Value> square = b.make<kiln::MulOp>(*centered, *centered);
  if (failed(square))
    return failure();
  FailureOr<Value> var = mean(*square);
  if (failed(var))
    return failure();
  Type element = type.getElementType();
  FailureOr<Value> shifted = b.make<kiln::AddOp>(*var, b.scalar(element, epsilon));
  if (failed(shifted))
    return failure();
  FailureOr<Value> inv = b.make<kiln::RsqrtOp>(*shifted);
  if (failed(inv))
    return failure();
  FailureOr<Value> normed = b.make<kiln::MulOp>(*centered, *inv);
  if (failed(normed))
    return failure();
  for (Value v : operands.drop_front())
    if (tensorType(v).getShape() != ArrayRef<int64_t>{channels})
      return b.emitError() << "scale, bias, mean and var must have shape [" << channels
                           << "], but one is " << tensorType(v);
  FailureOr<Value> scale = reshapeTo(b, operands[1], perChannel);
  FailureOr<Value> bias = reshapeTo(b, operands[2], perChannel);
  if (failed(scale) || failed(bias))
    return failure();
  FailureOr<Value> scaled = b.make<kiln::MulOp>(*normed, *scale);
  if (failed(scaled))
    return failure();
  FailureOr<Value> y = b.make<kiln::AddOp>(*scaled, *bias);
  if (failed(y) || failed(b.setOutput(0, *y)))
    return failure();
  // running = given * momentum + batch * (1 - momentum).
  auto running = [&](unsigned output, Value given, Value batch) -> LogicalResult {
    if (!b.outputUsed(output))
      return success();
    FailureOr<Value> flat = reshapeTo(b, batch, {channels});
    if (failed(flat))
      return failure();
    FailureOr<Value> kept = b.make<kiln::MulOp>(given, b.scalar(element, *momentum));
    FailureOr<Value> added = b.make<kiln::MulOp>(*flat, b.scalar(element, 1.0 - *momentum));
    if (failed(kept) || failed(added))
      return failure();
    FailureOr<Value> sum = b.make<kiln::AddOp>(*kept, *added);
    return failed(sum) ? failure() : b.setOutput(output, *sum);
  };
  return failure(failed(running(1, operands[3], *mu)) ||
                 failed(running(2, operands[4], *var)));
}

void registerComposedHandlers(HandlerRegistry &r) {
  r.add("RotaryEmbedding", 23, rotaryEmbedding);
  r.add("CausalConvWithState", 27, causalConvWithState);
  r.add("GroupNormalization", 21, groupNorm);
  r.add("CenterCropPad", 18, centerCropPad);
  r.add("LRN", 7, lrn);
  r.add("ScatterND", 11, scatterND);
  r.add("ReverseSequence", 10, reverseSequence);
  r.add("TensorScatter", 24, tensorScatter);
}

} // namespace kiln::onnx_import
