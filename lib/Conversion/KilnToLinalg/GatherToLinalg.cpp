//===- GatherToLinalg.cpp - kiln gather family -> linalg ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// gather, gather_elements and gather_nd become linalg.generics that extract
// from the input at computed coordinates. Indices are wrapped (negative
// counts from the end) and clamped into range, so a hostile index never reads
// outside the tensor; gather and gather_elements also check their indices at
// run time unless the target cannot (`indexChecks`).
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln {
namespace {

using lowering::createInit;
/// An ONNX index into a dim of `size`: negative values count from the end,
/// and the result is clamped into [0, size - 1] so that a hostile index never
/// reads outside the tensor.
Value wrapAndClampIndex(OpBuilder &b, Location loc, Value index, Value size) {
  index = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, index, zero);
  index = arith::SelectOp::create(b, loc, negative, arith::AddIOp::create(b, loc, index, size),
                                  index);
  Value last = arith::SubIOp::create(b, loc, size, arith::ConstantIndexOp::create(b, loc, 1));
  return arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, index, last), zero);
}

/// Fails the run unless every index is in [-size, size), as ONNX requires
/// (the lowering also clamps them, so a bad index never reads outside the
/// input): one reduction of the indices to their minimum and maximum, then
/// two run-time checks. Nothing for constant indices.
void checkIndexRange(OpBuilder &b, Location loc, Value indices, Value size, StringRef what) {
  if (matchPattern(indices, m_Constant()))
    return;
  auto type = cast<RankedTensorType>(indices.getType());
  Type element = type.getElementType();
  int64_t rank = type.getRank();
  Value low, high;
  if (rank == 0) {
    low = high = tensor::ExtractOp::create(b, loc, indices, ValueRange{});
  } else {
    auto scalarType = RankedTensorType::get({}, element);
    Value lowInit = createInit(b, loc, scalarType, {}, lowering::highestValue(b, loc, element));
    Value highInit = createInit(b, loc, scalarType, {}, lowering::lowestValue(b, loc, element));
    AffineMap scalarMap = AffineMap::get(rank, 0, {}, b.getContext());
    SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank), scalarMap, scalarMap};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::reduction);
    auto range = linalg::GenericOp::create(
        b, loc, TypeRange{scalarType, scalarType}, indices, ValueRange{lowInit, highInit},
        maps, iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value min = arith::MinSIOp::create(nb, nl, args[0], args[1]);
          Value max = arith::MaxSIOp::create(nb, nl, args[0], args[2]);
          linalg::YieldOp::create(nb, nl, ValueRange{min, max});
        });
    low = tensor::ExtractOp::create(b, loc, range.getResult(0), ValueRange{});
    high = tensor::ExtractOp::create(b, loc, range.getResult(1), ValueRange{});
  }
  low = arith::IndexCastOp::create(b, loc, b.getIndexType(), low);
  high = arith::IndexCastOp::create(b, loc, b.getIndexType(), high);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value lowest = arith::SubIOp::create(b, loc, zero, size);
  std::string message =
      "index {0} out of range [-{1}, {1}) in " + lowering::describeNode(what, loc);
  lowering::emitCheck(b, loc,
                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, high, size),
                      high, size, message);
  lowering::emitCheck(b, loc,
                      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, low, lowest),
                      low, size, message);
}

// out[a..., i..., b...] = input[a..., clamp(wrap(indices[i...])), b...]
struct GatherToLinalg final : OpConversionPattern<GatherOp> {
  GatherToLinalg(MLIRContext *context, bool indexChecks)
      : OpConversionPattern(context), indexChecks(indexChecks) {}
  bool indexChecks; // see populateGatherToLinalgPatterns
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto indicesType = cast<RankedTensorType>(indices.getType());
    RankedTensorType result = op.getType();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += inputType.getRank();
    int64_t indexRank = indicesType.getRank();
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineExpr> indexExprs;
    for (int64_t j = 0; j < indexRank; ++j)
      indexExprs.push_back(getAffineDimExpr(axis + j, context));
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < result.getRank(); ++i) {
      if (!result.isDynamicDim(i))
        continue;
      bool fromIndices = i >= axis && i < axis + indexRank;
      dynamicSizes.push_back(
          fromIndices ? tensor::DimOp::create(rewriter, loc, indices, i - axis).getResult()
                      : tensor::DimOp::create(rewriter, loc, input,
                                              i < axis ? i : i - indexRank + 1)
                            .getResult());
    }
    Value init = createInit(rewriter, loc, result, dynamicSizes);
    SmallVector<AffineMap> maps = {
        AffineMap::get(result.getRank(), 0, indexExprs, context),
        rewriter.getMultiDimIdentityMap(result.getRank())};
    SmallVector<utils::IteratorType> iterators(result.getRank(),
                                               utils::IteratorType::parallel);
    Value axisSize = tensor::DimOp::create(rewriter, loc, input, axis);
    if (indexChecks)
      checkIndexRange(rewriter, loc, indices, axisSize, "gather");
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, indices, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value index = wrapAndClampIndex(b, l, args[0], axisSize);
          SmallVector<Value> coords;
          for (int64_t i = 0; i < inputType.getRank(); ++i) {
            if (i < axis)
              coords.push_back(linalg::IndexOp::create(b, l, i));
            else if (i == axis)
              coords.push_back(index);
            else
              coords.push_back(linalg::IndexOp::create(b, l, i + indexRank - 1));
          }
          linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, input, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

// out[i...] = input[i... with axis replaced by clamp(wrap(indices[i...]))]
struct GatherElementsToLinalg final : OpConversionPattern<GatherElementsOp> {
  GatherElementsToLinalg(MLIRContext *context, bool indexChecks)
      : OpConversionPattern(context), indexChecks(indexChecks) {}
  bool indexChecks; // see populateGatherToLinalgPatterns
  LogicalResult
  matchAndRewrite(GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    RankedTensorType result = op.getType();
    int64_t rank = result.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    Value init = createInit(rewriter, loc, result, lowering::dynamicSizesOf(rewriter, loc, indices));
    SmallVector<AffineMap> maps(2, rewriter.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    Value axisSize = tensor::DimOp::create(rewriter, loc, input, axis);
    if (indexChecks)
      checkIndexRange(rewriter, loc, indices, axisSize, "gather_elements");
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, indices, init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value index = wrapAndClampIndex(b, l, args[0], axisSize);
          SmallVector<Value> coords;
          for (int64_t i = 0; i < rank; ++i)
            coords.push_back(i == axis ? index : linalg::IndexOp::create(b, l, i).getResult());
          linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, input, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

// out[p..., t...] = input[p[:b]..., clamp(wrap(indices[p..., j])) for j < k, t...]
struct GatherNDToLinalg final : OpConversionPattern<GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), indices = adaptor.getIndices();
    auto indicesType = cast<RankedTensorType>(indices.getType());
    RankedTensorType result = op.getType();
    int64_t rank = result.getRank(), prefix = indicesType.getRank() - 1;
    int64_t batchDims = static_cast<int64_t>(op.getBatchDims());
    int64_t k = indicesType.getShape().back();
    SmallVector<Value> dynamicSizes;
    for (int64_t i = 0; i < rank; ++i)
      if (result.isDynamicDim(i))
        dynamicSizes.push_back(
            i < prefix ? tensor::DimOp::create(rewriter, loc, indices, i).getResult()
                       : tensor::DimOp::create(rewriter, loc, input, batchDims + k + i - prefix)
                             .getResult());
    Value init = createInit(rewriter, loc, result, dynamicSizes);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, ValueRange{}, init,
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank)}, iterators,
        [&](OpBuilder &b, Location l, ValueRange) {
          SmallVector<Value> loops;
          for (int64_t i = 0; i < rank; ++i)
            loops.push_back(linalg::IndexOp::create(b, l, i));
          SmallVector<Value> coords(loops.begin(), loops.begin() + batchDims);
          for (int64_t j = 0; j < k; ++j) {
            SmallVector<Value> at(loops.begin(), loops.begin() + prefix);
            at.push_back(arith::ConstantIndexOp::create(b, l, j));
            Value size = tensor::DimOp::create(b, l, input, batchDims + j);
            coords.push_back(wrapAndClampIndex(
                b, l, tensor::ExtractOp::create(b, l, indices, at), size));
          }
          coords.append(loops.begin() + prefix, loops.end());
          linalg::YieldOp::create(b, l, tensor::ExtractOp::create(b, l, input, coords).getResult());
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void populateGatherToLinalgPatterns(RewritePatternSet &patterns, bool indexChecks) {
  patterns.add<GatherToLinalg, GatherElementsToLinalg>(patterns.getContext(), indexChecks);
  patterns.add<GatherNDToLinalg>(patterns.getContext());
}

} // namespace kiln
