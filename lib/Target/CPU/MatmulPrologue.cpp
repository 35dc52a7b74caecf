//===- MatmulPrologue.cpp - B prologues of conv taps kernels --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "MatmulPrologue.h"

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace kiln {

BPrologue::BPrologue(linalg::GenericOp generic) : generic(generic) {
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Block &body = generic.getRegion().front();
  for (unsigned i = 1; i < generic.getNumDpsInputs(); ++i) {
    if (isConvTapsRowMap(maps[i])) {
      rowArgs.push_back(i);
    } else {
      xArgs.push_back(i);
      xs.push_back(generic.getDpsInputs()[i]);
    }
  }
  // yield out + w * element
  auto add = cast<arith::AddFOp>(body.getTerminator()->getOperand(0).getDefiningOp());
  auto mul = add.getRhs().getDefiningOp<arith::MulFOp>();
  element = mul.getRhs();
  product = mul;
  sum = add;
  llvm::SmallPtrSet<Value, 8> varying;
  for (unsigned i : xArgs)
    varying.insert(body.getArgument(i));
  for (Operation &op : body.without_terminator()) {
    if (&op == add || &op == mul)
      continue;
    if (llvm::any_of(op.getOperands(), [&](Value v) { return varying.contains(v); }))
      varying.insert(op.getResult(0));
    else
      perRow.insert(&op);
  }
}

void BPrologue::beginRow(OpBuilder &b, Location loc, Value channel) {
  rowValues.clear();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Block &body = generic.getRegion().front();
  for (unsigned i : rowArgs) {
    SmallVector<Value> at;
    for (AffineExpr expr : maps[i].getResults()) {
      if (auto constant = dyn_cast<AffineConstantExpr>(expr))
        at.push_back(arith::ConstantIndexOp::create(b, loc, constant.getValue()));
      else
        at.push_back(channel);
    }
    rowValues.map(body.getArgument(i),
                  memref::LoadOp::create(b, loc, generic.getDpsInputs()[i], at).getResult());
  }
  for (Operation &op : body.without_terminator())
    if (perRow.contains(&op))
      b.clone(op, rowValues);
}

Value BPrologue::evaluate(OpBuilder &b, Location loc, ArrayRef<Value> xVectors,
                          int64_t vectorWidth) {
  Block &body = generic.getRegion().front();
  auto vectorOf = [&](Type t) { return VectorType::get({vectorWidth}, t); };
  IRMapping map;
  for (auto [arg, vector] : llvm::zip(xArgs, xVectors))
    map.map(body.getArgument(arg), vector);
  // Scalars (per row, or from outside the body) become splats.
  auto lookup = [&](Value value) -> Value {
    if (Value vector = map.lookupOrNull(value))
      return vector;
    Value scalar = rowValues.lookupOrDefault(value);
    return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()), scalar);
  };
  for (Operation &op : body.without_terminator()) {
    if (perRow.contains(&op) || &op == product || &op == sum)
      continue;
    OperationState state(loc, op.getName());
    for (Value operand : op.getOperands())
      state.addOperands(lookup(operand));
    state.addTypes(vectorOf(op.getResult(0).getType()));
    state.addAttributes(op.getAttrs());
    map.map(op.getResult(0), b.create(state)->getResult(0));
  }
  return lookup(element);
}

} // namespace kiln
