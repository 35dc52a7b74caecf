//===- LinearAttentionHandler.cpp - ONNX LinearAttention (opset 27) --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// LinearAttention is a recurrence over the sequence with a per-head state
// S [B, H_kv, d_k, d_v]; it is unrolled at import (static shapes), following
// ONNX's reference implementation step by step, in f32:
//   gated:  S *= exp(g_t)                           (decay, per key dim or head)
//   delta:  v_t = beta_t * (v_t - k_t S)            (k_t as a row: [1, d_k])
//   write:  S += k_t^T v_t                          (outer product)
//   read:   o_t = (scale q_t) S_rep                 (S_rep: each KV head's
//                                                    state repeated for GQA)
// Each step slices t out of the [B, H, T, d] views, so q_t, k_t, v_t are
// [B, H, 1, d] rows and every product is a batched kiln.matmul.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

class LinearAttention {
public:
  explicit LinearAttention(NodeBinder &b) : b(b) {}
  LogicalResult run();

private:
  FailureOr<Value> reshape(Value x, ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, tensorType(x).getElementType());
    return b.makeTyped<kiln::ReshapeOp>(type, x, b.i64Vector(shape));
  }
  FailureOr<Value> toF32(Value x) {
    RankedTensorType type = tensorType(x);
    if (type.getElementType().isF32())
      return x;
    return b.makeTyped<kiln::CastOp>(type.clone(b.builder().getF32Type()), x);
  }
  /// [B, T, heads * d] -> [B, heads, T, d] in f32 (`last` overrides d to
  /// read per-head values: [B, T, heads] -> [B, heads, T, 1]).
  FailureOr<Value> unpack(Value x, int64_t heads, StringRef what) {
    ArrayRef<int64_t> s = tensorType(x).getShape();
    if (s[2] % heads != 0)
      return b.emitError() << what << " last dim " << s[2]
                           << " is not a multiple of its head count " << heads;
    FailureOr<Value> split = reshape(x, {s[0], s[1], heads, s[2] / heads});
    if (failed(split))
      return failure();
    FailureOr<Value> moved =
        b.make<kiln::TransposeOp>(*split, ArrayRef<int64_t>{0, 2, 1, 3});
    if (failed(moved))
      return failure();
    return toF32(*moved);
  }
  /// Row t of a [B, H, T, d] view: [B, H, 1, d].
  FailureOr<Value> row(Value x, int64_t t) {
    return b.make<kiln::SliceOp>(x, ArrayRef<int64_t>{t}, ArrayRef<int64_t>{t + 1},
                                 ArrayRef<int64_t>{2}, ArrayRef<int64_t>{1});
  }
  /// [B, H, 1, d] -> [B, H, d, 1].
  FailureOr<Value> column(Value x) {
    return b.make<kiln::TransposeOp>(x, ArrayRef<int64_t>{0, 1, 3, 2});
  }

  NodeBinder &b;
};

LogicalResult LinearAttention::run() {
  FailureOr<Value> query = b.input(0), key = b.input(1), value = b.input(2);
  if (failed(query) || failed(key) || failed(value))
    return failure();
  Value past = b.optionalInput(3), decay = b.optionalInput(4),
        beta = b.optionalInput(5);
  FailureOr<std::string> rule = b.stringAttr("update_rule", StringRef("gated_delta"));
  FailureOr<int64_t> qHeads = b.intAttr("q_num_heads", std::nullopt);
  FailureOr<int64_t> kvHeads = b.intAttr("kv_num_heads", std::nullopt);
  FailureOr<float> scaleAttr = b.floatAttr("scale", 0.0f);
  FailureOr<int64_t> chunk = b.intAttr("chunk_size", 64); // a hint, no effect
  if (failed(rule) || failed(qHeads) || failed(kvHeads) || failed(scaleAttr) ||
      failed(chunk) || failed(b.checkRange("attribute 'q_num_heads'", *qHeads, 1, {})) ||
      failed(b.checkRange("attribute 'kv_num_heads'", *kvHeads, 1, {})))
    return failure();
  if (*qHeads % *kvHeads != 0)
    return b.emitError() << "q_num_heads " << *qHeads
                         << " is not a multiple of kv_num_heads " << *kvHeads;
  if (*rule != "linear" && *rule != "gated" && *rule != "delta" &&
      *rule != "gated_delta")
    return b.emitError() << "attribute 'update_rule' value is '" << *rule
                         << "', accepted values are linear, gated, delta and "
                            "gated_delta";
  bool gating = *rule == "gated" || *rule == "gated_delta";
  bool delta = *rule == "delta" || *rule == "gated_delta";
  if (gating != static_cast<bool>(decay))
    return b.emitError() << "update_rule '" << *rule << "' "
                         << (gating ? "needs" : "forbids") << " the decay input";
  if (delta != static_cast<bool>(beta))
    return b.emitError() << "update_rule '" << *rule << "' "
                         << (delta ? "needs" : "forbids") << " the beta input";
  for (Value v : {*query, *key, *value, decay, beta}) {
    if (!v)
      continue;
    RankedTensorType type = tensorType(v);
    if (type.getRank() != 3 || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()))
      return b.unsupported("an operand of type " +
                           llvm::formatv("{0}", type).str() +
                           " (static [batch, seq, heads * dim] floats are needed)");
  }
  ArrayRef<int64_t> qShape = tensorType(*query).getShape();
  int64_t batch = qShape[0], steps = qShape[1];
  for (Value v : {*key, *value, decay, beta})
    if (v && (tensorType(v).getDimSize(0) != batch ||
              tensorType(v).getDimSize(1) != steps))
      return b.emitError() << "the operands' batch and sequence dims differ ("
                           << tensorType(v) << " vs " << tensorType(*query) << ")";
  if (steps == 0)
    return b.unsupported("a sequence of length 0");
  int64_t hq = *qHeads, hkv = *kvHeads, group = hq / hkv;
  if (qShape[2] % hq != 0 || tensorType(*key).getDimSize(2) % hkv != 0 ||
      tensorType(*value).getDimSize(2) % hkv != 0)
    return b.emitError() << "the query, key and value last dims are not "
                            "multiples of their head counts";
  int64_t dk = qShape[2] / hq, dv = tensorType(*value).getDimSize(2) / hkv;
  if (tensorType(*key).getDimSize(2) / hkv != dk)
    return b.emitError() << "key head size " << tensorType(*key).getDimSize(2) / hkv
                         << " differs from the query's " << dk;
  Type outElement = tensorType(*query).getElementType();
  Type f32 = b.builder().getF32Type();

  FailureOr<Value> q = unpack(*query, hq, "query"), k = unpack(*key, hkv, "key"),
                   v = unpack(*value, hkv, "value");
  if (failed(q) || failed(k) || failed(v))
    return failure();
  Value g, beta4;
  if (decay) {
    int64_t last = tensorType(decay).getDimSize(2);
    if (last != hkv && last != hkv * dk)
      return b.emitError() << "decay last dim " << last << " must be kv_num_heads ("
                           << hkv << ") or kv_num_heads * d_k (" << hkv * dk << ")";
    FailureOr<Value> g4 = unpack(decay, hkv, "decay");
    if (failed(g4))
      return failure();
    g = *g4; // [B, H_kv, T, 1 or d_k]
  }
  if (beta) {
    int64_t last = tensorType(beta).getDimSize(2);
    if (last != hkv && last != 1)
      return b.emitError() << "beta last dim " << last << " must be kv_num_heads ("
                           << hkv << ") or 1";
    FailureOr<Value> b4 = unpack(beta, last, "beta");
    if (failed(b4))
      return failure();
    beta4 = *b4; // [B, H_kv or 1, T, 1]
  }
  SmallVector<int64_t> stateShape = {batch, hkv, dk, dv};
  Type stateElement = outElement;
  Value state;
  if (past) {
    RankedTensorType type = tensorType(past);
    if (type.getShape() != ArrayRef<int64_t>(stateShape) ||
        !isa<FloatType>(type.getElementType()))
      return b.emitError() << "past_state has type " << type << ", expected ["
                           << batch << ", " << hkv << ", " << dk << ", " << dv
                           << "] of floats";
    stateElement = type.getElementType();
    FailureOr<Value> s = toF32(past);
    if (failed(s))
      return failure();
    state = *s;
  } else {
    state = b.constant(DenseElementsAttr::get(
        RankedTensorType::get(stateShape, f32), FloatAttr::get(f32, 0.0)));
  }
  double scale = *scaleAttr == 0.0f ? 1.0 / std::sqrt(static_cast<double>(dk))
                                    : static_cast<double>(*scaleAttr);
  Value scaleValue = b.scalar(f32, scale);

  SmallVector<Value> outputs;
  for (int64_t t = 0; t < steps; ++t) {
    FailureOr<Value> qt = row(*q, t), kt = row(*k, t), vt = row(*v, t);
    if (failed(qt) || failed(kt) || failed(vt))
      return failure();
    if (g) {
      // S *= exp(g_t) as a column over d_k (or one value per head).
      FailureOr<Value> gt = row(g, t);
      FailureOr<Value> gc = succeeded(gt) ? column(*gt) : gt;
      FailureOr<Value> factor = succeeded(gc) ? b.make<kiln::ExpOp>(*gc) : gc;
      FailureOr<Value> decayed =
          succeeded(factor) ? b.make<kiln::MulOp>(state, *factor) : factor;
      if (failed(decayed))
        return failure();
      state = *decayed;
    }
    Value update = *vt;
    if (beta4) {
      // v_t = beta_t * (v_t - k_t S)
      FailureOr<Value> retrieved = b.make<kiln::MatmulOp>(*kt, state);
      FailureOr<Value> diff = succeeded(retrieved)
                                  ? b.make<kiln::SubOp>(*vt, *retrieved)
                                  : retrieved;
      FailureOr<Value> bt = succeeded(diff) ? row(beta4, t) : diff;
      FailureOr<Value> scaled =
          succeeded(bt) ? b.make<kiln::MulOp>(*bt, *diff) : bt;
      if (failed(scaled))
        return failure();
      update = *scaled;
    }
    // S += k_t^T v_t
    FailureOr<Value> kc = column(*kt);
    FailureOr<Value> outer =
        succeeded(kc) ? b.make<kiln::MulOp>(*kc, update) : kc;
    FailureOr<Value> next = succeeded(outer) ? b.make<kiln::AddOp>(state, *outer) : outer;
    if (failed(next))
      return failure();
    state = *next;
    // o_t = scale * q_t S_rep
    Value read = state;
    if (group > 1) {
      FailureOr<Value> wide = b.make<kiln::UnsqueezeOp>(state, ArrayRef<int64_t>{2});
      if (failed(wide))
        return failure();
      SmallVector<int64_t> target = {batch, hkv, group, dk, dv};
      FailureOr<Value> copies = b.makeTyped<kiln::ExpandOp>(
          RankedTensorType::get(target, f32), *wide, b.i64Vector(target));
      FailureOr<Value> merged =
          succeeded(copies) ? reshape(*copies, {batch, hq, dk, dv}) : copies;
      if (failed(merged))
        return failure();
      read = *merged;
    }
    // (scale q_t) S_rep: the scale on the [B, H, 1, d_k] row, not on the
    // product (a batch_matmul epilogue writing into the concat's strided
    // slice is refused by kiln-cpu-matmul).
    FailureOr<Value> scaled = b.make<kiln::MulOp>(*qt, scaleValue);
    FailureOr<Value> ot =
        succeeded(scaled) ? b.make<kiln::MatmulOp>(*scaled, read) : scaled;
    if (failed(ot))
      return failure();
    outputs.push_back(*ot); // [B, H_q, 1, d_v]
  }
  FailureOr<Value> all = outputs.size() == 1
                             ? FailureOr<Value>(outputs.front())
                             : b.make<kiln::ConcatOp>(ValueRange(outputs),
                                                      static_cast<uint64_t>(2));
  FailureOr<Value> moved =
      succeeded(all) ? b.make<kiln::TransposeOp>(*all, ArrayRef<int64_t>{0, 2, 1, 3})
                     : all;
  FailureOr<Value> packed =
      succeeded(moved) ? reshape(*moved, {batch, steps, hq * dv}) : moved;
  if (failed(packed))
    return failure();
  Value output = *packed, present = state;
  if (outElement != f32) {
    FailureOr<Value> cast = b.makeTyped<kiln::CastOp>(
        tensorType(output).clone(outElement), output);
    if (failed(cast))
      return failure();
    output = *cast;
  }
  if (stateElement != f32) {
    FailureOr<Value> cast = b.makeTyped<kiln::CastOp>(
        tensorType(present).clone(stateElement), present);
    if (failed(cast))
      return failure();
    present = *cast;
  }
  SmallVector<Value> results = {output, present};
  results.resize(std::min<size_t>(2, b.numOutputs()));
  return b.setOutputs(results);
}

LogicalResult linearAttention(NodeBinder &b) { return LinearAttention(b).run(); }

} // namespace

void registerLinearAttentionHandler(HandlerRegistry &r) {
  r.add("LinearAttention", 27, linearAttention);
}

} // namespace kiln::onnx_import
