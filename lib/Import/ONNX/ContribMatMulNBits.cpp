//===- ContribMatMulNBits.cpp - onnxruntime MatMulNBits as kiln ops --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// MatMulNBits (com.microsoft 1): Y = A W^T (+ bias) where W [N, K] is stored
// as `bits`-bit integers packed along K into bytes (B [N, k_blocks, blob],
// the first value in the low bits), with one scale (and zero point) per block
// of `block_size` values along K. The weight is dequantized by kiln ops:
//   each byte's values: (B >> (i * bits)) & (2^bits - 1), i = 0 .. 8/bits - 1,
//   W = (q - zero_point) * scale per block (zero point default 2^(bits-1);
//   packed uint8 zero points unpacked the same way, or float ones as given),
//   K's padding of the last block sliced off, then matmul with W^T.
// When B, the scales and the zero points are constants (a model's weights),
// the unpacking is done here: q [N, blocks, block_size] (ui8, one value per
// element), zero points and scales [N, blocks, 1] (f32) are kiln.constant ops
// and the dequantization is `mul(sub(cast(q), zero), scale)` on them, the form
// kiln-recognize-nbits-matmul turns into a low-bit kernel on the CPU (other
// targets fold it into an f32 weight).
//
//===----------------------------------------------------------------------===//

#include "ContribOps.h"

#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

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

/// The elements of a constant `value` (dense or a resource blob of ui8, f32 or
/// f16) as doubles; nullopt when it is not a constant of those.
std::optional<std::vector<double>> constantValues(Value value) {
  ElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)))
    return std::nullopt;
  Type element = attr.getElementType();
  std::vector<double> values;
  values.reserve(attr.getNumElements());
  if (auto floats = dyn_cast<DenseFPElementsAttr>(attr)) {
    for (const APFloat &v : floats.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    return values;
  }
  if (auto ints = dyn_cast<DenseIntElementsAttr>(attr)) {
    for (const APInt &v : ints.getValues<APInt>())
      values.push_back(static_cast<double>(v.getZExtValue()));
    return values;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  int64_t count = attr.getNumElements();
  int64_t width = element.isF32() ? 4 : element.isF16() ? 2 : element.isInteger(8) ? 1 : 0;
  if (!blob || width == 0 || static_cast<int64_t>(blob->getData().size()) != count * width)
    return std::nullopt;
  const char *data = blob->getData().data();
  for (int64_t i = 0; i < count; ++i) {
    if (element.isF32()) {
      float f;
      std::memcpy(&f, data + 4 * i, 4);
      values.push_back(f);
    } else if (element.isF16()) {
      uint16_t h;
      std::memcpy(&h, data + 2 * i, 2);
      values.push_back(APFloat(APFloat::IEEEhalf(), APInt(16, h)).convertToDouble());
    } else {
      values.push_back(static_cast<uint8_t>(data[i]));
    }
  }
  return values;
}

/// B's values q [N, blocks, block] (ui8), the zero points and scales
/// [N, blocks, 1] (f32) as constants when every input they come from is one.
struct ConstantWeight {
  Value q, zero, scale;
};
std::optional<ConstantWeight> constantWeight(NodeBinder &b, Value packed, Value scales,
                                             Value zeros, int64_t n, int64_t blocks,
                                             int64_t block, int64_t bits) {
  std::optional<std::vector<double>> bytes = constantValues(packed),
                                     s = constantValues(scales);
  std::optional<std::vector<double>> z;
  if (zeros && !(z = constantValues(zeros)))
    return std::nullopt;
  if (!bytes || !s)
    return std::nullopt;
  int64_t perByte = 8 / bits, mask = (1 << bits) - 1;
  std::vector<uint8_t> q(n * blocks * block);
  for (size_t i = 0; i < q.size(); ++i)
    q[i] = (static_cast<int64_t>((*bytes)[i / perByte]) >> ((i % perByte) * bits)) & mask;
  bool packedZeros = zeros && tensorType(zeros).getElementType().isUnsignedInteger(8);
  int64_t zeroBytes = (blocks * bits + 7) / 8;
  std::vector<float> zero(n * blocks, static_cast<float>(1 << (bits - 1))), scale(n * blocks);
  for (int64_t row = 0; row < n; ++row)
    for (int64_t i = 0; i < blocks; ++i) {
      int64_t at = row * blocks + i;
      scale[at] = static_cast<float>((*s)[at]);
      if (packedZeros)
        zero[at] = static_cast<float>(
            (static_cast<int64_t>((*z)[row * zeroBytes + i / perByte]) >> ((i % perByte) * bits)) &
            mask);
      else if (z)
        zero[at] = static_cast<float>((*z)[at]);
    }
  MLIRContext *context = b.builder().getContext();
  Type f32 = Float32Type::get(context);
  auto floats = [&](const std::vector<float> &v) {
    auto type = RankedTensorType::get({n, blocks, 1}, f32);
    return b.constant(DenseElementsAttr::get(type, ArrayRef<float>(v)));
  };
  auto qType = RankedTensorType::get({n, blocks, block}, IntegerType::get(context, 8, IntegerType::Unsigned));
  return ConstantWeight{b.constant(DenseElementsAttr::get(qType, ArrayRef<uint8_t>(q))),
                        floats(zero), floats(scale)};
}

/// An op of the dequantization, its result type inferred: folded (`make`)
/// or kept as built.
template <typename OpTy, typename... Args>
FailureOr<Value> node(NodeBinder &b, bool fold, Args &&...args) {
  if (fold)
    return b.make<OpTy>(std::forward<Args>(args)...);
  FailureOr<OpTy> op = b.build<OpTy>(std::forward<Args>(args)...);
  if (failed(op))
    return failure();
  return (*op)->getResult(0);
}

/// The same with an explicit result type.
template <typename OpTy, typename... Args>
FailureOr<Value> typedNode(NodeBinder &b, bool fold, Type type, Args &&...args) {
  if (fold)
    return b.makeTyped<OpTy>(type, std::forward<Args>(args)...);
  FailureOr<OpTy> op = b.buildTyped<OpTy>(TypeRange{type}, std::forward<Args>(args)...);
  if (failed(op))
    return failure();
  return (*op)->getResult(0);
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
  std::optional<ConstantWeight> constant;
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
  if (succeeded(zero))
    constant = constantWeight(b, *packed, *scales, zeros, *n, blocks, *block, *bits);
  if (constant) {
    zero = constant->zero;
    scale = constant->scale;
  }
  FailureOr<Value> q =
      constant ? FailureOr<Value>(constant->q) : unpack(b, *packed, *bits);
  if (failed(q) || failed(scale) || failed(zero))
    return failure();
  // Constant weights: the dequantization stays unfolded for
  // kiln-recognize-nbits-matmul (import-time folding would turn small ones
  // into f32 constants before the graph stage sees the form).
  bool fold = !constant;
  FailureOr<Value> qf = typedNode<kiln::CastOp>(b, fold, tensorType(*q).clone(f32), *q);
  FailureOr<Value> centered = succeeded(qf) ? node<kiln::SubOp>(b, fold, *qf, *zero) : qf;
  FailureOr<Value> weight =
      succeeded(centered) ? node<kiln::MulOp>(b, fold, *centered, *scale) : centered;
  if (failed(weight))
    return failure();
  weight = typedNode<kiln::ReshapeOp>(b, fold, RankedTensorType::get({*n, blocks * *block}, f32),
                                 *weight, b.i64Vector({*n, blocks * *block}));
  if (succeeded(weight) && blocks * *block != *k)
    weight = node<kiln::SliceOp>(b, fold, *weight, ArrayRef<int64_t>{0},
                                 ArrayRef<int64_t>{*k}, ArrayRef<int64_t>{1},
                                 ArrayRef<int64_t>{1});
  FailureOr<Value> wt =
      succeeded(weight) ? node<kiln::TransposeOp>(b, fold, *weight, ArrayRef<int64_t>{1, 0})
                        : weight;
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
