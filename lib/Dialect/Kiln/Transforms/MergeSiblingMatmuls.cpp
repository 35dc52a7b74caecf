//===- MergeSiblingMatmuls.cpp - The kiln-merge-sibling-matmuls pass ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A decoder's attention projects one row three times: q, k and v are
// matmuls of the same normalized activation by three constant weights.
// With one row (a decode step) each product streams its weight through one
// short kernel, and the small ones (grouped-query k and v: 1 MB each in a
// 1B Llama) are bound by latency, not bandwidth. Products of one lhs by
// constant weights are one product by the weights concatenated along N
// (folded at compile time), and each former result a slice of its columns:
// contiguous, so a view, when the lhs has a single row. Only where the
// concatenated weight is at most `max-weight-bytes` (kiln-fold-constants'
// limit in the pipeline, which must fold it: a concat left to run time
// would copy every weight every step).
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNMERGESIBLINGMATMULSPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// Whether `lhs` is one row: a static shape whose dims before the last are
/// all 1 (rank >= 2).
bool isOneRow(Value lhs) {
  auto type = dyn_cast<RankedTensorType>(lhs.getType());
  return type && type.hasStaticShape() && type.getRank() >= 2 &&
         llvm::all_of(type.getShape().drop_back(), [](int64_t d) { return d == 1; });
}

/// `op` multiplies its one-row lhs by a constant 2-D weight of `lhs`'s
/// element type.
bool isMergeable(MatmulOp op) {
  auto weight = dyn_cast<RankedTensorType>(op.getRhs().getType());
  auto lhs = cast<RankedTensorType>(op.getLhs().getType());
  return weight && weight.getRank() == 2 && weight.hasStaticShape() &&
         weight.getElementType() == lhs.getElementType() &&
         op.getType().getElementType() == lhs.getElementType() &&
         matchPattern(op.getRhs(), m_Constant());
}

struct KilnMergeSiblingMatmulsPass final
    : impl::KilnMergeSiblingMatmulsPassBase<KilnMergeSiblingMatmulsPass> {
  using Base::Base;

  void runOnOperation() override {
    // The sibling groups: matmuls by a constant, by lhs, in program order.
    llvm::MapVector<Value, SmallVector<MatmulOp>> groups;
    getOperation()->walk([&](MatmulOp op) {
      if (isOneRow(op.getLhs()) && isMergeable(op))
        groups[op.getLhs()].push_back(op);
    });
    DominanceInfo dominance(getOperation());
    for (auto &[lhs, siblings] : groups) {
      // Only siblings in the first one's block (the walk is in program
      // order, so it is the earliest there), their weights defined before it.
      Operation *first = siblings.front();
      llvm::erase_if(siblings, [&](MatmulOp op) {
        return op->getBlock() != first->getBlock() ||
               !dominance.properlyDominates(op.getRhs(), first);
      });
      int64_t bytes = 0;
      for (MatmulOp op : siblings) {
        auto weight = cast<RankedTensorType>(op.getRhs().getType());
        bytes += weight.getNumElements() *
                 std::max<int64_t>(1, weight.getElementTypeBitWidth() / 8);
      }
      if (siblings.size() < 2 || bytes > maxWeightBytes)
        continue;
      merge(siblings);
    }
  }

  /// One product by the concatenated weights, placed before the first
  /// sibling; each sibling becomes its slice of the columns.
  void merge(SmallVector<MatmulOp> &siblings) {
    OpBuilder b(siblings.front());
    Location loc = b.getFusedLoc(llvm::map_to_vector(siblings, [](MatmulOp op) {
      return op.getLoc();
    }));
    SmallVector<Value> weights;
    int64_t columns = 0;
    for (MatmulOp op : siblings) {
      weights.push_back(op.getRhs());
      columns += cast<RankedTensorType>(op.getRhs().getType()).getDimSize(1);
    }
    auto firstWeight = cast<RankedTensorType>(weights.front().getType());
    auto weightType = RankedTensorType::get({firstWeight.getDimSize(0), columns},
                                            firstWeight.getElementType());
    Value weight = ConcatOp::create(b, loc, weightType, weights, b.getI64IntegerAttr(1));
    auto resultType = cast<RankedTensorType>(siblings.front().getType());
    SmallVector<int64_t> shape(resultType.getShape());
    shape.back() = columns;
    int64_t axis = resultType.getRank() - 1;
    Value product = MatmulOp::create(b, loc, resultType.clone(shape),
                                     siblings.front().getLhs(), weight);
    int64_t offset = 0;
    for (MatmulOp op : siblings) {
      int64_t width = op.getType().getShape().back();
      OpBuilder at(op);
      Value part = SliceOp::create(at, op.getLoc(), op.getType(), product,
                                   at.getDenseI64ArrayAttr({offset}),
                                   at.getDenseI64ArrayAttr({offset + width}),
                                   at.getDenseI64ArrayAttr({axis}),
                                   at.getDenseI64ArrayAttr({1}));
      op.replaceAllUsesWith(part);
      op.erase();
      offset += width;
    }
  }
};

} // namespace
} // namespace kiln
