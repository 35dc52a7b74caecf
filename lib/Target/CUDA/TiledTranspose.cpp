//===- TiledTranspose.cpp - A coalesced transpose kernel for kiln-cuda-gemm -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "TiledTranspose.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace kiln {

void emitTiledTranspose(IRRewriter &b, linalg::TransposeOp transpose) {
  Location loc = transpose.getLoc();
  b.setInsertionPoint(transpose);
  Value input = transpose.getInput(), output = transpose.getInit();
  auto type = cast<MemRefType>(input.getType());
  int64_t rank = type.getRank();
  int64_t batch = rank == 3 ? type.getDimSize(0) : 1;
  int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
  Type element = type.getElementType();
  auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  constexpr int64_t kTile = 32, kRowsPerStep = 8;
  int64_t bytes = kTile * (kTile + 1) * (element.getIntOrFloatBitWidth() / 8);
  auto launch = gpu::LaunchOp::create(
      b, loc, idx(llvm::divideCeil(cols, kTile)), idx(llvm::divideCeil(rows, kTile)),
      idx(batch), idx(kTile), idx(kRowsPerStep), idx(1),
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), bytes));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&launch.getBody().front());
  Attribute workgroup = gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  Value smem = gpu::DynamicSharedMemoryOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type(), MemRefLayoutAttrInterface(),
                              workgroup));
  Value tile = memref::ViewOp::create(
      b, loc, MemRefType::get({kTile, kTile + 1}, element, MemRefLayoutAttrInterface(), workgroup),
      smem, idx(0), ValueRange{});
  Value tx = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value ty = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::y);
  Value col0 = arith::MulIOp::create(b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::x),
                                     idx(kTile));
  Value row0 = arith::MulIOp::create(b, loc, gpu::BlockIdOp::create(b, loc, gpu::Dimension::y),
                                     idx(kTile));
  Value z = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };
  auto below = [&](Value x, int64_t bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, idx(bound)).getResult();
  };
  auto at = [&](Value r, Value c) {
    SmallVector<Value> indices;
    if (rank == 3)
      indices.push_back(z);
    indices.append({r, c});
    return indices;
  };
  auto guarded = [&](Value condition, function_ref<void()> body) {
    auto inside = scf::IfOp::create(b, loc, condition, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard nested(b);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
    body();
  };
  // Rows of the input tile, 32 threads along a row (coalesced reads).
  for (int64_t step = 0; step < kTile; step += kRowsPerStep) {
    Value local = add(ty, idx(step));
    Value r = add(row0, local), c = add(col0, tx);
    guarded(arith::AndIOp::create(b, loc, below(r, rows), below(c, cols)), [&] {
      Value v = memref::LoadOp::create(b, loc, input, at(r, c));
      memref::StoreOp::create(b, loc, v, tile, ValueRange{local, tx});
    });
  }
  gpu::BarrierOp::create(b, loc);
  // Rows of the output tile (the input's columns), coalesced writes.
  for (int64_t step = 0; step < kTile; step += kRowsPerStep) {
    Value local = add(ty, idx(step));
    Value c = add(col0, local), r = add(row0, tx);
    guarded(arith::AndIOp::create(b, loc, below(c, cols), below(r, rows)), [&] {
      Value v = memref::LoadOp::create(b, loc, tile, ValueRange{tx, local});
      memref::StoreOp::create(b, loc, v, output, at(c, r));
    });
  }
  gpu::TerminatorOp::create(b, loc);
  b.eraseOp(transpose);
}

} // namespace kiln
