//===- PitchedViews.cpp - Windows computed at a padded row pitch ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "PitchedViews.h"
#include "LinalgBuilders.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <algorithm>

using namespace mlir;

namespace kiln::lowering {

Value dropPitchColumns(OpBuilder &b, Location loc, Value y, RankedTensorType result, int64_t wp,
                       OpFoldResult images) {
  ArrayRef<int64_t> shape = result.getShape();
  SmallVector<OpFoldResult> sizes = llvm::map_to_vector(
      shape, [&](int64_t size) -> OpFoldResult { return b.getIndexAttr(size); });
  sizes[0] = images;
  SmallVector<OpFoldResult> wide(sizes);
  wide[3] = b.getIndexAttr(wp);
  Value rows = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({shape[0], shape[1], shape[2], wp}, result.getElementType()),
      y, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}}, wide);
  return tensor::ExtractSliceOp::create(b, loc, result, rows,
                                        SmallVector<OpFoldResult>(4, b.getIndexAttr(0)), sizes,
                                        SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
}

std::pair<int64_t, int64_t> phasePaddedSize(int64_t height, int64_t width, int64_t kh,
                                            int64_t kw, int64_t s, int64_t outputRows) {
  int64_t wq = (width + s - 1) / s;
  int64_t hq = std::max<int64_t>((height + s - 1) / s,
                                 outputRows + (kh - 1) / s + ((kw - 1) / s > 0 ? 1 : 0));
  return {hq * s, wq * s};
}

Value stridedPhases(OpBuilder &b, Location loc, Value input, int64_t s) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  int64_t hq = type.getDimSize(2) / s, wq = type.getDimSize(3) / s;
  MLIRContext *context = b.getContext();
  // Loops (n, c, a, y, x, b): b innermost, so that a vector along x reads
  // both phase columns of 2*vector contiguous inputs (a deinterleave) and
  // writes one contiguous vector per phase (with y innermost instead the
  // split took 2-3x longer).
  AffineExpr dn, dc, da, dy, dx, db;
  bindDims(context, dn, dc, da, dy, dx, db);
  auto phasesType = RankedTensorType::get({n, c, s, s, hq, wq}, type.getElementType());
  SmallVector<Value> dynamicSizes;
  if (phasesType.isDynamicDim(0))
    dynamicSizes.push_back(tensor::DimOp::create(b, loc, input, 0));
  Value phases =
      linalg::GenericOp::create(
          b, loc, phasesType, input, createInit(b, loc, phasesType, dynamicSizes),
          ArrayRef<AffineMap>{AffineMap::get(6, 0, {dn, dc, dy * s + da, dx * s + db}, context),
                              AffineMap::get(6, 0, {dn, dc, da, db, dy, dx}, context)},
          SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
          [](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(nb, l, args[0]);
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get({n, c, s * s, hq * wq}, type.getElementType()), phases,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}, {4, 5}});
}

Value phaseTap(OpBuilder &b, Location loc, Value phases, int64_t s, int64_t wq, int64_t i,
               int64_t j, int64_t columns) {
  auto type = cast<RankedTensorType>(phases.getType());
  auto tapType = RankedTensorType::get({type.getDimSize(0), type.getDimSize(1), columns},
                                       type.getElementType());
  return tensor::ExtractSliceOp::create(
      b, loc, tapType, phases,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                             b.getIndexAttr((i % s) * s + j % s),
                             b.getIndexAttr((i / s) * wq + j / s)},
      ArrayRef<OpFoldResult>{tensor::getMixedSize(b, loc, phases, 0),
                             b.getIndexAttr(type.getDimSize(1)), b.getIndexAttr(1),
                             b.getIndexAttr(columns)},
      SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
}

SmallVector<Value> stridedTaps(OpBuilder &b, Location loc, RankedTensorType result, Value input,
                               int64_t kh, int64_t kw, ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations, ValueRange dynamicSizes) {
  SmallVector<OpFoldResult> sizes = {
      result.isDynamicDim(0) ? OpFoldResult(dynamicSizes.front())
                             : OpFoldResult(b.getIndexAttr(result.getDimSize(0))),
      b.getIndexAttr(result.getDimSize(1)), b.getIndexAttr(result.getDimSize(2)),
      b.getIndexAttr(result.getDimSize(3))};
  SmallVector<OpFoldResult> steps = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     b.getIndexAttr(strides[0]), b.getIndexAttr(strides[1])};
  SmallVector<Value> taps;
  for (int64_t i = 0; i < kh; ++i)
    for (int64_t j = 0; j < kw; ++j) {
      SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), b.getIndexAttr(0),
                                           b.getIndexAttr(i * dilations[0]),
                                           b.getIndexAttr(j * dilations[1])};
      taps.push_back(tensor::ExtractSliceOp::create(b, loc, result, input, offsets, sizes, steps));
    }
  return taps;
}

} // namespace kiln::lowering
