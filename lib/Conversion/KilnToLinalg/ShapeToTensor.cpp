//===- ShapeToTensor.cpp - kiln data movement and shape ops -> tensor/linalg ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Reshapes become tensor.reshape / collapse_shape / expand_shape (views after
// bufferization), ranges with run-time bounds a linalg.generic over
// linalg.index, slices and concatenation extract_slice / insert_slice,
// transposes linalg.transpose, broadcasts linalg.generics. The gather family
// is in GatherToLinalg.cpp.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "LinalgBuilders.h"
#include "ReshapeViews.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

using namespace mlir;

namespace kiln {
namespace {

using lowering::createInit;
using lowering::reshapeTo;

/// The value of entry `i` of a 1-D i64 shape tensor, as an index.
Value shapeEntry(OpBuilder &b, Location loc, Value shape, int64_t i) {
  Value element = tensor::ExtractOp::create(
      b, loc, shape, ValueRange{arith::ConstantIndexOp::create(b, loc, i)});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), element);
}

/// init[i...] = input[readMap(i...)]: a copy generic that broadcasts or
/// tiles, depending on the map.
Value copyThroughMap(OpBuilder &b, Location loc, Value input, Value init, AffineMap readMap) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<AffineMap> maps = {readMap, b.getMultiDimIdentityMap(type.getRank())};
  SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
  return linalg::GenericOp::create(b, loc, type, input, init, maps, iterators,
                                   [](OpBuilder &nb, Location l, ValueRange args) {
                                     linalg::YieldOp::create(nb, l, args[0]);
                                   })
      .getResult(0);
}

struct ReshapeToTensor final : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Unsigned results (ui8) are signless after the conversion, like the input.
    Value result = reshapeTo(rewriter, op.getLoc(), adaptor.getInput(),
                             lowering::signlessType(op.getType()), adaptor.getShape());
    if (!result)
      return lowering::failLowering(rewriter, op, "dynamic result without shape operand");
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct FlattenToTensor final : OpConversionPattern<FlattenOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(FlattenOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    int64_t rank = inputType.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    if (op.getType().hasStaticShape()) {
      rewriter.replaceOp(op, reshapeTo(rewriter, op.getLoc(), adaptor.getInput(),
                                       op.getType(), Value()));
      return success();
    }
    if (axis == 0 || axis == rank) {
      // [1, N] or [N, 1]: every dim collapsed into N, then the unit dim added.
      Value all = adaptor.getInput();
      if (rank != 1) {
        ReassociationIndices every = llvm::to_vector(llvm::seq<int64_t>(0, rank));
        auto flat = RankedTensorType::get({ShapedType::kDynamic}, inputType.getElementType());
        all = tensor::CollapseShapeOp::create(rewriter, op.getLoc(), flat, all,
                                              ArrayRef<ReassociationIndices>{every});
      }
      rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
          op, op.getType(), all, lowering::unitDimGroups(2, {axis == 0 ? 0 : 1}));
      return success();
    }
    ReassociationIndices front, back;
    for (int64_t i = 0; i < rank; ++i)
      (i < axis ? front : back).push_back(i);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, op.getType(), adaptor.getInput(), ArrayRef<ReassociationIndices>{front, back});
    return success();
  }
};

struct SqueezeToTensor final : OpConversionPattern<SqueezeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SqueezeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    SmallVector<int64_t> unit;
    for (int64_t i = 0; i < inputType.getRank(); ++i)
      if (op.getAxes().empty() ? inputType.getDimSize(i) == 1
                               : llvm::any_of(op.getAxes(), [&](int64_t a) {
                                   return (a < 0 ? a + inputType.getRank() : a) == i;
                                 }))
        unit.push_back(i);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        op, op.getType(), adaptor.getInput(),
        lowering::unitDimGroups(inputType.getRank(), unit));
    return success();
  }
};

struct UnsqueezeToTensor final : OpConversionPattern<UnsqueezeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(UnsqueezeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t rank = op.getType().getRank();
    SmallVector<int64_t> unit;
    for (int64_t a : op.getAxes())
      unit.push_back(a < 0 ? a + rank : a);
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        op, op.getType(), adaptor.getInput(), lowering::unitDimGroups(rank, unit));
    return success();
  }
};

struct ExpandToLinalg final : OpConversionPattern<ExpandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < result.getRank(); ++i)
      if (result.isDynamicDim(i))
        dynamicSizes.push_back(shapeEntry(rewriter, loc, adaptor.getShape(), i));
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    Value init = createInit(rewriter, loc, result, dynamicSizes);
    rewriter.replaceOp(op, copyThroughMap(rewriter, loc, adaptor.getInput(), init,
                                          lowering::broadcastMap(inputType, result)));
    return success();
  }
};

struct TransposeToLinalg final : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    if (Value view = lowering::bufferizesContiguous(op.getInput())
                         ? lowering::unitDimsMoved(rewriter, loc, adaptor.getInput(),
                                                   op.getPerm(), lowering::signlessType(result))
                         : Value()) {
      rewriter.replaceOp(op, view);
      return success();
    }
    SmallVector<Value> dynamicSizes;
    for (auto [i, p] : llvm::enumerate(op.getPerm()))
      if (result.isDynamicDim(i))
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, adaptor.getInput(), p));
    Value init = createInit(rewriter, loc, result, dynamicSizes);
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, loc, adaptor.getInput(),
                                                       init, op.getPerm())
                               .getResult()[0]);
    return success();
  }
};

/// a + b, folded to a constant when both are.
OpFoldResult addIndex(OpBuilder &b, Location loc, OpFoldResult x, OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx + *cy);
  return arith::AddIOp::create(b, loc, getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

/// Sizes of every dim of `value` as OpFoldResults (static where known).
SmallVector<OpFoldResult> mixedSizes(OpBuilder &b, Location loc, Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

struct ConcatToTensor final : OpConversionPattern<ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = lowering::signlessType(op.getType());
    int64_t rank = result.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    ValueRange inputs = adaptor.getInputs();
    // Result dims: the first input's, with the axis summed over all inputs.
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<Value> dynamicSizes;
    OpFoldResult total = rewriter.getIndexAttr(0);
    for (Value input : inputs)
      total = addIndex(rewriter, loc, total, mixedSizes(rewriter, loc, input)[axis]);
    for (int64_t i = 0; i < rank; ++i) {
      if (!result.isDynamicDim(i))
        continue;
      dynamicSizes.push_back(i == axis ? getValueOrCreateConstantIndexOp(rewriter, loc, total)
                                       : tensor::DimOp::create(rewriter, loc,
                                                               inputs.front(), i)
                                             .getResult());
    }
    // Every other dim of every input must be the result's (run-time check
    // where one side is dynamic).
    std::string where = lowering::describeNode("concat", loc);
    for (auto [k, input] : llvm::enumerate(inputs)) {
      auto type = cast<RankedTensorType>(input.getType());
      for (int64_t i = 0, dynamicIndex = 0; i < rank; ++i) {
        bool dynamicResult = result.isDynamicDim(i);
        OpFoldResult size = dynamicResult ? OpFoldResult(dynamicSizes[dynamicIndex++])
                                          : rewriter.getIndexAttr(result.getDimSize(i));
        if (i == axis || (k == 0 && dynamicResult) || (!type.isDynamicDim(i) && !dynamicResult))
          continue;
        lowering::emitDimCheck(rewriter, loc, tensor::getMixedSize(rewriter, loc, input, i),
                               size,
                               where + " (dim " + std::to_string(i) + " of input " +
                                   std::to_string(k) + ")");
      }
    }
    Value acc = createInit(rewriter, loc, result, dynamicSizes);
    OpFoldResult offset = rewriter.getIndexAttr(0);
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    for (Value input : inputs) {
      // An input with no elements along the axis adds nothing (and may sit at
      // the end, where insert_slice cannot).
      if (cast<RankedTensorType>(input.getType()).getDimSize(axis) == 0)
        continue;
      SmallVector<OpFoldResult> sizes = mixedSizes(rewriter, loc, input);
      offsets[axis] = offset;
      acc = tensor::InsertSliceOp::create(rewriter, loc, input, acc, offsets, sizes, strides);
      offset = addIndex(rewriter, loc, offset, sizes[axis]);
    }
    rewriter.replaceOp(op, acc);
    return success();
  }
};

/// Clamped start of a Python slice with a positive step on a dim of `size`.
int64_t clampStart(int64_t start, int64_t size) {
  if (start < 0)
    start = start < -size ? 0 : start + size;
  return std::min(start, size);
}

struct SliceToTensor final : OpConversionPattern<SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    int64_t rank = result.getRank();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    // An empty slice reads nothing (its start may lie past the end, which
    // extract_slice does not allow).
    if (result.hasStaticShape() && result.getNumElements() == 0) {
      rewriter.replaceOp(op, createInit(rewriter, loc, lowering::signlessType(result), {}));
      return success();
    }
    if (llvm::any_of(op.getSteps(), [](int64_t step) { return step < 0; }))
      return reversedSlice(op, adaptor, rewriter);
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes = mixedSizes(rewriter, loc, adaptor.getInput());
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    for (auto [i, axis] : llvm::enumerate(op.getAxes())) {
      int64_t dim = axis < 0 ? axis + rank : axis;
      int64_t step = op.getSteps()[i];
      if (step <= 0 || inputType.isDynamicDim(dim))
        return lowering::failLowering(rewriter, op, "negative step or dynamic sliced dim");
      offsets[dim] = rewriter.getIndexAttr(clampStart(op.getStarts()[i],
                                                      inputType.getDimSize(dim)));
      sizes[dim] = rewriter.getIndexAttr(result.getDimSize(dim));
      strides[dim] = rewriter.getIndexAttr(step);
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, lowering::signlessType(result),
                                                        adaptor.getInput(), offsets, sizes,
                                                        strides);
    return success();
  }

  /// A slice with a negative step as a gather: out[i] reads
  /// input[start + i * step] along each sliced dim, the start clamped into
  /// [0, size - 1] as ONNX does for negative steps (into [0, size] for
  /// positive ones).
  LogicalResult reversedSlice(SliceOp op, OpAdaptor adaptor,
                              ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    RankedTensorType result = lowering::signlessType(op.getType());
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    if (!inputType.hasStaticShape() || !result.hasStaticShape())
      return lowering::failLowering(rewriter, op, "negative steps need static shapes");
    int64_t rank = result.getRank();
    SmallVector<int64_t> starts(rank, 0), steps(rank, 1);
    for (auto [i, axis] : llvm::enumerate(op.getAxes())) {
      int64_t dim = axis < 0 ? axis + rank : axis;
      int64_t size = inputType.getDimSize(dim), step = op.getSteps()[i];
      int64_t start = op.getStarts()[i];
      if (step > 0) {
        start = clampStart(start, size);
      } else {
        if (start < 0)
          start += size;
        start = std::clamp<int64_t>(start, 0, size - 1);
      }
      starts[dim] = start, steps[dim] = step;
    }
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(rewriter.getAffineDimExpr(d) * steps[d] + starts[d]);
    Value init = createInit(rewriter, loc, result, {});
    SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, exprs, rewriter.getContext()),
                                   rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    rewriter.replaceOp(op, linalg::GenericOp::create(
                               rewriter, loc, result, adaptor.getInput(), init, maps,
                               iterators,
                               [](OpBuilder &b, Location l, ValueRange args) {
                                 linalg::YieldOp::create(b, l, args[0]);
                               })
                               .getResults());
    return success();
  }
};

struct SplitToTensor final : OpConversionPattern<SplitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    SmallVector<Value> pieces;
    int64_t offset = 0;
    for (auto [size, type] : llvm::zip(op.getSizes(), op.getResultTypes())) {
      SmallVector<OpFoldResult> sizes = mixedSizes(rewriter, loc, input);
      sizes[axis] = rewriter.getIndexAttr(size);
      // An empty piece reads nothing (extract_slice rejects any offset into
      // an empty dim, and one at the end of a full dim).
      if (size == 0) {
        auto pieceType = lowering::signlessType(cast<RankedTensorType>(type));
        SmallVector<Value> dynamicSizes;
        for (int64_t d = 0; d < rank; ++d)
          if (pieceType.isDynamicDim(d))
            dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, d));
        pieces.push_back(createInit(rewriter, loc, pieceType, dynamicSizes));
        continue;
      }
      offsets[axis] = rewriter.getIndexAttr(offset);
      pieces.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, cast<RankedTensorType>(type), input, offsets, sizes, strides));
      offset += size;
    }
    rewriter.replaceOp(op, pieces);
    return success();
  }
};


struct ShapeToTensorOps final : OpConversionPattern<ShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ShapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t rank = cast<RankedTensorType>(adaptor.getInput().getType()).getRank();
    auto clamp = [&](int64_t v) {
      if (v < 0)
        v += rank;
      return std::min(std::max<int64_t>(v, 0), rank);
    };
    int64_t start = clamp(op.getStart().value_or(0));
    int64_t end = std::max(start, clamp(op.getEnd().value_or(rank)));
    SmallVector<Value> dims;
    for (int64_t i = start; i < end; ++i)
      dims.push_back(arith::IndexCastOp::create(
          rewriter, loc, rewriter.getI64Type(),
          tensor::DimOp::create(rewriter, loc, adaptor.getInput(), i)));
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(), dims);
    return success();
  }
};

struct SizeToTensorOps final : OpConversionPattern<SizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value count = arith::ConstantIndexOp::create(rewriter, loc, 1);
    int64_t rank = cast<RankedTensorType>(adaptor.getInput().getType()).getRank();
    for (int64_t i = 0; i < rank; ++i)
      count = arith::MulIOp::create(rewriter, loc, count,
                                    tensor::DimOp::create(rewriter, loc, adaptor.getInput(), i));
    Value asI64 = arith::IndexCastOp::create(rewriter, loc, rewriter.getI64Type(), count);
    rewriter.replaceOpWithNewOp<tensor::FromElementsOp>(op, op.getType(), asI64);
    return success();
  }
};

/// The input index that output index `out` reads along a dim of `size` (> 0)
/// elements padded by `begin` in front, for the border modes: edge clamps,
/// wrap takes `j mod size`, reflect mirrors about the end elements (period
/// 2 * (size - 1), as numpy.pad repeats it for pads longer than the dim).
Value borderIndex(OpBuilder &b, Location loc, PadMode mode, Value out, int64_t begin,
                  int64_t size) {
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value j = arith::SubIOp::create(b, loc, out, index(begin));
  // Non-negative remainder of j by a positive divisor.
  auto positiveMod = [&](int64_t divisor) -> Value {
    Value rem = arith::RemSIOp::create(b, loc, j, index(divisor));
    Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem, index(0));
    return arith::SelectOp::create(b, loc, negative,
                                   arith::AddIOp::create(b, loc, rem, index(divisor)), rem);
  };
  switch (mode) {
  case PadMode::edge:
    return arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, j, index(size - 1)),
                                  index(0));
  case PadMode::wrap:
    return positiveMod(size);
  case PadMode::reflect: {
    if (size == 1) // A dim of one element reflects onto itself.
      return index(0);
    int64_t period = 2 * (size - 1);
    Value m = positiveMod(period);
    Value beyond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, m, index(size - 1));
    return arith::SelectOp::create(b, loc, beyond,
                                   arith::SubIOp::create(b, loc, index(period), m), m);
  }
  case PadMode::constant:
    break;
  }
  return j;
}

/// Padding as a gather: out[i...] = input[src(i)...], where each dim maps its
/// index through borderIndex (reflect, edge, wrap), or, for constant mode with
/// negative pads (crops), reads input[i - begin] when that is in range and
/// the fill value otherwise.
Value padAsGather(OpBuilder &b, Location loc, PadOp op, Value input) {
  RankedTensorType result = lowering::signlessType(op.getType());
  int64_t rank = result.getRank();
  ArrayRef<int64_t> pads = op.getPads();
  PadMode mode = op.getMode();
  Value init = createInit(b, loc, result, {});
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  ArrayRef<int64_t> sizes = cast<RankedTensorType>(input.getType()).getShape();
  Value fill = lowering::scalarConstant(b, loc, result.getElementType(),
                                        op.getValue().convertToDouble());
  return linalg::GenericOp::create(
             b, loc, result, ValueRange{}, init, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange) {
               SmallVector<Value> coords;
               Value inside;
               for (int64_t i = 0; i < rank; ++i) {
                 Value out = linalg::IndexOp::create(nb, l, i);
                 if (mode != PadMode::constant) {
                   coords.push_back(borderIndex(nb, l, mode, out, pads[i], sizes[i]));
                   continue;
                 }
                 Value j = arith::SubIOp::create(
                     nb, l, out, arith::ConstantIndexOp::create(nb, l, pads[i]));
                 Value zero = arith::ConstantIndexOp::create(nb, l, 0);
                 Value size = arith::ConstantIndexOp::create(nb, l, sizes[i]);
                 Value ok = arith::AndIOp::create(
                     nb, l,
                     arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, j, zero),
                     arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, j, size));
                 inside = inside ? arith::AndIOp::create(nb, l, inside, ok).getResult() : ok;
                 // Clamped so that the read stays in bounds; the select drops it.
                 Value last = arith::ConstantIndexOp::create(nb, l, sizes[i] - 1);
                 coords.push_back(arith::MaxSIOp::create(
                     nb, l, arith::MinSIOp::create(nb, l, j, last), zero));
               }
               Value value = tensor::ExtractOp::create(nb, l, input, coords);
               if (inside)
                 value = arith::SelectOp::create(nb, l, inside, value, fill);
               linalg::YieldOp::create(nb, l, value);
             })
      .getResult(0);
}

struct PadToTensor final : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ArrayRef<int64_t> pads = op.getPads();
    if (op.getMode() != PadMode::constant ||
        llvm::any_of(pads, [](int64_t p) { return p < 0; })) {
      if (!op.getType().hasStaticShape())
        return lowering::failLowering(rewriter, op, "border modes and crops need a static result");
      auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
      if (!inputType.hasStaticShape())
        return lowering::failLowering(rewriter, op, "border modes and crops need a static input");
      // An empty input has nothing to read: constant mode is all fill, the
      // border modes have no border to copy.
      if (inputType.getNumElements() == 0 && op.getType().getNumElements() != 0) {
        if (op.getMode() != PadMode::constant)
          return lowering::failLowering(rewriter, op, "border modes need a non-empty input");
        Value fill = lowering::scalarConstant(rewriter, op.getLoc(),
                                              lowering::signlessType(op.getType()).getElementType(),
                                              op.getValue().convertToDouble());
        rewriter.replaceOp(op, createInit(rewriter, op.getLoc(),
                                          lowering::signlessType(op.getType()), {}, fill));
        return success();
      }
      rewriter.replaceOp(op, padAsGather(rewriter, op.getLoc(), op, adaptor.getInput()));
      return success();
    }
    int64_t rank = op.getType().getRank();
    SmallVector<OpFoldResult> low, high;
    for (int64_t i = 0; i < rank; ++i) {
      low.push_back(rewriter.getIndexAttr(pads[i]));
      high.push_back(rewriter.getIndexAttr(pads[i + rank]));
    }
    // Unsigned tensors are signless in linalg (a ui8 fill of 128 is the
    // byte 0x80).
    RankedTensorType type = lowering::signlessType(op.getType());
    Value value = lowering::scalarConstant(rewriter, op.getLoc(), type.getElementType(),
                                           op.getValue().convertToDouble());
    rewriter.replaceOpWithNewOp<tensor::PadOp>(op, type, adaptor.getInput(), low, high, value);
    return success();
  }
};

// out[..., d, ...] = index(...) == d ? values[1] : values[0], with d at
// `axis` and negative indices counted from depth; an index outside
// [-depth, depth) matches no d (all off, as ONNX specifies).
struct OneHotToLinalg final : OpConversionPattern<OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = lowering::signlessType(op.getType());
    Value indices = adaptor.getIndices(), values = adaptor.getValues();
    int64_t rank = result.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    auto valuesType = cast<RankedTensorType>(values.getType());
    if (valuesType.getRank() != 1 || valuesType.getDimSize(0) != 2)
      return lowering::failLowering(rewriter, op, "values must be a static [off, on] pair");
    SmallVector<AffineExpr> indexExprs;
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis)
        indexExprs.push_back(rewriter.getAffineDimExpr(i));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, indexExprs, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < rank; ++i)
      if (result.isDynamicDim(i))
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, indices, i < axis ? i : i - 1));
    Value init = createInit(rewriter, loc, result, dynamicSizes);
    int64_t depth = static_cast<int64_t>(op.getDepth());
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, indices, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Type i64 = b.getI64Type();
          Value index = args[0].getType() == i64
                            ? args[0]
                            : arith::ExtSIOp::create(b, l, i64, args[0]).getResult();
          Value zero = arith::ConstantIntOp::create(b, l, i64, 0);
          Value depthValue = arith::ConstantIntOp::create(b, l, i64, depth);
          Value negative = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index, zero);
          index = arith::SelectOp::create(b, l, negative,
                                          arith::AddIOp::create(b, l, index, depthValue), index);
          Value position = arith::IndexCastOp::create(
              b, l, i64, linalg::IndexOp::create(b, l, axis).getResult());
          Value hot = arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, index, position);
          Value on = tensor::ExtractOp::create(
              b, l, values, ValueRange{arith::ConstantIndexOp::create(b, l, 1)});
          Value off = tensor::ExtractOp::create(
              b, l, values, ValueRange{arith::ConstantIndexOp::create(b, l, 0)});
          linalg::YieldOp::create(b, l, arith::SelectOp::create(b, l, hot, on, off).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

// out[i...] = input[i mod d...]
struct TileToLinalg final : OpConversionPattern<TileOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TileOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    RankedTensorType result = op.getType();
    if (!inputType.hasStaticShape() || !result.hasStaticShape())
      return lowering::failLowering(rewriter, op, "dynamic tile");
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < inputType.getRank(); ++i)
      exprs.push_back(getAffineDimExpr(i, context) % inputType.getDimSize(i));
    Location loc = op.getLoc();
    Value init = createInit(rewriter, loc, result, {});
    rewriter.replaceOp(op, copyThroughMap(rewriter, loc, adaptor.getInput(), init,
                                          AffineMap::get(result.getRank(), 0, exprs, context)));
    return success();
  }
};

struct ConstantOfShapeToFill final : OpConversionPattern<ConstantOfShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOfShapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    if (result.getElementType().isUnsignedInteger())
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < result.getRank(); ++i)
      if (result.isDynamicDim(i))
        dynamicSizes.push_back(shapeEntry(rewriter, loc, adaptor.getShape(), i));
    Value value = arith::ConstantOp::create(rewriter, loc, cast<TypedAttr>(op.getValue()));
    rewriter.replaceOp(op, createInit(rewriter, loc, result, dynamicSizes, value));
    return success();
  }
};

/// The length of kiln.range: max(ceil((limit - start) / delta), 0), as an
/// index (floats in f64). A zero delta gives an empty range, never a trap.
/// The length is not capped: hostile bounds ask for a huge heap allocation at
/// run time, which the runtime refuses under the session's byte limit.
Value rangeLength(OpBuilder &b, Location loc, Value start, Value limit, Value delta) {
  Type type = start.getType();
  if (isa<FloatType>(type)) {
    Type f64 = b.getF64Type();
    auto wide = [&](Value v) {
      return type == f64 ? v : arith::ExtFOp::create(b, loc, f64, v).getResult();
    };
    // Named steps: two op-building arguments of one call would be built in
    // a compiler-dependent order.
    Value wideDelta = wide(delta), wideStart = wide(start), wideLimit = wide(limit);
    Value quotient = arith::DivFOp::create(
        b, loc, arith::SubFOp::create(b, loc, wideLimit, wideStart), wideDelta);
    Value zeroF64 = arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f64), APFloat(0.0));
    Value count = arith::MaximumFOp::create(b, loc, math::CeilOp::create(b, loc, quotient),
                                            zeroF64);
    // NaN (a zero or infinite operand) is not > 0: an empty range.
    Value valid = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, count,
                                        arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f64), APFloat(0.0)));
    Value n = arith::FPToSIOp::create(b, loc, b.getI64Type(), count);
    n = arith::SelectOp::create(b, loc, valid, n, arith::ConstantIntOp::create(b, loc, 0, 64));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), n);
  }
  // Deltas 0 and -1 never reach the division (x86 traps on MIN / -1).
  Value zero = arith::ConstantIntOp::create(b, loc, type, 0);
  Value one = arith::ConstantIntOp::create(b, loc, type, 1);
  Value minusOne = arith::ConstantIntOp::create(b, loc, type, -1);
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, delta, zero);
  Value isMinusOne = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, delta, minusOne);
  Value special = arith::OrIOp::create(b, loc, isZero, isMinusOne);
  Value divisor = arith::SelectOp::create(b, loc, special, one, delta);
  Value difference = arith::SubIOp::create(b, loc, limit, start);
  Value count = arith::CeilDivSIOp::create(b, loc, difference, divisor);
  count = arith::SelectOp::create(b, loc, isMinusOne,
                                  arith::SubIOp::create(b, loc, start, limit), count);
  count = arith::SelectOp::create(b, loc, isZero, zero, arith::MaxSIOp::create(b, loc, count, zero));
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), count);
}

// out[i] = start + i * delta (floats computed in f64, then rounded)
struct RangeToLinalg final : OpConversionPattern<RangeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RankedTensorType result = op.getType();
    Type element = result.getElementType();
    if (element.isUnsignedInteger())
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    Location loc = op.getLoc();
    auto scalar = [&](Value tensor) {
      return tensor::ExtractOp::create(rewriter, loc, tensor, ValueRange{}).getResult();
    };
    Value start = scalar(adaptor.getStart()), delta = scalar(adaptor.getDelta());
    SmallVector<Value> dynamicSizes;
    if (result.isDynamicDim(0))
      dynamicSizes.push_back(
          rangeLength(rewriter, loc, start, scalar(adaptor.getLimit()), delta));
    Value init = createInit(rewriter, loc, result, dynamicSizes);
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(1)};
    auto body = [&](OpBuilder &b, Location l, ValueRange) {
      Value i = linalg::IndexOp::create(b, l, 0);
      Value value;
      if (auto floatType = dyn_cast<FloatType>(element)) {
        Type f64 = b.getF64Type();
        auto wide = [&](Value v) {
          return element == f64 ? v : arith::ExtFOp::create(b, l, f64, v).getResult();
        };
        Value index = arith::SIToFPOp::create(
            b, l, f64, arith::IndexCastOp::create(b, l, b.getI64Type(), i));
        Value scaled = arith::MulFOp::create(b, l, index, wide(delta));
        value = arith::AddFOp::create(b, l, wide(start), scaled);
        if (element != f64)
          value = arith::TruncFOp::create(b, l, element, value);
      } else {
        Value index = arith::IndexCastOp::create(b, l, element, i);
        value = arith::AddIOp::create(b, l, start, arith::MulIOp::create(b, l, index, delta));
      }
      linalg::YieldOp::create(b, l, value);
    };
    rewriter.replaceOp(op, linalg::GenericOp::create(rewriter, loc, result, ValueRange{}, init,
                                                     maps, {utils::IteratorType::parallel}, body)
                               .getResult(0));
    return success();
  }
};

} // namespace

void populateShapeToTensorPatterns(RewritePatternSet &patterns) {
  patterns.add<ReshapeToTensor, FlattenToTensor, SqueezeToTensor, UnsqueezeToTensor,
               ExpandToLinalg, TransposeToLinalg, ConcatToTensor, SliceToTensor,
               SplitToTensor, ShapeToTensorOps, SizeToTensorOps,
               PadToTensor, OneHotToLinalg, TileToLinalg, ConstantOfShapeToFill, RangeToLinalg>(
      patterns.getContext());
}

} // namespace kiln
