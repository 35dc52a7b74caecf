//===- PaddedEpilogue.cpp - An epilogue written into the next conv's padding ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A conv whose output the next conv pads (a MobileNetV2 or EfficientNet
// expand conv before its depthwise conv, a ResNet 1x1 conv before its 3x3)
// computed its epilogue over the product's [F, P] and its result was then
// copied into the interior of the zero-filled padded tensor: a fill, a copy
// and a second buffer per conv. Here the epilogue iterates over the image
// [F, H, W] instead (C read through an expand_shape, as for a head split)
// and writes [1, F, H, W], the slice that is inserted: empty-tensor
// elimination then computes it in place in the padded tensor, and the CPU
// kernel stores each tile there (rows of W not a whole number of vectors
// wrap like rows at a pitch, wrapPitch in Epilogue.h).
//
//===----------------------------------------------------------------------===//

#include "ConvDispatches.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace kiln {

bool writeEpilogueIntoPadding(linalg::GenericOp generic, int64_t columnAlign) {
  std::optional<unsigned> cIndex = epilogueInput(generic);
  if (!cIndex || generic.getNumLoops() != 2 || generic.getNumDpsInits() != 1 ||
      !generic.hasPureTensorSemantics() || !generic->hasOneUse())
    return false;
  OpOperand *cInput = generic.getDpsInputOperand(*cIndex);
  auto cType = dyn_cast<RankedTensorType>(cInput->get().getType());
  if (!cType || !cType.hasStaticShape() || cType.getRank() != 2 ||
      !generic.getMatchingIndexingMap(cInput).isIdentity())
    return false;
  // The result reshaped to one image [1, F, H, W] and inserted whole, with
  // unit strides, into another tensor.
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*generic->user_begin());
  if (!expand || !expand->hasOneUse() ||
      expand.getReassociationIndices() != SmallVector<ReassociationIndices>{{0, 1}, {2, 3}})
    return false;
  RankedTensorType image = expand.getResultType();
  auto insert = dyn_cast<tensor::InsertSliceOp>(*expand->user_begin());
  if (!insert || insert.getSource() != expand.getResult() || !image.hasStaticShape() ||
      image.getDimSize(0) != 1 ||
      !llvm::all_of(insert.getStaticStrides(), [](int64_t s) { return s == 1; }) ||
      insert.getSourceType() != image)
    return false;
  int64_t f = image.getDimSize(1), h = image.getDimSize(2), w = image.getDimSize(3);
  // A vector of the kernel's columns spans at most kMaxWrapRows image rows.
  if (h < 2 || (w % columnAlign && wrapRows(w, w, columnAlign) > kMaxWrapRows))
    return false;
  MLIRContext *context = generic.getContext();
  AffineExpr df, dy, dx;
  bindDims(context, df, dy, dx);
  auto rows = RankedTensorType::get({f, h, w}, cType.getElementType());
  OpBuilder b(generic);
  Location loc = generic.getLoc();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(input);
    if (map.isIdentity()) {
      // C or another [F, P] input (a residual): read as [F, H, W].
      auto type = dyn_cast<RankedTensorType>(input->get().getType());
      if (!type || type.getShape() != cType.getShape())
        return false;
      inputs.push_back(tensor::ExpandShapeOp::create(
          b, loc, rows.clone(type.getElementType()), input->get(),
          ArrayRef<ReassociationIndices>{{0}, {1, 2}}));
      maps.push_back(AffineMap::getMultiDimIdentityMap(3, context));
      continue;
    }
    // Per output channel or constant indices (a bias): the filter loop only.
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (dim && dim.getPosition() == 0)
        results.push_back(df);
      else if (isa<AffineConstantExpr>(expr))
        results.push_back(expr);
      else
        return false;
    }
    inputs.push_back(input->get());
    maps.push_back(AffineMap::get(3, 0, results, context));
  }
  maps.push_back(AffineMap::get(3, 0, {b.getAffineConstantExpr(0), df, dy, dx}, context));
  Value init = tensor::EmptyOp::create(b, loc, image.getShape(), image.getElementType());
  auto padded = linalg::GenericOp::create(
      b, loc, TypeRange{image}, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(3, utils::IteratorType::parallel));
  padded.getRegion().takeBody(generic.getRegion());
  padded->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  if (!isMatmulEpilogue(padded, *cIndex, {{0}, {1, 2}}, columnAlign)) {
    generic.getRegion().takeBody(padded.getRegion());
    padded.erase();
    init.getDefiningOp()->erase();
    for (Value input : inputs)
      if (auto view = input.getDefiningOp<tensor::ExpandShapeOp>(); view && view->use_empty())
        view.erase();
    return false;
  }
  insert.getSourceMutable().assign(padded.getResult(0));
  expand.erase();
  generic.erase();
  return true;
}

} // namespace kiln
