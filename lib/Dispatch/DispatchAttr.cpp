//===- DispatchAttr.cpp - Which kiln.dispatch an op came from -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

namespace kiln {

bool isDispatchKernelOp(Operation *op) {
  return isa<AttentionKernelOp, MatmulNBitsKernelOp>(op) || (isa<linalg::LinalgOp>(op) && !isa<linalg::FillOp>(op));
}

void setDispatchAttr(Operation *op, int64_t id, StringRef kind, ArrayAttr nodes) {
  Builder b(op->getContext());
  op->setAttr(kDispatchAttr, b.getDictionaryAttr({b.getNamedAttr("id", b.getI64IntegerAttr(id)),
                                                  b.getNamedAttr("kind", b.getStringAttr(kind)),
                                                  b.getNamedAttr("nodes", nodes)}));
}

void copyDispatchAttr(Operation *from, Operation *to) {
  if (Attribute dispatch = from->getAttr(kDispatchAttr))
    to->setAttr(kDispatchAttr, dispatch);
}

std::optional<int64_t> dispatchId(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kDispatchAttr);
  auto id = dict ? dict.getAs<IntegerAttr>("id") : IntegerAttr();
  if (!id)
    return std::nullopt;
  return id.getInt();
}

ArrayAttr dispatchNodes(Operation *op) {
  auto dict = op->getAttrOfType<DictionaryAttr>(kDispatchAttr);
  auto nodes = dict ? dict.getAs<ArrayAttr>("nodes") : ArrayAttr();
  return nodes ? nodes : ArrayAttr::get(op->getContext(), {});
}

bool inSameDispatch(Operation *a, Operation *b) {
  std::optional<int64_t> x = dispatchId(a), y = dispatchId(b);
  return !x || !y || *x == *y;
}

bool inOneDispatch(ArrayRef<Operation *> ops) {
  std::optional<int64_t> first;
  for (Operation *op : ops)
    if (std::optional<int64_t> id = dispatchId(op)) {
      if (first && *first != *id)
        return false;
      first = id;
    }
  return true;
}

} // namespace kiln
