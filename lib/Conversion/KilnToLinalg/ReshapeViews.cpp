//===- ReshapeViews.cpp - Reshapes as views where the shapes allow --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A reshape is a view (collapse_shape / expand_shape) when its result
// shape follows from its input's type; only otherwise does it read a shape
// tensor at run time (tensor.reshape). Views let fusion move elementwise
// ops across the reshape, and keep shape arithmetic (and, on a GPU, a
// device-computed shape the host would have to read) out of the model.
//
//===----------------------------------------------------------------------===//

#include "ReshapeViews.h"
#include "LinalgBuilders.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace kiln::lowering {
namespace {

/// A constant 1-D i64 tensor holding `shape` (for tensor.reshape).
Value shapeConstant(OpBuilder &b, Location loc, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get({static_cast<int64_t>(shape.size())}, b.getI64Type());
  return arith::ConstantOp::create(b, loc, DenseIntElementsAttr::get(type, shape));
}

ReassociationIndices allDims(int64_t rank) {
  return ReassociationIndices(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
}

/// A reshape between shapes of equal element count as views: collapse_shape
/// or expand_shape when one shape groups the other's dims, else a collapse
/// to 1-D then an expand (row-major order is the same either way).
/// `outputShape` gives the result's sizes (dynamic ones as values).
Value viewReshape(OpBuilder &b, Location loc, Value input, RankedTensorType type,
                  ArrayRef<OpFoldResult> outputShape) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (inputType.getShape() == type.getShape())
    return input;
  if (inputType.getRank() > type.getRank()) {
    if (auto groups = getReassociationIndicesForReshape(inputType, type))
      return tensor::CollapseShapeOp::create(b, loc, type, input, *groups);
  } else if (inputType.getRank() < type.getRank()) {
    if (auto groups = getReassociationIndicesForReshape(inputType, type))
      return tensor::ExpandShapeOp::create(b, loc, type, input, *groups, outputShape);
  }
  int64_t elements = inputType.hasStaticShape() ? inputType.getNumElements()
                                                : ShapedType::kDynamic;
  auto flatType = RankedTensorType::get({elements}, type.getElementType());
  Value flat = inputType.getRank() == 1
                   ? input
                   : tensor::CollapseShapeOp::create(
                         b, loc, flatType, input,
                         ArrayRef<ReassociationIndices>{allDims(inputType.getRank())})
                         .getResult();
  if (type.getRank() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{allDims(type.getRank())},
                                       outputShape);
}

/// The one dynamic dim of `type`, or nothing; `staticCount` is the product
/// of its other dims.
std::optional<int64_t> singleDynamicDim(RankedTensorType type, int64_t &staticCount) {
  std::optional<int64_t> dynamic;
  staticCount = 1;
  for (auto [i, size] : llvm::enumerate(type.getShape())) {
    if (!ShapedType::isDynamic(size)) {
      staticCount *= size;
      continue;
    }
    if (dynamic)
      return std::nullopt;
    dynamic = i;
  }
  return dynamic;
}

/// Whether the slice `part` of `whole` (static shapes) is one contiguous
/// block of it: every dim before the first that is cut is 1, and every dim
/// after it is whole (a row of a fused projection's output at batch 1).
bool isContiguousPart(RankedTensorType part, RankedTensorType whole) {
  if (!part.hasStaticShape() || !whole.hasStaticShape() || part.getRank() != whole.getRank())
    return false;
  int64_t rank = part.getRank(), cut = 0;
  while (cut < rank && part.getDimSize(cut) == whole.getDimSize(cut))
    ++cut;
  for (int64_t d = 0; d < cut; ++d)
    if (part.getDimSize(d) != 1)
      return false;
  for (int64_t d = cut + 1; d < rank; ++d)
    if (part.getDimSize(d) != whole.getDimSize(d))
      return false;
  return true;
}

} // namespace

Value reshapeTo(OpBuilder &b, Location loc, Value input, RankedTensorType type, Value shape) {
  auto inputType = cast<RankedTensorType>(input.getType());
  if (type.getRank() > 0 && inputType.getRank() > 0) {
    if (type.hasStaticShape() && inputType.hasStaticShape())
      return viewReshape(b, loc, input, type, getAsIndexOpFoldResult(b.getContext(),
                                                                     type.getShape()));
    // n·s = m·s with s > 0 gives m = n: the dynamic dims are one size.
    int64_t inputCount = 0, resultCount = 0;
    std::optional<int64_t> inputDim = singleDynamicDim(inputType, inputCount);
    std::optional<int64_t> resultDim = singleDynamicDim(type, resultCount);
    if (inputDim && resultDim && inputCount == resultCount && inputCount > 0) {
      SmallVector<OpFoldResult> outputShape =
          getAsIndexOpFoldResult(b.getContext(), type.getShape());
      outputShape[*resultDim] = tensor::DimOp::create(b, loc, input, *inputDim).getResult();
      return viewReshape(b, loc, input, type, outputShape);
    }
  }
  if (type.hasStaticShape())
    shape = shapeConstant(b, loc, type.getShape());
  if (!shape)
    return {};
  return tensor::ReshapeOp::create(b, loc, type, input, shape);
}

bool bufferizesContiguous(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (isa<ReshapeOp, SqueezeOp, UnsqueezeOp, FlattenOp, TransposeOp>(op)) {
      value = op->getOperand(0);
      continue;
    }
    if (isa<SplitOp>(op) || (isa<SliceOp>(op) && llvm::all_of(cast<SliceOp>(op).getSteps(),
                                                               [](int64_t s) { return s == 1; })))
      return isContiguousPart(cast<RankedTensorType>(value.getType()),
                              cast<RankedTensorType>(op->getOperand(0).getType()));
    return !isa<SliceOp>(op);
  }
  return true;
}

Value unitDimsMoved(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> perm,
                    RankedTensorType result) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> inputUnits, resultUnits, kept;
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.getDimSize(i) == 1)
      inputUnits.push_back(i);
  for (auto [i, p] : llvm::enumerate(perm)) {
    if (type.getDimSize(p) == 1)
      resultUnits.push_back(static_cast<int64_t>(i));
    else
      kept.push_back(p);
  }
  if (inputUnits.empty() || !llvm::is_sorted(kept))
    return {};
  SmallVector<int64_t> squeezedShape;
  for (int64_t p : kept)
    squeezedShape.push_back(type.getDimSize(p));
  auto squeezed = RankedTensorType::get(squeezedShape, type.getElementType());
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, squeezed, input, lowering::unitDimGroups(type.getRank(), inputUnits));
  return tensor::ExpandShapeOp::create(b, loc, result, collapsed,
                                       lowering::unitDimGroups(result.getRank(), resultUnits));
}

} // namespace kiln::lowering
