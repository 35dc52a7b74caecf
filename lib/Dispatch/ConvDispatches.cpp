//===- ConvDispatches.cpp - Convolution dispatches of the CPU -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "ConvDispatches.h"

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln {

std::optional<SmallVector<int64_t>> staticSlice(tensor::ExtractSliceOp slice,
                                                ArrayRef<int64_t> sizes) {
  if (!slice || ArrayRef<int64_t>(slice.getStaticSizes()) != sizes ||
      !llvm::all_of(slice.getStaticStrides(), [](int64_t s) { return s == 1; }) ||
      llvm::is_contained(slice.getStaticOffsets(), ShapedType::kDynamic))
    return std::nullopt;
  return SmallVector<int64_t>(slice.getStaticOffsets());
}

namespace {

/// One tap of a stride-1 conv computed at the padded row pitch (the linalg
/// stage's convAsShiftedMatmuls): w[:, :, i, j] @ x[image, :, offset : +P].
struct Tap {
  linalg::MatmulOp matmul;
  Value weight, input;
  int64_t image, i, j, offset;
};

std::optional<Tap> matchTap(linalg::MatmulOp matmul) {
  if (!kernelMatmul(matmul->getResult(0)))
    return std::nullopt;
  auto w = matmul.getDpsInputs()[0].getDefiningOp<tensor::ExtractSliceOp>();
  auto x = matmul.getDpsInputs()[1].getDefiningOp<tensor::ExtractSliceOp>();
  if (!w || !x || w.getSourceType().getRank() != 4 || x.getSourceType().getRank() != 3 ||
      !w.getSourceType().hasStaticShape() || !x.getSourceType().hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> wShape = w.getSourceType().getShape();
  auto cType = cast<RankedTensorType>(matmul->getResult(0).getType());
  std::optional<SmallVector<int64_t>> wAt = staticSlice(w, {wShape[0], wShape[1], 1, 1});
  std::optional<SmallVector<int64_t>> xAt =
      staticSlice(x, {1, wShape[1], cType.getDimSize(1)});
  if (!wAt || !xAt || (*wAt)[0] != 0 || (*wAt)[1] != 0 || (*xAt)[1] != 0)
    return std::nullopt;
  return Tap{matmul, w.getSource(), x.getSource(), (*xAt)[0], (*wAt)[2], (*wAt)[3], (*xAt)[2]};
}

} // namespace

/// The per-tap matmuls of one stride-1 conv image, each accumulating into
/// the last one's result from a zero fill, become one `kiln.conv_taps`
/// contraction (see kiln/Dispatch/Epilogue.h): one kernel that keeps the
/// output tile in registers across the taps instead of one kernel call
/// (and one pass over the output) per tap. Taps whose offsets are not
/// i*rowStep + j*colStep, or that do not cover the window once, stay.
void mergeConvTaps(func::FuncOp func) {
  SmallVector<linalg::MatmulOp> starts;
  func.walk([&](linalg::MatmulOp matmul) {
    auto fill = matmul.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    if (fill && matchTap(matmul))
      starts.push_back(matmul);
  });
  for (linalg::MatmulOp start : starts) {
    SmallVector<Tap> chain = {*matchTap(start)};
    while (chain.back().matmul->hasOneUse()) {
      auto next = dyn_cast<linalg::MatmulOp>(*chain.back().matmul->getUsers().begin());
      std::optional<Tap> tap = next ? matchTap(next) : std::nullopt;
      if (!tap || next.getDpsInits()[0] != chain.back().matmul->getResult(0) ||
          tap->weight != chain[0].weight || tap->input != chain[0].input ||
          tap->image != chain[0].image)
        break;
      chain.push_back(*tap);
    }
    auto wType = cast<RankedTensorType>(chain[0].weight.getType());
    int64_t kh = wType.getDimSize(2), kw = wType.getDimSize(3);
    if (static_cast<int64_t>(chain.size()) != kh * kw || kh * kw < 2)
      continue;
    // offset(i, j) = i * rowStep + j * colStep, each tap once.
    int64_t rowStep = 0, colStep = 0;
    llvm::SmallDenseSet<int64_t> seen;
    for (const Tap &tap : chain) {
      if (tap.i == 1 && tap.j == 0)
        rowStep = tap.offset;
      if (tap.i == 0 && tap.j == 1)
        colStep = tap.offset;
      seen.insert(tap.i * kw + tap.j);
    }
    if (static_cast<int64_t>(seen.size()) != kh * kw ||
        llvm::any_of(chain, [&](const Tap &tap) {
          return tap.offset != tap.i * rowStep + tap.j * colStep;
        }))
      continue;
    linalg::MatmulOp last = chain.back().matmul;
    OpBuilder b(last);
    Location loc = last.getLoc();
    auto xType = cast<RankedTensorType>(chain[0].input.getType());
    int64_t channels = xType.getDimSize(1), length = xType.getDimSize(2);
    Value image = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({channels, length}, xType.getElementType()),
        chain[0].input,
        ArrayRef<OpFoldResult>{b.getIndexAttr(chain[0].image), b.getIndexAttr(0),
                               b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(channels),
                               b.getIndexAttr(length)},
        SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
    MLIRContext *context = b.getContext();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
    SmallVector<AffineMap> maps = {AffineMap::get(5, 0, {d(0), d(2), d(3), d(4)}, context),
                                   convTapsInputMap(context, ConvTapsLayout{rowStep, colStep}),
                                   AffineMap::get(5, 0, {d(0), d(1)}, context)};
    using utils::IteratorType;
    SmallVector<IteratorType> iterators = {IteratorType::parallel, IteratorType::parallel,
                                           IteratorType::reduction, IteratorType::reduction,
                                           IteratorType::reduction};
    auto taps = linalg::GenericOp::create(
        b, loc, last->getResultTypes(), ValueRange{chain[0].weight, image},
        ValueRange{start.getDpsInits()[0]}, maps, iterators,
        [](OpBuilder &nb, Location nl, ValueRange args) {
          Value product = arith::MulFOp::create(nb, nl, args[0], args[1]);
          linalg::YieldOp::create(nb, nl,
                                  ValueRange{arith::AddFOp::create(nb, nl, args[2], product)});
        });
    taps->setAttr(kConvTapsAttr, b.getUnitAttr());
    last->getResult(0).replaceAllUsesWith(taps->getResult(0));
    for (Tap &tap : llvm::reverse(chain)) {
      Operation *w = tap.matmul.getDpsInputs()[0].getDefiningOp();
      Operation *x = tap.matmul.getDpsInputs()[1].getDefiningOp();
      tap.matmul.erase();
      for (Operation *slice : {w, x})
        if (slice->use_empty())
          slice->erase();
    }
  }
}

namespace {

/// The im2col patch generic of the linalg stage's convAsMatmul:
///   patches[n, c, i, j, y, x] = x[n, c, y*sh + i*dh, x*sw + j*dw]
/// (static, all parallel, a plain copy). Returns x and the layout of a
/// conv taps generic reading one image of x flattened to [C, Hp*Wp].
std::optional<std::pair<Value, ConvTapsLayout>> matchIm2col(linalg::GenericOp generic) {
  if (!generic || generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != 6 || generic.getNumReductionLoops() != 0 ||
      !generic.hasPureTensorSemantics())
    return std::nullopt;
  auto xType = cast<RankedTensorType>(generic.getDpsInputs()[0].getType());
  auto patchType = cast<RankedTensorType>(generic->getResult(0).getType());
  Block &body = generic.getRegion().front();
  if (xType.getRank() != 4 || !xType.hasStaticShape() || !patchType.hasStaticShape() ||
      body.getOperations().size() != 1 || body.getTerminator()->getOperand(0) != body.getArgument(0))
    return std::nullopt;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps[1].isIdentity() || maps[0].getNumSymbols() != 0)
    return std::nullopt;
  // The map at the unit points of (i, j, y, x) gives dh, dw, sh, sw.
  auto at = [&](unsigned loop) {
    SmallVector<int64_t> point(6, 0);
    point[loop] = 1;
    return maps[0].compose(point);
  };
  int64_t dh = at(2)[2], dw = at(3)[3], sh = at(4)[2], sw = at(5)[3];
  MLIRContext *context = generic.getContext();
  AffineExpr dn, dc, di, dj, dy, dx;
  bindDims(context, dn, dc, di, dj, dy, dx);
  if (maps[0] != AffineMap::get(6, 0, {dn, dc, dy * sh + di * dh, dx * sw + dj * dw}, context) ||
      dh < 1 || dw < 1 || sh < 1 || sw < 1 || patchType.getDimSize(0) != xType.getDimSize(0) ||
      patchType.getDimSize(1) != xType.getDimSize(1))
    return std::nullopt;
  int64_t wp = xType.getDimSize(3);
  ConvTapsLayout layout{dh * wp, dw, patchType.getDimSize(5), sh * wp, sw};
  if (layout.width == 1) // one output column: p is the output row
    layout = ConvTapsLayout{dh * wp, dw, 0, 0, sh * wp};
  return std::make_pair(generic.getDpsInputs()[0], layout);
}

} // namespace

Value convFilter(linalg::MatmulOp matmul) {
  auto filter = matmul.getDpsInputs()[0].getDefiningOp<tensor::CollapseShapeOp>();
  if (!filter || filter.getSrcType().getRank() != 4 || !filter.getSrcType().hasStaticShape() ||
      filter.getReassociationIndices() != SmallVector<ReassociationIndices>{{0}, {1, 2, 3}})
    return nullptr;
  return filter.getSrc();
}

bool replaceByConvTaps(linalg::MatmulOp matmul, Value filter, Value x, int64_t image,
                       const ConvTapsLayout &layout) {
  auto xType = cast<RankedTensorType>(x.getType());
  int64_t channels = xType.getDimSize(1), length = xType.getDimSize(2);
  OpBuilder b(matmul);
  Location loc = matmul.getLoc();
  auto slice = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({channels, length}, xType.getElementType()), x,
      ArrayRef<OpFoldResult>{b.getIndexAttr(image), b.getIndexAttr(0), b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(channels), b.getIndexAttr(length)},
      SmallVector<OpFoldResult>(3, b.getIndexAttr(1)));
  MLIRContext *context = b.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  SmallVector<AffineMap> maps = {AffineMap::get(5, 0, {d(0), d(2), d(3), d(4)}, context),
                                 convTapsInputMap(context, layout),
                                 AffineMap::get(5, 0, {d(0), d(1)}, context)};
  using utils::IteratorType;
  SmallVector<IteratorType> iterators = {IteratorType::parallel, IteratorType::parallel,
                                         IteratorType::reduction, IteratorType::reduction,
                                         IteratorType::reduction};
  auto taps = linalg::GenericOp::create(
      b, loc, matmul->getResultTypes(), ValueRange{filter, slice.getResult()},
      ValueRange{matmul.getDpsInits()[0]}, maps, iterators,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        Value product = arith::MulFOp::create(nb, nl, args[0], args[1]);
        linalg::YieldOp::create(nb, nl,
                                ValueRange{arith::AddFOp::create(nb, nl, args[2], product)});
      });
  taps->setAttr(kConvTapsAttr, b.getUnitAttr());
  if (!convTapsLayout(taps)) {
    taps.erase();
    slice.erase();
    return false;
  }
  matmul->getResult(0).replaceAllUsesWith(taps->getResult(0));
  matmul.erase();
  return true;
}

namespace {

/// Erases `ops` in order, each once nothing uses it.
void eraseDead(ArrayRef<Operation *> ops) {
  for (Operation *op : ops)
    if (op && op->use_empty())
      op->erase();
}

} // namespace

/// An im2col matmul of one conv image -- W [F, C*kh*kw] (collapsed from
/// [F, C, kh, kw]) times that image's patches [C*kh*kw, oh*ow] -- becomes
/// a `kiln.conv_taps` contraction reading the image directly (with the
/// stride: an implicit GEMM), so the patch buffer and its copy kernel go.
/// Its epilogue, if marked, stays its epilogue. Returns whether it did.
bool im2colToConvTaps(linalg::MatmulOp matmul) {
  Value filter = convFilter(matmul);
  auto slice = matmul.getDpsInputs()[1].getDefiningOp<tensor::ExtractSliceOp>();
  auto col = slice ? slice.getSource().getDefiningOp<tensor::CollapseShapeOp>() : nullptr;
  auto patches = col ? col.getSrc().getDefiningOp<linalg::GenericOp>() : nullptr;
  std::optional<std::pair<Value, ConvTapsLayout>> im2col = matchIm2col(patches);
  if (!filter || !im2col ||
      col.getReassociationIndices() != SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}})
    return false;
  ArrayRef<int64_t> w = cast<RankedTensorType>(filter.getType()).getShape();
  ArrayRef<int64_t> patch = cast<RankedTensorType>(patches->getResult(0).getType()).getShape();
  auto colType = cast<RankedTensorType>(col.getType());
  std::optional<SmallVector<int64_t>> offsets =
      staticSlice(slice, {1, colType.getDimSize(1), colType.getDimSize(2)});
  if (!offsets || (*offsets)[1] != 0 || (*offsets)[2] != 0 || w[1] != patch[1] ||
      w[2] != patch[2] || w[3] != patch[3])
    return false;
  auto [x, layout] = *im2col;
  auto xType = cast<RankedTensorType>(x.getType());
  OpBuilder b(matmul);
  auto flat = tensor::CollapseShapeOp::create(
      b, matmul.getLoc(),
      RankedTensorType::get({xType.getDimSize(0), xType.getDimSize(1),
                             xType.getDimSize(2) * xType.getDimSize(3)},
                            xType.getElementType()),
      x, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  Operation *filterCollapse = matmul.getDpsInputs()[0].getDefiningOp();
  if (!replaceByConvTaps(matmul, filter, flat, (*offsets)[0], layout)) {
    flat.erase();
    return false;
  }
  // The patch buffer goes once no image reads it.
  eraseDead({slice, filterCollapse, col, patches, patches.getDpsInits()[0].getDefiningOp()});
  return true;
}

namespace {

/// A tensor computed at a padded row pitch and sliced to its image columns
/// (a stride-1 depthwise conv's result, [N, C, oh*Wp] viewed as
/// [N, C, oh, Wp] and sliced to [N, C, oh, ow]): the pitched tensor and
/// the layout a 1x1 conv reads it with (row p / ow at Wp, column p % ow),
/// or nothing.
std::optional<std::pair<Value, ConvTapsLayout>> pitchedSlice(Value view) {
  auto slice = view.getDefiningOp<tensor::ExtractSliceOp>();
  auto expand = slice ? slice.getSource().getDefiningOp<tensor::ExpandShapeOp>() : nullptr;
  if (!expand ||
      expand.getReassociationIndices() != SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}} ||
      llvm::any_of(expand.getSrcType().getShape().drop_front(), ShapedType::isDynamic) ||
      slice.getResultType().getRank() != 4)
    return std::nullopt;
  ArrayRef<int64_t> wide = expand.getResultType().getShape();
  int64_t ow = slice.getStaticSizes().back(), wp = wide[3];
  std::optional<SmallVector<int64_t>> offsets =
      staticSlice(slice, {wide[0], wide[1], wide[2], ow});
  if (!offsets || !llvm::all_of(*offsets, [](int64_t o) { return o == 0; }) || ow < 1 ||
      ow >= wp)
    return std::nullopt;
  ConvTapsLayout layout{0, 0, ow, wp, 1};
  if (ow == 1)
    layout = ConvTapsLayout{0, 0, 0, 0, wp};
  return std::make_pair(expand.getSrc(), layout);
}

} // namespace

std::optional<std::pair<Value, ConvTapsLayout>> pitchedPointwiseInput(Value col) {
  auto collapse = col.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse ||
      collapse.getReassociationIndices() != SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}})
    return std::nullopt;
  return pitchedSlice(collapse.getSrc());
}

namespace {

/// The collapse [N, C, oh*ow] of a conv input that the per-image B of a
/// 1x1 stride-1 conv matmul reads, for each image.
bool isPointwiseConvB(OpOperand &use) {
  auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner());
  if (!slice || slice.getSourceType().getRank() != 3 || !slice->hasOneUse())
    return false;
  ArrayRef<int64_t> shape = slice.getSourceType().getShape();
  std::optional<SmallVector<int64_t>> offsets = staticSlice(slice, {1, shape[1], shape[2]});
  auto matmul = dyn_cast<linalg::MatmulOp>(*slice->getUsers().begin());
  if (!offsets || (*offsets)[1] != 0 || (*offsets)[2] != 0 || !matmul ||
      matmul.getDpsInputs()[1] != slice.getResult() || !kernelMatmul(matmul->getResult(0)))
    return false;
  Value filter = convFilter(matmul);
  if (!filter)
    return false;
  ArrayRef<int64_t> w = cast<RankedTensorType>(filter.getType()).getShape();
  return w[1] == shape[1] && w[2] == 1 && w[3] == 1;
}

/// The [N, C, oh*ow] collapse of a conv input read as x by a batched 1x1
/// conv taps contraction at consecutive columns (no prologue).
bool isBatchedPointwiseX(OpOperand &use) {
  auto taps = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!taps || use.getOperandNumber() != 1 || !isBatchedConvTaps(taps) ||
      hasConvTapsPrologue(taps) || !convTapsLayout(taps)->isContiguous())
    return false;
  ArrayRef<int64_t> w = cast<RankedTensorType>(taps.getDpsInputs()[0].getType()).getShape();
  return w[2] == 1 && w[3] == 1;
}

} // namespace

/// A 1x1 conv matmul reading a pitched input (pitchedPointwiseInput)
/// becomes conv taps that read the pitched tensor through the layout: no
/// copy of the input into a contiguous buffer.
bool pitchedPointwiseToConvTaps(linalg::MatmulOp matmul) {
  Value filter = convFilter(matmul);
  auto slice = matmul.getDpsInputs()[1].getDefiningOp<tensor::ExtractSliceOp>();
  if (!filter || !slice || !isPointwiseConvB(slice->getOpOperand(0)))
    return false;
  std::optional<std::pair<Value, ConvTapsLayout>> pitched =
      pitchedPointwiseInput(slice.getSource());
  if (!pitched)
    return false;
  int64_t image = slice.getStaticOffsets()[0];
  auto collapse = slice.getSource().getDefiningOp<tensor::CollapseShapeOp>();
  auto view = collapse.getSrc().getDefiningOp<tensor::ExtractSliceOp>();
  auto expand = view.getSource().getDefiningOp<tensor::ExpandShapeOp>();
  if (!replaceByConvTaps(matmul, filter, pitched->first, image, pitched->second))
    return false;
  eraseDead({slice, collapse, view, expand});
  return true;
}


/// An elementwise generic E (the ReLU6 or SiLU after a stride-1 depthwise
/// conv) that reads the pitch-sliced result of another all-parallel
/// generic D ([N, C, oh*Wp] viewed as [N, C, oh, ow]) and whose result
/// only 1x1 convs read: E joins D over D's pitched domain (its body runs on
/// the discarded columns too, which nothing reads), and the 1x1 convs read
/// the pitched result (pitchedPointwiseToConvTaps). The depthwise conv and
/// its activation are one dispatch instead of two.
bool fuseIntoPitchedProducer(linalg::GenericOp consumer) {
  auto outType = dyn_cast<RankedTensorType>(consumer->getResult(0).getType());
  if (!consumer.hasPureTensorSemantics() || consumer.getNumDpsInits() != 1 ||
      consumer.getNumReductionLoops() != 0 || !outType || outType.getRank() != 4 ||
      llvm::any_of(outType.getShape().drop_front(), ShapedType::isDynamic) ||
      !consumer.getIndexingMapsArray().back().isIdentity() ||
      consumer->hasAttr(kEpilogueAttr) || consumer->hasAttr(kRowGroupAttr) ||
      !consumer.getRegion().front().getArguments().back().use_empty() ||
      !hasVectorizableScalarBody(consumer))
    return false;
  // The pitched input: the same view in every operand that reads one.
  Value view;
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (auto slice = input->get().getDefiningOp<tensor::ExtractSliceOp>();
        slice && slice.getSource().getDefiningOp<tensor::ExpandShapeOp>())
      view = input->get();
  if (!view)
    return false;
  auto slice = view.getDefiningOp<tensor::ExtractSliceOp>();
  auto expand = slice.getSource().getDefiningOp<tensor::ExpandShapeOp>();
  // The producer's loops: the flat [N, C, oh*Wp] ones, or [N, C, oh, Wp]
  // behind a collapse (exposePitchedRows).
  auto collapse = expand.getSrc().getDefiningOp<tensor::CollapseShapeOp>();
  auto producer = collapse ? collapse.getSrc().getDefiningOp<linalg::GenericOp>()
                           : expand.getSrc().getDefiningOp<linalg::GenericOp>();
  if (collapse && (!collapse->hasOneUse() || collapse.getReassociationIndices() !=
                                                  SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}))
    return false;
  if (producer && producer.getNumLoops() != (collapse ? 4u : 3u))
    return false;
  if (!pitchedSlice(view) || !producer || !producer.hasPureTensorSemantics() ||
      producer.getNumDpsInits() != 1 || producer.getNumReductionLoops() != 0 ||
      !producer.getIndexingMapsArray().back().isIdentity() || !producer->hasOneUse() ||
      !expand->hasOneUse() || !producer.getRegion().front().getArguments().back().use_empty() ||
      !hasVectorizableScalarBody(producer) ||
      !llvm::all_of(slice->getUsers(), [&](Operation *user) { return user == consumer; }))
    return false;
  // It reads the view element for element.
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input->get() == view && !consumer.getMatchingIndexingMap(input).isIdentity())
      return false;
  // Its other inputs are per (n, c) (a channel bias) or scalars.
  MLIRContext *context = consumer.getContext();
  unsigned loops = producer.getNumLoops();
  SmallVector<AffineMap> otherMaps;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (input->get() == view)
      continue;
    AffineMap map = consumer.getMatchingIndexingMap(input);
    if (map.isFunctionOfDim(2) || map.isFunctionOfDim(3) || map.getNumSymbols())
      return false;
    otherMaps.push_back(AffineMap::get(loops, 0, map.getResults(), context));
  }
  // Its result is read only as the input of 1x1 convs.
  for (OpOperand &use : consumer->getResult(0).getUses()) {
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(use.getOwner());
    if (!collapse ||
        collapse.getReassociationIndices() != SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}} ||
        collapse->use_empty() || !llvm::all_of(collapse->getUses(), [](OpOperand &use) {
          return isPointwiseConvB(use) || isBatchedPointwiseX(use);
        }))
      return false;
  }
  // One generic over the producer's loops: its body, then the consumer's.
  SmallVector<Value> inputs(producer.getDpsInputs());
  SmallVector<AffineMap> maps(llvm::map_range(
      producer.getDpsInputOperands(),
      [&](OpOperand *o) { return producer.getMatchingIndexingMap(o); }));
  for (OpOperand *input : consumer.getDpsInputOperands())
    if (input->get() != view)
      inputs.push_back(input->get());
  llvm::append_range(maps, otherMaps);
  auto wideType = cast<RankedTensorType>(producer->getResult(0).getType())
                      .clone(outType.getElementType());
  maps.push_back(AffineMap::getMultiDimIdentityMap(loops, context));
  OpBuilder b(consumer);
  Location loc = consumer.getLoc();
  Value init = tensor::EmptyOp::create(b, loc,
                                       tensor::getMixedSizes(b, loc, producer->getResult(0)),
                                       wideType.getElementType());
  unsigned producerInputs = producer.getNumDpsInputs();
  auto fused = linalg::GenericOp::create(
      b, loc, wideType, inputs, init, maps,
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location, ValueRange args) {
        IRMapping mapping;
        Block &first = producer.getRegion().front();
        for (unsigned i = 0; i < producerInputs; ++i)
          mapping.map(first.getArgument(i), args[i]);
        for (Operation &op : first.without_terminator())
          nb.clone(op, mapping);
        Value value = mapping.lookupOrDefault(first.getTerminator()->getOperand(0));
        Block &second = consumer.getRegion().front();
        unsigned next = producerInputs;
        for (OpOperand *input : consumer.getDpsInputOperands())
          mapping.map(second.getArgument(input->getOperandNumber()),
                      input->get() == view ? value : args[next++]);
        for (Operation &op : second.without_terminator())
          nb.clone(op, mapping);
        linalg::YieldOp::create(
            nb, loc, mapping.lookupOrDefault(second.getTerminator()->getOperand(0)));
      });
  fused->setLoc(FusedLoc::get(context, {producer.getLoc(), consumer.getLoc()}));
  Value flat = fused->getResult(0);
  if (collapse)
    flat = tensor::CollapseShapeOp::create(b, loc, flat, collapse.getReassociationIndices());
  Value wide = tensor::ExpandShapeOp::create(
      b, loc, expand.getResultType().clone(outType.getElementType()), flat,
      expand.getReassociationIndices(), expand.getMixedOutputShape());
  Value result = tensor::ExtractSliceOp::create(b, loc, outType, wide, slice.getMixedOffsets(),
                                                slice.getMixedSizes(), slice.getMixedStrides());
  consumer->getResult(0).replaceAllUsesWith(result);
  consumer.erase();
  eraseDead({slice, expand, collapse, producer});
  return true;
}

void exposePitchedRows(func::FuncOp func) {
  SmallVector<tensor::ExtractSliceOp> slices;
  func.walk([&](tensor::ExtractSliceOp slice) {
    auto producer = slice.getSource().getDefiningOp<linalg::GenericOp>();
    RankedTensorType wide = slice.getSourceType();
    if (!producer || producer->getNumResults() != 1 || producer.getNumLoops() != 4 ||
        producer.getNumReductionLoops() != 0 ||
        !producer.getIndexingMapsArray().back().isIdentity() || wide.getRank() != 4 ||
        slice.getResultType().getRank() != 4 ||
        llvm::any_of(wide.getShape().drop_front(), ShapedType::isDynamic))
      return;
    ArrayRef<int64_t> shape = wide.getShape();
    int64_t ow = slice.getStaticSizes().back();
    std::optional<SmallVector<int64_t>> offsets =
        staticSlice(slice, {shape[0], shape[1], shape[2], ow});
    if (offsets && llvm::all_of(*offsets, [](int64_t o) { return o == 0; }) && ow >= 1 &&
        ow < shape[3])
      slices.push_back(slice);
  });
  for (tensor::ExtractSliceOp slice : slices) {
    OpBuilder b(slice);
    Location loc = slice.getLoc();
    Value wide = slice.getSource();
    SmallVector<ReassociationIndices> rows = {{0}, {1}, {2, 3}};
    Value flat = tensor::CollapseShapeOp::create(b, loc, wide, rows);
    // Sizes from the view (a dynamic batch read of the producer would be a
    // second use of it, which fuseIntoPitchedProducer refuses).
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, flat);
    sizes.pop_back();
    for (int64_t dim : slice.getSourceType().getShape().take_back(2))
      sizes.push_back(b.getIndexAttr(dim));
    Value expanded =
        tensor::ExpandShapeOp::create(b, loc, slice.getSourceType(), flat, rows, sizes);
    slice.getSourceMutable().assign(expanded);
  }
}

} // namespace kiln
