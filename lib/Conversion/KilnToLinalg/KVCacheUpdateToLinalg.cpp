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
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

} // namespace

void populateKVCacheUpdateToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<KVCacheUpdateToLinalg>(patterns.getContext());
}

} // namespace kiln
