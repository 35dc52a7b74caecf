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
// and writes [1, F, H, W], the slice that is inserted (a batch's conv taps,
// C [N, F, P]: over [N, F, H, W], writing the batch's slice): empty-tensor
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
  // C is one image's [F, P] or a batch's [N, F, P] (batched conv taps).
  unsigned rank = generic.getNumLoops();
  if (!cIndex || (rank != 2 && rank != 3) || generic.getNumDpsInits() != 1 ||
      !generic.hasPureTensorSemantics() || !generic->hasOneUse())
    return false;
  bool batched = rank == 3;
  OpOperand *cInput = generic.getDpsInputOperand(*cIndex);
  auto cType = dyn_cast<RankedTensorType>(cInput->get().getType());
  if (!cType || !cType.hasStaticShape() || cType.getRank() != rank ||
      !generic.getMatchingIndexingMap(cInput).isIdentity())
    return false;
  // The result reshaped to images [N, F, H, W] (N = 1 for [F, P]) and
  // inserted whole, with unit strides, into another tensor.
  auto expand = dyn_cast<tensor::ExpandShapeOp>(*generic->user_begin());
  SmallVector<ReassociationIndices> imageDims =
      batched ? SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}
              : SmallVector<ReassociationIndices>{{0, 1}, {2, 3}};
  if (!expand || !expand->hasOneUse() || expand.getReassociationIndices() != imageDims)
    return false;
  RankedTensorType image = expand.getResultType();
  auto insert = dyn_cast<tensor::InsertSliceOp>(*expand->user_begin());
  if (!insert || insert.getSource() != expand.getResult() || !image.hasStaticShape() ||
      (!batched && image.getDimSize(0) != 1) ||
      !llvm::all_of(insert.getStaticStrides(), [](int64_t s) { return s == 1; }) ||
      insert.getSourceType() != image)
    return false;
  int64_t f = image.getDimSize(1), h = image.getDimSize(2), w = image.getDimSize(3);
  // A vector of the kernel's columns spans at most kMaxWrapRows image rows.
  if (h < 2 || (w % columnAlign && wrapRows(w, w, columnAlign) > kMaxWrapRows))
    return false;
  MLIRContext *context = generic.getContext();
  // Loops (f, y, x), or (n, f, y, x) for a batch.
  unsigned loops = batched ? 4 : 3;
  AffineExpr dn = getAffineDimExpr(0, context);
  AffineExpr df = getAffineDimExpr(loops - 3, context), dy = getAffineDimExpr(loops - 2, context),
             dx = getAffineDimExpr(loops - 1, context);
  SmallVector<int64_t> rowShape = {f, h, w};
  if (batched)
    rowShape.insert(rowShape.begin(), image.getDimSize(0));
  auto rows = RankedTensorType::get(rowShape, cType.getElementType());
  SmallVector<ReassociationIndices> cToRows =
      batched ? SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}
              : SmallVector<ReassociationIndices>{{0}, {1, 2}};
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
          b, loc, rows.clone(type.getElementType()), input->get(), cToRows));
      maps.push_back(AffineMap::getMultiDimIdentityMap(loops, context));
      continue;
    }
    // Per output channel (a bias), per image, or constant indices: the
    // filter and image loops only.
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (dim && dim.getPosition() == rank - 2)
        results.push_back(df);
      else if (dim && batched && dim.getPosition() == 0)
        results.push_back(dn);
      else if (isa<AffineConstantExpr>(expr))
        results.push_back(expr);
      else
        return false;
    }
    inputs.push_back(input->get());
    maps.push_back(AffineMap::get(loops, 0, results, context));
  }
  maps.push_back(AffineMap::get(
      loops, 0, {batched ? dn : b.getAffineConstantExpr(0), df, dy, dx}, context));
  Value init = tensor::EmptyOp::create(b, loc, image.getShape(), image.getElementType());
  auto padded = linalg::GenericOp::create(
      b, loc, TypeRange{image}, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel));
  padded.getRegion().takeBody(generic.getRegion());
  padded->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
  if (!isMatmulEpilogue(padded, *cIndex, cToRows, columnAlign)) {
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
