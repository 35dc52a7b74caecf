//===- ConvToLinalg.cpp - kiln convolutions -> linalg -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Convolutions map onto linalg's NCHW named ops after an explicit tensor.pad:
// conv_{1,2,3}d_nc..._fc..., grouped 2-D convs onto conv_2d_ngchw_gfchw (by
// splitting the channel dims; a grouped 1-D conv runs as a unit-height 2-D
// one); static 2-D f32 convs as im2col + matmul, depthwise as a generic with
// the output row innermost (see below).
// Pooling is in PoolToLinalg.cpp.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "LinalgBuilders.h"
#include "PitchedViews.h"
#include "kiln/Conversion/KilnToLinalg/Im2col.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace kiln {
namespace {

using lowering::batchDynamicSize;
using lowering::createInit;
using lowering::dropPitchColumns;
using lowering::phasePaddedSize;
using lowering::phaseTap;
using lowering::stridedPhases;
using lowering::padSpatial;
using lowering::scalarConstant;

/// y[n, c, ...] = x[n, c, ...] + bias[c]
Value addChannelBias(OpBuilder &b, Location loc, Value x, Value bias) {
  auto type = cast<RankedTensorType>(x.getType());
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  SmallVector<AffineMap> maps = {
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, getAffineDimExpr(1, context), context),
      b.getMultiDimIdentityMap(rank)};
  Value init = createInit(b, loc, type, lowering::dynamicSizesOf(b, loc, x));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{x, bias}, init, maps, iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nb, l, arith::AddFOp::create(nb, l, args[0], args[1]).getResult());
             })
      .getResult(0);
}

DenseIntElementsAttr i64Elements(OpBuilder &b, ArrayRef<int64_t> values) {
  return b.getI64TensorAttr(values);
}

/// A 2-D, ungrouped, static-shape conv as im2col + matmul, the form the CPU
/// matmul kernels make fast:
///   col[n, (c, i, j), (y, x)] = x_padded[n, c, y*sh + i*dh, x*sw + j*dw]
///   y[n] = W[F, C*kh*kw] @ col[n]            (one linalg.matmul per image)
/// A 1x1 conv with unit strides needs no col: it is a reshape of the input.
Value convAsMatmul(OpBuilder &b, Location loc, ConvOp op, Value input, Value weight) {
  auto inputType = cast<RankedTensorType>(input.getType()); // padded
  auto weightType = cast<RankedTensorType>(weight.getType());
  RankedTensorType result = op.getType();
  Type element = result.getElementType();
  int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1);
  int64_t f = weightType.getDimSize(0), kh = weightType.getDimSize(2),
          kw = weightType.getDimSize(3);
  int64_t oh = result.getDimSize(2), ow = result.getDimSize(3);
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  int64_t depth = c * kh * kw, pixels = oh * ow;

  Value col;
  bool pointwise = kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1 &&
                   inputType.getDimSize(2) == oh && inputType.getDimSize(3) == ow;
  if (pointwise) {
    col = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({n, c, pixels}, element), input,
        ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  } else {
    auto patchType = RankedTensorType::get({n, c, kh, kw, oh, ow}, element);
    Value init = createInit(b, loc, patchType, {});
    Value patches = createIm2col(b, loc, input, init, PatchLayout::ChannelsOuter, strides,
                                 dilations)
                        .getResult(0);
    col = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({n, depth, pixels}, element), patches,
        ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  }
  Value filter = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({f, depth}, element), weight,
      ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  Value zero = scalarConstant(b, loc, element, 0);
  auto imageType = RankedTensorType::get({f, pixels}, element);
  auto outType = RankedTensorType::get({n, f, pixels}, element);
  Value out = createInit(b, loc, outType, {});
  for (int64_t image = 0; image < n; ++image) {
    SmallVector<OpFoldResult> offsets = {b.getIndexAttr(image), b.getIndexAttr(0),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> strides3(3, b.getIndexAttr(1));
    SmallVector<OpFoldResult> colSizes = {b.getIndexAttr(1), b.getIndexAttr(depth),
                                          b.getIndexAttr(pixels)};
    Value colImage = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({depth, pixels}, element), col, offsets, colSizes,
        strides3);
    Value acc = createInit(b, loc, imageType, {}, zero);
    Value product =
        linalg::MatmulOp::create(b, loc, imageType, ValueRange{filter, colImage}, acc)
            .getResult(0);
    SmallVector<OpFoldResult> outSizes = {b.getIndexAttr(1), b.getIndexAttr(f),
                                          b.getIndexAttr(pixels)};
    out = tensor::InsertSliceOp::create(b, loc, product, out, offsets, outSizes, strides3);
  }
  return tensor::ExpandShapeOp::create(b, loc, result, out,
                                       ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// Whether a static 2-D f32 conv runs as matmul kernels, and how: stride-1
/// windows larger than 1x1 on wide images as shifted matmuls, the rest
/// through im2col. Batches up to `maxBatch` images (a policy value).
bool convRunsAsMatmul(ConvOp op, RankedTensorType input, int64_t maxBatch) {
  RankedTensorType result = op.getType();
  return op.getGroup() == 1 && input.getRank() == 4 && result.hasStaticShape() &&
         input.hasStaticShape() && result.getDimSize(0) <= maxBatch &&
         isa<Float32Type>(result.getElementType());
}
/// The shifted form computes dw*(kw-1) discarded columns per output row and
/// reloads the output tile once per tap (K = C per matmul instead of 9C).
/// Measured on ResNet-50's 3x3 layers at batch 1, one thread (sum of the
/// dispatches' minimum times): shifted/im2col 2.03/3.1 ms at 56 columns,
/// 1.94/2.1 at 28, 2.9/2.3 at 14 and 6.1/3.2 at 7 (discarded columns 14% and
/// 29% there). So: shifted only while the discarded columns are at most an
/// eighth of the row: the CPU policy's `divisor` of 8.
bool convRunsShifted(ConvOp op, RankedTensorType weight, int64_t divisor) {
  int64_t discarded = op.getDilations()[1] * (weight.getDimSize(3) - 1);
  return llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; }) &&
         weight.getDimSize(2) * weight.getDimSize(3) > 1 && divisor > 0 &&
         divisor * discarded <= op.getType().getDimSize(3);
}

/// Extra zero rows below the padded input that the shifted form reads:
/// the last tap's slice ends dw*(kw-1) elements past the last output row.
int64_t shiftedExtraRows(ConvOp op, RankedTensorType weight, int64_t paddedHeight,
                         int64_t paddedWidth) {
  int64_t kh = weight.getDimSize(2), kw = weight.getDimSize(3);
  int64_t oh = op.getType().getDimSize(2);
  ArrayRef<int64_t> dilations = op.getDilations();
  int64_t end = (oh + dilations[0] * (kh - 1)) * paddedWidth + dilations[1] * (kw - 1);
  return std::max<int64_t>(0, llvm::divideCeil(end, paddedWidth) - paddedHeight);
}

/// A stride-1 2-D conv without a patch buffer. Computed at the padded
/// input's row pitch Wp (the columns past ow are computed and dropped), tap
/// (i, j) reads the flattened padded input at offset i*dh*Wp + j*dw, which
/// is a plain slice:
///   y'[n] = sum_(i,j) W[:, :, i, j] @ x_flat[n, :, off(i,j) : off(i,j) + oh*Wp]
///   y = y' viewed as [n, F, oh, Wp], columns [0, ow)
/// so the matmul kernels pack straight from the input.
Value convAsShiftedMatmuls(OpBuilder &b, Location loc, ConvOp op, Value input, Value weight) {
  auto inputType = cast<RankedTensorType>(input.getType()); // padded + extra rows
  auto weightType = cast<RankedTensorType>(weight.getType());
  RankedTensorType result = op.getType();
  Type element = result.getElementType();
  int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1);
  int64_t hp = inputType.getDimSize(2), wp = inputType.getDimSize(3);
  int64_t f = weightType.getDimSize(0), kh = weightType.getDimSize(2),
          kw = weightType.getDimSize(3);
  int64_t oh = result.getDimSize(2);
  ArrayRef<int64_t> dilations = op.getDilations();
  int64_t columns = oh * wp;
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({n, c, hp * wp}, element), input,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value zero = scalarConstant(b, loc, element, 0);
  auto imageType = RankedTensorType::get({f, columns}, element);
  Value out = createInit(b, loc, RankedTensorType::get({n, f, columns}, element), {});
  SmallVector<OpFoldResult> ones3(3, b.getIndexAttr(1)), ones4(4, b.getIndexAttr(1));
  for (int64_t image = 0; image < n; ++image) {
    Value acc = createInit(b, loc, imageType, {}, zero);
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        Value taps = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({f, c}, element), weight,
            ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), b.getIndexAttr(i),
                                   b.getIndexAttr(j)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(f), b.getIndexAttr(c), b.getIndexAttr(1),
                                   b.getIndexAttr(1)},
            ones4);
        int64_t offset = i * dilations[0] * wp + j * dilations[1];
        Value shifted = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({c, columns}, element), flat,
            ArrayRef<OpFoldResult>{b.getIndexAttr(image), b.getIndexAttr(0),
                                   b.getIndexAttr(offset)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(c),
                                   b.getIndexAttr(columns)},
            ones3);
        acc = linalg::MatmulOp::create(b, loc, imageType, ValueRange{taps, shifted}, acc)
                  .getResult(0);
      }
    out = tensor::InsertSliceOp::create(
        b, loc, acc, out,
        ArrayRef<OpFoldResult>{b.getIndexAttr(image), b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(f), b.getIndexAttr(columns)},
        ones3);
  }
  return dropPitchColumns(b, loc, out, result, wp, b.getIndexAttr(n));
}

/// The all-parallel depthwise generic of `type` (rank 3 or 4, channels at
/// dim 1): taps[t] are views of the input in the output's shape (identity
/// maps), paired with the weight w[c, 0, t / kw, t % kw]; plus bias[c].
///   out = bias + sum_t taps[t] * w[c, 0, t / kw, t % kw]
Value unrolledDepthwise(OpBuilder &b, Location loc, RankedTensorType type, ArrayRef<Value> taps,
                        Value weight, int64_t kw, Value bias) {
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  AffineExpr dc = getAffineDimExpr(1, context);
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (auto [t, tap] : llvm::enumerate(taps)) {
    int64_t i = static_cast<int64_t>(t) / kw, j = static_cast<int64_t>(t) % kw;
    operands.append({tap, weight});
    maps.push_back(b.getMultiDimIdentityMap(rank));
    maps.push_back(AffineMap::get(rank, 0,
                                  {dc, b.getAffineConstantExpr(0), b.getAffineConstantExpr(i),
                                   b.getAffineConstantExpr(j)},
                                  context));
  }
  if (bias) {
    operands.push_back(bias);
    maps.push_back(AffineMap::get(rank, 0, {dc}, context));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  int64_t count = static_cast<int64_t>(taps.size());
  bool hasBias = static_cast<bool>(bias);
  SmallVector<Value> dynamicSizes;
  if (type.isDynamicDim(0))
    dynamicSizes.push_back(tensor::DimOp::create(b, loc, taps.front(), 0));
  return linalg::GenericOp::create(
             b, loc, type, operands, createInit(b, loc, type, dynamicSizes), maps,
             SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value sum = arith::MulFOp::create(nb, l, args[0], args[1]);
               for (int64_t t = 1; t < count; ++t)
                 sum = math::FmaOp::create(nb, l, args[2 * t], args[2 * t + 1], sum);
               if (hasBias)
                 sum = arith::AddFOp::create(nb, l, sum, args[2 * count]);
               linalg::YieldOp::create(nb, l, sum);
             })
      .getResult(0);
}

/// Whether `value` reaches, through elementwise ops only, nothing but the
/// input of 1x1 convs (MobileNetV2's ReLU6, then its project conv).
bool feedsOnlyPointwiseConvs(Value value) {
  SmallVector<Value> work = {value};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Value next = work.pop_back_val();
    for (OpOperand &use : next.getUses()) {
      Operation *user = use.getOwner();
      if (auto conv = dyn_cast<ConvOp>(user)) {
        auto weight = cast<RankedTensorType>(conv.getWeight().getType());
        if (use.getOperandNumber() != 0 || weight.getRank() != 4 || weight.getDimSize(2) != 1 ||
            weight.getDimSize(3) != 1)
          return false;
        continue;
      }
      bool elementwise = user->hasTrait<OpTrait::Elementwise>() ||
                         isa<AddOp, SubOp, MulOp, DivOp>(user);
      if (!elementwise || user->getNumResults() != 1 || seen.size() > 16)
        return false;
      if (seen.insert(user).second)
        work.push_back(user->getResult(0));
    }
  }
  return true;
}

/// Whether a depthwise conv runs on the flattened padded input
/// (depthwiseConvFlat): stride 1, static shapes but the batch, up to
/// `maxTaps` taps; not where its output rows are at most `rowsMaxWidth`
/// wide and its result reaches a reader other than 1x1 convs through
/// elementwise ops (feedsOnlyPointwiseConvs): 1x1 convs read the pitched
/// result directly (the dispatch stage), but another reader
/// (EfficientNet's squeeze-excite mean) reads it through its kept
/// columns, so the activation stays a pass of its own over rows of ow at
/// the pitch Wp; on rows of 7 that pass ran mostly
/// scalar (EfficientNet-B0's SiLU after its 7x7 depthwise convs, 1152
/// channels: 0.16 ms on one thread, the conv 0.13). Such a conv runs on
/// the image rows (depthwiseConv), where its activation joins it: 0.17 ms
/// for both. On wider rows the flat conv and its separate activation were
/// faster than both on the image rows (8% at 14 columns, at 56 0.18
/// against 0.24 ms).
bool depthwiseRunsFlat(ConvOp op, RankedTensorType input, RankedTensorType weight,
                       int64_t maxTaps, int64_t rowsMaxWidth) {
  return hasStaticShapeButBatch(input) && hasStaticShapeButBatch(op.getType()) &&
         llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; }) &&
         weight.getDimSize(2) * weight.getDimSize(3) <= maxTaps &&
         (op.getType().getDimSize(3) > rowsMaxWidth ||
          feedsOnlyPointwiseConvs(op.getResult()));
}

/// A stride-1 depthwise conv at the padded input's row pitch Wp, as
/// convAsShiftedMatmuls: tap (i, j) is the flattened padded input at offset
/// i*dh*Wp + j*dw, a contiguous slice:
///   y'[n, c, p] = bias[c] + sum_(i,j) x_flat[n, c, p + off(i,j)] * w[c, 0, i, j]
///   y = y' viewed as [n, c, oh, Wp], columns [0, ow)
/// One vector loop of oh*Wp per channel instead of oh loops of ow: rows of
/// 7-56 columns are mostly vector remainder otherwise (MobileNetV2 at 14x14
/// ran at 5 GFLOP/s), for dw*(kw-1) discarded columns per row.
Value depthwiseConvFlat(OpBuilder &b, Location loc, ConvOp op, Value input, Value weight,
                        Value bias) {
  auto inputType = cast<RankedTensorType>(input.getType()); // padded + extra rows
  auto weightType = cast<RankedTensorType>(weight.getType());
  RankedTensorType result = op.getType();
  Type element = result.getElementType();
  int64_t n = inputType.getDimSize(0), c = inputType.getDimSize(1);
  int64_t hp = inputType.getDimSize(2), wp = inputType.getDimSize(3);
  int64_t kh = weightType.getDimSize(2), kw = weightType.getDimSize(3);
  int64_t oh = result.getDimSize(2);
  ArrayRef<int64_t> dilations = op.getDilations();
  int64_t columns = oh * wp;
  Value flat = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({n, c, hp * wp}, element), input,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  auto flatType = RankedTensorType::get({n, c, columns}, element);
  SmallVector<Value> taps;
  SmallVector<OpFoldResult> ones3(3, b.getIndexAttr(1));
  OpFoldResult images = tensor::getMixedSize(b, loc, flat, 0);
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      taps.push_back(tensor::ExtractSliceOp::create(
          b, loc, flatType, flat,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                 b.getIndexAttr(i * dilations[0] * wp + j * dilations[1])},
          ArrayRef<OpFoldResult>{images, b.getIndexAttr(c), b.getIndexAttr(columns)}, ones3));
  Value out = unrolledDepthwise(b, loc, flatType, taps, weight, kw, bias);
  return dropPitchColumns(b, loc, out, result, wp, images);
}

/// Whether a strided depthwise conv runs on its input's phases
/// (depthwiseConvPhases): static shapes but the batch, equal strides above
/// 1, no dilation, up to `maxTaps` taps.
bool depthwiseRunsOnPhases(ConvOp op, RankedTensorType input, RankedTensorType weight,
                           int64_t maxTaps) {
  ArrayRef<int64_t> strides = op.getStrides();
  return hasStaticShapeButBatch(input) && hasStaticShapeButBatch(op.getType()) &&
         strides[0] == strides[1] && strides[0] > 1 &&
         llvm::all_of(op.getDilations(), [](int64_t d) { return d == 1; }) &&
         weight.getDimSize(2) * weight.getDimSize(3) <= maxTaps;
}

/// The end pads of depthwiseConvPhases (phasePaddedSize).
SmallVector<int64_t> phaseEndPads(ConvOp op, RankedTensorType input, RankedTensorType weight) {
  ArrayRef<int64_t> pads = op.getPads();
  int64_t h = input.getDimSize(2) + pads[0] + pads[2];
  int64_t w = input.getDimSize(3) + pads[1] + pads[3];
  auto [hp, wp] = phasePaddedSize(h, w, weight.getDimSize(2), weight.getDimSize(3),
                                  op.getStrides()[0], op.getType().getDimSize(2));
  return {pads[2] + hp - h, pads[3] + wp - w};
}

/// A depthwise conv of stride s > 1 on the s*s phases of its padded input,
/// Q[n, c, a, b, y, x] = x_padded[n, c, y*s + a, x*s + b] (one data-movement
/// generic), where tap (i, j) reads phase (i % s, j % s) at row i / s and
/// column j / s: the stride-1 form of depthwiseConvFlat on each flattened
/// phase, at the phase row pitch Wq:
///   y'[n, c, p] = bias[c] + sum_(i,j) Q_flat[n, c, (i%s)*s + j%s, p + (i/s)*Wq + j/s] * w[c, 0, i, j]
///   y = y' viewed as [n, c, oh, Wq], columns [0, ow)
/// The strided form read every tap with stride s (two loads and a shuffle
/// per vector; LLVM vectorized rows of 28 with 8 lanes and a scalar
/// remainder); here each tap is a contiguous slice.
Value depthwiseConvPhases(OpBuilder &b, Location loc, ConvOp op, Value input, Value weight,
                          Value bias) {
  auto inputType = cast<RankedTensorType>(input.getType()); // padded to whole phases
  auto weightType = cast<RankedTensorType>(weight.getType());
  RankedTensorType result = op.getType();
  int64_t s = op.getStrides()[0], wq = inputType.getDimSize(3) / s;
  int64_t kh = weightType.getDimSize(2), kw = weightType.getDimSize(3);
  int64_t c = inputType.getDimSize(1), columns = result.getDimSize(2) * wq;
  Value phases = stridedPhases(b, loc, input, s);
  SmallVector<Value> taps;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j)
      taps.push_back(phaseTap(b, loc, phases, s, wq, i, j, columns));
  auto flatType =
      RankedTensorType::get({inputType.getDimSize(0), c, columns}, result.getElementType());
  Value out = unrolledDepthwise(b, loc, flatType, taps, weight, kw, bias);
  return dropPitchColumns(b, loc, out, result, wq, tensor::getMixedSize(b, loc, phases, 0));
}

/// The output columns of depthwiseConvPitched: ow rounded up to a multiple
/// of `columns` (the vector's lanes) plus one -- LLVM's vectorizer peels one
/// iteration off a loop with a stride-2 load, so rows of whole vectors ran
/// their last vector scalar -- where it runs (a stride above 1, static
/// shapes but the batch, up to `maxTaps` taps, rows at least `columns`
/// wide); 0 otherwise.
int64_t pitchedDepthwiseColumns(ConvOp op, RankedTensorType input, RankedTensorType weight,
                                int64_t maxTaps, int64_t columns) {
  ArrayRef<int64_t> strides = op.getStrides();
  if (columns <= 0 || !hasStaticShapeButBatch(input) || !hasStaticShapeButBatch(op.getType()) ||
      llvm::all_of(strides, [](int64_t s) { return s == 1; }) ||
      weight.getDimSize(2) * weight.getDimSize(3) > maxTaps)
    return 0;
  int64_t ow = op.getType().getDimSize(3);
  if (ow < columns)
    return 0;
  return (ow + columns - 1) / columns * columns + 1;
}

/// The right pad that lets depthwiseConvPitched's last output column
/// (owp - 1) read its window.
int64_t pitchedDepthwiseEndPad(ConvOp op, RankedTensorType input, RankedTensorType weight,
                               int64_t owp) {
  ArrayRef<int64_t> pads = op.getPads();
  int64_t needed = op.getStrides()[1] * (owp - 1) +
                   op.getDilations()[1] * (weight.getDimSize(3) - 1) + 1;
  return std::max(pads[3], needed - pads[1] - input.getDimSize(3));
}

/// A strided depthwise conv over output rows of owp > ow columns
/// (pitchedDepthwiseColumns), each tap a strided view of the padded input
/// (padded to owp columns' windows), the columns past ow discarded: the
/// inner loop runs whole vectors but one peeled column, and no copy of the
/// input is made (the phase split's).
Value depthwiseConvPitched(OpBuilder &b, Location loc, ConvOp op, Value input, Value weight,
                           Value bias, ValueRange dynamicSizes, int64_t owp) {
  RankedTensorType result = op.getType();
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t kh = weightType.getDimSize(2), kw = weightType.getDimSize(3);
  SmallVector<int64_t> shape(result.getShape());
  shape[3] = owp;
  auto wide = RankedTensorType::get(shape, result.getElementType());
  SmallVector<Value> taps = lowering::stridedTaps(b, loc, wide, input, kh, kw, op.getStrides(),
                                                  op.getDilations(), dynamicSizes);
  Value out = unrolledDepthwise(b, loc, wide, taps, weight, kw, bias);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, out);
  sizes[3] = b.getIndexAttr(result.getDimSize(3));
  return tensor::ExtractSliceOp::create(b, loc, result, out,
                                        SmallVector<OpFoldResult>(4, b.getIndexAttr(0)), sizes,
                                        SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
}

/// Depthwise 2-D conv as one all-parallel generic over the output with the
/// kh*kw taps unrolled into its payload (each tap is an operand: a strided
/// slice of the padded input at its offset, with its weight and the bias as
/// per-channel scalars):
///   out[n, c, y, x] = bias[c] + sum_(i,j) x_padded[n, c, y*sh + i*dh, x*sw + j*dw] * w[c, 0, i, j]
/// The output is written once (no zero fill, no separate bias pass, no
/// re-reading it per tap); the innermost loop runs along the output row, so
/// the CPU code vectorizes it. Windows over `maxTaps` keep the
/// reduction loops:
///   loops (n, c, y, i, j, x): out[n, c, y, x] += x_padded[...] * w[c, 0, i, j]
/// with the bias added after.
Value depthwiseConv(OpBuilder &b, Location loc, ConvOp op, Value input, Value weight, Value bias,
                    ValueRange dynamicSizes, int64_t maxTaps) {
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  RankedTensorType result = op.getType();
  auto weightType = cast<RankedTensorType>(weight.getType());
  int64_t kh = weightType.getDimSize(2), kw = weightType.getDimSize(3);
  MLIRContext *context = b.getContext();
  using utils::IteratorType;
  if (kh * kw <= maxTaps) {
    // Each tap reads a strided view of the padded input of the output's
    // shape (identity map, so the loop bounds come from the output).
    SmallVector<Value> taps =
        lowering::stridedTaps(b, loc, result, input, kh, kw, strides, dilations, dynamicSizes);
    return unrolledDepthwise(b, loc, result, taps, weight, kw, bias);
  }
  AffineExpr dn, dc, dy, di, dj, dx;
  bindDims(context, dn, dc, dy, di, dj, dx);
  auto inputMap = AffineMap::get(6, 0,
                                 {dn, dc, dy * strides[0] + di * dilations[0],
                                  dx * strides[1] + dj * dilations[1]},
                                 context);
  auto weightMap = AffineMap::get(6, 0, {dc, b.getAffineConstantExpr(0), di, dj}, context);
  auto outputMap = AffineMap::get(6, 0, {dn, dc, dy, dx}, context);
  SmallVector<IteratorType> iterators = {IteratorType::parallel,  IteratorType::parallel,
                                         IteratorType::parallel,  IteratorType::reduction,
                                         IteratorType::reduction, IteratorType::parallel};
  Value zero = scalarConstant(b, loc, result.getElementType(), 0);
  Value conv =
      linalg::GenericOp::create(
          b, loc, result, ValueRange{input, weight}, createInit(b, loc, result, dynamicSizes, zero),
          ArrayRef<AffineMap>{inputMap, weightMap, outputMap}, iterators,
          [](OpBuilder &nb, Location l, ValueRange args) {
            Value product = arith::MulFOp::create(nb, l, args[0], args[1]);
            linalg::YieldOp::create(nb, l,
                                    arith::AddFOp::create(nb, l, args[2], product).getResult());
          })
          .getResult(0);
  return bias ? addChannelBias(b, loc, conv, bias) : conv;
}

/// A grouped 1-D conv as the 2-D conv of a unit-height image (the grouped
/// and depthwise lowerings are 2-D): x [N, C, W] -> [N, C, 1, W], w [F, C/G, K]
/// -> [F, C/G, 1, K], and the result [N, F, 1, OW] back to [N, F, OW]. The new
/// kiln.conv is legalized by ConvToLinalgNamed in turn.
Value groupedConv1DAs2D(OpBuilder &b, Location loc, ConvOp op, ConvOp::Adaptor adaptor) {
  auto unitHeight = [&](Value v) -> Value {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> shape = {type.getDimSize(0), type.getDimSize(1), 1,
                                  type.getDimSize(2)};
    return tensor::ExpandShapeOp::create(b, loc, type.clone(shape), v,
                                         ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  };
  RankedTensorType result = op.getType();
  SmallVector<int64_t> shape = {result.getDimSize(0), result.getDimSize(1), 1,
                                result.getDimSize(2)};
  ArrayRef<int64_t> pads = op.getPads();
  Value conv = ConvOp::create(
      b, loc, result.clone(shape), unitHeight(adaptor.getInput()),
      unitHeight(adaptor.getWeight()), adaptor.getBias(),
      b.getDenseI64ArrayAttr({1, op.getStrides()[0]}),
      b.getDenseI64ArrayAttr({1, op.getDilations()[0]}),
      b.getDenseI64ArrayAttr({0, pads[0], 0, pads[1]}), op.getGroupAttr());
  return tensor::CollapseShapeOp::create(b, loc, result, conv,
                                         ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

struct ConvToLinalgNamed final : OpConversionPattern<ConvOp> {
  // A grouped 1-D conv becomes a 2-D kiln.conv, which this pattern lowers.
  ConvToLinalgNamed(MLIRContext *context, const ConvLoweringOptions &options)
      : OpConversionPattern(context), options(options) {
    setHasBoundedRewriteRecursion();
  }
  ConvLoweringOptions options;

  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto weightType = cast<RankedTensorType>(adaptor.getWeight().getType());
    int64_t spatial = inputType.getRank() - 2, group = op.getGroup();
    for (int64_t i = 1; i < result.getRank(); ++i)
      if (result.isDynamicDim(i) || !weightType.hasStaticShape())
        return lowering::failLowering(rewriter, op, "dynamic channel or spatial dims");
    if (spatial == 1 && group > 1) {
      rewriter.replaceOp(op, groupedConv1DAs2D(rewriter, loc, op, adaptor));
      return success();
    }
    Type element = result.getElementType();
    Value zero = scalarConstant(rewriter, loc, element, 0);
    ArrayRef<int64_t> pads = op.getPads();
    bool asMatmul = convRunsAsMatmul(op, inputType, options.matmulMaxBatch);
    bool shifted = asMatmul && convRunsShifted(op, weightType, options.shiftedDiscardDivisor);
    int64_t channels = inputType.getDimSize(1), filters = weightType.getDimSize(0);
    bool depthwise = spatial == 2 && group > 1 && group == channels && filters == channels;
    bool flatDepthwise =
        depthwise && depthwiseRunsFlat(op, inputType, weightType,
                                       options.depthwiseMaxUnrolledTaps,
                                       options.depthwiseRowsMaxWidth);
    int64_t pitchedColumns =
        depthwise ? pitchedDepthwiseColumns(op, inputType, weightType,
                                            options.depthwiseMaxUnrolledTaps,
                                            options.stridedDepthwiseColumns)
                  : 0;
    bool phasedDepthwise = depthwise && !pitchedColumns && options.stridedWindowsOnPhases &&
                           depthwiseRunsOnPhases(op, inputType, weightType,
                                                 options.depthwiseMaxUnrolledTaps);
    SmallVector<int64_t> ends(pads.drop_front(spatial));
    if (phasedDepthwise)
      ends = phaseEndPads(op, inputType, weightType);
    if (pitchedColumns)
      ends[1] = pitchedDepthwiseEndPad(op, inputType, weightType, pitchedColumns);
    if (shifted || flatDepthwise)
      ends[0] += shiftedExtraRows(op, weightType,
                                  inputType.getDimSize(2) + pads[0] + pads[spatial],
                                  inputType.getDimSize(3) + pads[1] + pads[spatial + 1]);
    Value input = padSpatial(rewriter, loc, adaptor.getInput(), pads.take_front(spatial), ends,
                             zero);
    Value weight = adaptor.getWeight();
    auto strides = i64Elements(rewriter, op.getStrides());
    auto dilations = i64Elements(rewriter, op.getDilations());
    SmallVector<Value> dynamicSizes =
        batchDynamicSize(rewriter, loc, result, adaptor.getInput());

    Value conv;
    // Batches up to options.matmulMaxBatch images: matmuls per image
    // (their count is unrolled).
    if (shifted) {
      conv = convAsShiftedMatmuls(rewriter, loc, op, input, weight);
    } else if (asMatmul) {
      conv = convAsMatmul(rewriter, loc, op, input, weight);
    } else if (group == 1) {
      Value init = createInit(rewriter, loc, result, dynamicSizes, zero);
      SmallVector<Value> operands = {input, weight};
      if (spatial == 1)
        conv = linalg::Conv1DNcwFcwOp::create(rewriter, loc, result, operands, init,
                                              strides, dilations)
                   .getResult(0);
      else if (spatial == 2)
        conv = linalg::Conv2DNchwFchwOp::create(rewriter, loc, result, operands, init,
                                                strides, dilations)
                   .getResult(0);
      else
        conv = linalg::Conv3DNcdhwFcdhwOp::create(rewriter, loc, result, operands, init,
                                                  strides, dilations)
                   .getResult(0);
    } else if (spatial != 2) {
      return lowering::failLowering(rewriter, op, "grouped conv is lowered for 2-D only");
    } else if (depthwise) {
      // The bias is part of the depthwise generic.
      rewriter.replaceOp(op, flatDepthwise
                                 ? depthwiseConvFlat(rewriter, loc, op, input, weight,
                                                     adaptor.getBias())
                             : pitchedColumns
                                 ? depthwiseConvPitched(rewriter, loc, op, input, weight,
                                                        adaptor.getBias(), dynamicSizes,
                                                        pitchedColumns)
                             : phasedDepthwise
                                 ? depthwiseConvPhases(rewriter, loc, op, input, weight,
                                                       adaptor.getBias())
                                 : depthwiseConv(rewriter, loc, op, input, weight,
                                                 adaptor.getBias(), dynamicSizes,
                                                 options.depthwiseMaxUnrolledTaps));
      return success();
    } else {
      // Split channels into (group, per-group): x [N, G, C/G, H, W],
      // w [G, F/G, C/G, kh, kw], y [N, G, F/G, OH, OW].
      auto paddedType = cast<RankedTensorType>(input.getType());
      SmallVector<int64_t> xShape = {paddedType.getDimSize(0), group, channels / group,
                                     paddedType.getDimSize(2), paddedType.getDimSize(3)};
      Value x = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(xShape, element), input,
          ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
      SmallVector<int64_t> wShape = {group, filters / group, weightType.getDimSize(1),
                                     weightType.getDimSize(2), weightType.getDimSize(3)};
      Value w = tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(wShape, element), weight,
          ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}, {4}});
      SmallVector<int64_t> yShape = {result.getDimSize(0), group, filters / group,
                                     result.getDimSize(2), result.getDimSize(3)};
      auto groupedType = RankedTensorType::get(yShape, element);
      Value init = createInit(rewriter, loc, groupedType, dynamicSizes, zero);
      Value y = linalg::Conv2DNgchwGfchwOp::create(rewriter, loc, groupedType,
                                                   ValueRange{x, w}, init, strides,
                                                   dilations)
                    .getResult(0);
      conv = tensor::CollapseShapeOp::create(
          rewriter, loc, result, y, ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3}, {4}});
    }
    if (Value bias = adaptor.getBias())
      conv = addChannelBias(rewriter, loc, conv, bias);
    rewriter.replaceOp(op, conv);
    return success();
  }
};

/// A transposed conv as a conv with unit strides: the input is spread out by
/// the strides (zeros between its elements) and padded by
/// dilation * (K - 1) - pad_begin in front and dilation * (K - 1) - pad_end +
/// output_padding behind (a negative amount crops), and the weight
/// [C, M/g, K...] becomes [M, C/g, K...] with its window flipped:
///   w'[m, c, k...] = w[(m / (M/g)) * (C/g) + c, m mod (M/g), K - 1 - k...]
/// The new kiln.conv is legalized by ConvToLinalgNamed.
struct ConvTransposeToConv final : OpConversionPattern<ConvTransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvTransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput(), weight = adaptor.getWeight();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto weightType = cast<RankedTensorType>(weight.getType());
    RankedTensorType result = op.getType();
    int64_t rank = inputType.getRank(), spatial = rank - 2;
    for (int64_t i = 1; i < rank; ++i)
      if (inputType.isDynamicDim(i) || result.isDynamicDim(i))
        return lowering::failLowering(rewriter, op, "dynamic channel or spatial dims");
    if (!weightType.hasStaticShape())
      return lowering::failLowering(rewriter, op, "dynamic weight");
    Type element = result.getElementType();
    int64_t group = op.getGroup();
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations(),
                      pads = op.getPads(), outputPadding = op.getOutputPadding();

    // The spread and padded input, then any crop of negative amounts.
    SmallVector<int64_t> spreadShape(inputType.getShape().take_front(2));
    SmallVector<OpFoldResult> insertOffsets(2, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> insertStrides(2, rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> cropOffsets(2, rewriter.getIndexAttr(0));
    SmallVector<int64_t> cropShape(spreadShape);
    bool crops = false;
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t extent = dilations[i] * (weightType.getDimSize(i + 2) - 1);
      int64_t lo = extent - pads[i];
      int64_t hi = extent - pads[i + spatial] + outputPadding[i];
      int64_t length = (inputType.getDimSize(i + 2) - 1) * strides[i] + 1;
      int64_t padLo = std::max<int64_t>(lo, 0), padHi = std::max<int64_t>(hi, 0);
      spreadShape.push_back(length + padLo + padHi);
      insertOffsets.push_back(rewriter.getIndexAttr(padLo));
      insertStrides.push_back(rewriter.getIndexAttr(strides[i]));
      cropOffsets.push_back(rewriter.getIndexAttr(padLo - lo));
      cropShape.push_back(length + lo + hi);
      crops |= lo < 0 || hi < 0;
      if (length + lo + hi < extent + 1)
        return lowering::failLowering(rewriter, op, "pads crop more than the spread input");
    }
    SmallVector<Value> dynamicSizes = batchDynamicSize(rewriter, loc, inputType, input);
    Value zero = scalarConstant(rewriter, loc, element, 0);
    Value spread = createInit(rewriter, loc, inputType.clone(spreadShape), dynamicSizes, zero);
    SmallVector<OpFoldResult> sizes;
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(inputType.isDynamicDim(i)
                          ? OpFoldResult(dynamicSizes.front())
                          : OpFoldResult(rewriter.getIndexAttr(inputType.getDimSize(i))));
    spread = tensor::InsertSliceOp::create(rewriter, loc, input, spread, insertOffsets, sizes,
                                           insertStrides);
    if (crops) {
      SmallVector<OpFoldResult> cropSizes;
      for (int64_t i = 0; i < rank; ++i)
        cropSizes.push_back(inputType.isDynamicDim(i)
                                ? OpFoldResult(dynamicSizes.front())
                                : OpFoldResult(rewriter.getIndexAttr(cropShape[i])));
      spread = tensor::ExtractSliceOp::create(
          rewriter, loc, cast<RankedTensorType>(inputType.clone(cropShape)), spread,
          cropOffsets, cropSizes, SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    }

    // The flipped weight, its in/out channel dims swapped per group.
    int64_t channels = weightType.getDimSize(0), filtersPerGroup = weightType.getDimSize(1);
    int64_t channelsPerGroup = channels / group;
    SmallVector<int64_t> flippedShape = {filtersPerGroup * group, channelsPerGroup};
    for (int64_t i = 0; i < spatial; ++i)
      flippedShape.push_back(weightType.getDimSize(i + 2));
    auto flippedType = RankedTensorType::get(flippedShape, element);
    Value flippedInit = createInit(rewriter, loc, flippedType, {});
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
    Value flipped =
        linalg::GenericOp::create(
            rewriter, loc, flippedType, ValueRange{}, flippedInit, maps, iterators,
            [&](OpBuilder &b, Location l, ValueRange) {
              auto index = [&](int64_t v) {
                return arith::ConstantIndexOp::create(b, l, v).getResult();
              };
              Value m = linalg::IndexOp::create(b, l, 0);
              Value c = linalg::IndexOp::create(b, l, 1);
              Value g = arith::DivUIOp::create(b, l, m, index(filtersPerGroup));
              SmallVector<Value> coords = {
                  arith::AddIOp::create(
                      b, l, arith::MulIOp::create(b, l, g, index(channelsPerGroup)), c),
                  arith::RemUIOp::create(b, l, m, index(filtersPerGroup))};
              for (int64_t i = 0; i < spatial; ++i)
                coords.push_back(arith::SubIOp::create(
                    b, l, index(flippedShape[i + 2] - 1),
                    linalg::IndexOp::create(b, l, i + 2)));
              linalg::YieldOp::create(
                  b, l, tensor::ExtractOp::create(b, l, weight, coords).getResult());
            })
            .getResult(0);

    SmallVector<int64_t> ones(spatial, 1), noPads(2 * spatial, 0);
    rewriter.replaceOpWithNewOp<ConvOp>(op, result, spread, flipped, adaptor.getBias(),
                                        rewriter.getDenseI64ArrayAttr(ones),
                                        rewriter.getDenseI64ArrayAttr(dilations),
                                        rewriter.getDenseI64ArrayAttr(noPads),
                                        op.getGroupAttr());
    return success();
  }
};

} // namespace

void populateConvToLinalgPatterns(RewritePatternSet &patterns,
                                  const ConvLoweringOptions &options) {
  patterns.add<ConvToLinalgNamed>(patterns.getContext(), options);
  patterns.add<ConvTransposeToConv>(patterns.getContext());
}

} // namespace kiln
