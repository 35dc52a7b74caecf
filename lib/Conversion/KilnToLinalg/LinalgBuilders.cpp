//===- LinalgBuilders.cpp - Small builders shared by the kiln -> linalg patterns -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-----------------------------------------------------------------------------===//

#include "LinalgBuilders.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

using namespace mlir;

namespace kiln::lowering {

SmallVector<Value> dynamicSizesOf(OpBuilder &b, Location loc, Value value) {
  SmallVector<Value> sizes;
  auto type = cast<RankedTensorType>(value.getType());
  for (int64_t i = 0; i < type.getRank(); ++i)
    if (type.isDynamicDim(i))
      sizes.push_back(tensor::DimOp::create(b, loc, value, i));
  return sizes;
}

SmallVector<Value> broadcastDynamicSizes(OpBuilder &b, Location loc,
                                         RankedTensorType type,
                                         ValueRange operands) {
  SmallVector<Value> sizes;
  int64_t rank = type.getRank();
  for (int64_t i = 0; i < rank; ++i) {
    if (!type.isDynamicDim(i))
      continue;
    Value size;
    for (Value operand : operands) {
      auto operandType = cast<RankedTensorType>(operand.getType());
      int64_t j = i - (rank - operandType.getRank());
      if (j >= 0 && operandType.isDynamicDim(j)) {
        size = tensor::DimOp::create(b, loc, operand, j);
        break;
      }
    }
    // Inference only leaves `?` where some operand is dynamic there.
    if (!size)
      size = arith::ConstantIndexOp::create(b, loc, 1);
    sizes.push_back(size);
  }
  return sizes;
}

AffineMap broadcastMap(RankedTensorType operand, RankedTensorType result) {
  MLIRContext *context = operand.getContext();
  int64_t offset = result.getRank() - operand.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t j = 0; j < operand.getRank(); ++j) {
    bool stretched = operand.getDimSize(j) == 1 && result.getDimSize(j + offset) != 1;
    exprs.push_back(stretched ? getAffineConstantExpr(0, context)
                              : getAffineDimExpr(j + offset, context));
  }
  return AffineMap::get(result.getRank(), 0, exprs, context);
}

Value createInit(OpBuilder &b, Location loc, RankedTensorType type,
                 ValueRange dynamicSizes, Value fill) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType(), dynamicSizes);
  if (!fill)
    return empty;
  return linalg::FillOp::create(b, loc, fill, empty).getResult(0);
}

RankedTensorType signlessType(RankedTensorType type) {
  auto integer = dyn_cast<IntegerType>(type.getElementType());
  if (!integer || !integer.isUnsigned())
    return type;
  return type.clone(IntegerType::get(type.getContext(), integer.getWidth()));
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value lowestValue(OpBuilder &b, Location loc, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(floatType, APFloat::getInf(floatType.getFloatSemantics(),
                                                  /*Negative=*/true)));
  unsigned width = type.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, APInt::getSignedMinValue(width)));
}

Value highestValue(OpBuilder &b, Location loc, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(floatType, APFloat::getInf(floatType.getFloatSemantics())));
  unsigned width = type.getIntOrFloatBitWidth();
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(type, APInt::getSignedMaxValue(width)));
}

namespace {
/// The first ONNX node name in `loc` (importer locations are NameLocs).
std::string nodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string name = nodeName(inner); !name.empty())
        return name;
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return nodeName(callSite.getCallee());
  return "";
}
} // namespace

std::string describeNode(StringRef what, Location loc) {
  std::string name = nodeName(loc);
  return name.empty() ? what.str() : (what + " '" + name + "'").str();
}

void emitCheck(OpBuilder &b, Location loc, Value ok, Value got, Value expected,
               StringRef message) {
  if (std::optional<int64_t> known = getConstantIntValue(ok); known && *known != 0)
    return; // i1 true reads as -1
  auto call = func::CallOp::create(b, loc, kCheckFunctionName, TypeRange{},
                                   ValueRange{ok, got, expected});
  call->setAttr(kCheckMessageAttr, b.getStringAttr(message));
}

void emitDimCheck(OpBuilder &b, Location loc, OpFoldResult got, OpFoldResult expected,
                  StringRef where) {
  if (got == expected)
    return;
  std::optional<int64_t> gotConstant = getConstantIntValue(got);
  std::optional<int64_t> expectedConstant = getConstantIntValue(expected);
  if (gotConstant && expectedConstant)
    return; // static shapes were checked at compile time
  Value gotValue = getValueOrCreateConstantIndexOp(b, loc, got);
  Value expectedValue = getValueOrCreateConstantIndexOp(b, loc, expected);
  Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, gotValue, expectedValue);
  emitCheck(b, loc, ok, gotValue, expectedValue,
            ("dim mismatch in " + where + ": {0} vs {1}").str());
}

Value buildElementwise(
    OpBuilder &b, Location loc, RankedTensorType result, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body, StringRef what) {
  SmallVector<AffineMap> maps;
  for (Value input : inputs)
    maps.push_back(broadcastMap(cast<RankedTensorType>(input.getType()), result));
  maps.push_back(b.getMultiDimIdentityMap(result.getRank()));
  SmallVector<Value> dynamicSizes = broadcastDynamicSizes(b, loc, result, inputs);
  // Each dynamic input dim that is not broadcast must equal the result's.
  int64_t rank = result.getRank();
  for (int64_t i = 0, dynamicIndex = 0; i < rank; ++i) {
    OpFoldResult size = result.isDynamicDim(i) ? OpFoldResult(dynamicSizes[dynamicIndex++])
                                               : b.getIndexAttr(result.getDimSize(i));
    for (auto [k, input] : llvm::enumerate(inputs)) {
      auto type = cast<RankedTensorType>(input.getType());
      int64_t j = i - (rank - type.getRank());
      if (j < 0 || !type.isDynamicDim(j))
        continue;
      // The result size was read from this very dim: nothing to compare.
      if (auto source = dyn_cast_if_present<Value>(size))
        if (auto sourceDim = source.getDefiningOp<tensor::DimOp>())
          if (sourceDim.getSource() == input &&
              getConstantIntValue(sourceDim.getIndex()) == j)
            continue;
      Value dim = tensor::DimOp::create(b, loc, input, j);
      emitDimCheck(b, loc, dim, size,
                   describeNode(what, loc) + " (dim " + std::to_string(i) + " of operand " +
                       std::to_string(k) + ")");
    }
  }
  Value init = createInit(b, loc, result, dynamicSizes);
  SmallVector<utils::IteratorType> iterators(result.getRank(),
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, result, inputs, init, maps, iterators,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value value = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, value);
      });
  return generic.getResult(0);
}

SmallVector<ReassociationIndices> unitDimGroups(int64_t rank,
                                                ArrayRef<int64_t> unitDims) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t i = 0; i < rank; ++i) {
    pending.push_back(i);
    if (!llvm::is_contained(unitDims, i)) {
      groups.push_back(pending);
      pending.clear();
    }
  }
  if (groups.empty())
    return {};
  groups.back().append(pending.begin(), pending.end());
  return groups;
}

Value padSpatial(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> begins,
                 ArrayRef<int64_t> ends, Value value) {
  if (llvm::all_of(begins, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(ends, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  if (llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic)) {
    SmallVector<int64_t> shape(type.getShape());
    SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)), sizes;
    for (auto [i, lo, hi] : llvm::enumerate(begins, ends)) {
      shape[i + 2] += lo + hi;
      offsets.push_back(b.getIndexAttr(lo));
    }
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < type.getRank(); ++i)
      sizes.push_back(type.isDynamicDim(i) ? OpFoldResult(tensor::DimOp::create(b, loc, input, i).getResult())
                                           : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
    if (type.isDynamicDim(0))
      dynamicSizes.push_back(cast<Value>(sizes.front()));
    Value padded = createInit(b, loc, type.clone(shape), dynamicSizes, value);
    return tensor::InsertSliceOp::create(b, loc, input, padded, offsets, sizes,
                                         SmallVector<OpFoldResult>(type.getRank(),
                                                                   b.getIndexAttr(1)));
  }
  SmallVector<OpFoldResult> low = {b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> high = low;
  for (auto [lo, hi] : llvm::zip(begins, ends)) {
    low.push_back(b.getIndexAttr(lo));
    high.push_back(b.getIndexAttr(hi));
  }
  return tensor::PadOp::create(b, loc, Type(), input, low, high, value);
}

SmallVector<Value> batchDynamicSize(OpBuilder &b, Location loc, RankedTensorType result,
                                    Value input) {
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < result.getRank(); ++i)
    if (result.isDynamicDim(i))
      sizes.push_back(tensor::DimOp::create(b, loc, input, i));
  return sizes;
}

} // namespace kiln::lowering
