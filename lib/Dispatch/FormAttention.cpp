//===- FormAttention.cpp - The head merge joins the attention kernel ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Part of kiln-form-dispatches: a kiln.attention_kernel whose only user is
// the head merge transpose ([B, H, Sq, D] -> [B, Sq, H, D], a linalg
// generic that only permutes, or linalg.transpose) writes the merged layout
// itself (merge_heads): one dispatch instead of two.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dispatch/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace kiln {

namespace {

/// Whether `op` (one input, one init) computes out[b, s, h, d] = in[b, h, s, d].
bool isHeadMerge(Operation *op) {
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.getPermutation() == ArrayRef<int64_t>{0, 2, 1, 3};
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 4 || generic.getNumReductionLoops() != 0)
    return false;
  Block *body = generic.getBody();
  if (body->getOperations().size() != 1 ||
      body->getTerminator()->getOperand(0) != body->getArgument(0))
    return false;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  MLIRContext *context = generic.getContext();
  auto dims = [&](ArrayRef<unsigned> order) {
    return AffineMap::getPermutationMap(order, context);
  };
  // in indexed by loops (b, h, s, d) where out is (b, s, h, d), whatever the
  // loop order: compose in's map with the inverse of out's.
  if (!maps[0].isPermutation() || !maps[1].isPermutation())
    return false;
  AffineMap inFromOut = maps[0].compose(inversePermutation(maps[1]));
  return inFromOut == dims({0, 2, 1, 3});
}

} // namespace

void mergeHeadsIntoAttention(func::FuncOp func) {
  SmallVector<AttentionKernelOp> kernels;
  func.walk([&](AttentionKernelOp op) {
    if (!op.getMergeHeads() && op.getNumResults() == 1 && op.getResult()[0].hasOneUse())
      kernels.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  for (AttentionKernelOp op : kernels) {
    Operation *user = *op.getResult()[0].getUsers().begin();
    if (!isHeadMerge(user))
      continue;
    auto linalgUser = cast<linalg::LinalgOp>(user);
    auto type = dyn_cast<RankedTensorType>(linalgUser.getDpsInits()[0].getType());
    if (!type || !type.hasStaticShape())
      continue;
    rewriter.setInsertionPoint(op);
    Value init = tensor::EmptyOp::create(rewriter, op.getLoc(), type.getShape(),
                                         type.getElementType());
    auto merged = AttentionKernelOp::create(
        rewriter, op.getLoc(), TypeRange{init.getType()}, op.getQuery(), op.getKey(),
        op.getValue(), op.getMask(), init, op.getScaleAttr(), op.getIsCausalAttr(),
        rewriter.getUnitAttr());
    merged->setLoc(rewriter.getFusedLoc({op.getLoc(), user->getLoc()}));
    rewriter.replaceOp(user, merged.getResult()[0]);
    rewriter.eraseOp(op);
  }
}

} // namespace kiln
