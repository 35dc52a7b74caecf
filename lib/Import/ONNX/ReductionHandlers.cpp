//===- ReductionHandlers.cpp - ONNX reductions, arg-reductions, scans -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Reduce* moved `axes` from an attribute to an optional input (ReduceSum at
// opset 13, the others at 18) and gained `noop_with_empty_axes` there; kiln
// takes the axes as an attribute, so computed axes are unsupported.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

/// The opset at which each reduction takes `axes` as an input.
template <ReduceKind kind>
constexpr int64_t axesInputOpset() {
  return kind == ReduceKind::sum ? 13 : 18;
}

/// The reduction of input 0 (or input 0 itself for noop_with_empty_axes).
template <ReduceKind kind>
FailureOr<Value> reduceInput(NodeBinder &b, int64_t axesOpset = axesInputOpset<kind>()) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> keepDims = b.intAttr("keepdims", 1);
  FailureOr<int64_t> noop = b.intAttr("noop_with_empty_axes", 0);
  if (failed(x) || failed(keepDims) || failed(noop) ||
      failed(b.checkRange("attribute 'keepdims'", *keepDims, 0, 1)) ||
      failed(b.checkRange("attribute 'noop_with_empty_axes'", *noop, 0, 1)))
    return failure();
  SmallVector<int64_t> axes;
  if (b.opset() >= axesOpset) {
    if (b.hasInput(1)) {
      FailureOr<SmallVector<int64_t>> given = b.requireConstantInts(1, "'axes'");
      if (failed(given))
        return failure();
      axes = *given;
    }
  } else {
    FailureOr<SmallVector<int64_t>> given = b.intsAttr("axes", ArrayRef<int64_t>());
    if (failed(given))
      return failure();
    axes = *given;
  }
  if (axes.empty() && *noop == 1)
    return *x;
  RankedTensorType type = tensorType(*x);
  FailureOr<SmallVector<int64_t>> normalized =
      kiln::normalizeAxes(b.loc(), "axes", axes, type.getRank());
  if (failed(normalized))
    return failure();
  bool isBool = type.getElementType().isInteger(1);
  if (!isBool)
    return b.make<kiln::ReduceOp>(*x, kind, ArrayRef(*normalized), *keepDims == 1);
  // Bools (ReduceMax/Min-20): any/all, reduced as the bytes 0 and 1.
  if (kind != ReduceKind::max && kind != ReduceKind::min)
    return b.emitError() << "bool input: only ReduceMax and ReduceMin accept one";
  FailureOr<Value> bytes =
      b.makeTyped<kiln::CastOp>(type.clone(b.builder().getIntegerType(8)), *x);
  if (failed(bytes))
    return failure();
  FailureOr<Value> reduced =
      b.make<kiln::ReduceOp>(*bytes, kind, ArrayRef(*normalized), *keepDims == 1);
  if (failed(reduced))
    return failure();
  // > 0 rather than a cast: an empty max is -128 (false), an empty min 127 (true).
  return b.make<kiln::GreaterOp>(*reduced, b.scalar(b.builder().getIntegerType(8), 0));
}

template <ReduceKind kind>
LogicalResult reduce(NodeBinder &b) {
  FailureOr<Value> out = reduceInput<kind>(b);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// ReduceLogSum: log of ReduceSum (axes as an input from opset 18).
LogicalResult reduceLogSum(NodeBinder &b) {
  FailureOr<Value> sum = reduceInput<ReduceKind::sum>(b, /*axesOpset=*/18);
  if (failed(sum))
    return failure();
  FailureOr<Value> out = b.make<kiln::LogOp>(*sum);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

template <typename OpTy>
LogicalResult argReduce(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> axis = b.intAttr("axis", 0);
  FailureOr<int64_t> keepDims = b.intAttr("keepdims", 1);
  FailureOr<int64_t> last = b.intAttr("select_last_index", 0);
  if (failed(x) || failed(axis) || failed(keepDims) || failed(last) ||
      failed(b.checkRange("attribute 'keepdims'", *keepDims, 0, 1)) ||
      failed(b.checkRange("attribute 'select_last_index'", *last, 0, 1)))
    return failure();
  FailureOr<int64_t> normalized =
      kiln::normalizeAxis(b.loc(), "axis", *axis, tensorType(*x).getRank());
  if (failed(normalized))
    return failure();
  FailureOr<Value> out = b.make<OpTy>(*x, static_cast<uint64_t>(*normalized),
                                      *keepDims == 1, *last == 1);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// Reads a single-element constant input (CumSum's axis, TopK's k).
FailureOr<int64_t> scalarInput(NodeBinder &b, unsigned i, StringRef what) {
  FailureOr<SmallVector<int64_t>> values = b.requireConstantInts(i, what);
  if (failed(values))
    return failure();
  if (values->size() != 1)
    return b.emitError() << "input " << i << " (" << what << ") has "
                         << values->size() << " elements, expected 1";
  return values->front();
}

/// CumSum along an axis known only at run time: the sums along every axis,
/// chosen by select(axis == a or axis == a - rank). An axis outside
/// [-rank, rank) is not diagnosed at run time (it gives the last axis's sums).
template <typename OpTy>
FailureOr<Value> scanAnyAxis(NodeBinder &b, Value x, bool exclusive, bool reverse) {
  FailureOr<Value> axis = b.input(1);
  if (failed(axis))
    return failure();
  RankedTensorType axisType = tensorType(*axis);
  Type i64 = b.builder().getI64Type();
  if (!axisType.hasStaticShape() || axisType.getNumElements() != 1 ||
      !isa<IntegerType>(axisType.getElementType()))
    return b.emitError() << "input 1 (axis) has type " << axisType
                         << ", expected one integer element";
  Value a = *axis;
  if (axisType.getRank() != 0) {
    FailureOr<Value> scalar =
        b.makeTyped<kiln::ReshapeOp>(axisType.clone(ArrayRef<int64_t>{}), a, b.i64Vector({}));
    if (failed(scalar))
      return failure();
    a = *scalar;
  }
  if (axisType.getElementType() != i64) {
    FailureOr<Value> wide = b.makeTyped<kiln::CastOp>(RankedTensorType::get({}, i64), a);
    if (failed(wide))
      return failure();
    a = *wide;
  }
  int64_t rank = tensorType(x).getRank();
  FailureOr<Value> result = b.make<OpTy>(x, static_cast<uint64_t>(rank - 1),
                                         exclusive, reverse);
  for (int64_t d = rank - 2; d >= 0 && succeeded(result); --d) {
    FailureOr<Value> sums = b.make<OpTy>(x, static_cast<uint64_t>(d), exclusive, reverse);
    FailureOr<Value> isD = b.make<kiln::EqualOp>(a, b.scalar(i64, d));
    FailureOr<Value> isNegD = b.make<kiln::EqualOp>(a, b.scalar(i64, d - rank));
    if (failed(sums) || failed(isD) || failed(isNegD))
      return failure();
    FailureOr<Value> chosen = b.make<kiln::OrOp>(*isD, *isNegD);
    result = succeeded(chosen) ? b.make<kiln::SelectOp>(*chosen, *sums, *result) : chosen;
  }
  return result;
}

/// CumSum, CumProd.
template <typename OpTy>
LogicalResult scan(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> exclusive = b.intAttr("exclusive", 0);
  FailureOr<int64_t> reverse = b.intAttr("reverse", 0);
  if (failed(x) || failed(exclusive) || failed(reverse) ||
      failed(b.checkRange("attribute 'exclusive'", *exclusive, 0, 1)) ||
      failed(b.checkRange("attribute 'reverse'", *reverse, 0, 1)))
    return failure();
  if (b.hasInput(1) && !b.constantInts(1)) {
    FailureOr<Value> out = scanAnyAxis<OpTy>(b, *x, *exclusive == 1, *reverse == 1);
    return failed(out) ? failure() : b.setOutput(0, *out);
  }
  FailureOr<int64_t> axis = scalarInput(b, 1, "'axis'");
  if (failed(axis))
    return failure();
  FailureOr<int64_t> normalized =
      kiln::normalizeAxis(b.loc(), "axis", *axis, tensorType(*x).getRank());
  if (failed(normalized))
    return failure();
  FailureOr<Value> out = b.make<OpTy>(*x, static_cast<uint64_t>(*normalized),
                                      *exclusive == 1, *reverse == 1);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult topK(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> k = b.opset() < 10 ? b.intAttr("k", std::nullopt)
                                         : scalarInput(b, 1, "'K'");
  FailureOr<int64_t> axis = b.intAttr("axis", -1);
  FailureOr<int64_t> largest = b.intAttr("largest", 1);
  FailureOr<int64_t> sorted = b.intAttr("sorted", 1);
  if (failed(x) || failed(k) || failed(axis) || failed(largest) ||
      failed(sorted) ||
      failed(b.checkRange("attribute 'largest'", *largest, 0, 1)) ||
      failed(b.checkRange("attribute 'sorted'", *sorted, 0, 1)))
    return failure();
  FailureOr<int64_t> normalized =
      kiln::normalizeAxis(b.loc(), "axis", *axis, tensorType(*x).getRank());
  if (failed(normalized))
    return failure();
  FailureOr<kiln::TopKOp> op = b.build<kiln::TopKOp>(
      *x, static_cast<uint64_t>(*k), static_cast<uint64_t>(*normalized),
      *largest == 1, *sorted == 1);
  if (failed(op))
    return failure();
  return b.setOutputs(op->getResults());
}

} // namespace

void registerReductionHandlers(HandlerRegistry &r) {
  r.add("ReduceSum", 7, reduce<ReduceKind::sum>);
  r.add("ReduceMean", 7, reduce<ReduceKind::mean>);
  r.add("ReduceMax", 7, reduce<ReduceKind::max>);
  r.add("ReduceMin", 7, reduce<ReduceKind::min>);
  r.add("ReduceProd", 7, reduce<ReduceKind::prod>);
  r.add("ReduceL1", 7, reduce<ReduceKind::l1>);
  r.add("ReduceL2", 7, reduce<ReduceKind::l2>);
  r.add("ReduceLogSumExp", 7, reduce<ReduceKind::log_sum_exp>);
  r.add("ReduceLogSum", 7, reduceLogSum);
  r.add("ReduceSumSquare", 7, reduce<ReduceKind::sum_square>);
  r.add("ArgMax", 7, argReduce<kiln::ArgMaxOp>);
  r.add("ArgMin", 7, argReduce<kiln::ArgMinOp>);
  r.add("CumSum", 11, scan<kiln::CumSumOp>);
  r.add("CumProd", 26, scan<kiln::CumProdOp>);
  r.add("TopK", 7, topK);
}

} // namespace kiln::onnx_import
