//===- ConvBatch.cpp - One conv taps contraction for every image ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The linalg stage lowers a static conv of a few images per image (one
// matmul chain per image, inserted into the batch's result) and a conv with
// a dynamic batch as a linalg conv. Either way the dispatch stage would see
// no single contraction whose epilogue or B prologue it could fuse: the
// fusions would apply at batch 1 only. Here each such conv becomes one
// batched `kiln.conv_taps` contraction (Epilogue.h), loops (n, f, p, c, i,
// j), which the later steps of kiln-form-dispatches treat like the
// per-image one and the CPU kernel runs as a loop over the images.
//
//===----------------------------------------------------------------------===//

#include "ConvDispatches.h"

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln {
namespace {

/// Image `image` of x [N, C, L], as one image's conv taps reads it.
struct ImageSlice {
  tensor::ExtractSliceOp slice;
  Value x;
  int64_t image;
};

/// The image an insert_slice writes whole into a static [N, C, L] tensor.
std::optional<int64_t> insertedImage(tensor::InsertSliceOp insert) {
  RankedTensorType dest = insert.getDestType();
  if (dest.getRank() != 3 || !dest.hasStaticShape() ||
      !areAllConstantIntValue(insert.getMixedStrides(), 1) ||
      ArrayRef<int64_t>(insert.getStaticSizes()) !=
          ArrayRef<int64_t>{1, dest.getDimSize(1), dest.getDimSize(2)} ||
      insert.getStaticOffsets()[1] != 0 || insert.getStaticOffsets()[2] != 0 ||
      ShapedType::isDynamic(insert.getStaticOffsets()[0]))
    return std::nullopt;
  return insert.getStaticOffsets()[0];
}

/// `value` inserted whole as image n of a batch by a chain of insertions
/// of other images (the per-image results of a conv): image n of the
/// chain's result, which canonicalization folded `extract_slice(chain, n)`
/// back to (a 1x1 conv reading a conv without bias). Only where the
/// chain's result is defined before `user`.
std::optional<ImageSlice> matchInsertedImage(Value value, Operation *user) {
  tensor::InsertSliceOp insert;
  for (Operation *op : value.getUsers())
    if (auto candidate = dyn_cast<tensor::InsertSliceOp>(op);
        candidate && candidate.getSource() == value && insertedImage(candidate))
      insert = candidate;
  if (!insert)
    return std::nullopt;
  int64_t image = *insertedImage(insert);
  Value chain = insert.getResult();
  while (chain.hasOneUse()) {
    auto next = dyn_cast<tensor::InsertSliceOp>(*chain.getUsers().begin());
    std::optional<int64_t> other = next ? insertedImage(next) : std::nullopt;
    if (!other || next.getDest() != chain || *other == image)
      break;
    chain = next.getResult();
  }
  Operation *def = chain.getDefiningOp();
  if (def->getBlock() != user->getBlock() || !def->isBeforeInBlock(user))
    return std::nullopt;
  return ImageSlice{nullptr, chain, image};
}

std::optional<ImageSlice> matchImageSlice(Value value) {
  auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSourceType().getRank() != 3 || slice.getResultType().getRank() != 2 ||
      !slice.getSourceType().hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> shape = slice.getSourceType().getShape();
  std::optional<SmallVector<int64_t>> offsets = staticSlice(slice, {1, shape[1], shape[2]});
  if (!offsets || (*offsets)[1] != 0 || (*offsets)[2] != 0)
    return std::nullopt;
  return ImageSlice{slice, slice.getSource(), (*offsets)[0]};
}

/// Whether `value` is a zero fill of an empty tensor.
bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() &&
         matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat());
}

/// The batch size of a zero fill of an empty [N, ...] tensor: the size the
/// empty tensor was made with (which the artifact's signature traces back
/// to the inputs' shapes).
OpFoldResult batchOf(Value zeroFill) {
  auto fill = zeroFill.getDefiningOp<linalg::FillOp>();
  return fill.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>().getMixedSizes()[0];
}

/// One batched conv taps contraction of `filter` [F, C, kh, kw] and `x`
/// [N, C, L] read per image through `imageMap` (a conv taps x map), into a
/// zero-filled [N, F, P] (N = `batch`); null (nothing left) if
/// convTapsLayout refuses it.
linalg::GenericOp buildBatchedTaps(OpBuilder &b, Location loc, Value filter, Value x,
                                   AffineMap imageMap, OpFoldResult batch, int64_t filters,
                                   int64_t pixels) {
  auto xType = cast<RankedTensorType>(x.getType());
  Type element = xType.getElementType();
  SmallVector<OpFoldResult> sizes = {batch, b.getIndexAttr(filters), b.getIndexAttr(pixels)};
  Value empty = tensor::EmptyOp::create(b, loc, sizes, element);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  MLIRContext *context = b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineExpr> xResults = {d(0)};
  llvm::append_range(xResults, imageMap.shiftDims(1).getResults());
  SmallVector<AffineMap> maps = {AffineMap::get(6, 0, {d(1), d(3), d(4), d(5)}, context),
                                 AffineMap::get(6, 0, xResults, context),
                                 AffineMap::get(6, 0, {d(0), d(1), d(2)}, context)};
  using utils::IteratorType;
  SmallVector<IteratorType> iterators = {IteratorType::parallel,  IteratorType::parallel,
                                         IteratorType::parallel,  IteratorType::reduction,
                                         IteratorType::reduction, IteratorType::reduction};
  auto taps = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{filter, x}, ValueRange{init}, maps, iterators,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value product = arith::MulFOp::create(nb, nl, args[0], args[1]);
        linalg::YieldOp::create(nb, nl,
                                ValueRange{arith::AddFOp::create(nb, nl, args[2], product)});
      });
  taps->setAttr(kConvTapsAttr, b.getUnitAttr());
  if (convTapsLayout(taps))
    return taps;
  Operation *fill = init.getDefiningOp();
  taps.erase();
  fill->erase();
  empty.getDefiningOp()->erase();
  return nullptr;
}

/// The filters [F, C, 1, 1] of a per-image 1x1 conv matmul over `channels`
/// channels: its A's collapse (convFilter), or A itself when canonicalization
/// folded that collapse into a 2-D constant [F, C] (a squeeze-excite FC's):
/// then as a [F, C, 1, 1] constant made once per 2-D one (`reshaped`), right
/// after it, so the images' conv taps share it and merge.
Value pointwiseFilter(linalg::MatmulOp matmul, int64_t channels,
                      DenseMap<Value, Value> &reshaped) {
  if (Value filter = convFilter(matmul))
    return filter;
  Value a = matmul.getDpsInputs()[0];
  auto constant = a.getDefiningOp<arith::ConstantOp>();
  auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || dense.getType().getRank() != 2 || dense.getType().getDimSize(1) != channels)
    return nullptr;
  Value &filter = reshaped[a];
  if (!filter) {
    OpBuilder b(constant->getContext());
    b.setInsertionPointAfter(constant);
    auto type = RankedTensorType::get({dense.getType().getDimSize(0), channels, 1, 1},
                                      dense.getType().getElementType());
    filter = arith::ConstantOp::create(b, constant.getLoc(), dense.reshape(type));
  }
  return filter;
}

/// The per-image 1x1 conv matmuls of a batch (B image n of [N, C, P], N >
/// 1, the result inserted into the batch's result) become conv taps.
void pointwiseMatmulsToTaps(func::FuncOp func) {
  DenseMap<Value, Value> reshaped;
  SmallVector<linalg::MatmulOp> matmuls;
  func.walk([&](linalg::MatmulOp matmul) {
    // Inserted into the batch's result (a later 1x1 conv may read the
    // image directly too: matchInsertedImage).
    if (kernelMatmul(matmul->getResult(0)) &&
        llvm::any_of(matmul->getUsers(), llvm::IsaPred<tensor::InsertSliceOp>))
      matmuls.push_back(matmul);
  });
  for (linalg::MatmulOp matmul : matmuls) {
    std::optional<ImageSlice> b = matchImageSlice(matmul.getDpsInputs()[1]);
    if (!b)
      b = matchInsertedImage(matmul.getDpsInputs()[1], matmul);
    if (!b || cast<RankedTensorType>(b->x.getType()).getDimSize(0) < 2)
      continue;
    Value filter = pointwiseFilter(
        matmul, cast<RankedTensorType>(b->x.getType()).getDimSize(1), reshaped);
    if (!filter)
      continue;
    ArrayRef<int64_t> w = cast<RankedTensorType>(filter.getType()).getShape();
    if (w[2] != 1 || w[3] != 1)
      continue;
    Operation *collapse = matmul.getDpsInputs()[0].getDefiningOp();
    if (!replaceByConvTaps(matmul, filter, b->x, b->image, ConvTapsLayout{}))
      continue;
    for (Operation *op : {static_cast<Operation *>(b->slice), collapse})
      if (op && op->use_empty())
        op->erase();
  }
  for (auto &[flat, filter] : reshaped)
    if (filter.use_empty())
      filter.getDefiningOp()->erase();
}

/// One image's conv: a plain conv taps generic (no prologue) reading image
/// `image` of x into a zero fill, whose result only its insertion at that
/// image into the batch's result reads.
struct ImageConv {
  linalg::GenericOp taps;
  ImageSlice x;
  tensor::InsertSliceOp insert;
};

std::optional<ImageConv> matchImageConv(tensor::InsertSliceOp insert) {
  auto taps = insert.getSource().getDefiningOp<linalg::GenericOp>();
  if (!taps || !taps->hasAttr(kConvTapsAttr) || taps.getNumLoops() != 5 ||
      hasConvTapsPrologue(taps) || !taps->hasOneUse() || !isZeroFill(taps.getDpsInits()[0]) ||
      !convTapsLayout(taps))
    return std::nullopt;
  std::optional<ImageSlice> x = matchImageSlice(taps.getDpsInputs()[1]);
  RankedTensorType dest = insert.getDestType();
  ArrayRef<int64_t> out = cast<RankedTensorType>(taps->getResult(0).getType()).getShape();
  if (!x || dest.getRank() != 3 || !dest.hasStaticShape() ||
      dest.getDimSize(0) != cast<RankedTensorType>(x->x.getType()).getDimSize(0) ||
      !areAllConstantIntValue(insert.getMixedStrides(), 1) ||
      ArrayRef<int64_t>(insert.getStaticSizes()) != ArrayRef<int64_t>{1, out[0], out[1]} ||
      insert.getStaticOffsets() != ArrayRef<int64_t>{x->image, 0, 0})
    return std::nullopt;
  return ImageConv{taps, *x, insert};
}

/// The same tensor: one value, or the same reshape of one value (each
/// image's im2col rewrite flattens the input anew).
bool sameTensor(Value x, Value y) {
  auto cx = x.getDefiningOp<tensor::CollapseShapeOp>();
  auto cy = y.getDefiningOp<tensor::CollapseShapeOp>();
  return x == y || (cx && cy && cx.getSrc() == cy.getSrc() && cx.getType() == cy.getType() &&
                    cx.getReassociationIndices() == cy.getReassociationIndices());
}

/// The images of one conv, from the insertion of image 0 into an empty
/// tensor: all of them, each the same conv of the same x, or nothing.
std::optional<SmallVector<ImageConv>> matchBatch(tensor::InsertSliceOp first) {
  std::optional<ImageConv> image = matchImageConv(first);
  if (!image || image->x.image != 0 || !first.getDest().getDefiningOp<tensor::EmptyOp>())
    return std::nullopt;
  SmallVector<ImageConv> images = {*image};
  int64_t count = first.getDestType().getDimSize(0);
  while (static_cast<int64_t>(images.size()) < count) {
    Value last = images.back().insert.getResult();
    auto next = last.hasOneUse() ? dyn_cast<tensor::InsertSliceOp>(*last.getUsers().begin())
                                 : nullptr;
    std::optional<ImageConv> conv = next && next.getDest() == last ? matchImageConv(next)
                                                                   : std::nullopt;
    linalg::GenericOp taps = images.front().taps;
    if (!conv || conv->x.image != static_cast<int64_t>(images.size()) ||
        !sameTensor(conv->x.x, images.front().x.x) ||
        conv->taps.getDpsInputs()[0] != taps.getDpsInputs()[0] ||
        conv->taps.getIndexingMapsArray() != taps.getIndexingMapsArray())
      return std::nullopt;
    images.push_back(*conv);
  }
  return images;
}

/// Merges the images of each static batch into one batched conv taps.
void mergeImages(func::FuncOp func) {
  SmallVector<tensor::InsertSliceOp> firsts;
  func.walk([&](tensor::InsertSliceOp insert) {
    if (insert.getDestType().getRank() == 3 && insert.getDestType().getDimSize(0) > 1 &&
        insert.getDest().getDefiningOp<tensor::EmptyOp>())
      firsts.push_back(insert);
  });
  for (tensor::InsertSliceOp first : firsts) {
    std::optional<SmallVector<ImageConv>> images = matchBatch(first);
    if (!images)
      continue;
    linalg::GenericOp taps = images->front().taps;
    tensor::InsertSliceOp last = images->back().insert;
    ArrayRef<int64_t> out = cast<RankedTensorType>(taps->getResult(0).getType()).getShape();
    OpBuilder b(last);
    SmallVector<Location> locs = {taps.getLoc()};
    linalg::GenericOp batched =
        buildBatchedTaps(b, FusedLoc::get(b.getContext(), locs), taps.getDpsInputs()[0],
                         images->front().x.x, taps.getIndexingMapsArray()[1],
                         b.getIndexAttr(images->size()), out[0], out[1]);
    if (!batched)
      continue;
    last.getResult().replaceAllUsesWith(batched->getResult(0));
    // Each insertion's destination is the one before it (erased next).
    Operation *empty = first.getDest().getDefiningOp();
    for (ImageConv &image : llvm::reverse(*images)) {
      auto fill = image.taps.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
      image.insert.erase();
      image.taps.erase();
      Operation *x = image.x.x.getDefiningOp();
      for (Operation *op : {image.x.slice.getOperation(), fill.getOperation(),
                            fill.getDpsInits()[0].getDefiningOp(), x})
        if (op && op->use_empty())
          op->erase();
    }
    if (empty->use_empty())
      empty->erase();
  }
}

/// A static 2-D f32 conv the linalg stage left as a linalg conv (a dynamic
/// or large batch) becomes batched conv taps reading the padded input
/// flattened [N, C, Hp*Wp] through the conv's index map (an implicit GEMM).
bool linalgConvToTaps(linalg::Conv2DNchwFchwOp conv) {
  auto xType = cast<RankedTensorType>(conv.getDpsInputs()[0].getType());
  auto wType = cast<RankedTensorType>(conv.getDpsInputs()[1].getType());
  auto yType = cast<RankedTensorType>(conv->getResult(0).getType());
  if (!conv.hasPureTensorSemantics() || !xType.getElementType().isF32() ||
      !wType.hasStaticShape() || !isZeroFill(conv.getDpsInits()[0]) ||
      llvm::any_of(xType.getShape().drop_front(), ShapedType::isDynamic) ||
      llvm::any_of(yType.getShape().drop_front(), ShapedType::isDynamic))
    return false;
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  int64_t wp = xType.getDimSize(3), oh = yType.getDimSize(2), ow = yType.getDimSize(3);
  ConvTapsLayout layout{dilations[0] * wp, dilations[1], ow, strides[0] * wp, strides[1]};
  if (ow == 1) // one output column: p is the output row
    layout = ConvTapsLayout{dilations[0] * wp, dilations[1], 0, 0, strides[0] * wp};
  if (wType.getDimSize(2) == 1 && wType.getDimSize(3) == 1 && strides[0] == 1 &&
      strides[1] == 1 && ow == wp && oh == xType.getDimSize(2))
    layout = ConvTapsLayout{}; // a 1x1 conv reads the input as it is
  OpBuilder b(conv);
  Location loc = conv.getLoc();
  Value flat = tensor::CollapseShapeOp::create(b, loc, conv.getDpsInputs()[0],
                                               ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  linalg::GenericOp taps =
      buildBatchedTaps(b, loc, conv.getDpsInputs()[1], flat,
                       convTapsInputMap(b.getContext(), layout),
                       batchOf(conv.getDpsInits()[0]), wType.getDimSize(0), oh * ow);
  if (!taps) {
    flat.getDefiningOp()->erase();
    return false;
  }
  SmallVector<OpFoldResult> shape = {batchOf(conv.getDpsInits()[0]),
                                     b.getIndexAttr(yType.getDimSize(1)), b.getIndexAttr(oh),
                                     b.getIndexAttr(ow)};
  Value y = tensor::ExpandShapeOp::create(b, loc, yType, taps->getResult(0),
                                          ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}}, shape);
  Value init = conv.getDpsInits()[0];
  conv->getResult(0).replaceAllUsesWith(y);
  conv.erase();
  for (Operation *op = init.getDefiningOp(); op && op->use_empty();) {
    Operation *next = op->getNumOperands() ? op->getOperands().back().getDefiningOp() : nullptr;
    op->erase();
    op = next;
  }
  return true;
}

} // namespace

void batchConvTaps(func::FuncOp func) {
  pointwiseMatmulsToTaps(func);
  mergeImages(func);
}

void linalgConvsToTaps(func::FuncOp func) {
  SmallVector<linalg::Conv2DNchwFchwOp> convs;
  func.walk([&](linalg::Conv2DNchwFchwOp conv) { convs.push_back(conv); });
  for (linalg::Conv2DNchwFchwOp conv : convs)
    linalgConvToTaps(conv);
}

bool pitchedBatchedToConvTaps(linalg::GenericOp taps) {
  if (!isBatchedConvTaps(taps) || hasConvTapsPrologue(taps) || !isZeroFill(taps.getDpsInits()[0]) ||
      !convTapsLayout(taps)->isContiguous())
    return false;
  std::optional<std::pair<Value, ConvTapsLayout>> pitched =
      pitchedPointwiseInput(taps.getDpsInputs()[1]);
  if (!pitched)
    return false;
  ArrayRef<int64_t> out = cast<RankedTensorType>(taps->getResult(0).getType()).getShape();
  OpBuilder b(taps);
  linalg::GenericOp read = buildBatchedTaps(
      b, taps.getLoc(), taps.getDpsInputs()[0], pitched->first,
      convTapsInputMap(b.getContext(), pitched->second), batchOf(taps.getDpsInits()[0]), out[1],
      out[2]);
  if (!read)
    return false;
  Value x = taps.getDpsInputs()[1], init = taps.getDpsInits()[0];
  taps->getResult(0).replaceAllUsesWith(read->getResult(0));
  taps.erase();
  // The views of the pitched tensor and the old zero fill, once dead.
  for (Value dead : {x, init}) {
    for (Operation *op = dead.getDefiningOp(); op && op->use_empty();) {
      Operation *next = op->getNumOperands() ? op->getOperands().back().getDefiningOp() : nullptr;
      if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
        next = op->getOperand(0).getDefiningOp();
      op->erase();
      op = next;
    }
  }
  return true;
}

} // namespace kiln
