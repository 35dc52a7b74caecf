//===- LossHandlers.cpp - ONNX NegativeLogLikelihoodLoss, SoftmaxCrossEntropy ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The two losses are compositions of kiln ops, built here as ONNX's own
// function bodies define them: the class-axis element of each sample is a
// gather_elements, class weights a gather, ignored targets a select to 0.
// Targets are made safe (ignored ones point at class 0) before any gather,
// since kiln's gathers clamp rather than reject out-of-range indices.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

enum class Reduction { none, sum, mean };

FailureOr<Reduction> readReduction(NodeBinder &b) {
  FailureOr<std::string> name = b.stringAttr("reduction", StringRef("mean"));
  if (failed(name))
    return failure();
  if (*name == "none")
    return Reduction::none;
  if (*name == "sum")
    return Reduction::sum;
  if (*name == "mean")
    return Reduction::mean;
  return b.emitError() << "attribute 'reduction' value is '" << *name
                       << "', accepted values are none, sum and mean";
}

/// Sums every element of `x` to a rank-0 tensor.
FailureOr<Value> sumAll(NodeBinder &b, Value x) {
  return b.make<kiln::ReduceOp>(x, ReduceKind::sum, ArrayRef<int64_t>(), false);
}

/// NLL of `logProb` [N, C, d...] for `target` [N, d...] with optional class
/// `weight` [C]:
///   loss[n, d] = -logProb[n, t, d] * w[t] with t = target[n, d], and 0 where
///   t == ignore_index; reduced by none, sum, or mean (sum / sum of the w[t]
///   of the samples not ignored).
FailureOr<Value> nll(NodeBinder &b, Value logProb, Value target, Value weight) {
  FailureOr<Reduction> reduction = readReduction(b);
  if (failed(reduction))
    return failure();
  RankedTensorType probType = tensorType(logProb), targetType = tensorType(target);
  if (probType.getRank() < 2 || targetType.getRank() != probType.getRank() - 1)
    return b.emitError() << "input has rank " << probType.getRank()
                         << " and target rank " << targetType.getRank()
                         << "; expected [N, C, d...] and [N, d...]";
  Type element = probType.getElementType();
  Type index = targetType.getElementType();
  Value safe = target, valid;
  if (b.hasAttr("ignore_index")) {
    FailureOr<int64_t> ignore = b.intAttr("ignore_index", std::nullopt);
    if (failed(ignore))
      return failure();
    FailureOr<Value> ignored = b.make<kiln::EqualOp>(target, b.scalar(index, *ignore));
    if (failed(ignored))
      return failure();
    FailureOr<Value> kept = b.make<kiln::NotOp>(*ignored);
    FailureOr<Value> zeroed = b.make<kiln::SelectOp>(*ignored, b.scalar(index, 0), target);
    if (failed(kept) || failed(zeroed))
      return failure();
    valid = *kept;
    safe = *zeroed;
  }
  FailureOr<Value> column = b.make<kiln::UnsqueezeOp>(safe, ArrayRef<int64_t>{1});
  if (failed(column))
    return failure();
  FailureOr<Value> picked =
      b.make<kiln::GatherElementsOp>(logProb, *column, static_cast<uint64_t>(1));
  if (failed(picked))
    return failure();
  FailureOr<Value> loss = b.make<kiln::SqueezeOp>(*picked, ArrayRef<int64_t>{1});
  if (failed(loss))
    return failure();
  loss = b.make<kiln::NegOp>(*loss);
  if (failed(loss))
    return failure();
  // Per-sample weights: w[t], or 1; 0 where ignored.
  Value w;
  if (weight) {
    FailureOr<Value> gathered = b.make<kiln::GatherOp>(weight, safe, static_cast<uint64_t>(0));
    if (failed(gathered))
      return failure();
    w = *gathered;
  }
  if (valid) {
    Value zero = b.scalar(element, 0);
    FailureOr<Value> masked = w ? b.make<kiln::SelectOp>(valid, w, zero)
                                : b.make<kiln::SelectOp>(valid, b.scalar(element, 1), zero);
    if (failed(masked))
      return failure();
    w = *masked;
  }
  if (w) {
    loss = b.make<kiln::MulOp>(*loss, w);
    if (failed(loss))
      return failure();
  }
  if (*reduction == Reduction::none)
    return loss;
  FailureOr<Value> total = sumAll(b, *loss);
  if (failed(total) || *reduction == Reduction::sum)
    return total;
  if (!w)
    return b.make<kiln::ReduceOp>(*loss, ReduceKind::mean, ArrayRef<int64_t>(), false);
  // w has the target's shape: a gather by it, or a select on its mask.
  FailureOr<Value> weightSum = sumAll(b, w);
  if (failed(weightSum))
    return failure();
  return b.make<kiln::DivOp>(*total, *weightSum);
}

FailureOr<Value> optionalWeight(NodeBinder &b) {
  Value weight = b.optionalInput(2);
  if (weight && tensorType(weight).getRank() != 1)
    return b.emitError() << "input 2 (weight) has rank " << tensorType(weight).getRank()
                         << ", expected 1";
  return weight;
}

LogicalResult negativeLogLikelihood(NodeBinder &b) {
  FailureOr<Value> input = b.input(0), target = b.input(1);
  FailureOr<Value> weight = optionalWeight(b);
  if (failed(input) || failed(target) || failed(weight))
    return failure();
  FailureOr<Value> out = nll(b, *input, *target, *weight);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// SoftmaxCrossEntropyLoss = NLL of log_softmax(scores) over the class axis;
/// output 1 is that log-probability.
LogicalResult softmaxCrossEntropy(NodeBinder &b) {
  FailureOr<Value> scores = b.input(0), labels = b.input(1);
  FailureOr<Value> weight = optionalWeight(b);
  if (failed(scores) || failed(labels) || failed(weight))
    return failure();
  if (tensorType(*scores).getRank() < 2)
    return b.emitError() << "input 0 (scores) has rank " << tensorType(*scores).getRank()
                         << ", expected at least 2";
  FailureOr<Value> logProb =
      b.make<kiln::LogSoftmaxOp>(*scores, static_cast<uint64_t>(1));
  if (failed(logProb))
    return failure();
  FailureOr<Value> out = nll(b, *logProb, *labels, *weight);
  if (failed(out) || failed(b.setOutput(0, *out)))
    return failure();
  return b.outputUsed(1) ? b.setOutput(1, *logProb) : success();
}

} // namespace

void registerLossHandlers(HandlerRegistry &r) {
  r.add("NegativeLogLikelihoodLoss", 12, negativeLogLikelihood);
  r.add("SoftmaxCrossEntropyLoss", 12, softmaxCrossEntropy);
}

} // namespace kiln::onnx_import
