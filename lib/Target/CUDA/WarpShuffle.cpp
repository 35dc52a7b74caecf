//===- WarpShuffle.cpp - Combining values across a warp's lanes -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "WarpShuffle.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

namespace kiln::cuda {

Value warpAllReduce(OpBuilder &b, Location loc, Value partial,
                    llvm::function_ref<Value(Value, Value)> combine) {
  auto type = cast<FloatType>(partial.getType());
  bool widen = type.getWidth() < 32;
  for (int32_t offset = kWarp / 2; offset > 0; offset /= 2) {
    Value moved = partial;
    if (widen)
      moved = arith::ExtFOp::create(b, loc, b.getF32Type(), partial);
    Value other = gpu::ShuffleOp::create(b, loc, moved, offset, static_cast<int32_t>(kWarp),
                                         gpu::ShuffleMode::XOR)
                      .getShuffleResult();
    if (widen)
      other = arith::TruncFOp::create(b, loc, type, other);
    partial = combine(partial, other);
  }
  return partial;
}

} // namespace kiln::cuda
