//===- Epilogue.cpp - Elementwise epilogues of matmul dispatches ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace kiln {
namespace {

/// An indexing map the kernel can read at a tile row and a vector of
/// columns: results are d0, d1 or the constant 0, d1 at most once and last.
bool isTileMap(AffineMap map) {
  bool seenColumn = false;
  for (AffineExpr expr : map.getResults()) {
    if (seenColumn)
      return false;
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      seenColumn = dim.getPosition() == 1;
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return false;
  }
  return true;
}

/// An operation the kernel can apply to whole vectors: arith/math,
/// elementwise, no regions or side effects, and no integer division (the
/// masked-off lanes hold zeros, a division by them would trap).
bool isVectorizableBodyOp(Operation &op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) || op.getNumRegions() ||
      op.getNumResults() != 1 || !isPure(&op))
    return false;
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp,
          arith::CeilDivUIOp, arith::FloorDivSIOp>(op))
    return false;
  auto scalar = [](Type t) { return t.isIntOrFloat(); };
  return llvm::all_of(op.getOperandTypes(), scalar) && llvm::all_of(op.getResultTypes(), scalar);
}

} // namespace

bool isMatmulEpilogue(linalg::GenericOp generic, unsigned cIndex) {
  if (generic.getNumLoops() != 2 || generic.getNumReductionLoops() != 0 ||
      generic.getNumDpsInits() != 1 || cIndex >= generic.getNumDpsInputs() ||
      !llvm::all_of(generic->getOperandTypes(), llvm::IsaPred<ShapedType>))
    return false;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  if (!maps.back().isIdentity() || !maps[cIndex].isIdentity() ||
      !llvm::all_of(maps, isTileMap))
    return false;
  if (!generic.getRegion().front().getArguments().back().use_empty())
    return false;
  return hasVectorizableScalarBody(generic);
}

bool hasVectorizableScalarBody(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  for (Operation &op : body) {
    if (&op != body.getTerminator() && !isVectorizableBodyOp(op))
      return false;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() != &body && !isa<arith::ConstantOp>(def))
        return false;
    }
  }
  return llvm::all_of(body.getArgumentTypes(), [](Type t) { return t.isIntOrFloat(); });
}

std::optional<unsigned> epilogueInput(linalg::GenericOp generic) {
  auto attr = generic->getAttrOfType<IntegerAttr>(kEpilogueAttr);
  if (!attr)
    return std::nullopt;
  return static_cast<unsigned>(attr.getInt());
}

LogicalResult verifyDispatchGroupsFused(Operation *root) {
  bool fused = true;
  root->walk([&](linalg::GenericOp generic) {
    if (generic->hasAttr(kEpilogueAttr)) {
      generic.emitError("matmul epilogue could not be fused into the matmul kernel");
      fused = false;
    } else if (generic->hasAttr(kRowGroupAttr)) {
      generic.emitError("row group ")
          << generic->getAttrOfType<IntegerAttr>(kRowGroupAttr).getInt()
          << " was not emitted as one row kernel";
      fused = false;
    }
  });
  return success(fused);
}

} // namespace kiln
