//===- Im2col.cpp - A convolution's patches as one linalg.generic ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/KilnToLinalg/Im2col.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace kiln {

linalg::GenericOp createIm2col(OpBuilder &b, Location loc, Value input, Value init,
                               PatchLayout layout, ArrayRef<int64_t> strides,
                               ArrayRef<int64_t> dilations) {
  MLIRContext *context = b.getContext();
  AffineExpr dn, dc, di, dj, dy, dx;
  if (layout == PatchLayout::ChannelsOuter)
    bindDims(context, dn, dc, di, dj, dy, dx);
  else
    bindDims(context, dn, dy, dx, dc, di, dj);
  auto read = AffineMap::get(
      6, 0, {dn, dc, dy * strides[0] + di * dilations[0], dx * strides[1] + dj * dilations[1]},
      context);
  auto patchType = cast<RankedTensorType>(init.getType());
  Type element = patchType.getElementType();
  bool narrowing = element != cast<RankedTensorType>(input.getType()).getElementType();
  return linalg::GenericOp::create(
      b, loc, TypeRange{patchType}, ValueRange{input}, ValueRange{init},
      ArrayRef<AffineMap>{read, b.getMultiDimIdentityMap(6)},
      SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value value = args[0];
        if (narrowing)
          value = arith::TruncFOp::create(nb, l, element, value);
        linalg::YieldOp::create(nb, l, value);
      });
}

} // namespace kiln
