//===- KVCacheUpdateToLinalg.cpp - kiln.kv_cache_update -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The new rows are inserted into the cache at the offset (a tensor.
// insert_slice, which one-shot bufferization writes in place into the
// cache argument); the past and valid rows are slices of the result, views
// after bufferization. A run whose rows end past the cache's length fails
// its run-time check before anything is written.
//
// kiln.kv_cache_write's row is device data, so it cannot be a slice's
// offset: it is a linalg.generic over the whole cache whose init is the
// cache (one-shot writes it in place), each element the update's where its
// row is the sequence's position and the cache's own elsewhere. It reads
// and writes every cached element (a decode step's cache bytes, small
// beside its weights at batch 1) and needs no check: a position outside
// the cache matches no row.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace kiln {
namespace {

struct KVCacheUpdateToLinalg final : OpConversionPattern<KVCacheUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(KVCacheUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value cache = adaptor.getCache(), update = adaptor.getUpdate();
    auto cacheType = cast<RankedTensorType>(cache.getType());
    int64_t rank = cacheType.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    Value offset = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(),
        tensor::ExtractOp::create(rewriter, loc, adaptor.getOffset(), ValueRange{}));
    Value rows = tensor::DimOp::create(rewriter, loc, update, axis);
    Value end = arith::AddIOp::create(rewriter, loc, offset, rows);
    Value length = arith::ConstantIndexOp::create(rewriter, loc, cacheType.getDimSize(axis));
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value fits = arith::AndIOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule, end, length),
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, offset, zero));
    lowering::emitCheck(rewriter, loc, fits, end, length,
                        lowering::describeNode("kv cache update", loc) +
                            ": rows up to {0} do not fit the cache length {1}");
    // The update's dims off the axis (the cache's may be symbolic there).
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(tensor::getMixedSize(rewriter, loc, update, d));
    offsets[axis] = offset;
    Value updated =
        tensor::InsertSliceOp::create(rewriter, loc, update, cache, offsets, sizes, strides);
    offsets[axis] = rewriter.getIndexAttr(0);
    auto view = [&](OpFoldResult rowsOnAxis, RankedTensorType type) -> Value {
      sizes[axis] = rowsOnAxis;
      auto slice = tensor::ExtractSliceOp::create(
          rewriter, loc, type, updated, offsets, sizes, strides);
      return slice.getResult();
    };
    Value past = view(offset, lowering::signlessType(op.getPast().getType()));
    Value valid = view(end, lowering::signlessType(op.getValid().getType()));
    rewriter.replaceOp(op, {updated, past, valid});
    return success();
  }
};

struct KVCacheWriteToLinalg final : OpConversionPattern<KVCacheWriteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(KVCacheWriteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value cache = adaptor.getCache();
    auto cacheType = cast<RankedTensorType>(cache.getType());
    int64_t rank = cacheType.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    MLIRContext *context = rewriter.getContext();
    SmallVector<AffineExpr> rowOfUpdate;
    for (int64_t d = 0; d < rank; ++d)
      rowOfUpdate.push_back(d == axis ? getAffineConstantExpr(0, context)
                                      : getAffineDimExpr(d, context));
    AffineMap identity = rewriter.getMultiDimIdentityMap(rank);
    AffineMap update = AffineMap::get(rank, 0, rowOfUpdate, context);
    AffineMap position = AffineMap::get(
        rank, 0, {getAffineDimExpr(0, context), getAffineConstantExpr(0, context)}, context);
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{cacheType},
        ValueRange{adaptor.getUpdate(), adaptor.getPositions()}, ValueRange{cache},
        ArrayRef<AffineMap>{update, position, identity}, iterators,
        [&](OpBuilder &b, Location at, ValueRange args) {
          Value row = arith::IndexCastOp::create(b, at, b.getI64Type(),
                                                 linalg::IndexOp::create(b, at, axis));
          Value here = arith::CmpIOp::create(b, at, arith::CmpIPredicate::eq, row, args[1]);
          linalg::YieldOp::create(
              b, at, ValueRange{arith::SelectOp::create(b, at, here, args[0], args[2])});
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void populateKVCacheUpdateToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<KVCacheUpdateToLinalg, KVCacheWriteToLinalg>(patterns.getContext());
}

} // namespace kiln
