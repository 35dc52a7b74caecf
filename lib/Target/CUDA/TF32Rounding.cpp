//===- TF32Rounding.cpp - f32 values rounded to tf32 ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "TF32Rounding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/bit.h"

#include <cstdint>

using namespace mlir;

namespace kiln {

namespace {
/// Low mantissa bits that tf32 drops, and half of their range (rounding).
constexpr uint32_t kTF32Mask = 0xFFFFE000u, kTF32Half = 0x1000u;
} // namespace

float roundToTF32(float x) {
  return llvm::bit_cast<float>((llvm::bit_cast<uint32_t>(x) + kTF32Half) & kTF32Mask);
}

Value emitRoundToTF32(OpBuilder &b, Location loc, Value x) {
  Type i32 = b.getI32Type();
  Value bits = arith::BitcastOp::create(b, loc, i32, x);
  Value half = arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(kTF32Half));
  Value mask =
      arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(static_cast<int32_t>(kTF32Mask)));
  Value rounded = arith::AndIOp::create(b, loc, arith::AddIOp::create(b, loc, bits, half), mask);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), rounded);
}

} // namespace kiln
