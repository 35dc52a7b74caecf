//===- AttentionToLinalg.cpp - kiln.attention -> kiln.attention_kernel ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The graph stage keeps kiln.attention only where the target's attention
// kernel computes it (kiln-decompose-attention with the target policy's
// kernel shapes); here it becomes one destination-style kiln.attention_kernel on tensors. The kernel reads
// the additive mask key-major ([Bm, Hm, Sk, Sqm]): a mask that is the same
// for every query ([.., 1, Sk]) is reshaped (a view), one that varies along
// the queries (GPT-2's causal mask) is transposed by a linalg.transpose,
// which CSE shares between the layers that use the same mask.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

/// `mask` as [Bm, Hm, Sk, Sqm] for the kernel.
Value keyMajorMask(OpBuilder &b, Location loc, Value mask) {
  auto type = cast<RankedTensorType>(mask.getType());
  // Leading unit dims up to rank 4: the first group takes them.
  if (type.getRank() < 4) {
    int64_t missing = 4 - type.getRank();
    SmallVector<int64_t> shape(missing, 1);
    llvm::append_range(shape, type.getShape());
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices first = llvm::to_vector(llvm::seq<int64_t>(0, missing + 1));
    groups.push_back(first);
    for (int64_t d = missing + 1; d < 4; ++d)
      groups.push_back({d});
    mask = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), mask, groups);
    type = cast<RankedTensorType>(mask.getType());
  }
  ArrayRef<int64_t> s = type.getShape();
  auto keyMajor = RankedTensorType::get({s[0], s[1], s[3], s[2]}, type.getElementType());
  if (s[2] == 1) {
    // [Bm, Hm, 1, Sk] and [Bm, Hm, Sk, 1] hold the same elements in order.
    SmallVector<ReassociationIndices> groups = {{0}, {1}, {2, 3}};
    Value rows = tensor::CollapseShapeOp::create(b, loc, mask, groups);
    return tensor::ExpandShapeOp::create(b, loc, keyMajor, rows, groups);
  }
  Value init = tensor::EmptyOp::create(b, loc, keyMajor.getShape(), keyMajor.getElementType());
  return linalg::TransposeOp::create(b, loc, mask, init, ArrayRef<int64_t>{0, 1, 3, 2})
      ->getResult(0);
}

struct AttentionToKernel final : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    // The graph stage kept it for the target's kernel (its policy's
    // kiln::AttentionKernelShapes); the kernel op needs only the layout.
    std::string why = attentionLayoutProblem(
        op, [](Type t) { return isa<FloatType>(t); }, "float");
    if (!why.empty())
      return lowering::failLowering(rewriter, op, why);
    Location loc = op.getLoc();
    auto q = cast<RankedTensorType>(adaptor.getQuery().getType());
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(static_cast<double>(q.getDimSize(3)));
    Value mask = adaptor.getMask() ? keyMajorMask(rewriter, loc, adaptor.getMask()) : Value();
    Value init = tensor::EmptyOp::create(rewriter, loc, q.getShape(), q.getElementType());
    auto kernel = AttentionKernelOp::create(
        rewriter, loc, TypeRange{q}, adaptor.getQuery(), adaptor.getKey(), adaptor.getValue(),
        mask, init, rewriter.getF32FloatAttr(static_cast<float>(scale)),
        op.getIsCausal() ? rewriter.getUnitAttr() : UnitAttr(), UnitAttr());
    rewriter.replaceOp(op, kernel.getResult());
    return success();
  }
};

} // namespace

void populateAttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<AttentionToKernel>(patterns.getContext());
}

} // namespace kiln
