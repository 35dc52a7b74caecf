//===- MatmulEpilogue.cpp - Epilogues of the CPU matmul kernel ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "MatmulEpilogue.h"

#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

namespace kiln {
namespace {

/// d1, the tile's column index in an epilogue map.
AffineExpr b1Dim(AffineMap map) { return getAffineDimExpr(1, map.getContext()); }

/// The buffer a view is a view of.
Value baseBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// A 2-D buffer whose rows are contiguous (the kernel stores vectors).
bool hasContiguousRows(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  return type && type.getRank() == 2 &&
         (type.getLayout().isIdentity() ||
          (succeeded(type.getStridesAndOffset(strides, offset)) && strides.back() == 1));
}

} // namespace

/// The same buffer: one value, or two identical subviews.
bool sameView(Value x, Value y) {
  Operation *dx = x.getDefiningOp(), *dy = y.getDefiningOp();
  return x == y || (dx && dy && isa<memref::SubViewOp>(dx) &&
                    OperationEquivalence::isEquivalentTo(dx, dy,
                                                         OperationEquivalence::IgnoreLocations));
}

/// The marked epilogue reading `op`'s C after it (kiln/Dispatch/Epilogue.h),
/// with `op` moved right before it, or null. Between them only buffer
/// allocations, pure ops (views, constants) and deallocations may lie;
/// deallocations of the matmul's operands move after the epilogue.
linalg::GenericOp takeEpilogue(linalg::MatmulOp op) {
  Value c = op.getDpsInits()[0];
  SmallVector<Value> operands = {baseBuffer(op.getDpsInputs()[0]),
                                 baseBuffer(op.getDpsInputs()[1]), baseBuffer(c)};
  SmallVector<Operation *> deallocs;
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    auto generic = dyn_cast<linalg::GenericOp>(next);
    std::optional<unsigned> cIndex = generic ? epilogueInput(generic) : std::nullopt;
    if (cIndex) {
      if (!generic.hasPureBufferSemantics() || !isMatmulEpilogue(generic, *cIndex) ||
          !sameView(generic.getDpsInputs()[*cIndex], c) ||
          !hasContiguousRows(generic.getDpsInits()[0]))
        return nullptr;
      for (OpOperand *input : generic.getDpsInputOperands()) {
        AffineMap map = generic.getMatchingIndexingMap(input);
        auto type = cast<MemRefType>(input->get().getType());
        SmallVector<int64_t> strides;
        int64_t offset;
        if (map.getNumResults() && map.getResults().back() == b1Dim(map) &&
            !type.getLayout().isIdentity() &&
            (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1))
          return nullptr;
      }
      op->moveBefore(generic);
      for (Operation *dealloc : deallocs)
        dealloc->moveAfter(generic);
      return generic;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(next)) {
      if (llvm::is_contained(operands, baseBuffer(dealloc.getMemref())))
        deallocs.push_back(dealloc);
      continue;
    }
    // Run-time checks stay before the matmul (they read no buffer).
    if (auto call = dyn_cast<func::CallOp>(next); call && call.getCallee() == kCheckHookName)
      continue;
    if (!isa<memref::AllocOp, memref::AllocaOp>(next) && !isPure(next))
      return nullptr;
  }
  return nullptr;
}

/// Stores f(acc) into the epilogue's output for the tile rows x vectors at
/// (rows[r], cols[v]): each other input is vector-loaded along the columns
/// (its map ends in d1) or loaded once and broadcast, and the generic's
/// body is applied to whole vectors.
void applyEpilogue(OpBuilder &b, Location loc, linalg::GenericOp generic,
                   ArrayRef<Value> acc, ArrayRef<Value> rows, ArrayRef<Value> cols,
                   ArrayRef<Value> masks, int64_t vectorWidth) {
  unsigned cIndex = *epilogueInput(generic);
  Block &body = generic.getRegion().front();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  auto vectorOf = [&](Type t) { return VectorType::get({vectorWidth}, t); };
  auto zeroOf = [&](Type t) {
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(vectorOf(t))));
  };
  Value out = generic.getDpsInits()[0];
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t v = 0; v < cols.size(); ++v) {
      IRMapping map;
      for (OpOperand *input : generic.getDpsInputOperands()) {
        unsigned i = input->getOperandNumber();
        BlockArgument arg = body.getArgument(i);
        if (i == cIndex) {
          map.map(arg, acc[r * cols.size() + v]);
          continue;
        }
        SmallVector<Value> at;
        bool alongColumns = false;
        for (AffineExpr expr : maps[i].getResults()) {
          auto dim = dyn_cast<AffineDimExpr>(expr);
          alongColumns = dim && dim.getPosition() == 1;
          at.push_back(!dim ? arith::ConstantIndexOp::create(b, loc, 0) : alongColumns ? cols[v] : rows[r]);
        }
        Value value;
        if (!alongColumns)
          value = vector::BroadcastOp::create(
              b, loc, vectorOf(arg.getType()), memref::LoadOp::create(b, loc, input->get(), at));
        else if (masks.empty())
          value = vector::LoadOp::create(b, loc, vectorOf(arg.getType()), input->get(), at);
        else
          value = vector::MaskedLoadOp::create(b, loc, vectorOf(arg.getType()), input->get(), at,
                                               masks[v], zeroOf(arg.getType()));
        map.map(arg, value);
      }
      // Scalars from outside the body (constants) become splats.
      auto lookup = [&](Value scalar) -> Value {
        if (Value mapped = map.lookupOrNull(scalar))
          return mapped;
        return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()), scalar);
      };
      for (Operation &op : body.without_terminator()) {
        if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
          map.map(constant.getResult(),
                  arith::ConstantOp::create(
                      b, loc, DenseElementsAttr::get(vectorOf(constant.getType()),
                                                     constant.getValue())));
          continue;
        }
        OperationState state(loc, op.getName());
        for (Value operand : op.getOperands())
          state.addOperands(lookup(operand));
        state.addTypes(vectorOf(op.getResult(0).getType()));
        state.addAttributes(op.getAttrs());
        map.map(op.getResult(0), b.create(state)->getResult(0));
      }
      Value result = lookup(body.getTerminator()->getOperand(0));
      Value at[] = {rows[r], cols[v]};
      if (masks.empty())
        vector::StoreOp::create(b, loc, result, out, at);
      else
        vector::MaskedStoreOp::create(b, loc, out, at, masks[v], result);
    }
}

} // namespace kiln
