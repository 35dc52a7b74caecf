//===- ContribNormHandlers.cpp - onnxruntime norms and RotaryEmbedding ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// onnxruntime's contrib normalizations and rotary embedding as kiln ops, with
// symbolic batch and sequence dims:
//   SimplifiedLayerNormalization (ai.onnx domain, as onnxruntime registers
//     it): x * rsqrt(mean(x^2) + eps) * scale over dims [axis, rank), in f32;
//     output 1 is inv_std_var.
//   SkipLayerNormalization / SkipSimplifiedLayerNormalization: s = input +
//     skip (+ bias), then layer_norm (or RMS) of s over the last dim with
//     gamma (and beta); outputs mean, inv_std_var ([..., 1], f32) and s.
//   RotaryEmbedding (com.microsoft): positions picked from the cos/sin caches
//     (position_ids [B, S], or one offset: offset + 0..S-1), the first
//     rotary_embedding_dim values of each head rotated as halves or pairs.
// Also the helpers the contrib attention handlers share (ContribOps.h).
//
//===----------------------------------------------------------------------===//

#include "ContribOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kiln::onnx_import::contrib {

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

FailureOr<Value> reshapeDims(NodeBinder &b, Value x, ArrayRef<DimOf> dims) {
  SmallVector<int64_t> shape;
  bool dynamic = false;
  for (const DimOf &d : dims) {
    int64_t size = d.from ? tensorType(d.from).getDimSize(d.axis) : d.size;
    dynamic |= ShapedType::isDynamic(size);
    shape.push_back(size);
  }
  auto type = RankedTensorType::get(shape, tensorType(x).getElementType());
  if (type == x.getType())
    return x;
  if (!dynamic)
    return b.makeTyped<kiln::ReshapeOp>(type, x, b.i64Vector(shape));
  SmallVector<Value> parts;
  for (auto [d, size] : llvm::zip(dims, shape)) {
    if (!ShapedType::isDynamic(size)) {
      parts.push_back(b.i64Vector({size}));
      continue;
    }
    Builder &builder = b.builder();
    FailureOr<Value> one = b.make<kiln::ShapeOp>(d.from, builder.getI64IntegerAttr(d.axis),
                                                 builder.getI64IntegerAttr(d.axis + 1));
    if (failed(one))
      return failure();
    parts.push_back(*one);
  }
  FailureOr<Value> target = b.make<kiln::ConcatOp>(parts, static_cast<uint64_t>(0));
  if (failed(target))
    return failure();
  return b.makeTyped<kiln::ReshapeOp>(type, x, *target);
}

FailureOr<Value> dimScalar(NodeBinder &b, Value x, int64_t axis) {
  Type i64 = b.builder().getI64Type();
  int64_t size = tensorType(x).getDimSize(axis);
  if (!ShapedType::isDynamic(size))
    return b.scalar(i64, static_cast<double>(size));
  FailureOr<Value> shape = b.make<kiln::ShapeOp>(x, IntegerAttr(), IntegerAttr());
  if (failed(shape))
    return failure();
  return b.make<kiln::GatherOp>(*shape, b.scalar(i64, static_cast<double>(axis)),
                                static_cast<uint64_t>(0));
}

FailureOr<Value> iota(NodeBinder &b, Value n) {
  Type i64 = b.builder().getI64Type();
  return b.makeTyped<kiln::RangeOp>(RankedTensorType::get({ShapedType::kDynamic}, i64),
                                    b.scalar(i64, 0), n, b.scalar(i64, 1));
}

FailureOr<Value> positionsFrom(NodeBinder &b, Value offset, Value like, int64_t axis) {
  FailureOr<Value> length = dimScalar(b, like, axis);
  FailureOr<Value> steps = succeeded(length) ? iota(b, *length) : length;
  if (failed(steps))
    return failure();
  FailureOr<Value> row = b.make<kiln::UnsqueezeOp>(*steps, ArrayRef<int64_t>{0});
  if (failed(row) || !offset)
    return row;
  Type i64 = b.builder().getI64Type();
  RankedTensorType type = tensorType(offset);
  if (type.getNumElements() != 1)
    return b.emitError() << "the position offset has type " << type
                         << ", expected one element";
  FailureOr<Value> wide =
      type.getElementType() == i64
          ? FailureOr<Value>(offset)
          : b.makeTyped<kiln::CastOp>(type.clone(i64), offset);
  FailureOr<Value> scalar =
      succeeded(wide) ? b.makeTyped<kiln::ReshapeOp>(RankedTensorType::get({}, i64), *wide,
                                                     b.i64Vector({}))
                      : wide;
  if (failed(scalar))
    return failure();
  return b.make<kiln::AddOp>(*row, *scalar);
}

FailureOr<Value> cacheRows(NodeBinder &b, Value cache, Value positions) {
  if (tensorType(cache).getRank() != 2)
    return b.emitError() << "the cos/sin cache has type " << tensorType(cache)
                         << ", expected [max_positions, rotary_dim / 2]";
  return b.make<kiln::GatherOp>(cache, positions, static_cast<uint64_t>(0));
}

static FailureOr<Value> sliceLast(NodeBinder &b, Value x, int64_t start, int64_t end,
                                  int64_t step = 1) {
  int64_t axis = tensorType(x).getRank() - 1;
  return b.make<kiln::SliceOp>(x, ArrayRef<int64_t>{start}, ArrayRef<int64_t>{end},
                               ArrayRef<int64_t>{axis}, ArrayRef<int64_t>{step});
}

FailureOr<Value> rotate(NodeBinder &b, Value x, Value cosRows, Value sinRows, int64_t dim,
                        bool interleaved) {
  int64_t headSize = tensorType(x).getDimSize(3), half = dim / 2;
  auto rows = [&](Value r) -> FailureOr<Value> {
    RankedTensorType type = tensorType(r);
    if (type.getRank() != 3 || type.getDimSize(2) < half)
      return b.emitError() << "the cos/sin rows have shape " << type
                           << ", expected [batch, sequence, >= " << half << "]";
    FailureOr<Value> cut = type.getDimSize(2) == half ? FailureOr<Value>(r)
                                                      : sliceLast(b, r, 0, half);
    if (failed(cut))
      return failure();
    FailureOr<Value> wide = *cut;
    if (tensorType(*cut).getElementType() != tensorType(x).getElementType())
      wide = b.makeTyped<kiln::CastOp>(
          tensorType(*cut).clone(tensorType(x).getElementType()), *cut);
    return succeeded(wide) ? b.make<kiln::UnsqueezeOp>(*wide, ArrayRef<int64_t>{2}) : wide;
  };
  FailureOr<Value> cos = rows(cosRows);
  if (failed(cos))
    return failure();
  FailureOr<Value> sin = rows(sinRows);
  if (failed(sin))
    return failure();
  FailureOr<Value> x1 = interleaved ? sliceLast(b, x, 0, dim, 2) : sliceLast(b, x, 0, half);
  FailureOr<Value> x2 = interleaved ? sliceLast(b, x, 1, dim, 2) : sliceLast(b, x, half, dim);
  if (failed(x1) || failed(x2))
    return failure();
  FailureOr<Value> c1 = b.make<kiln::MulOp>(*x1, *cos), s2 = b.make<kiln::MulOp>(*x2, *sin);
  FailureOr<Value> s1 = b.make<kiln::MulOp>(*x1, *sin), c2 = b.make<kiln::MulOp>(*x2, *cos);
  if (failed(c1) || failed(s2) || failed(s1) || failed(c2))
    return failure();
  FailureOr<Value> real = b.make<kiln::SubOp>(*c1, *s2);
  FailureOr<Value> imag = b.make<kiln::AddOp>(*s1, *c2);
  if (failed(real) || failed(imag))
    return failure();
  FailureOr<Value> rotated;
  if (interleaved) {
    FailureOr<Value> re = b.make<kiln::UnsqueezeOp>(*real, ArrayRef<int64_t>{4});
    FailureOr<Value> im = b.make<kiln::UnsqueezeOp>(*imag, ArrayRef<int64_t>{4});
    if (failed(re) || failed(im))
      return failure();
    FailureOr<Value> pairs =
        b.make<kiln::ConcatOp>(ValueRange{*re, *im}, static_cast<uint64_t>(4));
    if (failed(pairs))
      return failure();
    rotated = reshapeDims(b, *pairs,
                          {DimOf::of(x, 0), DimOf::of(x, 1), DimOf::of(x, 2), DimOf::fixed(dim)});
  } else {
    rotated = b.make<kiln::ConcatOp>(ValueRange{*real, *imag}, static_cast<uint64_t>(3));
  }
  if (failed(rotated) || dim == headSize)
    return rotated;
  FailureOr<Value> rest = sliceLast(b, x, dim, headSize);
  if (failed(rest))
    return failure();
  return b.make<kiln::ConcatOp>(ValueRange{*rotated, *rest}, static_cast<uint64_t>(3));
}

LogicalResult rejectInput(NodeBinder &b, unsigned i, StringRef what) {
  if (i < b.numInputs() && b.hasInput(i))
    return b.unsupported("input " + Twine(i) + " (" + what + ")");
  return success();
}

LogicalResult rejectOutput(NodeBinder &b, unsigned i, StringRef what) {
  if (b.outputUsed(i))
    return b.unsupported("output " + Twine(i) + " (" + what + ") is used");
  return success();
}

namespace {

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

FailureOr<Value> toF32(NodeBinder &b, Value x) {
  RankedTensorType type = tensorType(x);
  Type f32 = b.builder().getF32Type();
  if (type.getElementType() == f32)
    return x;
  return b.makeTyped<kiln::CastOp>(type.clone(f32), x);
}

FailureOr<Value> castLike(NodeBinder &b, Value x, Type element) {
  RankedTensorType type = tensorType(x);
  if (type.getElementType() == element)
    return x;
  return b.makeTyped<kiln::CastOp>(type.clone(element), x);
}

/// mean over dims [axis, rank), kept as 1s.
FailureOr<Value> meanFrom(NodeBinder &b, Value x, int64_t axis) {
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(axis, rank));
  return b.make<kiln::ReduceOp>(x, ReduceKind::mean, ArrayRef(axes), true);
}

/// rsqrt(v + epsilon) for an f32 `v`.
FailureOr<Value> invSqrtPlus(NodeBinder &b, Value v, float epsilon) {
  FailureOr<Value> shifted =
      b.make<kiln::AddOp>(v, b.scalar(b.builder().getF32Type(), epsilon));
  return succeeded(shifted) ? b.make<kiln::RsqrtOp>(*shifted) : shifted;
}

struct Normalized {
  Value output, mean, invStd;
};

/// (x - mean) * inv_std (or x * inv_rms when `simplified`) over dims
/// [axis, rank) in f32, times `gamma` (plus `beta`), in x's type.
FailureOr<Normalized> normalize(NodeBinder &b, Value x, Value gamma, Value beta,
                                int64_t axis, float epsilon, bool simplified) {
  Normalized result;
  FailureOr<Value> wide = toF32(b, x);
  if (failed(wide))
    return failure();
  Value centered = *wide;
  if (!simplified) {
    FailureOr<Value> mean = meanFrom(b, *wide, axis);
    FailureOr<Value> diff = succeeded(mean) ? b.make<kiln::SubOp>(*wide, *mean) : mean;
    if (failed(diff))
      return failure();
    result.mean = *mean;
    centered = *diff;
  }
  FailureOr<Value> square = b.make<kiln::MulOp>(centered, centered);
  FailureOr<Value> var = succeeded(square) ? meanFrom(b, *square, axis) : square;
  FailureOr<Value> inv = succeeded(var) ? invSqrtPlus(b, *var, epsilon) : var;
  FailureOr<Value> normed = succeeded(inv) ? b.make<kiln::MulOp>(centered, *inv) : inv;
  if (failed(normed))
    return failure();
  result.invStd = *inv;
  Type element = tensorType(gamma).getElementType();
  FailureOr<Value> narrow = castLike(b, *normed, element);
  FailureOr<Value> scaled = succeeded(narrow) ? b.make<kiln::MulOp>(*narrow, gamma) : narrow;
  if (succeeded(scaled) && beta)
    scaled = b.make<kiln::AddOp>(*scaled, beta);
  if (failed(scaled))
    return failure();
  result.output = *scaled;
  return result;
}

LogicalResult checkStash(NodeBinder &b) {
  FailureOr<int64_t> stash = b.intAttr("stash_type", 1);
  if (failed(stash))
    return failure();
  if (*stash != 1)
    return b.unsupported("attribute 'stash_type' " + Twine(*stash) +
                         " (only 1, float, is supported)");
  return success();
}

/// SimplifiedLayerNormalization (onnxruntime, ai.onnx domain 1): outputs Y
/// and inv_std_var.
LogicalResult simplifiedLayerNorm(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), scale = b.input(1);
  FailureOr<int64_t> axis = b.intAttr("axis", -1);
  FailureOr<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  if (failed(x) || failed(scale) || failed(axis) || failed(epsilon) ||
      failed(checkStash(b)))
    return failure();
  FailureOr<int64_t> first =
      kiln::normalizeAxis(b.loc(), "axis", *axis, tensorType(*x).getRank());
  if (failed(first))
    return failure();
  FailureOr<Normalized> n = normalize(b, *x, *scale, Value(), *first, *epsilon, true);
  if (failed(n) || failed(b.setOutput(0, n->output)))
    return failure();
  return b.outputUsed(1) ? b.setOutput(1, n->invStd) : success();
}

/// SkipLayerNormalization and SkipSimplifiedLayerNormalization (com.microsoft
/// 1): inputs input, skip, gamma, [beta,] bias; outputs output, mean,
/// inv_std_var, input_skip_bias_sum.
template <bool Simplified>
LogicalResult skipLayerNorm(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), skip = b.input(1), gamma = b.input(2);
  Value beta = Simplified ? Value() : b.optionalInput(3);
  Value bias = b.optionalInput(Simplified ? 3 : 4);
  FailureOr<float> epsilon = b.floatAttr("epsilon", Simplified ? 1e-5f : 1e-12f);
  if (failed(x) || failed(skip) || failed(gamma) || failed(epsilon))
    return failure();
  RankedTensorType type = tensorType(*x);
  int64_t hidden = type.getDimSize(type.getRank() - 1);
  if ((type.getRank() != 2 && type.getRank() != 3) || ShapedType::isDynamic(hidden))
    return b.emitError() << "input 0 has type " << type
                         << ", expected [batch, sequence, hidden] or [tokens, hidden] "
                            "with a static hidden size";
  for (auto [v, what] : {std::pair(*gamma, "gamma"), std::pair(beta, "beta"),
                         std::pair(bias, "bias")})
    if (v && (tensorType(v).getRank() != 1 || tensorType(v).getDimSize(0) != hidden))
      return b.emitError() << what << " has type " << tensorType(v)
                           << ", expected [" << hidden << "]";
  FailureOr<Value> sum = b.make<kiln::AddOp>(*x, *skip);
  if (succeeded(sum) && bias)
    sum = b.make<kiln::AddOp>(*sum, bias);
  if (failed(sum))
    return failure();
  if (tensorType(*sum).getRank() != type.getRank())
    return b.emitError() << "skip has type " << tensorType(*skip)
                         << ", which does not broadcast to input 0's " << type;
  FailureOr<Normalized> n =
      normalize(b, *sum, *gamma, beta, type.getRank() - 1, *epsilon, Simplified);
  if (failed(n) || failed(b.setOutput(0, n->output)))
    return failure();
  if (b.outputUsed(1)) {
    if (Simplified)
      return b.unsupported("output 1 (mean) of the simplified (RMS) norm is used");
    if (failed(b.setOutput(1, n->mean)))
      return failure();
  }
  if (b.outputUsed(2) && failed(b.setOutput(2, n->invStd)))
    return failure();
  return b.outputUsed(3) ? b.setOutput(3, *sum) : success();
}

//===----------------------------------------------------------------------===//
// RotaryEmbedding (com.microsoft)
//===----------------------------------------------------------------------===//

LogicalResult rotaryEmbedding(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), positions = b.input(1), cosCache = b.input(2),
                   sinCache = b.input(3);
  FailureOr<int64_t> interleaved = b.intAttr("interleaved", 0),
                     rotaryDim = b.intAttr("rotary_embedding_dim", 0),
                     numHeads = b.intAttr("num_heads", 0),
                     packed = b.intAttr("is_packed_batching", 0);
  FailureOr<float> scale = b.floatAttr("scale", 1.0f);
  if (failed(x) || failed(positions) || failed(cosCache) || failed(sinCache) ||
      failed(interleaved) || failed(rotaryDim) || failed(numHeads) || failed(packed) ||
      failed(scale) || failed(b.checkRange("attribute 'interleaved'", *interleaved, 0, 1)))
    return failure();
  if (*packed != 0)
    return b.unsupported("attribute 'is_packed_batching' " + Twine(*packed) +
                         " (ragged batches; only 0 is supported)");
  if (*scale != 1.0f)
    return b.unsupported("attribute 'scale' " + llvm::formatv("{0}", *scale).str() +
                         " (only 1 is supported)");
  RankedTensorType type = tensorType(*x);
  if (type.getRank() != 3 && type.getRank() != 4)
    return b.emitError() << "input 0 has type " << type << ", expected rank 3 or 4";
  RankedTensorType cosType = tensorType(*cosCache);
  if (cosType.getRank() != 2 || ShapedType::isDynamic(cosType.getDimSize(1)) ||
      cosType != tensorType(*sinCache))
    return b.emitError() << "cos_cache and sin_cache have types " << cosType << " and "
                         << tensorType(*sinCache)
                         << ", expected the same [max_positions, rotary_dim / 2]";
  int64_t hidden = type.getRank() == 3 ? type.getDimSize(2)
                                       : type.getDimSize(1) * type.getDimSize(3);
  if (ShapedType::isDynamic(hidden))
    return b.unsupported("a dynamic hidden size or head count (" +
                         llvm::formatv("{0}", type).str() + ")");
  if (*rotaryDim > 0 && *numHeads == 0 && type.getRank() == 3)
    return b.emitError() << "attribute 'rotary_embedding_dim' needs attribute 'num_heads'";
  int64_t headSize;
  if (type.getRank() == 4)
    headSize = type.getDimSize(3);
  else
    headSize = *numHeads > 0 ? hidden / *numHeads : cosType.getDimSize(1) * 2;
  if (headSize <= 0 || hidden % headSize != 0)
    return b.emitError() << "hidden size " << hidden << " is not a multiple of head size "
                         << headSize << " (num_heads " << *numHeads << ")";
  int64_t dim = *rotaryDim > 0 ? *rotaryDim : headSize;
  if (dim > headSize || dim % 2 != 0 || cosType.getDimSize(1) < dim / 2)
    return b.emitError() << "rotary dim " << dim << " must be even, at most head size "
                         << headSize << " and at most twice cos_cache's "
                         << cosType.getDimSize(1);
  int64_t heads = hidden / headSize;
  // Positions [B or 1, S]: position_ids as given, or one offset + 0..S-1.
  RankedTensorType posType = tensorType(*positions);
  FailureOr<Value> pos = *positions;
  if (posType.getRank() == 1 && posType.getDimSize(0) == 1)
    pos = positionsFrom(b, *positions, *x, type.getRank() == 3 ? 1 : 2);
  else if (posType.getRank() != 2)
    return b.emitError() << "position_ids has type " << posType
                         << ", expected [1] (an offset) or [batch, sequence]";
  if (failed(pos))
    return failure();
  FailureOr<Value> cos = cacheRows(b, *cosCache, *pos);
  FailureOr<Value> sin = succeeded(cos) ? cacheRows(b, *sinCache, *pos) : cos;
  if (failed(sin))
    return failure();
  FailureOr<Value> bshd =
      type.getRank() == 4
          ? b.make<kiln::TransposeOp>(*x, ArrayRef<int64_t>{0, 2, 1, 3})
          : reshapeDims(b, *x, {DimOf::of(*x, 0), DimOf::of(*x, 1), DimOf::fixed(heads),
                                DimOf::fixed(headSize)});
  if (failed(bshd))
    return failure();
  FailureOr<Value> out = rotate(b, *bshd, *cos, *sin, dim, *interleaved == 1);
  if (failed(out))
    return failure();
  out = type.getRank() == 4
            ? b.make<kiln::TransposeOp>(*out, ArrayRef<int64_t>{0, 2, 1, 3})
            : reshapeDims(b, *out,
                          {DimOf::of(*x, 0), DimOf::of(*x, 1), DimOf::fixed(hidden)});
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

void registerContribNormHandlers(HandlerRegistry &r) {
  r.add("SimplifiedLayerNormalization", 1, simplifiedLayerNorm);
  r.add("SkipLayerNormalization", 1, skipLayerNorm<false>, kDomain);
  r.add("SkipSimplifiedLayerNormalization", 1, skipLayerNorm<true>, kDomain);
  r.add("RotaryEmbedding", 1, rotaryEmbedding, kDomain);
}

} // namespace kiln::onnx_import::contrib
