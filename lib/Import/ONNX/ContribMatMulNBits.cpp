//===- ContribMatMulNBits.cpp - onnxruntime MatMulNBits as kiln ops --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// MatMulNBits (com.microsoft 1): Y = A W^T (+ bias) where W [N, K] is stored
// as `bits`-bit integers packed along K into bytes (B [N, k_blocks, blob],
// the first value in the low bits), with one scale (and zero point) per block
// of `block_size` values along K. The weight is dequantized by kiln ops (a
// first step: W becomes an f32 tensor, folded when B and the scales are
// constants, no low-bit matmul kernel):
//   each byte's values: (B >> (i * bits)) & (2^bits - 1), i = 0 .. 8/bits - 1,
//   W = (q - zero_point) * scale per block (zero point default 2^(bits-1);
//   packed uint8 zero points unpacked the same way, or float ones as given),
//   K's padding of the last block sliced off, then matmul with W^T.
//
//===----------------------------------------------------------------------===//

#include "ContribOps.h"

using namespace mlir;

namespace kiln::onnx_import::contrib {
namespace {

/// The `bits`-bit values of the bytes of `packed` [..., n] (ui8) as i32
/// [..., n * 8 / bits], low bits first.
FailureOr<Value> unpack(NodeBinder &b, Value packed, int64_t bits) {
  RankedTensorType type = tensorType(packed);
  Type i32 = b.builder().getI32Type();
  FailureOr<Value> wide = b.makeTyped<kiln::CastOp>(type.clone(i32), packed);
  if (failed(wide) || bits == 8)
    return wide;
  int64_t rank = type.getRank(), perByte = 8 / bits;
  SmallVector<Value> parts;
  for (int64_t i = 0; i < perByte; ++i) {
    FailureOr<Value> shifted =
        i == 0 ? wide
               : b.make<kiln::BitShiftOp>(*wide, b.scalar(i32, static_cast<double>(i * bits)),
                                          false);
    FailureOr<Value> value =
        succeeded(shifted)
            ? b.make<kiln::AndOp>(*shifted, b.scalar(i32, static_cast<double>((1 << bits) - 1)))
            : shifted;
    FailureOr<Value> part =
        succeeded(value) ? b.make<kiln::UnsqueezeOp>(*value, ArrayRef<int64_t>{rank}) : value;
    if (failed(part))
      return failure();
    parts.push_back(*part);
  }
  FailureOr<Value> stacked = b.make<kiln::ConcatOp>(parts, static_cast<uint64_t>(rank));
  if (failed(stacked))
    return failure();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() *= perByte;
  return b.makeTyped<kiln::ReshapeOp>(RankedTensorType::get(shape, i32), *stacked,
                                      b.i64Vector(shape));
}

LogicalResult matMulNBits(NodeBinder &b) {
  FailureOr<Value> a = b.input(0), packed = b.input(1), scales = b.input(2);
  FailureOr<int64_t> k = b.intAttr("K", std::nullopt), n = b.intAttr("N", std::nullopt),
                     bits = b.intAttr("bits", 4), block = b.intAttr("block_size", std::nullopt),
                     prepacked = b.intAttr("weight_prepacked", 0),
                     accuracy = b.intAttr("accuracy_level", 0);
  if (failed(a) || failed(packed) || failed(scales) || failed(k) || failed(n) ||
      failed(bits) || failed(block) || failed(prepacked) || failed(accuracy) ||
      failed(b.checkRange("attribute 'K'", *k, 1, {})) ||
      failed(b.checkRange("attribute 'N'", *n, 1, {})) ||
      failed(rejectInput(b, 4, "g_idx")))
    return failure();
  if (*bits != 2 && *bits != 4 && *bits != 8)
    return b.unsupported("attribute 'bits' " + Twine(*bits) + " (2, 4 and 8 are supported)");
  if (*block < 16 || (*block & (*block - 1)) != 0)
    return b.emitError() << "attribute 'block_size' is " << *block
                         << ", expected a power of 2 of at least 16";
  if (*prepacked != 0)
    return b.unsupported("attribute 'weight_prepacked' " + Twine(*prepacked) +
                         " (a CUDA-specific layout)");
  int64_t blocks = (*k + *block - 1) / *block, blob = *block * *bits / 8;
  RankedTensorType bType = tensorType(*packed);
  Type ui8 = b.builder().getIntegerType(8, /*isSigned=*/false);
  if (bType != RankedTensorType::get({*n, blocks, blob}, ui8))
    return b.emitError() << "input 1 (B) has type " << bType << ", expected [" << *n << ", "
                         << blocks << ", " << blob << "] of ui8 (an omitted, zero-sized "
                         << "projection is not supported)";
  RankedTensorType aType = tensorType(*a);
  Type element = aType.getElementType();
  if (aType.getRank() < 1 || aType.getDimSize(aType.getRank() - 1) != *k)
    return b.emitError() << "input 0 (A) has type " << aType << ", expected [..., " << *k
                         << "]";
  RankedTensorType sType = tensorType(*scales);
  if (sType.getElementType() != element || sType.getNumElements() != *n * blocks ||
      !sType.hasStaticShape())
    return b.emitError() << "input 2 (scales) has type " << sType << ", expected "
                         << *n * blocks << " values of " << element;
  Type f32 = b.builder().getF32Type();
  auto perBlock = [&](Value v) -> FailureOr<Value> { // [N, blocks, 1] in f32
    RankedTensorType type = tensorType(v);
    FailureOr<Value> wide = type.getElementType() == f32
                                ? FailureOr<Value>(v)
                                : b.makeTyped<kiln::CastOp>(type.clone(f32), v);
    if (failed(wide))
      return failure();
    return b.makeTyped<kiln::ReshapeOp>(RankedTensorType::get({*n, blocks, 1}, f32), *wide,
                                        b.i64Vector({*n, blocks, 1}));
  };
  FailureOr<Value> scale = perBlock(*scales);
  FailureOr<Value> zero;
  Value zeros = b.optionalInput(3);
  if (!zeros) {
    zero = b.scalar(f32, static_cast<double>(1 << (*bits - 1)));
  } else if (tensorType(zeros).getElementType() == ui8) {
    int64_t bytes = (blocks * *bits + 7) / 8;
    if (tensorType(zeros) != RankedTensorType::get({*n, bytes}, ui8))
      return b.emitError() << "input 3 (zero_points) has type " << tensorType(zeros)
                           << ", expected [" << *n << ", " << bytes << "] of ui8";
    FailureOr<Value> values = unpack(b, zeros, *bits);
    FailureOr<Value> cut =
        succeeded(values) ? b.make<kiln::SliceOp>(*values, ArrayRef<int64_t>{0},
                                                  ArrayRef<int64_t>{blocks},
                                                  ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1})
                          : values;
    zero = succeeded(cut) ? perBlock(*cut) : cut;
  } else if (tensorType(zeros).getElementType() == element &&
             tensorType(zeros).getNumElements() == *n * blocks) {
    zero = perBlock(zeros);
  } else {
    return b.emitError() << "input 3 (zero_points) has type " << tensorType(zeros)
                         << ", expected packed ui8 or " << *n * blocks << " values of "
                         << element;
  }
  FailureOr<Value> q = unpack(b, *packed, *bits);
  if (failed(q) || failed(scale) || failed(zero))
    return failure();
  FailureOr<Value> qf = b.makeTyped<kiln::CastOp>(tensorType(*q).clone(f32), *q);
  FailureOr<Value> centered = succeeded(qf) ? b.make<kiln::SubOp>(*qf, *zero) : qf;
  FailureOr<Value> weight = succeeded(centered) ? b.make<kiln::MulOp>(*centered, *scale) : centered;
  if (failed(weight))
    return failure();
  weight = b.makeTyped<kiln::ReshapeOp>(RankedTensorType::get({*n, blocks * *block}, f32),
                                        *weight, b.i64Vector({*n, blocks * *block}));
  if (succeeded(weight) && blocks * *block != *k)
    weight = b.make<kiln::SliceOp>(*weight, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{*k},
                                   ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1});
  FailureOr<Value> wt =
      succeeded(weight) ? b.make<kiln::TransposeOp>(*weight, ArrayRef<int64_t>{1, 0}) : weight;
  if (succeeded(wt) && element != f32)
    wt = b.makeTyped<kiln::CastOp>(tensorType(*wt).clone(element), *wt);
  FailureOr<Value> y = succeeded(wt) ? b.make<kiln::MatmulOp>(*a, *wt) : wt;
  if (Value bias = b.optionalInput(5); succeeded(y) && bias)
    y = b.make<kiln::AddOp>(*y, bias);
  return failed(y) ? failure() : b.setOutput(0, *y);
}

} // namespace

void registerContribMatMulNBits(HandlerRegistry &r) {
  r.add("MatMulNBits", 1, matMulNBits, kDomain);
}

} // namespace kiln::onnx_import::contrib
