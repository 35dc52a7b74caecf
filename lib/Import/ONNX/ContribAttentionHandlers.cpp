//===- ContribAttentionHandlers.cpp - onnxruntime attention contrib ops ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// GroupQueryAttention and MultiHeadAttention (com.microsoft 1) as kiln ops,
// with symbolic batch, sequence and past-sequence dims:
//   heads split ([B, S, heads * H] -> [B, S, heads, H], dims read at run
//   time), GQA's rotary embedding (do_rotary, positions past + 0..S-1 or
//   position_ids), the cache appended (present = concat(past, new) along the
//   sequence), then per KV head a group of query heads ([B, kv, G, S, H]
//   against [B, kv, 1, T, H], so no head is copied): Q K^T * scale, softcap,
//   the causal frontier built at run time (query i sees key j <= past + i,
//   as onnxruntime aligns it), softmax, P V, heads merged.
// GQA reads seqlens_k and total_sequence_length as onnxruntime does: each
// batch entry's past length is seqlens_k + 1 - S (0 on a first prompt, S ==
// total_sequence_length), its new keys are written there in the present (the
// rest of the present zero), its queries see keys up to past + i and its
// rotary positions start at past. The present holds past_sequence + S
// positions (onnxruntime: max(total_sequence_length, past_sequence), the
// same for a growing cache; with a maximum-length past Kiln's present has S
// more positions, all zero).
//
//===----------------------------------------------------------------------===//

#include "ContribOps.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::onnx_import::contrib {
namespace {

/// keys j allowed for queries i: j <= i + offset (rank 0, or [B]: then the
/// result is [B, S, T]) (and, when window > 0, j >
/// i + offset - window: the window holds `window` keys, the query's own
/// included, as onnxruntime's CPU kernel reads local_window_size), as an i1
/// [S, T] tensor; S and T are dims of `rowsLike` / `keysLike`.
FailureOr<Value> causalFrontier(NodeBinder &b, Value rowsLike, int64_t rowsAxis,
                                Value keysLike, int64_t keysAxis, Value offset,
                                int64_t window) {
  FailureOr<Value> s = dimScalar(b, rowsLike, rowsAxis), t = dimScalar(b, keysLike, keysAxis);
  if (failed(s) || failed(t))
    return failure();
  FailureOr<Value> rows = iota(b, *s), keys = iota(b, *t);
  if (failed(rows) || failed(keys))
    return failure();
  rows = b.make<kiln::UnsqueezeOp>(*rows, ArrayRef<int64_t>{1});
  keys = b.make<kiln::UnsqueezeOp>(*keys, ArrayRef<int64_t>{0});
  if (tensorType(offset).getRank() == 1) {
    // One offset per batch entry: [B] -> [B, 1, 1], the frontier [B, S, T].
    FailureOr<Value> perEntry = b.make<kiln::UnsqueezeOp>(offset, ArrayRef<int64_t>{1, 2});
    if (failed(perEntry))
      return failure();
    offset = *perEntry;
  }
  FailureOr<Value> position = succeeded(rows) ? b.make<kiln::AddOp>(*rows, offset) : rows;
  if (failed(position) || failed(keys))
    return failure();
  FailureOr<Value> allowed = b.make<kiln::LessEqualOp>(*keys, *position);
  if (failed(allowed) || window <= 0)
    return allowed;
  Type i64 = b.builder().getI64Type();
  FailureOr<Value> first =
      b.make<kiln::SubOp>(*position, b.scalar(i64, static_cast<double>(window - 1)));
  FailureOr<Value> inside =
      succeeded(first) ? b.make<kiln::GreaterEqualOp>(*keys, *first) : first;
  return succeeded(inside) ? b.make<kiln::AndOp>(*allowed, *inside) : inside;
}

struct Core {
  float scale = 0;
  float softcap = 0;
  Value blocked;  // i1, true where a key is masked out (-inf), or null
  Value additive; // added to the scores, or null
};

/// softmax(q k^T * scale (softcapped) + additive, masked) v over the last two
/// dims; leading dims broadcast.
FailureOr<Value> attend(NodeBinder &b, Value q, Value k, Value v, const Core &c) {
  int64_t rank = tensorType(k).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  FailureOr<Value> kt = b.make<kiln::TransposeOp>(k, ArrayRef(perm));
  FailureOr<Value> scores = succeeded(kt) ? b.make<kiln::MatmulOp>(q, *kt) : kt;
  if (failed(scores))
    return failure();
  Type element = tensorType(*scores).getElementType();
  scores = b.make<kiln::MulOp>(*scores, b.scalar(element, c.scale));
  if (succeeded(scores) && c.softcap > 0) {
    FailureOr<Value> ratio = b.make<kiln::MulOp>(*scores, b.scalar(element, 1.0 / c.softcap));
    FailureOr<Value> squashed = succeeded(ratio) ? b.make<kiln::TanhOp>(*ratio) : ratio;
    scores = succeeded(squashed)
                 ? b.make<kiln::MulOp>(*squashed, b.scalar(element, c.softcap))
                 : squashed;
  }
  if (succeeded(scores) && c.additive)
    scores = b.make<kiln::AddOp>(*scores, c.additive);
  if (succeeded(scores) && c.blocked)
    scores = b.make<kiln::SelectOp>(
        c.blocked, b.scalar(element, -std::numeric_limits<double>::infinity()), *scores);
  if (failed(scores))
    return failure();
  FailureOr<Value> probs = b.make<kiln::SoftmaxOp>(
      *scores, static_cast<uint64_t>(tensorType(*scores).getRank() - 1));
  return succeeded(probs) ? b.make<kiln::MatmulOp>(*probs, v) : probs;
}

/// [B, S, heads * H] -> [B, S, heads, H].
/// Elements [start, end) of `x` along `axis` (a packed QKV's or bias's part).
FailureOr<Value> sliceAxis(NodeBinder &b, Value x, int64_t axis, int64_t start, int64_t end) {
  return b.make<kiln::SliceOp>(x, ArrayRef<int64_t>{start}, ArrayRef<int64_t>{end},
                               ArrayRef<int64_t>{axis}, ArrayRef<int64_t>{1});
}

FailureOr<Value> splitHeads(NodeBinder &b, Value x, int64_t heads, StringRef what) {
  RankedTensorType type = tensorType(x);
  int64_t hidden = type.getRank() == 3 ? type.getDimSize(2) : ShapedType::kDynamic;
  if (ShapedType::isDynamic(hidden) || heads <= 0 || hidden % heads != 0)
    return b.emitError() << what << " has type " << type
                         << ", expected [batch, sequence, hidden] with a static hidden size "
                            "that is a multiple of "
                         << heads << " heads";
  return reshapeDims(b, x, {DimOf::of(x, 0), DimOf::of(x, 1), DimOf::fixed(heads),
                            DimOf::fixed(hidden / heads)});
}

FailureOr<Value> toBNSH(NodeBinder &b, Value bsnh) {
  return b.make<kiln::TransposeOp>(bsnh, ArrayRef<int64_t>{0, 2, 1, 3});
}

/// past ++ new along the sequence (dim 2 of BNSH), checking past's shape.
FailureOr<Value> appendCache(NodeBinder &b, Value past, Value fresh, StringRef what) {
  if (!past)
    return fresh;
  RankedTensorType p = tensorType(past), f = tensorType(fresh);
  if (p.getRank() != 4 || p.getElementType() != f.getElementType() ||
      p.getDimSize(1) != f.getDimSize(1) || p.getDimSize(3) != f.getDimSize(3))
    return b.emitError() << what << " has type " << p << ", expected [batch, "
                         << f.getDimSize(1) << ", past_sequence, " << f.getDimSize(3)
                         << "] of " << f.getElementType();
  return b.make<kiln::ConcatOp>(ValueRange{past, fresh}, static_cast<uint64_t>(2));
}

/// [B, kv, G, S, H] (or [B, N, S, H]) -> [B, S, N * H].
FailureOr<Value> mergeHeads(NodeBinder &b, Value out, Value query) {
  RankedTensorType type = tensorType(out);
  int64_t rank = type.getRank();
  SmallVector<int64_t> perm = rank == 5 ? SmallVector<int64_t>{0, 3, 1, 2, 4}
                                        : SmallVector<int64_t>{0, 2, 1, 3};
  FailureOr<Value> moved = b.make<kiln::TransposeOp>(out, ArrayRef(perm));
  if (failed(moved))
    return failure();
  int64_t width = 1;
  for (int64_t d = 1; d < rank; ++d)
    if (d != rank - 2)
      width *= type.getDimSize(d);
  return reshapeDims(b, *moved, {DimOf::of(query, 0), DimOf::of(query, 1), DimOf::fixed(width)});
}

/// Reads `scale` (0 or absent: 1/sqrt(head size)).
FailureOr<float> readScale(NodeBinder &b, int64_t headSize) {
  FailureOr<float> scale = b.floatAttr("scale", 0.0f);
  if (failed(scale))
    return failure();
  return *scale == 0.0f ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(headSize)))
                        : *scale;
}

//===----------------------------------------------------------------------===//
// GroupQueryAttention
//===----------------------------------------------------------------------===//

struct GqaConfig {
  int64_t heads = 0, kvHeads = 0, window = -1;
  bool rotary = false, interleaved = false, causal = true;
  float softcap = 0;
};

/// GroupQueryAttention's attributes, and the variants Kiln rejects.
FailureOr<GqaConfig> readGqaConfig(NodeBinder &b) {
  FailureOr<int64_t> heads = b.intAttr("num_heads", std::nullopt),
                     kvHeads = b.intAttr("kv_num_heads", std::nullopt),
                     doRotary = b.intAttr("do_rotary", 0),
                     interleaved = b.intAttr("rotary_interleaved", 0),
                     causal = b.intAttr("causal", 1),
                     window = b.intAttr("local_window_size", -1),
                     smooth = b.intAttr("smooth_softmax", -1),
                     qkOutput = b.intAttr("qk_output", 0),
                     slidingCache = b.intAttr("sliding_window_cache", 0);
  FailureOr<float> softcap = b.floatAttr("softcap", 0.0f);
  if (failed(heads) || failed(kvHeads) || failed(doRotary) ||
      failed(interleaved) || failed(causal) || failed(window) || failed(smooth) ||
      failed(qkOutput) || failed(slidingCache) || failed(softcap) ||
      failed(b.checkRange("attribute 'num_heads'", *heads, 1, {})) ||
      failed(b.checkRange("attribute 'kv_num_heads'", *kvHeads, 1, {})) ||
      failed(b.checkRange("attribute 'causal'", *causal, 0, 1)) ||
      failed(b.checkRange("attribute 'do_rotary'", *doRotary, 0, 1)) ||
      failed(b.checkRange("attribute 'rotary_interleaved'", *interleaved, 0, 1)))
    return failure();
  if (*heads % *kvHeads != 0)
    return b.emitError() << "attribute 'num_heads' " << *heads
                         << " is not a multiple of 'kv_num_heads' " << *kvHeads;
  if (*smooth == 1)
    return b.unsupported("attribute 'smooth_softmax' 1");
  if (*qkOutput != 0)
    return b.unsupported("attribute 'qk_output' " + Twine(*qkOutput));
  if (*slidingCache != 0)
    return b.unsupported("attribute 'sliding_window_cache' " + Twine(*slidingCache) +
                         " (a window-sized cache)");
  for (StringRef name : {"kv_cache_bit_width"})
    if (b.hasAttr(name))
      return b.unsupported("attribute '" + name + "' (a quantized KV cache)");
  for (StringRef name : {"k_quant_type", "v_quant_type"}) {
    FailureOr<std::string> kind = b.stringAttr(name, StringRef("NONE"));
    if (failed(kind))
      return failure();
    if (*kind != "NONE")
      return b.unsupported("attribute '" + name + "' " + *kind + " (a quantized KV cache)");
  }
  if (*causal == 0 && *window != -1)
    return b.emitError() << "attribute 'local_window_size' is " << *window
                         << ", but must be -1 when 'causal' is 0";
  if (failed(rejectInput(b, 10, "attention_bias")) || failed(rejectInput(b, 11, "head_sink")) ||
      failed(rejectInput(b, 12, "k_scale")) || failed(rejectInput(b, 13, "v_scale")) ||
      failed(rejectInput(b, 14, "q_norm_weight")) ||
      failed(rejectInput(b, 15, "k_norm_weight")) ||
      failed(rejectInput(b, 16, "query_seqlens")) || failed(rejectOutput(b, 3, "output_qk")))
    return failure();
  GqaConfig c;
  c.heads = *heads;
  c.kvHeads = *kvHeads;
  c.window = *window;
  c.rotary = *doRotary == 1;
  c.interleaved = *interleaved == 1;
  c.causal = *causal == 1;
  c.softcap = *softcap;
  return c;
}

/// Each batch entry's past length ([B] i64) as onnxruntime derives it from
/// seqlens_k (input 5, [B], total length - 1) and total_sequence_length
/// (input 6, one element): 0 on a first prompt (S == total_sequence_length),
/// else seqlens_k + 1 - S; clamped to [0, past_sequence] so that a bad
/// seqlens_k reads no memory outside the cache.
FailureOr<Value> entryPastLengths(NodeBinder &b, Value query, Value pastLength) {
  FailureOr<Value> seqlens = b.input(5), total = b.input(6);
  if (failed(seqlens) || failed(total))
    return failure();
  RankedTensorType seqlensType = tensorType(*seqlens), totalType = tensorType(*total);
  if (seqlensType.getRank() != 1 || !isa<IntegerType>(seqlensType.getElementType()))
    return b.emitError() << "seqlens_k has type " << seqlensType << ", expected [batch] of int32";
  if (!totalType.hasStaticShape() || totalType.getNumElements() != 1 ||
      !isa<IntegerType>(totalType.getElementType()))
    return b.emitError() << "total_sequence_length has type " << totalType
                         << ", expected one int32";
  Type i64 = b.builder().getI64Type();
  FailureOr<Value> lengths = b.makeTyped<kiln::CastOp>(seqlensType.clone(i64), *seqlens);
  FailureOr<Value> wideTotal = b.makeTyped<kiln::CastOp>(totalType.clone(i64), *total);
  FailureOr<Value> totalScalar =
      succeeded(wideTotal) ? b.makeTyped<kiln::ReshapeOp>(RankedTensorType::get({}, i64),
                                                           *wideTotal, b.i64Vector({}))
                           : wideTotal;
  FailureOr<Value> s = dimScalar(b, query, 1);
  if (failed(lengths) || failed(totalScalar) || failed(s))
    return failure();
  FailureOr<Value> firstPrompt = b.make<kiln::EqualOp>(*s, *totalScalar);
  FailureOr<Value> newFirst = b.make<kiln::SubOp>(*lengths, *s);
  FailureOr<Value> past = succeeded(newFirst)
                              ? b.make<kiln::AddOp>(*newFirst, b.scalar(i64, 1.0))
                              : newFirst;
  past = succeeded(past) ? b.make<kiln::MinOp>(*past, pastLength) : past;
  past = succeeded(past) ? b.make<kiln::MaxOp>(*past, b.scalar(i64, 0.0)) : past;
  if (failed(firstPrompt) || failed(past))
    return failure();
  return b.make<kiln::SelectOp>(*firstPrompt, b.scalar(i64, 0.0), *past);
}

/// The present cache [B, kv, P + S, H] as onnxruntime writes it: entry b's
/// first pastLengths[b] positions from `past`, then the S new ones, then
/// zeros. Equal to past ++ fresh when every entry's past length is P.
FailureOr<Value> placeCache(NodeBinder &b, Value past, Value fresh, Value pastLengths,
                            StringRef what) {
  FailureOr<Value> joined = appendCache(b, past, fresh, what);
  if (failed(joined) || !past)
    return joined;
  Type i64 = b.builder().getI64Type();
  FailureOr<Value> p = dimScalar(b, past, 2), s = dimScalar(b, fresh, 2),
                   t = dimScalar(b, *joined, 2);
  FailureOr<Value> positions = succeeded(t) ? iota(b, *t) : t;
  if (failed(p) || failed(s) || failed(positions))
    return failure();
  // [1, T] against [B, 1].
  FailureOr<Value> j = b.make<kiln::UnsqueezeOp>(*positions, ArrayRef<int64_t>{0});
  FailureOr<Value> start = b.make<kiln::UnsqueezeOp>(pastLengths, ArrayRef<int64_t>{1});
  if (failed(j) || failed(start))
    return failure();
  FailureOr<Value> inPast = b.make<kiln::LessOp>(*j, *start);
  FailureOr<Value> end = b.make<kiln::AddOp>(*start, *s);
  FailureOr<Value> inNew = succeeded(end) ? b.make<kiln::LessOp>(*j, *end) : end;
  // New position j comes from joined position P + (j - start).
  FailureOr<Value> shift = b.make<kiln::SubOp>(*p, *start);
  FailureOr<Value> fromNew = succeeded(shift) ? b.make<kiln::AddOp>(*j, *shift) : shift;
  FailureOr<Value> last = b.make<kiln::SubOp>(*t, b.scalar(i64, 1.0));
  fromNew = succeeded(fromNew) && succeeded(last) ? b.make<kiln::MinOp>(*fromNew, *last)
                                                  : FailureOr<Value>(failure());
  FailureOr<Value> index =
      succeeded(inPast) && succeeded(fromNew)
          ? b.make<kiln::SelectOp>(*inPast, *j, *fromNew)
          : FailureOr<Value>(failure());
  // [B, T] -> [B, 1, T, 1] -> the cache's shape.
  FailureOr<Value> index4 = succeeded(index)
                                ? b.make<kiln::UnsqueezeOp>(*index, ArrayRef<int64_t>{1, 3})
                                : index;
  FailureOr<Value> keep4 = succeeded(inNew)
                               ? b.make<kiln::UnsqueezeOp>(*inNew, ArrayRef<int64_t>{1, 3})
                               : inNew;
  FailureOr<Value> shape = b.make<kiln::ShapeOp>(*joined, IntegerAttr(), IntegerAttr());
  if (failed(index4) || failed(keep4) || failed(shape))
    return failure();
  RankedTensorType joinedType = tensorType(*joined);
  FailureOr<Value> spread = b.makeTyped<kiln::ExpandOp>(joinedType.clone(i64), *index4, *shape);
  FailureOr<Value> gathered =
      succeeded(spread) ? b.make<kiln::GatherElementsOp>(*joined, *spread, static_cast<uint64_t>(2))
                        : spread;
  if (failed(gathered))
    return failure();
  return b.make<kiln::SelectOp>(*keep4, *gathered, b.scalar(joinedType.getElementType(), 0.0));
}

LogicalResult groupQueryAttention(NodeBinder &b) {
  FailureOr<Value> query = b.input(0);
  FailureOr<GqaConfig> config = readGqaConfig(b);
  if (failed(query) || failed(config))
    return failure();
  Value key = b.optionalInput(1), value = b.optionalInput(2);
  Value pastKey = b.optionalInput(3), pastValue = b.optionalInput(4);
  if (!key != !value)
    return b.emitError() << "inputs 'key' and 'value' must both be given or both be absent "
                            "(packed QKV)";
  if (!pastKey != !pastValue)
    return b.emitError() << "inputs 'past_key' and 'past_value' must both be given or both "
                            "be absent";
  RankedTensorType qType = tensorType(*query);
  int64_t qWidth = qType.getRank() == 3 ? qType.getDimSize(2) : ShapedType::kDynamic;
  if (ShapedType::isDynamic(qWidth))
    return b.emitError() << "query has type " << qType
                         << ", expected [batch, sequence, hidden] with a static hidden size";
  int64_t n = config->heads, kv = config->kvHeads, group = n / kv;
  Value q = *query;
  if (!key) {
    // Packed QKV: [B, S, (n + 2 kv) * H].
    if (qWidth % (n + 2 * kv) != 0)
      return b.emitError() << "packed QKV width " << qWidth << " is not a multiple of "
                           << n + 2 * kv << " heads";
    int64_t h = qWidth / (n + 2 * kv);
    auto part = [&](int64_t start, int64_t end) { return sliceAxis(b, *query, 2, start, end); };
    FailureOr<Value> pq = part(0, n * h), pk = part(n * h, (n + kv) * h),
                     pv = part((n + kv) * h, (n + 2 * kv) * h);
    if (failed(pq) || failed(pk) || failed(pv))
      return failure();
    q = *pq;
    key = *pk;
    value = *pv;
  }
  FailureOr<Value> q4 = splitHeads(b, q, n, "query");
  FailureOr<Value> k4 = succeeded(q4) ? splitHeads(b, key, kv, "key") : q4;
  FailureOr<Value> v4 = succeeded(k4) ? splitHeads(b, value, kv, "value") : k4;
  if (failed(v4))
    return failure();
  int64_t headSize = tensorType(*q4).getDimSize(3);
  if (tensorType(*k4).getDimSize(3) != headSize || tensorType(*v4).getDimSize(3) != headSize)
    return b.emitError() << "query, key and value head sizes differ ("
                         << tensorType(*q4).getDimSize(3) << ", "
                         << tensorType(*k4).getDimSize(3) << ", "
                         << tensorType(*v4).getDimSize(3) << ")";
  Type i64 = b.builder().getI64Type();
  FailureOr<Value> pastLength =
      pastKey ? dimScalar(b, pastKey, 2) : FailureOr<Value>(b.scalar(i64, 0));
  FailureOr<Value> past =
      succeeded(pastLength) ? entryPastLengths(b, q, *pastLength) : pastLength;
  if (failed(past))
    return failure();
  if (config->rotary) {
    Value cosCache = b.optionalInput(7), sinCache = b.optionalInput(8);
    if (!cosCache || !sinCache)
      return b.emitError() << "attribute 'do_rotary' 1 needs inputs 'cos_cache' and "
                              "'sin_cache'";
    RankedTensorType cosType = tensorType(cosCache);
    if (cosType.getRank() != 2 || cosType != tensorType(sinCache) ||
        ShapedType::isDynamic(cosType.getDimSize(1)) ||
        2 * cosType.getDimSize(1) > headSize)
      return b.emitError() << "cos_cache and sin_cache have types " << cosType << " and "
                           << tensorType(sinCache)
                           << ", expected the same [max_positions, <= " << headSize / 2 << "]";
    Value positionIds = b.numInputs() > 9 ? b.optionalInput(9) : Value();
    FailureOr<Value> positions = positionIds ? FailureOr<Value>(positionIds)
                                             : positionsFrom(b, Value(), q, 1);
    if (succeeded(positions) && !positionIds) {
      // Entry b's positions: past[b] + 0..S-1, [B, S].
      FailureOr<Value> start = b.make<kiln::UnsqueezeOp>(*past, ArrayRef<int64_t>{1});
      positions = succeeded(start) ? b.make<kiln::AddOp>(*start, *positions) : start;
    }
    FailureOr<Value> cos = succeeded(positions) ? cacheRows(b, cosCache, *positions) : positions;
    FailureOr<Value> sin = succeeded(cos) ? cacheRows(b, sinCache, *positions) : cos;
    if (failed(sin))
      return failure();
    int64_t dim = 2 * cosType.getDimSize(1);
    q4 = rotate(b, *q4, *cos, *sin, dim, config->interleaved);
    k4 = succeeded(q4) ? rotate(b, *k4, *cos, *sin, dim, config->interleaved) : q4;
    if (failed(k4))
      return failure();
  }
  FailureOr<Value> k = toBNSH(b, *k4), v = toBNSH(b, *v4);
  if (failed(k) || failed(v))
    return failure();
  FailureOr<Value> presentKey = placeCache(b, pastKey, *k, *past, "past_key");
  FailureOr<Value> presentValue =
      succeeded(presentKey) ? placeCache(b, pastValue, *v, *past, "past_value") : presentKey;
  if (failed(presentValue))
    return failure();
  // Query heads grouped by their KV head: [B, S, kv, G, H] -> [B, kv, G, S, H].
  FailureOr<Value> grouped =
      reshapeDims(b, *q4, {DimOf::of(q, 0), DimOf::of(q, 1), DimOf::fixed(kv),
                           DimOf::fixed(group), DimOf::fixed(headSize)});
  FailureOr<Value> qg = succeeded(grouped)
                            ? b.make<kiln::TransposeOp>(*grouped, ArrayRef<int64_t>{0, 2, 3, 1, 4})
                            : grouped;
  FailureOr<Value> kg = b.make<kiln::UnsqueezeOp>(*presentKey, ArrayRef<int64_t>{2});
  FailureOr<Value> vg = b.make<kiln::UnsqueezeOp>(*presentValue, ArrayRef<int64_t>{2});
  FailureOr<float> scale = readScale(b, headSize);
  if (failed(qg) || failed(kg) || failed(vg) || failed(scale))
    return failure();
  Core core;
  core.scale = *scale;
  core.softcap = config->softcap;
  if (config->causal) {
    // [B, S, T] -> [B, 1, 1, S, T] against the scores [B, kv, G, S, T].
    FailureOr<Value> allowed = causalFrontier(b, q, 1, *presentKey, 2, *past, config->window);
    allowed = succeeded(allowed) ? b.make<kiln::UnsqueezeOp>(*allowed, ArrayRef<int64_t>{1, 2})
                                 : allowed;
    FailureOr<Value> blocked = succeeded(allowed) ? b.make<kiln::NotOp>(*allowed) : allowed;
    if (failed(blocked))
      return failure();
    core.blocked = *blocked;
  } else if (pastKey) {
    // Without the frontier: entry b's keys past past_b + S (the zeros of a
    // shorter entry) are blocked, [B, 1, 1, 1, T].
    FailureOr<Value> t = dimScalar(b, *presentKey, 2), s = dimScalar(b, q, 1);
    FailureOr<Value> keys = succeeded(t) ? iota(b, *t) : t;
    FailureOr<Value> end = succeeded(s) ? b.make<kiln::AddOp>(*past, *s) : s;
    end = succeeded(end) ? b.make<kiln::UnsqueezeOp>(*end, ArrayRef<int64_t>{1, 2, 3, 4}) : end;
    FailureOr<Value> blocked =
        succeeded(keys) && succeeded(end) ? b.make<kiln::GreaterEqualOp>(*keys, *end)
                                        : FailureOr<Value>(failure());
    if (failed(blocked))
      return failure();
    core.blocked = *blocked;
  }
  FailureOr<Value> out = attend(b, *qg, *kg, *vg, core);
  FailureOr<Value> merged = succeeded(out) ? mergeHeads(b, *out, q) : out;
  if (failed(merged) || failed(b.setOutput(0, *merged)))
    return failure();
  if (b.outputUsed(1) && failed(b.setOutput(1, *presentKey)))
    return failure();
  return b.outputUsed(2) ? b.setOutput(2, *presentValue) : success();
}

//===----------------------------------------------------------------------===//
// MultiHeadAttention
//===----------------------------------------------------------------------===//

LogicalResult multiHeadAttention(NodeBinder &b) {
  FailureOr<Value> query = b.input(0);
  FailureOr<int64_t> heads = b.intAttr("num_heads", std::nullopt),
                     unidirectional = b.intAttr("unidirectional", 0);
  FailureOr<float> filter = b.floatAttr("mask_filter_value", -10000.0f);
  if (failed(query) || failed(heads) || failed(unidirectional) || failed(filter) ||
      failed(b.checkRange("attribute 'num_heads'", *heads, 1, {})) ||
      failed(b.checkRange("attribute 'unidirectional'", *unidirectional, 0, 1)) ||
      failed(rejectInput(b, 8, "past_sequence_length: a shared past/present buffer")) ||
      failed(rejectInput(b, 9, "cache_indirection: beam search")) ||
      failed(rejectOutput(b, 3, "qk")))
    return failure();
  Value key = b.optionalInput(1), value = b.optionalInput(2), bias = b.optionalInput(3);
  Value padding = b.optionalInput(4), attnBias = b.optionalInput(5);
  Value pastKey = b.optionalInput(6), pastValue = b.optionalInput(7);
  if (tensorType(*query).getRank() != 3)
    return b.unsupported("query of rank " + Twine(tensorType(*query).getRank()) +
                         " (packed QKV; only [batch, sequence, hidden] is supported)");
  if (!key || !value)
    return b.unsupported("absent key or value (packed QKV or KV)");
  int64_t keyRank = tensorType(key).getRank();
  if (keyRank != 3 && keyRank != 4)
    return b.unsupported("key of rank " + Twine(keyRank) + " (packed KV)");
  if (tensorType(value).getRank() != keyRank)
    return b.emitError() << "key and value have ranks " << keyRank << " and "
                         << tensorType(value).getRank() << ", expected the same";
  if (!pastKey != !pastValue)
    return b.emitError() << "inputs 'past_key' and 'past_value' must both be given or both "
                            "be absent";
  if (keyRank == 4 && (pastKey || bias))
    return b.unsupported("a key given as [batch, heads, sequence, head] together with " +
                         Twine(pastKey ? "past_key" : "bias"));
  int64_t n = *heads;
  int64_t hidden = tensorType(*query).getDimSize(2);
  Value q = *query;
  if (bias) {
    RankedTensorType biasType = tensorType(bias);
    int64_t vHidden = tensorType(value).getDimSize(2);
    if (biasType.getRank() != 1 || biasType.getDimSize(0) != 2 * hidden + vHidden)
      return b.emitError() << "bias has type " << biasType << ", expected ["
                           << 2 * hidden + vHidden << "]";
    auto add = [&](Value x, int64_t start, int64_t end) -> FailureOr<Value> {
      FailureOr<Value> part = sliceAxis(b, bias, 0, start, end);
      return succeeded(part) ? b.make<kiln::AddOp>(x, *part) : part;
    };
    FailureOr<Value> bq = add(q, 0, hidden), bk = add(key, hidden, 2 * hidden),
                     bv = add(value, 2 * hidden, 2 * hidden + vHidden);
    if (failed(bq) || failed(bk) || failed(bv))
      return failure();
    q = *bq;
    key = *bk;
    value = *bv;
  }
  FailureOr<Value> q4 = splitHeads(b, q, n, "query");
  FailureOr<Value> qh = succeeded(q4) ? toBNSH(b, *q4) : q4;
  if (failed(qh))
    return failure();
  FailureOr<Value> k = key, v = value;
  if (keyRank == 3) {
    FailureOr<Value> k4 = splitHeads(b, key, n, "key");
    FailureOr<Value> v4 = succeeded(k4) ? splitHeads(b, value, n, "value") : k4;
    if (failed(v4))
      return failure();
    k = toBNSH(b, *k4);
    v = succeeded(k) ? toBNSH(b, *v4) : k;
  }
  if (failed(v))
    return failure();
  int64_t headSize = tensorType(*qh).getDimSize(3);
  if (tensorType(*k).getDimSize(1) != n || tensorType(*k).getDimSize(3) != headSize)
    return b.emitError() << "key has type " << tensorType(*k) << ", expected [batch, " << n
                         << ", sequence, " << headSize << "]";
  FailureOr<Value> presentKey = appendCache(b, pastKey, *k, "past_key");
  FailureOr<Value> presentValue =
      succeeded(presentKey) ? appendCache(b, pastValue, *v, "past_value") : presentKey;
  FailureOr<float> scale = readScale(b, headSize);
  if (failed(presentValue) || failed(scale))
    return failure();
  Type element = tensorType(*qh).getElementType();
  Core core;
  core.scale = *scale;
  // onnxruntime adds mask_filter_value for each reason a key is masked.
  auto addMask = [&](FailureOr<Value> term) -> LogicalResult {
    if (failed(term))
      return failure();
    if (!core.additive) {
      core.additive = *term;
      return success();
    }
    FailureOr<Value> sum = b.make<kiln::AddOp>(core.additive, *term);
    if (failed(sum))
      return failure();
    core.additive = *sum;
    return success();
  };
  auto filtered = [&](Value blocked) {
    return b.make<kiln::SelectOp>(blocked, b.scalar(element, *filter), b.scalar(element, 0));
  };
  if (padding) {
    RankedTensorType type = tensorType(padding);
    if (type.getRank() != 2 && type.getRank() != 3)
      return b.unsupported("key_padding_mask of type " + llvm::formatv("{0}", type).str() +
                           " (only [batch, total_sequence] and [batch, sequence, "
                           "total_sequence] are supported)");
    FailureOr<Value> zero = b.make<kiln::EqualOp>(
        padding, b.scalar(type.getElementType(), 0));
    FailureOr<Value> wide =
        succeeded(zero) ? b.make<kiln::UnsqueezeOp>(
                              *zero, type.getRank() == 2 ? ArrayRef<int64_t>{1, 2}
                                                         : ArrayRef<int64_t>{1})
                        : zero;
    if (failed(wide) || failed(addMask(filtered(*wide))))
      return failure();
  }
  if (*unidirectional == 1) {
    Type i64 = b.builder().getI64Type();
    FailureOr<Value> past =
        pastKey ? dimScalar(b, pastKey, 2) : FailureOr<Value>(b.scalar(i64, 0));
    FailureOr<Value> allowed =
        succeeded(past) ? causalFrontier(b, q, 1, *presentKey, 2, *past, -1) : past;
    FailureOr<Value> blocked = succeeded(allowed) ? b.make<kiln::NotOp>(*allowed) : allowed;
    if (failed(blocked) || failed(addMask(filtered(*blocked))))
      return failure();
  }
  if (attnBias && failed(addMask(attnBias)))
    return failure();
  FailureOr<Value> out = attend(b, *qh, *presentKey, *presentValue, core);
  FailureOr<Value> merged = succeeded(out) ? mergeHeads(b, *out, q) : out;
  if (failed(merged) || failed(b.setOutput(0, *merged)))
    return failure();
  if (b.outputUsed(1) && failed(b.setOutput(1, *presentKey)))
    return failure();
  return b.outputUsed(2) ? b.setOutput(2, *presentValue) : success();
}

} // namespace

void registerContribAttentionHandlers(HandlerRegistry &r) {
  r.add("GroupQueryAttention", 1, groupQueryAttention, kDomain);
  r.add("MultiHeadAttention", 1, multiHeadAttention, kDomain);
}

} // namespace kiln::onnx_import::contrib
