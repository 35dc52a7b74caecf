//===- MatrixHandlers.cpp - ONNX Det ---------------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Det as Gaussian elimination with partial pivoting (LAPACK's getrf, which
// numpy's reference calls), unrolled over the static matrix size: per
// column, the arg-max of |A| below the diagonal picks the pivot row, the two
// rows are swapped arithmetically (a one-hot difference times the row
// difference), the determinant takes the pivot (and a sign per swap), and the
// rows below are eliminated. Matrices are at most kMaxDet x kMaxDet.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

constexpr int64_t kMaxDet = 32;

/// A [n, 1] column constant of `element` with `value(i)` in row i.
Value column(NodeBinder &b, Type element, int64_t n, llvm::function_ref<double(int64_t)> value) {
  auto type = RankedTensorType::get({n, 1}, element);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n; ++i)
    values.push_back(FloatAttr::get(element, value(i)));
  return b.constant(DenseElementsAttr::get(type, values));
}

FailureOr<Value> sliceRange(NodeBinder &b, Value x, ArrayRef<int64_t> axes,
                            ArrayRef<int64_t> starts, ArrayRef<int64_t> ends) {
  SmallVector<int64_t> steps(axes.size(), 1);
  return b.make<kiln::SliceOp>(x, starts, ends, axes, ArrayRef(steps));
}

LogicalResult det(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  RankedTensorType type = tensorType(*x);
  int64_t rank = type.getRank();
  if (!type.hasStaticShape())
    return b.unsupported("Det with dynamic input shapes");
  if (rank < 2 || type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return b.emitError() << "input 0 has type " << type << ", expected [..., n, n]";
  auto element = dyn_cast<FloatType>(type.getElementType());
  if (!element)
    return b.emitError() << "input 0 must be a float tensor";
  int64_t n = type.getDimSize(rank - 1);
  if (n > kMaxDet)
    return b.unsupported("Det of " + Twine(n) + "x" + Twine(n) + " matrices (at most " +
                         Twine(kMaxDet) + "x" + Twine(kMaxDet) + ")");
  int64_t rowAxis = rank - 2, colAxis = rank - 1;
  SmallVector<int64_t> batch(type.getShape().drop_back(2));
  Value one = b.scalar(element, 1);
  FailureOr<Value> a = *x;
  FailureOr<Value> result = Value(); // [..., 1, 1]: the product of the signed pivots
  Type i64 = b.builder().getI64Type();
  SmallVector<int64_t> iota = llvm::to_vector(llvm::seq<int64_t>(0, n));
  Value rows = b.constant(DenseElementsAttr::get(RankedTensorType::get({n, 1}, i64),
                                                 ArrayRef(iota)));
  for (int64_t k = 0; k < n; ++k) {
    // Pivot: the first largest |A[i, k]|, i >= k.
    FailureOr<Value> below = sliceRange(b, *a, {rowAxis, colAxis}, {k, k}, {n, k + 1});
    if (failed(below))
      return failure();
    FailureOr<Value> magnitude = b.make<kiln::AbsOp>(*below);
    if (failed(magnitude))
      return failure();
    FailureOr<Value> offset = b.make<kiln::ArgMaxOp>(*magnitude, static_cast<uint64_t>(rowAxis),
                                                     true, false);
    if (failed(offset))
      return failure();
    FailureOr<Value> pivotRow = b.make<kiln::AddOp>(*offset, b.scalar(i64, k));
    if (failed(pivotRow))
      return failure();
    // Swap rows k and p: A += (e_k - e_p) (A[p] - A[k]).
    FailureOr<Value> isPivot = b.make<kiln::EqualOp>(rows, *pivotRow);
    if (failed(isPivot))
      return failure();
    FailureOr<Value> ep = b.makeTyped<kiln::CastOp>(
        tensorType(*isPivot).clone(element), *isPivot);
    if (failed(ep))
      return failure();
    FailureOr<Value> pickedRows = b.make<kiln::MulOp>(*ep, *a);
    if (failed(pickedRows))
      return failure();
    FailureOr<Value> rowP = b.make<kiln::ReduceOp>(*pickedRows, ReduceKind::sum,
                                                   ArrayRef<int64_t>{rowAxis}, true);
    FailureOr<Value> rowK = sliceRange(b, *a, {rowAxis}, {k}, {k + 1});
    if (failed(rowP) || failed(rowK))
      return failure();
    FailureOr<Value> rowDiff = b.make<kiln::SubOp>(*rowP, *rowK);
    Value ek = column(b, element, n, [&](int64_t i) { return i == k ? 1.0 : 0.0; });
    FailureOr<Value> which = b.make<kiln::SubOp>(ek, *ep);
    if (failed(rowDiff) || failed(which))
      return failure();
    FailureOr<Value> swap = b.make<kiln::MulOp>(*which, *rowDiff);
    if (failed(swap))
      return failure();
    a = b.make<kiln::AddOp>(*a, *swap);
    if (failed(a))
      return failure();
    // det *= pivot, negated when rows were swapped.
    FailureOr<Value> pivot = sliceRange(b, *a, {rowAxis, colAxis}, {k, k}, {k + 1, k + 1});
    FailureOr<Value> swapped = b.make<kiln::EqualOp>(*offset, b.scalar(i64, 0));
    if (failed(pivot) || failed(swapped))
      return failure();
    FailureOr<Value> negated = b.make<kiln::NegOp>(*pivot);
    if (failed(negated))
      return failure();
    FailureOr<Value> signedPivot = b.make<kiln::SelectOp>(*swapped, *pivot, *negated);
    if (failed(signedPivot))
      return failure();
    result = *result ? b.make<kiln::MulOp>(*result, *signedPivot) : signedPivot;
    if (failed(result))
      return failure();
    if (k + 1 == n)
      break;
    // Eliminate below: A -= mask_{i > k} * (A[:, k] / pivot) * A[k].
    FailureOr<Value> zeroPivot = b.make<kiln::EqualOp>(*pivot, b.scalar(element, 0));
    if (failed(zeroPivot))
      return failure();
    FailureOr<Value> safe = b.make<kiln::SelectOp>(*zeroPivot, one, *pivot);
    FailureOr<Value> colK = sliceRange(b, *a, {colAxis}, {k}, {k + 1});
    if (failed(safe) || failed(colK))
      return failure();
    FailureOr<Value> factor = b.make<kiln::DivOp>(*colK, *safe);
    if (failed(factor))
      return failure();
    Value lower = column(b, element, n, [&](int64_t i) { return i > k ? 1.0 : 0.0; });
    factor = b.make<kiln::MulOp>(*factor, lower);
    FailureOr<Value> pivotRowValues = sliceRange(b, *a, {rowAxis}, {k}, {k + 1});
    if (failed(factor) || failed(pivotRowValues))
      return failure();
    FailureOr<Value> update = b.make<kiln::MulOp>(*factor, *pivotRowValues);
    if (failed(update))
      return failure();
    a = b.make<kiln::SubOp>(*a, *update);
    if (failed(a))
      return failure();
  }
  auto outType = RankedTensorType::get(batch, element);
  FailureOr<Value> out = b.makeTyped<kiln::ReshapeOp>(outType, *result, b.i64Vector(batch));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

void registerMatrixHandlers(HandlerRegistry &r) { r.add("Det", 11, det); }

} // namespace kiln::onnx_import
