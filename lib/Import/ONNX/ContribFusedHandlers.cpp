//===- ContribFusedHandlers.cpp - onnxruntime's fused matmul and GELUs ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The com.microsoft ops onnxruntime's graph optimizer writes into decoder
// models (an ORT_ENABLE_EXTENDED optimized_model_filepath), as kiln ops:
//   FusedMatMul: alpha * op(A) op(B), op a transpose of the last two dims
//     (transA/transB; transBatchA/B are unsupported);
//   FastGelu: gelu tanh of X (+ bias); BiasGelu: gelu (erf) of X + bias;
//   Gelu: gelu (erf); QuickGelu: x * sigmoid(alpha x).
//
//===----------------------------------------------------------------------===//

#include "ContribOps.h"

using namespace mlir;

namespace kiln::onnx_import::contrib {
namespace {

FailureOr<Value> lastTwoSwapped(NodeBinder &b, Value x) {
  int64_t rank = tensorType(x).getRank();
  if (rank < 2)
    return b.emitError() << "a transposed operand has type " << tensorType(x)
                         << ", expected rank 2 or more";
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return b.make<kiln::TransposeOp>(x, ArrayRef(perm));
}

LogicalResult fusedMatMul(NodeBinder &b) {
  FailureOr<Value> a = b.input(0), w = b.input(1);
  FailureOr<int64_t> transA = b.intAttr("transA", 0), transB = b.intAttr("transB", 0),
                     batchA = b.intAttr("transBatchA", 0), batchB = b.intAttr("transBatchB", 0);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.0f);
  if (failed(a) || failed(w) || failed(transA) || failed(transB) || failed(batchA) ||
      failed(batchB) || failed(alpha) ||
      failed(b.checkRange("attribute 'transA'", *transA, 0, 1)) ||
      failed(b.checkRange("attribute 'transB'", *transB, 0, 1)))
    return failure();
  if (*batchA != 0 || *batchB != 0)
    return b.unsupported("attributes 'transBatchA' " + Twine(*batchA) + " and 'transBatchB' " +
                         Twine(*batchB) + " (only 0 is supported)");
  FailureOr<Value> lhs = *transA ? lastTwoSwapped(b, *a) : a;
  FailureOr<Value> rhs = succeeded(lhs) && *transB ? lastTwoSwapped(b, *w) : w;
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> y = b.make<kiln::MatmulOp>(*lhs, *rhs);
  if (succeeded(y) && *alpha != 1.0f)
    y = b.make<kiln::MulOp>(*y, b.scalar(tensorType(*y).getElementType(), *alpha));
  return failed(y) ? failure() : b.setOutput(0, *y);
}

template <GeluApproximation Mode, bool TakesBias>
LogicalResult gelu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  if (TakesBias)
    if (Value bias = b.optionalInput(1))
      x = b.make<kiln::AddOp>(*x, bias);
  FailureOr<Value> y = succeeded(x) ? b.make<kiln::GeluOp>(*x, Mode) : x;
  return failed(y) ? failure() : b.setOutput(0, *y);
}

LogicalResult biasGelu(NodeBinder &b) {
  if (failed(b.input(1)))
    return failure();
  return gelu<GeluApproximation::none, true>(b);
}

LogicalResult quickGelu(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.702f);
  if (failed(x) || failed(alpha))
    return failure();
  Type element = tensorType(*x).getElementType();
  FailureOr<Value> scaled =
      *alpha == 1.0f ? x : b.make<kiln::MulOp>(*x, b.scalar(element, *alpha));
  FailureOr<Value> gate = succeeded(scaled) ? b.make<kiln::SigmoidOp>(*scaled) : scaled;
  FailureOr<Value> y = succeeded(gate) ? b.make<kiln::MulOp>(*x, *gate) : gate;
  return failed(y) ? failure() : b.setOutput(0, *y);
}

} // namespace

void registerContribFusedHandlers(HandlerRegistry &r) {
  r.add("FusedMatMul", 1, fusedMatMul, kDomain);
  r.add("FastGelu", 1, gelu<GeluApproximation::tanh, true>, kDomain);
  r.add("BiasGelu", 1, biasGelu, kDomain);
  r.add("Gelu", 1, gelu<GeluApproximation::none, false>, kDomain);
  r.add("QuickGelu", 1, quickGelu, kDomain);
}

} // namespace kiln::onnx_import::contrib
