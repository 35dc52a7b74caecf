//===- AttentionHandlers.cpp - ONNX Attention as kiln ops ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// ONNX Attention (opset 23 on) is built from kiln ops in the order of ONNX's
// reference: heads split (3-D inputs), the KV cache appended, Q and K each
// scaled by sqrt(scale), KV heads repeated for grouped-query attention,
// softcap, an additive bias from the mask and the causal frontier, softmax
// (in softmax_precision), rows whose bias is all -inf zeroed, then P V. The
// graph stage recognizes and fuses the pattern like any exported attention.
// Shapes must be static (the head split and the causal mask need them).
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

struct Attrs {
  bool causal = false;
  int64_t qHeads = 0, kvHeads = 0, mode = 0;
  int64_t left = -1, right = -1; // sliding window sizes, -1: unbounded
  std::optional<float> scale;
  float softcap = 0;
  std::optional<int64_t> softmaxPrecision;
};

class AttentionBuilder {
public:
  explicit AttentionBuilder(NodeBinder &b) : b(b) {}

  FailureOr<Value> reshape(Value x, ArrayRef<int64_t> shape) {
    auto type = RankedTensorType::get(shape, tensorType(x).getElementType());
    return b.makeTyped<kiln::ReshapeOp>(type, x, b.i64Vector(shape));
  }

  /// [B, S, heads * H] -> [B, heads, S, H].
  FailureOr<Value> splitHeads(Value x, int64_t heads, StringRef what) {
    ArrayRef<int64_t> s = tensorType(x).getShape();
    if (heads <= 0 || s[2] % heads != 0)
      return b.emitError() << what << " hidden size " << s[2]
                           << " is not a multiple of the head count " << heads;
    FailureOr<Value> split = reshape(x, {s[0], s[1], heads, s[2] / heads});
    if (failed(split))
      return failure();
    return b.make<kiln::TransposeOp>(*split, ArrayRef<int64_t>{0, 2, 1, 3});
  }

  /// [B, kvHeads, S, H] -> [B, kvHeads * reps, S, H], each head repeated in place.
  FailureOr<Value> repeatHeads(Value x, int64_t reps) {
    ArrayRef<int64_t> s = tensorType(x).getShape();
    FailureOr<Value> wide = b.make<kiln::UnsqueezeOp>(x, ArrayRef<int64_t>{2});
    if (failed(wide))
      return failure();
    SmallVector<int64_t> target = {s[0], s[1], reps, s[2], s[3]};
    auto type = RankedTensorType::get(target, tensorType(x).getElementType());
    FailureOr<Value> copies = b.makeTyped<kiln::ExpandOp>(type, *wide, b.i64Vector(target));
    if (failed(copies))
      return failure();
    return reshape(*copies, {s[0], s[1] * reps, s[2], s[3]});
  }

  Value filled(ArrayRef<int64_t> shape, Type element, double value) {
    auto type = RankedTensorType::get(shape, element);
    Attribute splat = element.isInteger(1)
                          ? Attribute(BoolAttr::get(element.getContext(), value != 0))
                          : Attribute(FloatAttr::get(element, value));
    return b.constant(DenseElementsAttr::get(type, splat));
  }

  /// The additive bias over [..., Sq, Skv]: the mask (false or a short mask's
  /// missing keys -> -inf) plus -inf where the query at absolute position
  /// p = i + offset may not see key j: j > p when causal, p - j > left or
  /// j - p > right for the sliding window's bounded sides.
  FailureOr<Value> bias(Value mask, Value nonpad, const Attrs &a, int64_t sq,
                        int64_t skv, int64_t offset, Type element) {
    double inf = std::numeric_limits<double>::infinity();
    Value result;
    if (mask) {
      RankedTensorType type = tensorType(mask);
      bool isBool = type.getElementType().isInteger(1);
      if (!isBool && type.getElementType() != element)
        return b.emitError() << "input 3 (attn_mask) has element type "
                             << type.getElementType() << ", expected i1 or " << element;
      int64_t keys = type.getDimSize(type.getRank() - 1);
      if (keys < skv) {
        SmallVector<int64_t> padShape(type.getShape());
        padShape.back() = skv - keys;
        FailureOr<Value> padded = b.make<kiln::ConcatOp>(
            ValueRange{mask, filled(padShape, type.getElementType(), isBool ? 0 : -inf)},
            static_cast<uint64_t>(type.getRank() - 1));
        if (failed(padded))
          return failure();
        mask = *padded;
      }
      if (isBool) {
        Value blocked = b.scalar(element, -inf);
        Value open = b.scalar(element, 0);
        FailureOr<Value> additive = b.make<kiln::SelectOp>(mask, open, blocked);
        if (failed(additive))
          return failure();
        mask = *additive;
      }
      result = mask;
    }
    if (nonpad) {
      FailureOr<Value> structural = runtimeFrontier(nonpad, a, sq, skv, element);
      if (failed(structural) || !result)
        return structural;
      return b.make<kiln::AddOp>(result, *structural);
    }
    if (!a.causal && a.left < 0 && a.right < 0)
      return result;
    SmallVector<APFloat> frontier;
    for (int64_t i = 0; i < sq; ++i)
      for (int64_t j = 0; j < skv; ++j) {
        int64_t p = i + offset;
        bool allowed = (!a.causal || j <= p) && (a.left < 0 || p - j <= a.left) &&
                       (a.right < 0 || j - p <= a.right);
        frontier.push_back(FloatAttr::get(element, allowed ? 0.0 : -inf).getValue());
      }
    Value causalBias = b.constant(
        DenseElementsAttr::get(RankedTensorType::get({sq, skv}, element), frontier));
    if (!result)
      return causalBias;
    return b.make<kiln::AddOp>(result, causalBias);
  }

  /// The frontier of an external cache, known at run time: batch n's query
  /// block ends at key nonpad[n], so p = i + nonpad[n] - Sq, and keys at or
  /// after nonpad[n] are padding. Shape [B, 1, Sq, Skv].
  FailureOr<Value> runtimeFrontier(Value nonpad, const Attrs &a, int64_t sq, int64_t skv,
                                   Type element) {
    Type i64 = b.builder().getI64Type();
    RankedTensorType type = tensorType(nonpad);
    if (type.getRank() != 1 || type.getElementType() != i64 || !type.hasStaticShape())
      return b.emitError() << "input 6 (nonpad_kv_seqlen) has type " << type
                           << ", expected a static 1-D i64 tensor";
    auto iota = [&](int64_t n, ArrayRef<int64_t> shape) {
      return b.constant(DenseIntElementsAttr::get(
          RankedTensorType::get(shape, i64), llvm::to_vector(llvm::seq<int64_t>(0, n))));
    };
    Value rows = iota(sq, {1, 1, sq, 1}), keys = iota(skv, {1, 1, 1, skv});
    FailureOr<Value> ends = reshape(nonpad, {type.getDimSize(0), 1, 1, 1});
    FailureOr<Value> shift = succeeded(ends) ? b.make<kiln::SubOp>(*ends, b.scalar(i64, sq)) : ends;
    FailureOr<Value> p = succeeded(shift) ? b.make<kiln::AddOp>(rows, *shift) : shift;
    FailureOr<Value> allowed = succeeded(p) ? b.make<kiln::LessOp>(keys, *ends) : p;
    auto also = [&](FailureOr<Value> condition) {
      if (succeeded(allowed))
        allowed = succeeded(condition) ? b.make<kiln::AndOp>(*allowed, *condition) : condition;
    };
    if (a.causal && succeeded(p))
      also(b.make<kiln::LessEqualOp>(keys, *p));
    if (a.left >= 0 && succeeded(p)) {
      FailureOr<Value> back = b.make<kiln::SubOp>(*p, keys);
      also(succeeded(back) ? b.make<kiln::LessEqualOp>(*back, b.scalar(i64, a.left)) : back);
    }
    if (a.right >= 0 && succeeded(p)) {
      FailureOr<Value> ahead = b.make<kiln::SubOp>(keys, *p);
      also(succeeded(ahead) ? b.make<kiln::LessEqualOp>(*ahead, b.scalar(i64, a.right)) : ahead);
    }
    if (failed(allowed))
      return failure();
    double inf = std::numeric_limits<double>::infinity();
    Value blocked = b.scalar(element, -inf);
    Value open = b.scalar(element, 0);
    return b.make<kiln::SelectOp>(*allowed, open, blocked);
  }

  FailureOr<Value> cast(Value x, Type element) {
    RankedTensorType type = tensorType(x);
    if (type.getElementType() == element)
      return x;
    return b.makeTyped<kiln::CastOp>(type.clone(element), x);
  }

private:
  NodeBinder &b;
};

FailureOr<Attrs> readAttrs(NodeBinder &b) {
  Attrs a;
  FailureOr<int64_t> causal = b.intAttr("is_causal", 0), qHeads = b.intAttr("q_num_heads", 0),
                     kvHeads = b.intAttr("kv_num_heads", 0),
                     mode = b.intAttr("qk_matmul_output_mode", 0),
                     left = b.intAttr("left_window_size", -1),
                     right = b.intAttr("right_window_size", -1);
  FailureOr<float> softcap = b.floatAttr("softcap", 0.0f);
  if (failed(causal) || failed(qHeads) || failed(kvHeads) || failed(mode) ||
      failed(left) || failed(right) || failed(softcap) ||
      failed(b.checkRange("attribute 'is_causal'", *causal, 0, 1)) ||
      failed(b.checkRange("attribute 'qk_matmul_output_mode'", *mode, 0, 3)))
    return failure();
  if (*left < -1 || *right < -1)
    return b.emitError() << "attributes 'left_window_size' and 'right_window_size' are "
                         << *left << " and " << *right << ", accepted range is [-1, inf)";
  a.left = *left;
  a.right = *right;
  a.causal = *causal == 1;
  a.qHeads = *qHeads;
  a.kvHeads = *kvHeads;
  a.mode = *mode;
  a.softcap = *softcap;
  if (b.hasAttr("scale")) {
    FailureOr<float> scale = b.floatAttr("scale", std::nullopt);
    if (failed(scale))
      return failure();
    a.scale = *scale;
  }
  if (b.hasAttr("softmax_precision")) {
    FailureOr<int64_t> precision = b.intAttr("softmax_precision", std::nullopt);
    if (failed(precision))
      return failure();
    a.softmaxPrecision = *precision;
  }
  return a;
}

/// The element type of an ONNX softmax_precision (FLOAT, FLOAT16, DOUBLE, BFLOAT16).
FailureOr<Type> precisionType(NodeBinder &b, int64_t dtype) {
  Builder &builder = b.builder();
  switch (dtype) {
  case 1:
    return Type(builder.getF32Type());
  case 10:
    return Type(builder.getF16Type());
  case 11:
    return Type(builder.getF64Type());
  case 16:
    return Type(builder.getBF16Type());
  default:
    return b.emitError() << "attribute 'softmax_precision' value is " << dtype
                         << ", accepted values are 1, 10, 11 and 16 (float types)";
  }
}

LogicalResult attention(NodeBinder &b) {
  FailureOr<Value> q = b.input(0), k = b.input(1), v = b.input(2);
  FailureOr<Attrs> a = readAttrs(b);
  if (failed(q) || failed(k) || failed(v) || failed(a))
    return failure();
  Value mask = b.optionalInput(3), pastK = b.optionalInput(4), pastV = b.optionalInput(5);
  Value nonpad = b.numInputs() > 6 ? b.optionalInput(6) : Value();
  if (!pastK != !pastV)
    return b.emitError() << "inputs 4 (past_key) and 5 (past_value) must be given together";
  if (nonpad && pastK)
    return b.emitError() << "input 6 (nonpad_kv_seqlen) cannot be combined with a past cache";
  int64_t rank = tensorType(*q).getRank();
  for (Value x : {*q, *k, *v}) {
    if (tensorType(x).getRank() != rank || (rank != 3 && rank != 4))
      return b.emitError() << "Q, K and V have ranks " << tensorType(*q).getRank() << ", "
                           << tensorType(*k).getRank() << " and "
                           << tensorType(*v).getRank() << "; expected all 3 or all 4";
    if (!tensorType(x).hasStaticShape())
      return b.unsupported("Attention with dynamic Q, K or V dims");
  }
  Type element = tensorType(*q).getElementType();
  AttentionBuilder ab(b);
  if (rank == 3) {
    q = ab.splitHeads(*q, a->qHeads, "Q");
    if (succeeded(q))
      k = ab.splitHeads(*k, a->kvHeads, "K");
    if (succeeded(k))
      v = ab.splitHeads(*v, a->kvHeads, "V");
    if (failed(q) || failed(k) || failed(v))
      return failure();
  }
  int64_t offset = 0;
  if (pastK) {
    offset = tensorType(pastK).getDimSize(2);
    k = b.make<kiln::ConcatOp>(ValueRange{pastK, *k}, static_cast<uint64_t>(2));
    v = b.make<kiln::ConcatOp>(ValueRange{pastV, *v}, static_cast<uint64_t>(2));
    if (failed(k) || failed(v))
      return failure();
  }
  if ((b.outputUsed(1) && failed(b.setOutput(1, *k))) ||
      (b.outputUsed(2) && failed(b.setOutput(2, *v))))
    return failure();
  ArrayRef<int64_t> qShape = tensorType(*q).getShape(), kShape = tensorType(*k).getShape();
  double scale = a->scale ? *a->scale : 1.0 / std::sqrt(static_cast<double>(qShape[3]));
  Value root = b.scalar(element, std::sqrt(scale));
  FailureOr<Value> qs = b.make<kiln::MulOp>(*q, root), ks = b.make<kiln::MulOp>(*k, root);
  if (failed(qs) || failed(ks))
    return failure();
  if (qShape[1] != kShape[1]) {
    if (kShape[1] == 0 || qShape[1] % kShape[1] != 0)
      return b.emitError() << "query heads " << qShape[1]
                           << " are not a multiple of key/value heads " << kShape[1];
    ks = ab.repeatHeads(*ks, qShape[1] / kShape[1]);
    if (succeeded(ks))
      v = ab.repeatHeads(*v, qShape[1] / kShape[1]);
    if (failed(ks) || failed(v))
      return failure();
  }
  FailureOr<Value> kt = b.make<kiln::TransposeOp>(*ks, ArrayRef<int64_t>{0, 1, 3, 2});
  if (failed(kt))
    return failure();
  FailureOr<Value> scores = b.make<kiln::MatmulOp>(*qs, *kt);
  if (failed(scores))
    return failure();
  if (a->softcap > 0) {
    Value cap = b.scalar(element, a->softcap);
    FailureOr<Value> ratio = b.make<kiln::DivOp>(*scores, cap);
    FailureOr<Value> squashed = succeeded(ratio) ? b.make<kiln::TanhOp>(*ratio) : ratio;
    scores = succeeded(squashed) ? b.make<kiln::MulOp>(*squashed, cap) : squashed;
    if (failed(scores))
      return failure();
  }
  FailureOr<Value> bias = ab.bias(mask, nonpad, *a, qShape[2], kShape[2], offset, element);
  if (failed(bias))
    return failure();
  FailureOr<Value> logits = *bias ? b.make<kiln::AddOp>(*scores, *bias) : scores;
  if (failed(logits))
    return failure();
  // ONNX's reference exposes the softcapped scores for modes 0 and 1.
  Value qkOut = a->mode == 2 ? *logits : *scores;
  Type softmaxType = element;
  if (a->softmaxPrecision) {
    FailureOr<Type> precision = precisionType(b, *a->softmaxPrecision);
    if (failed(precision))
      return failure();
    softmaxType = *precision;
  }
  FailureOr<Value> wide = ab.cast(*logits, softmaxType);
  FailureOr<Value> probs =
      succeeded(wide) ? b.make<kiln::SoftmaxOp>(*wide, static_cast<uint64_t>(3)) : wide;
  if (failed(probs))
    return failure();
  if (*bias) {
    // A row with no attendable key gives 0, not the NaN of softmax(-inf...).
    FailureOr<Value> rowMax =
        b.make<kiln::ReduceOp>(*bias, ReduceKind::max,
                               ArrayRef<int64_t>{tensorType(*bias).getRank() - 1}, true);
    FailureOr<Value> empty =
        succeeded(rowMax)
            ? b.make<kiln::EqualOp>(*rowMax, b.scalar(element, -std::numeric_limits<double>::infinity()))
            : rowMax;
    probs = succeeded(empty) ? b.make<kiln::SelectOp>(*empty, b.scalar(softmaxType, 0), *probs)
                             : empty;
  }
  if (succeeded(probs))
    probs = ab.cast(*probs, element);
  if (failed(probs))
    return failure();
  if (a->mode == 3)
    qkOut = *probs;
  if (b.outputUsed(3) && failed(b.setOutput(3, qkOut)))
    return failure();
  FailureOr<Value> out = b.make<kiln::MatmulOp>(*probs, *v);
  if (failed(out))
    return failure();
  if (rank == 3) {
    ArrayRef<int64_t> s = tensorType(*out).getShape();
    out = b.make<kiln::TransposeOp>(*out, ArrayRef<int64_t>{0, 2, 1, 3});
    if (succeeded(out))
      out = ab.reshape(*out, {s[0], s[2], s[1] * s[3]});
    if (failed(out))
      return failure();
  }
  return b.setOutput(0, *out);
}

} // namespace

void registerAttentionHandlers(HandlerRegistry &r) { r.add("Attention", 23, attention); }

} // namespace kiln::onnx_import
