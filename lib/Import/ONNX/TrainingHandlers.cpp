//===- TrainingHandlers.cpp - ai.onnx.preview.training optimizers ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The optimizer steps of the ai.onnx.preview.training domain (opset 1):
// Adagrad, Momentum (standard and Nesterov) and Adam. Each updates n tensors
// at once: inputs R (learning rate) and T (update count, int64), then X_1..n,
// G_1..n and the n-tensor state groups; outputs the new X's, then the new
// state groups. They are elementwise formulas, built here as the spec's
// reference implementations write them, in each X's element type.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

/// An elementwise expression builder for one node that stops at the first
/// failure (every later call returns a null value).
class Expr {
public:
  explicit Expr(NodeBinder &b) : b(b) {}

  template <typename OpTy>
  Value op(Value lhs, Value rhs) {
    if (!lhs || !rhs)
      return fail();
    FailureOr<Value> result = b.make<OpTy>(lhs, rhs);
    return succeeded(result) ? *result : fail();
  }
  Value add(Value l, Value r) { return op<kiln::AddOp>(l, r); }
  Value sub(Value l, Value r) { return op<kiln::SubOp>(l, r); }
  Value mul(Value l, Value r) { return op<kiln::MulOp>(l, r); }
  Value div(Value l, Value r) { return op<kiln::DivOp>(l, r); }
  Value sqrt(Value x) {
    if (!x)
      return fail();
    FailureOr<Value> result = b.make<kiln::SqrtOp>(x);
    return succeeded(result) ? *result : fail();
  }
  Value cast(Value x, Type element) {
    if (!x)
      return fail();
    if (getElementTypeOrSelf(x.getType()) == element)
      return x;
    FailureOr<Value> result = b.makeTyped<kiln::CastOp>(tensorType(x).clone(element), x);
    return succeeded(result) ? *result : fail();
  }
  /// `cond ? yes : no` for a rank-0 i1 `cond`.
  Value select(Value cond, Value yes, Value no) {
    if (!cond || !yes || !no)
      return fail();
    FailureOr<Value> result = b.make<kiln::SelectOp>(cond, yes, no);
    return succeeded(result) ? *result : fail();
  }
  Value scalar(Type element, double value) { return b.scalar(element, value); }
  bool failed() const { return broken; }

private:
  Value fail() {
    broken = true;
    return {};
  }
  NodeBinder &b;
  bool broken = false;
};

/// The common operands: R and T (rank 0) and n = the number of updated
/// tensors, given `groups` tensor groups after R and T (X, G and the state).
struct Step {
  Value rate, count;
  int64_t n = 0;
};

FailureOr<Step> readStep(NodeBinder &b, unsigned groups) {
  unsigned inputs = b.numInputs();
  if (inputs < 2 + groups || (inputs - 2) % groups != 0)
    return b.emitError() << "has " << inputs << " inputs; expected R, T and "
                         << groups << " groups of n tensors (n >= 1)";
  Step step;
  step.n = (inputs - 2) / groups;
  unsigned stateGroups = groups - 2;
  if (b.numOutputs() != (1 + stateGroups) * step.n)
    return b.emitError() << "has " << b.numOutputs() << " outputs for " << step.n
                         << " updated tensors; expected " << (1 + stateGroups) * step.n;
  FailureOr<Value> rate = b.input(0), count = b.input(1);
  if (failed(rate) || failed(count))
    return failure();
  if (tensorType(*rate).getRank() != 0 || tensorType(*count).getRank() != 0)
    return b.emitError() << "inputs R and T must be scalars (rank 0), got "
                         << rate->getType() << " and " << count->getType();
  if (!isa<FloatType>(tensorType(*rate).getElementType()) ||
      !tensorType(*count).getElementType().isInteger(64))
    return b.emitError() << "input R must be a float scalar and T an int64 scalar, got "
                         << rate->getType() << " and " << count->getType();
  step.rate = *rate;
  step.count = *count;
  for (unsigned i = 2; i < inputs; ++i) {
    FailureOr<Value> operand = b.input(i);
    if (failed(operand))
      return failure();
    if (!isa<FloatType>(tensorType(*operand).getElementType()))
      return b.emitError() << "input " << i << " must be a float tensor, got "
                           << operand->getType();
  }
  return step;
}

/// The tensor operands of update `i`: X, G and the state tensors.
SmallVector<Value> operandsOf(NodeBinder &b, const Step &step, unsigned groups,
                              int64_t i) {
  SmallVector<Value> values;
  for (unsigned g = 0; g < groups; ++g)
    values.push_back(b.optionalInput(2 + g * step.n + i));
  return values;
}

LogicalResult checkShapes(NodeBinder &b, ArrayRef<Value> operands) {
  for (Value v : operands.drop_front())
    if (v.getType() != operands.front().getType())
      return b.emitError() << "the tensors of one update must share X's type "
                           << operands.front().getType() << ", got " << v.getType();
  return success();
}

/// Adagrad: r = R / (1 + T * decay_factor); g = norm_coefficient * X + G;
/// H' = H + g^2; X' = X - r * g / (sqrt(H') + epsilon).
LogicalResult adagrad(NodeBinder &b) {
  FailureOr<float> decay = b.floatAttr("decay_factor", 0.0f);
  FailureOr<float> epsilon = b.floatAttr("epsilon", 0.0f);
  FailureOr<float> norm = b.floatAttr("norm_coefficient", 0.0f);
  FailureOr<Step> step = readStep(b, 3);
  if (failed(decay) || failed(epsilon) || failed(norm) || failed(step))
    return failure();
  for (int64_t i = 0; i < step->n; ++i) {
    SmallVector<Value> ops = operandsOf(b, *step, 3, i);
    if (failed(checkShapes(b, ops)))
      return failure();
    Value x = ops[0], g = ops[1], h = ops[2];
    Type t = tensorType(x).getElementType();
    Expr e(b);
    Value count = e.cast(step->count, t);
    Value r = e.div(e.cast(step->rate, t),
                    e.add(e.scalar(t, 1), e.mul(count, e.scalar(t, *decay))));
    Value reg = e.add(e.mul(e.scalar(t, *norm), x), g);
    Value hNew = e.add(h, e.mul(reg, reg));
    Value adaptive = e.add(e.sqrt(hNew), e.scalar(t, *epsilon));
    Value xNew = e.sub(x, e.div(e.mul(r, reg), adaptive));
    if (e.failed() || failed(b.setOutput(i, xNew)) ||
        failed(b.setOutput(step->n + i, hNew)))
      return failure();
  }
  return success();
}

/// Momentum: g = norm_coefficient * X + G; b' = T > 0 ? beta : 1;
/// V' = alpha * V + b' * g; X' = X - R * V' (standard) or
/// X - R * (g + alpha * V') (nesterov).
LogicalResult momentum(NodeBinder &b) {
  FailureOr<float> alpha = b.floatAttr("alpha", std::nullopt);
  FailureOr<float> beta = b.floatAttr("beta", std::nullopt);
  FailureOr<float> norm = b.floatAttr("norm_coefficient", std::nullopt);
  FailureOr<std::string> mode = b.stringAttr("mode", std::nullopt);
  if (failed(alpha) || failed(beta) || failed(norm) || failed(mode))
    return failure();
  if (*mode != "standard" && *mode != "nesterov")
    return b.emitError() << "attribute 'mode' value is '" << *mode
                         << "', accepted values are standard and nesterov";
  FailureOr<Step> step = readStep(b, 3);
  if (failed(step))
    return failure();
  for (int64_t i = 0; i < step->n; ++i) {
    SmallVector<Value> ops = operandsOf(b, *step, 3, i);
    if (failed(checkShapes(b, ops)))
      return failure();
    Value x = ops[0], g = ops[1], v = ops[2];
    Type t = tensorType(x).getElementType();
    Expr e(b);
    Value started = e.op<kiln::GreaterOp>(step->count, b.scalar(b.builder().getI64Type(), 0));
    Value betaNow = e.select(started, e.scalar(t, *beta), e.scalar(t, 1));
    Value reg = e.add(e.mul(e.scalar(t, *norm), x), g);
    Value vNew = e.add(e.mul(e.scalar(t, *alpha), v), e.mul(betaNow, reg));
    Value direction =
        *mode == "standard" ? vNew : e.add(reg, e.mul(e.scalar(t, *alpha), vNew));
    Value xNew = e.sub(x, e.mul(e.cast(step->rate, t), direction));
    if (e.failed() || failed(b.setOutput(i, xNew)) ||
        failed(b.setOutput(step->n + i, vNew)))
      return failure();
  }
  return success();
}

/// Adam: g = norm_coefficient * X + G; V' = alpha * V + (1 - alpha) * g;
/// H' = beta * H + (1 - beta) * g^2; r = T > 0 ? R * sqrt(1 - beta^T) /
/// (1 - alpha^T) : R; X' = (1 - norm_coefficient_post) *
/// (X - r * V' / (sqrt(H') + epsilon)).
LogicalResult adam(NodeBinder &b) {
  FailureOr<float> alpha = b.floatAttr("alpha", 0.9f);
  FailureOr<float> beta = b.floatAttr("beta", 0.999f);
  FailureOr<float> epsilon = b.floatAttr("epsilon", 0.0f);
  FailureOr<float> norm = b.floatAttr("norm_coefficient", 0.0f);
  FailureOr<float> post = b.floatAttr("norm_coefficient_post", 0.0f);
  if (failed(alpha) || failed(beta) || failed(epsilon) || failed(norm) || failed(post))
    return failure();
  FailureOr<Step> step = readStep(b, 4);
  if (failed(step))
    return failure();
  for (int64_t i = 0; i < step->n; ++i) {
    SmallVector<Value> ops = operandsOf(b, *step, 4, i);
    if (failed(checkShapes(b, ops)))
      return failure();
    Value x = ops[0], g = ops[1], v = ops[2], h = ops[3];
    Type t = tensorType(x).getElementType();
    Expr e(b);
    Value one = e.scalar(t, 1);
    Value reg = e.add(e.mul(e.scalar(t, *norm), x), g);
    Value vNew = e.add(e.mul(e.scalar(t, *alpha), v), e.mul(e.scalar(t, 1 - *alpha), reg));
    Value hNew = e.add(e.mul(e.scalar(t, *beta), h),
                       e.mul(e.scalar(t, 1 - *beta), e.mul(reg, reg)));
    Value hSqrt = e.add(e.sqrt(hNew), e.scalar(t, *epsilon));
    Value count = e.cast(step->count, t);
    Value rate = e.cast(step->rate, t);
    Value alphaT = e.op<kiln::PowOp>(e.scalar(t, *alpha), count);
    Value betaT = e.op<kiln::PowOp>(e.scalar(t, *beta), count);
    Value adjusted = e.div(e.mul(rate, e.sqrt(e.sub(one, betaT))), e.sub(one, alphaT));
    Value started = e.op<kiln::GreaterOp>(step->count, b.scalar(b.builder().getI64Type(), 0));
    Value r = e.select(started, adjusted, rate);
    Value xNew = e.sub(x, e.mul(r, e.div(vNew, hSqrt)));
    Value xFinal = e.mul(e.scalar(t, 1 - *post), xNew);
    if (e.failed() || failed(b.setOutput(i, xFinal)) ||
        failed(b.setOutput(step->n + i, vNew)) ||
        failed(b.setOutput(2 * step->n + i, hNew)))
      return failure();
  }
  return success();
}

} // namespace

void registerTrainingHandlers(HandlerRegistry &r) {
  constexpr StringLiteral kTraining = "ai.onnx.preview.training";
  r.add("Adagrad", 1, adagrad, kTraining);
  r.add("Adam", 1, adam, kTraining);
  r.add("Momentum", 1, momentum, kTraining);
}

} // namespace kiln::onnx_import
