//===- SplitFills.cpp - The kiln-split-fills pass -------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNSPLITFILLSPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// Whether `use` is the destination of an insert_slice.
bool isInsertDestination(OpOperand *use) {
  auto insert = dyn_cast<tensor::InsertSliceOp>(use->getOwner());
  return insert && use->get() == insert.getDest();
}

/// Where the fill that `use` reads goes: right before its user, except for
/// the destination of an insert_slice whose source is written in place
/// from an empty tensor (a chain of destination-style ops in the same
/// block: an epilogue writing a conv's output slice into the next conv's
/// zero padding), which goes before the chain's first op, so that
/// empty-tensor elimination can compute the chain in the destination.
Operation *fillPosition(OpOperand *use, Value fillValue, DominanceInfo &dominance,
                        bool paddingInPlace) {
  Operation *user = use->getOwner();
  if (!paddingInPlace || !isInsertDestination(use))
    return user;
  auto insert = cast<tensor::InsertSliceOp>(user);
  Operation *first = nullptr;
  Value value = insert.getSource();
  while (auto writer = value.getDefiningOp<DestinationStyleOpInterface>()) {
    auto result = cast<OpResult>(value);
    if (writer->getBlock() != user->getBlock() ||
        result.getResultNumber() >= static_cast<unsigned>(writer.getNumDpsInits()))
      return user;
    first = writer;
    value = writer.getDpsInitOperand(result.getResultNumber())->get();
  }
  if (!first || !value.getDefiningOp<tensor::EmptyOp>() ||
      !dominance.properlyDominates(fillValue, first))
    return user;
  return first;
}

/// For the padding that `insert` writes its whole inner image into (static,
/// unit strides, every dim whole but the last two), a fresh tensor with
/// only the border around that image filled with `value`: the bands above
/// and below it and the columns left and right of it, each a fill of its
/// own inserted into an empty tensor (empty-tensor elimination fills them
/// in place); the image is then written over the rest. Null otherwise.
Value fillBorder(OpBuilder &b, Location loc, tensor::InsertSliceOp insert, Value value) {
  RankedTensorType type = insert.getDestType();
  int64_t rank = type.getRank();
  ArrayRef<int64_t> offsets = insert.getStaticOffsets(), sizes = insert.getStaticSizes();
  if (!type.hasStaticShape() || rank < 2 || insert.getSourceType().getRank() != rank ||
      !llvm::all_of(insert.getStaticStrides(), [](int64_t s) { return s == 1; }) ||
      ShapedType::isDynamicShape(offsets) || ShapedType::isDynamicShape(sizes))
    return nullptr;
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (offsets[d] != 0 || sizes[d] != type.getDimSize(d))
      return nullptr;
  int64_t top = offsets[rank - 2], left = offsets[rank - 1];
  int64_t rows = sizes[rank - 2], cols = sizes[rank - 1];
  int64_t height = type.getDimSize(rank - 2), width = type.getDimSize(rank - 1);
  Value padded = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto band = [&](int64_t y, int64_t h, int64_t x, int64_t w) {
    if (h <= 0 || w <= 0)
      return;
    SmallVector<int64_t> shape(type.getShape());
    shape[rank - 2] = h;
    shape[rank - 1] = w;
    SmallVector<int64_t> at(rank, 0);
    at[rank - 2] = y;
    at[rank - 1] = x;
    Value part = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    Value piece = linalg::FillOp::create(b, loc, value, part).getResult(0);
    auto attrs = [&](ArrayRef<int64_t> values) {
      return llvm::map_to_vector(values,
                                 [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); });
    };
    padded = tensor::InsertSliceOp::create(b, loc, piece, padded, attrs(at), attrs(shape),
                                           attrs(SmallVector<int64_t>(rank, 1)));
  };
  band(0, top, 0, width);
  band(top + rows, height - top - rows, 0, width);
  band(top, rows, 0, left);
  band(top, rows, left + cols, width - left - cols);
  return padded;
}

/// Replaces `fill` by one clone (with its own tensor.empty) at each of its
/// uses' fillPosition; where that is before an in-place chain whose result
/// is inserted into it, only the border around the inserted image is
/// filled (fillBorder): the chain writes the rest, so filling all of it
/// wrote the padded tensor twice (MobileNetV2 at batch 1: 13 MB of
/// memset per run). So is the padding that any other image is copied
/// into (a model input padded for a conv): filled around it only.
void splitFill(linalg::FillOp fill, DominanceInfo &dominance, bool paddingInPlace) {
  auto empty = fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
  SmallVector<OpOperand *> uses =
      llvm::map_to_vector(fill->getResult(0).getUses(), [](OpOperand &use) { return &use; });
  for (OpOperand *use : uses) {
    Operation *position = fillPosition(use, fill.getInputs()[0], dominance, paddingInPlace);
    OpBuilder b(position);
    if (paddingInPlace && empty && isInsertDestination(use)) {
      if (Value border = fillBorder(b, fill.getLoc(), cast<tensor::InsertSliceOp>(use->getOwner()),
                                    fill.getInputs()[0])) {
        use->set(border);
        continue;
      }
    }
    IRMapping map;
    if (empty)
      map.map(empty.getResult(), b.clone(*empty)->getResult(0));
    use->set(b.clone(*fill, map)->getResult(0));
  }
  fill.erase();
  if (empty && empty->use_empty())
    empty.erase();
}

struct KilnSplitFillsPass final : impl::KilnSplitFillsPassBase<KilnSplitFillsPass> {
  using Base::Base;
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    SmallVector<linalg::FillOp> shared;
    getOperation().walk([&](linalg::FillOp fill) {
      if (!fill.hasPureTensorSemantics() || fill->use_empty())
        return;
      // A fill of one use changes only as the padding of an insertion.
      OpOperand &use = *fill->getUses().begin();
      if (!fill->hasOneUse() || (paddingInPlace && isInsertDestination(&use)))
        shared.push_back(fill);
    });
    for (linalg::FillOp fill : shared)
      splitFill(fill, dominance, paddingInPlace);
  }
};

} // namespace
} // namespace kiln
