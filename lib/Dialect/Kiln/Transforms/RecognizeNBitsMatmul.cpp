//===- RecognizeNBitsMatmul.cpp - The kiln-recognize-nbits-matmul pass ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A matmul whose weight is a block-quantized constant dequantized in the
// graph (the importer's MatMulNBits with constant weights):
//
//   matmul(a, transpose(slice?(reshape(mul(sub(cast(q), zero), scale)))))
//
// with q [N, blocks, block] (ui8 constant), zero and scale [N, blocks, 1]
// (f32 constants), becomes one kiln.matmul_nbits_kernel over a [M, K]
// (`a` reshaped) for the target's low-bit kernel: the weight stays in its
// integers (4 bits when every value is below 16, else 8) with per-block
// scales and zero points instead of becoming an f32 constant. Only for a
// static `a` of at most `max-rows` rows (M, the product of its leading
// dims): decode-sized products, which stream the weight once; larger ones
// keep the f32 weight and the f32 matmul kernels.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNRECOGNIZENBITSMATMULPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// The dense constant behind `v` with the given shape and element type.
DenseElementsAttr constantOf(Value v, ArrayRef<int64_t> shape, Type element) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return {};
  auto type = cast<ShapedType>(attr.getType());
  if (type.getShape() != shape || type.getElementType() != element)
    return {};
  return attr;
}

/// `op` as a kiln.matmul_nbits_kernel when it has the form.
LogicalResult rewriteNBitsMatmul(MatmulOp op, RewriterBase &rewriter, int64_t maxRows) {
  {
    RankedTensorType aType = tensorOf(op.getLhs());
    Type f32 = rewriter.getF32Type();
    if (aType.getElementType() != f32 || !aType.hasStaticShape() || aType.getRank() < 1)
      return failure();
    auto transpose = op.getRhs().getDefiningOp<TransposeOp>();
    if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{1, 0})
      return failure();
    Value weight = transpose.getInput();
    int64_t k = aType.getShape().back();
    if (auto slice = weight.getDefiningOp<SliceOp>()) {
      if (slice.getStarts() != ArrayRef<int64_t>{0} || slice.getEnds() != ArrayRef<int64_t>{k} ||
          slice.getAxes() != ArrayRef<int64_t>{1} || slice.getSteps() != ArrayRef<int64_t>{1})
        return failure();
      weight = slice.getInput();
    }
    auto reshape = weight.getDefiningOp<ReshapeOp>();
    auto mul = reshape ? reshape.getInput().getDefiningOp<MulOp>() : MulOp();
    auto sub = mul ? mul.getLhs().getDefiningOp<SubOp>() : SubOp();
    auto widen = sub ? sub.getLhs().getDefiningOp<CastOp>() : CastOp();
    if (!widen || tensorOf(mul.getResult()).getRank() != 3 ||
        !tensorOf(mul.getResult()).hasStaticShape())
      return failure();
    ArrayRef<int64_t> shape = tensorOf(mul.getResult()).getShape(); // [N, blocks, block]
    int64_t n = shape[0], blocks = shape[1], block = shape[2];
    SmallVector<int64_t> perBlock = {n, blocks, 1};
    Type ui8 = rewriter.getIntegerType(8, /*isSigned=*/false);
    DenseElementsAttr q = constantOf(widen.getInput(), shape, ui8);
    DenseElementsAttr zero = constantOf(sub.getRhs(), perBlock, f32);
    DenseElementsAttr scale = constantOf(mul.getRhs(), perBlock, f32);
    if (!q || !zero || !scale || tensorOf(reshape.getResult()).getShape() != ArrayRef<int64_t>{n, blocks * block} ||
        (block & (block - 1)) != 0 || blocks * block < k || (blocks - 1) * block >= k)
      return failure();
    int64_t m = aType.getNumElements() / k;
    if (m > maxRows || m == 0)
      return rewriter.notifyMatchFailure(op, "more rows than the low-bit kernel takes");
    bool fourBits = true;
    for (const APInt &v : q.getValues<APInt>())
      fourBits &= v.getZExtValue() < 16;

    Location loc = op.getLoc();
    auto matrix = [&](DenseElementsAttr attr, int64_t cols) {
      auto type = RankedTensorType::get({n, cols}, attr.getElementType());
      return ConstantOp::create(rewriter, loc, attr.reshape(type)).getResult();
    };
    // The kernel's q is signless i8 (read unsigned), as the linalg stage
    // types integers.
    q = q.bitcast(rewriter.getI8Type());
    Value a = ReshapeOp::create(rewriter, loc, RankedTensorType::get({m, k}, f32), op.getLhs(),
                                Value());
    Value init = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{m, n}, f32);
    auto kernel = MatmulNBitsKernelOp::create(
        rewriter, loc, TypeRange{init.getType()}, a, matrix(q, blocks * block),
        matrix(scale, blocks), matrix(zero, blocks), init,
        rewriter.getI64IntegerAttr(fourBits ? 4 : 8), rewriter.getI64IntegerAttr(block));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), kernel.getResult()[0], Value());
    return success();
  }
}

struct KilnRecognizeNBitsMatmulPass final
    : impl::KilnRecognizeNBitsMatmulPassBase<KilnRecognizeNBitsMatmulPass> {
  using Base::Base;
  // One walk, not the greedy driver: its folding would turn the small
  // dequantizations into f32 constants before the matmuls are visited.
  void runOnOperation() override {
    SmallVector<MatmulOp> matmuls;
    getOperation()->walk([&](MatmulOp op) { matmuls.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (MatmulOp op : matmuls) {
      rewriter.setInsertionPoint(op);
      (void)rewriteNBitsMatmul(op, rewriter, maxRows);
    }
  }
};

} // namespace

} // namespace kiln
