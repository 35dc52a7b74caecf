//===- ElementwiseHandlers.cpp - ONNX elementwise ops to kiln -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Binary ops with numpy broadcasting (ONNX dropped the `broadcast` attribute
// at opset 7, the oldest Kiln reads), unary math, and activations that the
// dialect has no op for, decomposed into kiln ops.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"
#include "TensorLoader.h"

#include <cfloat>
#include <limits>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

Type elementOf(Value value) { return tensorType(value).getElementType(); }

LogicalResult sameElementType(NodeBinder &b, Value lhs, Value rhs) {
  if (elementOf(lhs) == elementOf(rhs))
    return success();
  return b.emitError() << "operand element types differ: " << elementOf(lhs)
                       << " and " << elementOf(rhs);
}

/// One binary kiln op on two values, after checking their element types.
template <typename OpTy>
FailureOr<Value> combine(NodeBinder &b, Value lhs, Value rhs) {
  if (failed(sameElementType(b, lhs, rhs)))
    return failure();
  return b.make<OpTy>(lhs, rhs);
}

template <typename OpTy>
LogicalResult binary(NodeBinder &b) {
  FailureOr<Value> lhs = b.input(0), rhs = b.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> out = combine<OpTy>(b, *lhs, *rhs);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// Max, Min, Sum: a left fold over every given input (at least one).
template <typename OpTy>
FailureOr<Value> foldInputs(NodeBinder &b) {
  SmallVector<Value> inputs = b.givenInputs();
  if (inputs.empty())
    return b.emitError() << "needs at least one input";
  Value acc = inputs.front();
  for (Value next : ArrayRef(inputs).drop_front()) {
    FailureOr<Value> out = combine<OpTy>(b, acc, next);
    if (failed(out))
      return failure();
    acc = *out;
  }
  return acc;
}

template <typename OpTy>
LogicalResult variadic(NodeBinder &b) {
  FailureOr<Value> out = foldInputs<OpTy>(b);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult mean(NodeBinder &b) {
  FailureOr<Value> sum = foldInputs<kiln::AddOp>(b);
  if (failed(sum))
    return failure();
  Value count = b.scalar(elementOf(*sum), b.givenInputs().size());
  FailureOr<Value> out = b.make<kiln::DivOp>(*sum, count);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// Pow allows a different exponent type (opset 12+); kiln.pow does not.
LogicalResult pow(NodeBinder &b) {
  FailureOr<Value> base = b.input(0), exponent = b.input(1);
  if (failed(base) || failed(exponent))
    return failure();
  Value rhs = *exponent;
  if (elementOf(rhs) != elementOf(*base)) {
    auto type = RankedTensorType::get(tensorType(rhs).getShape(), elementOf(*base));
    FailureOr<Value> cast = b.makeTyped<kiln::CastOp>(type, rhs);
    if (failed(cast))
      return failure();
    rhs = *cast;
  }
  FailureOr<Value> out = b.make<kiln::PowOp>(*base, rhs);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult mod(NodeBinder &b) {
  FailureOr<Value> lhs = b.input(0), rhs = b.input(1);
  FailureOr<int64_t> fmod = b.intAttr("fmod", 0);
  if (failed(lhs) || failed(rhs) || failed(fmod) ||
      failed(b.checkRange("attribute 'fmod'", *fmod, 0, 1)) ||
      failed(sameElementType(b, *lhs, *rhs)))
    return failure();
  // Floored float remainders exist from Mod-28 on.
  if (isa<FloatType>(elementOf(*lhs)) && *fmod == 0 && b.opset() < 28)
    return b.emitError() << "attribute 'fmod' value is 0, accepted value for "
                            "floating-point inputs before opset 28 is 1";
  FailureOr<Value> out = b.make<kiln::ModOp>(*lhs, *rhs, *fmod == 1);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// BitShift: LEFT or RIGHT; out-of-range amounts follow BitShift-28.
LogicalResult bitShift(NodeBinder &b) {
  FailureOr<Value> lhs = b.input(0), rhs = b.input(1);
  FailureOr<std::string> direction = b.stringAttr("direction", std::nullopt);
  if (failed(lhs) || failed(rhs) || failed(direction) ||
      failed(sameElementType(b, *lhs, *rhs)))
    return failure();
  if (*direction != "LEFT" && *direction != "RIGHT")
    return b.emitError() << "attribute 'direction' is '" << *direction
                         << "', expected 'LEFT' or 'RIGHT'";
  if (!isa<IntegerType>(elementOf(*lhs)) || elementOf(*lhs).isInteger(1))
    return b.emitError() << "operands must be integers, got " << elementOf(*lhs);
  FailureOr<Value> out = b.make<kiln::BitShiftOp>(*lhs, *rhs, *direction == "LEFT");
  return failed(out) ? failure() : b.setOutput(0, *out);
}

template <typename OpTy>
LogicalResult unary(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> out = b.make<OpTy>(*x);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult leakyRelu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", 0.01f);
  if (failed(x) || failed(alpha))
    return failure();
  FailureOr<Value> out = b.make<kiln::LeakyReluOp>(*x, APFloat(*alpha));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult gelu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<std::string> approximate = b.stringAttr("approximate", "none");
  if (failed(x) || failed(approximate))
    return failure();
  std::optional<GeluApproximation> mode =
      symbolizeGeluApproximation(*approximate);
  if (!mode)
    return b.emitError() << "attribute 'approximate' value is '" << *approximate
                         << "', accepted values are 'none' and 'tanh'";
  FailureOr<Value> out = b.make<kiln::GeluOp>(*x, *mode);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// Clip bound: the attribute (< 11) or a constant input (>= 11); a computed
/// bound is applied with kiln.max / kiln.min instead.
LogicalResult clip(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  Builder builder(b.context());
  FloatAttr bounds[2];
  Value computed[2];
  if (b.opset() < 11) {
    FailureOr<float> lo = b.floatAttr("min", -FLT_MAX);
    FailureOr<float> hi = b.floatAttr("max", FLT_MAX);
    if (failed(lo) || failed(hi))
      return failure();
    if (*lo > -FLT_MAX)
      bounds[0] = builder.getF64FloatAttr(*lo);
    if (*hi < FLT_MAX)
      bounds[1] = builder.getF64FloatAttr(*hi);
  } else {
    for (unsigned i = 0; i < 2; ++i) {
      if (!b.hasInput(i + 1))
        continue;
      std::optional<SmallVector<double>> value = b.constantFloats(i + 1);
      if (value && value->size() == 1)
        bounds[i] = builder.getF64FloatAttr(value->front());
      else
        computed[i] = b.optionalInput(i + 1);
    }
  }
  if (bounds[0] && bounds[1] &&
      bounds[0].getValueAsDouble() > bounds[1].getValueAsDouble())
    return b.emitError() << "'min' value " << bounds[0].getValueAsDouble()
                         << " is greater than 'max' value "
                         << bounds[1].getValueAsDouble();
  FailureOr<Value> out = *x;
  if (bounds[0] || bounds[1])
    out = b.make<kiln::ClipOp>(*x, bounds[0], bounds[1]);
  if (succeeded(out) && computed[0])
    out = combine<kiln::MaxOp>(b, *out, computed[0]);
  if (succeeded(out) && computed[1])
    out = combine<kiln::MinOp>(b, *out, computed[1]);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// Cast's `saturate` (from opset 19, default 1) and `round_mode` (from opset
/// 24, default "up") on a new kiln.cast.
static LogicalResult setSaturate(NodeBinder &b, Value out) {
  FailureOr<int64_t> saturate =
      b.opset() >= 19 ? b.intAttr("saturate", 1) : FailureOr<int64_t>(1);
  FailureOr<std::string> roundMode = b.opset() >= 24 ? b.stringAttr("round_mode", "up")
                                                     : FailureOr<std::string>(std::string("up"));
  if (failed(saturate) || failed(roundMode))
    return failure();
  if (*saturate != 0 && *saturate != 1)
    return b.emitError() << "attribute 'saturate' is " << *saturate << ", expected 0 or 1";
  if (*roundMode != "up" && *roundMode != "down" && *roundMode != "nearest")
    return b.emitError() << "attribute 'round_mode' value is '" << *roundMode
                         << "', accepted values are up, down, nearest";
  auto cast = out.getDefiningOp<kiln::CastOp>();
  // kiln.cast rounds to f8E8M0FNU up (the default) only.
  if (cast && *roundMode != "up" &&
      isa<Float8E8M0FNUType>(cast.getType().getElementType()))
    return b.unsupported("round_mode '" + *roundMode + "' (only 'up')");
  if (cast)
    cast.setSaturate(*saturate != 0);
  return success();
}

/// Cast, BitCast: input 0 as the tensor type with element `to`; BitCast
/// keeps the bits, so `to` must be as wide (a bool counts as a byte).
template <typename OpTy>
LogicalResult castTo(NodeBinder &b) {
  constexpr bool keepBits = std::is_same_v<OpTy, kiln::BitcastOp>;
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> to = b.intAttr("to", std::nullopt);
  if (failed(x) || failed(to))
    return failure();
  Type element = convertElementType(b.context(), static_cast<int32_t>(*to));
  if (!element)
    return b.unsupported(std::string(keepBits ? "bitcast" : "cast") + " to " +
                         elementTypeName(static_cast<int32_t>(*to)));
  auto width = [](Type t) { return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth(); };
  if (keepBits && width(element) != width(elementOf(*x)))
    return b.emitError() << "attribute 'to' is " << element
                         << ", which is not as wide as the input's " << elementOf(*x);
  auto type = RankedTensorType::get(tensorType(*x).getShape(), element);
  if (type == x->getType())
    return b.setOutput(0, *x);
  FailureOr<Value> out = b.makeTyped<OpTy>(type, *x);
  if (succeeded(out) && !keepBits && failed(setSaturate(b, *out)))
    return failure();
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult castLike(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), like = b.input(1);
  if (failed(x) || failed(like))
    return failure();
  auto type = RankedTensorType::get(tensorType(*x).getShape(), elementOf(*like));
  if (type == x->getType())
    return b.setOutput(0, *x);
  FailureOr<Value> out = b.makeTyped<kiln::CastOp>(type, *x);
  if (succeeded(out) && failed(setSaturate(b, *out)))
    return failure();
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult where(NodeBinder &b) {
  FailureOr<Value> c = b.input(0), x = b.input(1), y = b.input(2);
  if (failed(c) || failed(x) || failed(y) || failed(sameElementType(b, *x, *y)))
    return failure();
  FailureOr<Value> out = b.make<kiln::SelectOp>(*c, *x, *y);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// Decomposed activations and predicates
//===----------------------------------------------------------------------===//

/// A tiny expression builder over one node: each step may fail, and the first
/// failure sticks.
struct Expr {
  NodeBinder &b;
  bool ok = true;
  Value k(Value like, double v) { return b.scalar(elementOf(like), v); }
  template <typename OpTy>
  Value bin(Value lhs, Value rhs) {
    if (!ok)
      return {};
    FailureOr<Value> out = combine<OpTy>(b, lhs, rhs);
    ok = succeeded(out);
    return ok ? *out : Value();
  }
  template <typename OpTy>
  Value un(Value x) {
    if (!ok)
      return {};
    FailureOr<Value> out = b.make<OpTy>(x);
    ok = succeeded(out);
    return ok ? *out : Value();
  }
  Value select(Value c, Value x, Value y) {
    if (!ok)
      return {};
    FailureOr<Value> out = b.make<kiln::SelectOp>(c, x, y);
    ok = succeeded(out);
    return ok ? *out : Value();
  }
  Value clip01(Value x) {
    if (!ok)
      return {};
    Builder builder(b.context());
    FailureOr<Value> out = b.make<kiln::ClipOp>(x, builder.getF64FloatAttr(0.0),
                                                 builder.getF64FloatAttr(1.0));
    ok = succeeded(out);
    return ok ? *out : Value();
  }
  LogicalResult finish(Value out) { return ok ? b.setOutput(0, out) : failure(); }
};

template <bool isSwish>
LogicalResult hardSigmoid(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", isSwish ? 1.0f / 6 : 0.2f);
  FailureOr<float> beta = b.floatAttr("beta", 0.5f);
  if (failed(x) || failed(alpha) || failed(beta))
    return failure();
  Expr e{b};
  // hard_sigmoid(x) = clip(alpha * x + beta, 0, 1); hard_swish = x * that.
  Value betaK = e.k(*x, *beta);
  Value alphaK = e.k(*x, *alpha);
  Value scaled = e.bin<kiln::MulOp>(*x, alphaK);
  Value y = e.clip01(e.bin<kiln::AddOp>(scaled, betaK));
  return e.finish(isSwish ? e.bin<kiln::MulOp>(*x, y) : y);
}

LogicalResult softplus(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  Expr e{b};
  // softplus(x) = log(exp(x) + 1)
  Value one = e.k(*x, 1.0);
  Value exp = e.un<kiln::ExpOp>(*x);
  return e.finish(e.un<kiln::LogOp>(e.bin<kiln::AddOp>(exp, one)));
}

LogicalResult softsign(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  Expr e{b};
  // softsign(x) = x / (1 + |x|)
  Value abs = e.un<kiln::AbsOp>(*x);
  Value one = e.k(*x, 1.0);
  return e.finish(e.bin<kiln::DivOp>(*x, e.bin<kiln::AddOp>(one, abs)));
}

/// alpha * (exp(x) - 1), the negative branch of elu and selu.
Value expm1Times(Expr &e, Value x, float alpha) {
  Value one = e.k(x, 1.0);
  Value exp = e.un<kiln::ExpOp>(x);
  Value expm1 = e.bin<kiln::SubOp>(exp, one);
  Value alphaK = e.k(x, alpha);
  return e.bin<kiln::MulOp>(alphaK, expm1);
}

LogicalResult elu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.0f);
  if (failed(x) || failed(alpha))
    return failure();
  Expr e{b};
  // elu(x) = x < 0 ? alpha * (exp(x) - 1) : x
  Value negative = expm1Times(e, *x, *alpha);
  return e.finish(
      e.select(e.bin<kiln::LessOp>(*x, e.k(*x, 0.0)), negative, *x));
}

LogicalResult selu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.67326319217681884765625f);
  FailureOr<float> gamma = b.floatAttr("gamma", 1.05070102214813232421875f);
  if (failed(x) || failed(alpha) || failed(gamma))
    return failure();
  Expr e{b};
  // selu(x) = gamma * (x <= 0 ? alpha * (exp(x) - 1) : x)
  Value negative = expm1Times(e, *x, *alpha);
  Value inner =
      e.select(e.bin<kiln::LessEqualOp>(*x, e.k(*x, 0.0)), negative, *x);
  return e.finish(e.bin<kiln::MulOp>(e.k(*x, *gamma), inner));
}

LogicalResult prelu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), slope = b.input(1);
  if (failed(x) || failed(slope))
    return failure();
  Expr e{b};
  // prelu(x) = x < 0 ? slope * x : x
  Value scaled = e.bin<kiln::MulOp>(*x, *slope);
  Value zero = e.k(*x, 0.0);
  Value negative = e.bin<kiln::LessOp>(*x, zero);
  return e.finish(e.select(negative, scaled, *x));
}

LogicalResult isNaN(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  Expr e{b};
  // isnan(x) = not(x == x)
  return e.finish(e.un<kiln::NotOp>(e.bin<kiln::EqualOp>(*x, *x)));
}

LogicalResult isInf(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> positive = b.intAttr("detect_positive", 1);
  FailureOr<int64_t> negative = b.intAttr("detect_negative", 1);
  if (failed(x) || failed(positive) || failed(negative))
    return failure();
  if (!isa<FloatType>(elementOf(*x)))
    return b.emitError() << "input element type " << elementOf(*x)
                         << " is not a floating-point type";
  Expr e{b};
  double inf = std::numeric_limits<double>::infinity();
  Value out;
  if (*positive && *negative) {
    Value infK = e.k(*x, inf);
    out = e.bin<kiln::EqualOp>(e.un<kiln::AbsOp>(*x), infK);
  }
  else if (*positive)
    out = e.bin<kiln::EqualOp>(*x, e.k(*x, inf));
  else if (*negative)
    out = e.bin<kiln::EqualOp>(*x, e.k(*x, -inf));
  else // neither: all false, and x < -inf is false for every x
    out = e.bin<kiln::LessOp>(*x, e.k(*x, -inf));
  return e.finish(out);
}

/// Unary formulas built from kiln ops, one per ONNX op.
template <Value (*formula)(Expr &, Value)>
LogicalResult unaryFormula(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  Expr e{b};
  return e.finish(formula(e, *x));
}

// sinh(x) = (e^x - e^-x) / 2, cosh(x) = (e^x + e^-x) / 2
Value sinhOf(Expr &e, Value x) {
  Value up = e.un<kiln::ExpOp>(x), down = e.un<kiln::ExpOp>(e.un<kiln::NegOp>(x));
  Value half = e.k(x, 0.5);
  return e.bin<kiln::MulOp>(e.bin<kiln::SubOp>(up, down), half);
}
Value coshOf(Expr &e, Value x) {
  Value up = e.un<kiln::ExpOp>(x), down = e.un<kiln::ExpOp>(e.un<kiln::NegOp>(x));
  Value half = e.k(x, 0.5);
  return e.bin<kiln::MulOp>(e.bin<kiln::AddOp>(up, down), half);
}
// tan(x) = sin(x) / cos(x)
Value tanOf(Expr &e, Value x) {
  Value cos = e.un<kiln::CosOp>(x);
  return e.bin<kiln::DivOp>(e.un<kiln::SinOp>(x), cos);
}
// asinh(x) = sign(x) log(|x| + sqrt(x^2 + 1)) (odd form: no cancellation for x < 0)
Value asinhOf(Expr &e, Value x) {
  Value a = e.un<kiln::AbsOp>(x);
  Value one = e.k(x, 1);
  Value root = e.un<kiln::SqrtOp>(e.bin<kiln::AddOp>(e.bin<kiln::MulOp>(a, a), one));
  Value log = e.un<kiln::LogOp>(e.bin<kiln::AddOp>(a, root));
  return e.bin<kiln::MulOp>(e.un<kiln::SignOp>(x), log);
}
// acosh(x) = log(x + sqrt(x^2 - 1))
Value acoshOf(Expr &e, Value x) {
  Value one = e.k(x, 1);
  Value root = e.un<kiln::SqrtOp>(e.bin<kiln::SubOp>(e.bin<kiln::MulOp>(x, x), one));
  return e.un<kiln::LogOp>(e.bin<kiln::AddOp>(x, root));
}
// atanh(x) = log((1 + x) / (1 - x)) / 2
Value atanhOf(Expr &e, Value x) {
  Value oneMinusX = e.bin<kiln::SubOp>(e.k(x, 1), x);
  Value onePlusX = e.bin<kiln::AddOp>(e.k(x, 1), x);
  Value ratio = e.bin<kiln::DivOp>(onePlusX, oneMinusX);
  Value half = e.k(x, 0.5);
  return e.bin<kiln::MulOp>(e.un<kiln::LogOp>(ratio), half);
}
// mish(x) = x tanh(log(1 + e^x))
Value mishOf(Expr &e, Value x) {
  Value one = e.k(x, 1);
  Value softplus = e.un<kiln::LogOp>(e.bin<kiln::AddOp>(e.un<kiln::ExpOp>(x), one));
  return e.bin<kiln::MulOp>(x, e.un<kiln::TanhOp>(softplus));
}

LogicalResult celu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.0f);
  if (failed(x) || failed(alpha))
    return failure();
  Expr e{b};
  // celu(x) = max(0, x) + min(0, alpha (exp(x / alpha) - 1))
  Value zero = e.k(*x, 0), a = e.k(*x, *alpha);
  Value one = e.k(*x, 1);
  Value exp = e.un<kiln::ExpOp>(e.bin<kiln::DivOp>(*x, a));
  Value curve = e.bin<kiln::MulOp>(a, e.bin<kiln::SubOp>(exp, one));
  Value low = e.bin<kiln::MinOp>(zero, curve);
  return e.finish(e.bin<kiln::AddOp>(e.bin<kiln::MaxOp>(zero, *x), low));
}

LogicalResult thresholdedRelu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.0f);
  if (failed(x) || failed(alpha))
    return failure();
  Expr e{b};
  // thresholded_relu(x) = x > alpha ? x : 0
  Value zero = e.k(*x, 0);
  Value above = e.bin<kiln::GreaterOp>(*x, e.k(*x, *alpha));
  return e.finish(e.select(above, *x, zero));
}

LogicalResult shrink(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> lambd = b.floatAttr("lambd", 0.5f), bias = b.floatAttr("bias", 0.0f);
  if (failed(x) || failed(lambd) || failed(bias))
    return failure();
  Expr e{b};
  // shrink(x) = x < -lambd ? x + bias : (x > lambd ? x - bias : 0)
  Value zero = e.k(*x, 0);
  Value shiftedDown = e.bin<kiln::SubOp>(*x, e.k(*x, *bias));
  Value isAbove = e.bin<kiln::GreaterOp>(*x, e.k(*x, *lambd));
  Value above = e.select(isAbove, shiftedDown, zero);
  Value shiftedUp = e.bin<kiln::AddOp>(*x, e.k(*x, *bias));
  Value isBelow = e.bin<kiln::LessOp>(*x, e.k(*x, -*lambd));
  return e.finish(e.select(isBelow, shiftedUp, above));
}

LogicalResult swish(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.0f);
  if (failed(x) || failed(alpha))
    return failure();
  Expr e{b};
  // swish(x) = x sigmoid(alpha x)
  return e.finish(e.bin<kiln::MulOp>(
      *x, e.un<kiln::SigmoidOp>(e.bin<kiln::MulOp>(*x, e.k(*x, *alpha)))));
}

LogicalResult swiGLU(NodeBinder &b) {
  FailureOr<Value> gate = b.input(0), linear = b.input(1);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.0f);
  if (failed(gate) || failed(linear) || failed(alpha))
    return failure();
  if (gate->getType() != linear->getType())
    return b.emitError() << "inputs A and B have types " << gate->getType() << " and "
                         << linear->getType() << "; SwiGLU needs identical types";
  Expr e{b};
  // swiglu(a, b) = a sigmoid(alpha a) b
  Value swish = e.bin<kiln::MulOp>(
      *gate, e.un<kiln::SigmoidOp>(e.bin<kiln::MulOp>(*gate, e.k(*gate, *alpha))));
  return e.finish(e.bin<kiln::MulOp>(swish, *linear));
}

} // namespace

void registerElementwiseHandlers(HandlerRegistry &r) {
  r.add("Add", 7, binary<kiln::AddOp>);
  r.add("Sinh", 9, unaryFormula<sinhOf>);
  r.add("Cosh", 9, unaryFormula<coshOf>);
  r.add("Tan", 7, unaryFormula<tanOf>);
  r.add("Asinh", 9, unaryFormula<asinhOf>);
  r.add("Acosh", 9, unaryFormula<acoshOf>);
  r.add("Atanh", 9, unaryFormula<atanhOf>);
  r.add("Mish", 18, unaryFormula<mishOf>);
  r.add("Celu", 12, celu);
  r.add("ThresholdedRelu", 10, thresholdedRelu);
  r.add("Shrink", 9, shrink);
  r.add("Swish", 24, swish);
  r.add("SwiGLU", 28, swiGLU);
  r.add("Sub", 7, binary<kiln::SubOp>);
  r.add("Mul", 7, binary<kiln::MulOp>);
  r.add("Div", 7, binary<kiln::DivOp>);
  r.add("Pow", 7, pow);
  r.add("Mod", 10, mod);
  r.add("And", 7, binary<kiln::AndOp>);
  r.add("Or", 7, binary<kiln::OrOp>);
  r.add("Xor", 7, binary<kiln::XorOp>);
  r.add("BitwiseAnd", 18, binary<kiln::AndOp>);
  r.add("BitwiseOr", 18, binary<kiln::OrOp>);
  r.add("BitwiseXor", 18, binary<kiln::XorOp>);
  r.add("BitwiseNot", 18, unary<kiln::NotOp>);
  r.add("BitShift", 11, bitShift);
  r.add("Equal", 7, binary<kiln::EqualOp>);
  r.add("Less", 7, binary<kiln::LessOp>);
  r.add("LessOrEqual", 12, binary<kiln::LessEqualOp>);
  r.add("Greater", 7, binary<kiln::GreaterOp>);
  r.add("GreaterOrEqual", 12, binary<kiln::GreaterEqualOp>);
  r.add("Max", 7, variadic<kiln::MaxOp>);
  r.add("Min", 7, variadic<kiln::MinOp>);
  r.add("Sum", 7, variadic<kiln::AddOp>);
  r.add("Mean", 7, mean);
  r.add("Where", 9, where);
  r.add("Neg", 7, unary<kiln::NegOp>);
  r.add("Abs", 7, unary<kiln::AbsOp>);
  r.add("Exp", 7, unary<kiln::ExpOp>);
  r.add("Log", 7, unary<kiln::LogOp>);
  r.add("Sqrt", 7, unary<kiln::SqrtOp>);
  r.add("Reciprocal", 7, unary<kiln::ReciprocalOp>);
  r.add("Tanh", 7, unary<kiln::TanhOp>);
  r.add("Sigmoid", 7, unary<kiln::SigmoidOp>);
  r.add("Relu", 7, unary<kiln::ReluOp>);
  r.add("Erf", 9, unary<kiln::ErfOp>);
  r.add("Sin", 7, unary<kiln::SinOp>);
  r.add("Asin", 7, unary<kiln::AsinOp>);
  r.add("Acos", 7, unary<kiln::AcosOp>);
  r.add("Atan", 7, unary<kiln::AtanOp>);
  r.add("Cos", 7, unary<kiln::CosOp>);
  r.add("Floor", 7, unary<kiln::FloorOp>);
  r.add("Ceil", 7, unary<kiln::CeilOp>);
  r.add("Round", 11, unary<kiln::RoundOp>);
  r.add("Sign", 9, unary<kiln::SignOp>);
  r.add("Not", 1, unary<kiln::NotOp>); // one version since opset 1
  r.add("LeakyRelu", 7, leakyRelu);
  r.add("Gelu", 20, gelu);
  r.add("Clip", 7, clip);
  r.add("Cast", 7, castTo<kiln::CastOp>);
  r.add("CastLike", 15, castLike);
  r.add("BitCast", 26, castTo<kiln::BitcastOp>);
  r.add("HardSigmoid", 7, hardSigmoid<false>);
  r.add("HardSwish", 14, hardSigmoid<true>);
  r.add("Softplus", 7, softplus);
  r.add("Softsign", 7, softsign);
  r.add("Elu", 7, elu);
  r.add("Selu", 7, selu);
  r.add("PRelu", 7, prelu);
  r.add("IsNaN", 9, isNaN);
  r.add("IsInf", 10, isInf);
}

} // namespace kiln::onnx_import
