//===- ConstantEval.cpp - Constant literals and elementwise evaluation ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "ConstantEval.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>

using namespace mlir;

namespace kiln::consteval {

//===----------------------------------------------------------------------===//
// Literals: reading, writing, rounding
//===----------------------------------------------------------------------===//

Literal Literal::zeros(RankedTensorType type) {
  Literal literal{type, {}, {}};
  if (literal.isFloat())
    literal.floats.assign(type.getNumElements(), 0.0);
  else
    literal.ints.assign(type.getNumElements(), 0);
  return literal;
}

bool isEvaluableType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return false;
  Type element = tensor.getElementType();
  // Not the sub-byte integers: kiln.cast's rules for them (out-of-range
  // floats become 0) are the lowering's alone.
  if (auto integer = dyn_cast<IntegerType>(element))
    return !(integer.isUnsigned() && integer.getWidth() == 64) &&
           (integer.getWidth() == 1 || integer.getWidth() >= 8);
  return element.isF16() || element.isBF16() || element.isF32() || element.isF64();
}

double roundToFloat(double value, Type type) {
  if (type.isF64())
    return value;
  if (type.isF32())
    return static_cast<double>(static_cast<float>(value));
  APFloat f(value);
  bool lost;
  f.convert(cast<FloatType>(type).getFloatSemantics(),
            APFloat::rmNearestTiesToEven, &lost);
  return f.convertToDouble();
}

int64_t wrapToInteger(int64_t value, Type type) {
  auto integer = cast<IntegerType>(type);
  unsigned width = integer.getWidth();
  if (width == 1)
    return value != 0;
  if (width >= 64)
    return value;
  APInt bits(64, static_cast<uint64_t>(value), /*isSigned=*/true);
  bits = bits.trunc(width);
  return integer.isUnsigned() ? static_cast<int64_t>(bits.getZExtValue())
                              : bits.getSExtValue();
}

/// Bytes per element in dense/resource storage (i1 takes a byte in blobs).
static size_t storageBytes(Type element) {
  return std::max<size_t>(1, element.getIntOrFloatBitWidth() / 8);
}

/// Decodes element `i` of raw little-endian storage into `literal`.
static void decode(const char *data, int64_t i, Literal &literal) {
  Type element = literal.type.getElementType();
  size_t bytes = storageBytes(element);
  uint64_t raw = 0;
  std::memcpy(&raw, data + i * bytes, bytes);
  if (element.isF32()) {
    float f;
    std::memcpy(&f, &raw, 4);
    literal.floats[i] = f;
  } else if (element.isF64()) {
    double d;
    std::memcpy(&d, &raw, 8);
    literal.floats[i] = d;
  } else if (auto floatType = dyn_cast<FloatType>(element)) {
    literal.floats[i] =
        APFloat(floatType.getFloatSemantics(), APInt(16, raw)).convertToDouble();
  } else {
    auto integer = cast<IntegerType>(element);
    if (integer.getWidth() == 1)
      literal.ints[i] = (raw & 0xff) != 0;
    else if (integer.isUnsigned())
      literal.ints[i] = static_cast<int64_t>(raw);
    else
      literal.ints[i] = APInt(integer.getWidth(), raw).getSExtValue();
  }
}

std::optional<Literal> readLiteral(ElementsAttr attr) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !isEvaluableType(type))
    return std::nullopt;
  Literal literal = Literal::zeros(type);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    if (data.size() != literal.size() * storageBytes(type.getElementType()))
      return std::nullopt;
    for (int64_t i = 0, e = literal.size(); i < e; ++i)
      decode(data.data(), i, literal);
    return literal;
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  if (literal.isFloat()) {
    int64_t i = 0;
    for (APFloat value : dense.getValues<APFloat>())
      literal.floats[i++] = value.convertToDouble();
    if (dense.isSplat() && !literal.floats.empty()) // an empty splat has no value
      std::fill(literal.floats.begin(), literal.floats.end(), literal.floats[0]);
    return literal;
  }
  bool zeroExtend = type.getElementType().isUnsignedInteger() ||
                    type.getElementType().isInteger(1);
  int64_t i = 0;
  for (APInt value : dense.getValues<APInt>())
    literal.ints[i++] = zeroExtend ? static_cast<int64_t>(value.getZExtValue())
                                   : value.getSExtValue();
  if (dense.isSplat() && !literal.ints.empty())
    std::fill(literal.ints.begin(), literal.ints.end(), literal.ints[0]);
  return literal;
}

/// Encodes `literal` as raw little-endian element storage.
static std::vector<char> encode(const Literal &literal) {
  Type element = literal.type.getElementType();
  size_t bytes = storageBytes(element);
  std::vector<char> data(literal.size() * bytes);
  for (int64_t i = 0, e = literal.size(); i < e; ++i) {
    uint64_t raw = 0;
    if (element.isF32()) {
      float f = static_cast<float>(literal.floats[i]);
      std::memcpy(&raw, &f, 4);
    } else if (element.isF64()) {
      std::memcpy(&raw, &literal.floats[i], 8);
    } else if (auto floatType = dyn_cast<FloatType>(element)) {
      APFloat f(literal.floats[i]);
      bool lost;
      f.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      raw = f.bitcastToAPInt().getZExtValue();
    } else {
      raw = static_cast<uint64_t>(literal.ints[i]);
    }
    std::memcpy(data.data() + i * bytes, &raw, bytes);
  }
  return data;
}

ElementsAttr writeLiteral(const Literal &literal) {
  RankedTensorType type = literal.type;
  Type element = type.getElementType();
  bool splat = literal.isFloat()
                   ? llvm::all_equal(literal.floats)
                   : llvm::all_equal(literal.ints);
  if (literal.size() > 0 && splat) {
    Literal one{RankedTensorType::get({}, element), {}, {}};
    if (literal.isFloat())
      one.floats.push_back(literal.floats[0]);
    else
      one.ints.push_back(literal.ints[0]);
    Attribute value = element.isInteger(1)
                          ? DenseElementsAttr::get(one.type, literal.ints[0] != 0)
                                .getSplatValue<Attribute>()
                          : DenseElementsAttr::getFromRawBuffer(one.type, encode(one))
                                .getSplatValue<Attribute>();
    return DenseElementsAttr::get(type, ArrayRef<Attribute>{value});
  }
  if (literal.size() > 0 && (!literal.isFloat() || literal.size() <= kInlineFloatElements)) {
    if (element.isInteger(1)) {
      SmallVector<bool> bits;
      for (int64_t v : literal.ints)
        bits.push_back(v != 0);
      return DenseElementsAttr::get(type, bits);
    }
    return DenseElementsAttr::getFromRawBuffer(type, encode(literal));
  }
  if (literal.size() == 0)
    return DenseElementsAttr::get(type, ArrayRef<Attribute>{});
  std::vector<char> data = encode(literal);
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      data, storageBytes(element));
  return DenseResourceElementsAttr::get(type, "kiln_folded", std::move(blob));
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

void forEachBroadcast(ArrayRef<int64_t> shape,
                      ArrayRef<ArrayRef<int64_t>> operandShapes,
                      function_ref<void(int64_t, ArrayRef<int64_t>)> fn) {
  size_t rank = shape.size(), count = operandShapes.size();
  // steps[k][d]: how operand k's offset moves when result dim d advances.
  SmallVector<SmallVector<int64_t>> steps(count, SmallVector<int64_t>(rank, 0));
  for (size_t k = 0; k < count; ++k) {
    ArrayRef<int64_t> operand = operandShapes[k];
    SmallVector<int64_t> strides = stridesOf(operand);
    size_t lead = rank - operand.size();
    for (size_t d = 0; d < operand.size(); ++d)
      if (operand[d] != 1 || shape[lead + d] == 1)
        steps[k][lead + d] = strides[d];
  }
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  SmallVector<int64_t> index(rank, 0), offsets(count, 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(linear, offsets);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      for (size_t k = 0; k < count; ++k)
        offsets[k] += steps[k][d];
      if (++index[d] < shape[d])
        break;
      for (size_t k = 0; k < count; ++k)
        offsets[k] -= steps[k][d] * shape[d];
      index[d] = 0;
    }
  }
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

namespace {

/// A scalar function on floats and one on integers; either may be absent
/// (the op does not accept that kind) or return nullopt (not foldable).
struct ScalarFns {
  std::function<std::optional<double>(ArrayRef<double>)> onFloat;
  std::function<std::optional<int64_t>(ArrayRef<int64_t>)> onInt;
};

template <typename F>
std::function<std::optional<double>(ArrayRef<double>)> f1(F fn) {
  return [fn](ArrayRef<double> a) -> std::optional<double> { return fn(a[0]); };
}
template <typename F>
std::function<std::optional<double>(ArrayRef<double>)> f2(F fn) {
  return [fn](ArrayRef<double> a) -> std::optional<double> { return fn(a[0], a[1]); };
}
template <typename F>
std::function<std::optional<int64_t>(ArrayRef<int64_t>)> i1(F fn) {
  return [fn](ArrayRef<int64_t> a) -> std::optional<int64_t> { return fn(a[0]); };
}
template <typename F>
std::function<std::optional<int64_t>(ArrayRef<int64_t>)> i2(F fn) {
  return [fn](ArrayRef<int64_t> a) -> std::optional<int64_t> { return fn(a[0], a[1]); };
}

std::optional<int64_t> intPow(int64_t base, int64_t exp) {
  if (exp < 0)
    return std::nullopt;
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (; exp; exp >>= 1, b *= b)
    if (exp & 1)
      result *= b;
  return static_cast<int64_t>(result);
}

ScalarFns unaryFns(Operation *op) {
  return llvm::TypeSwitch<Operation *, ScalarFns>(op)
      .Case([](NegOp) { return ScalarFns{f1([](double x) { return -x; }),
                                         i1([](int64_t x) { return -x; })}; })
      .Case([](AbsOp) { return ScalarFns{f1([](double x) { return std::fabs(x); }),
                                         i1([](int64_t x) { return x < 0 ? -x : x; })}; })
      .Case([](SignOp) {
        return ScalarFns{f1([](double x) { return double((x > 0) - (x < 0)); }),
                         i1([](int64_t x) { return int64_t((x > 0) - (x < 0)); })};
      })
      .Case([](ReluOp) {
        return ScalarFns{f1([](double x) { return x > 0 ? x : 0.0; }),
                         i1([](int64_t x) { return x > 0 ? x : 0; })};
      })
      .Case([](NotOp) { return ScalarFns{{}, i1([](int64_t x) { return int64_t(!x); })}; })
      .Case([](ExpOp) { return ScalarFns{f1([](double x) { return std::exp(x); }), {}}; })
      .Case([](LogOp) { return ScalarFns{f1([](double x) { return std::log(x); }), {}}; })
      .Case([](SqrtOp) { return ScalarFns{f1([](double x) { return std::sqrt(x); }), {}}; })
      .Case([](RsqrtOp) {
        return ScalarFns{f1([](double x) { return 1.0 / std::sqrt(x); }), {}};
      })
      .Case([](ReciprocalOp) { return ScalarFns{f1([](double x) { return 1.0 / x; }), {}}; })
      .Case([](TanhOp) { return ScalarFns{f1([](double x) { return std::tanh(x); }), {}}; })
      .Case([](SigmoidOp) {
        return ScalarFns{f1([](double x) { return 1.0 / (1.0 + std::exp(-x)); }), {}};
      })
      .Case([](ErfOp) { return ScalarFns{f1([](double x) { return std::erf(x); }), {}}; })
      .Case([](SinOp) { return ScalarFns{f1([](double x) { return std::sin(x); }), {}}; })
      .Case([](CosOp) { return ScalarFns{f1([](double x) { return std::cos(x); }), {}}; })
      .Case([](FloorOp) { return ScalarFns{f1([](double x) { return std::floor(x); }), {}}; })
      .Case([](CeilOp) { return ScalarFns{f1([](double x) { return std::ceil(x); }), {}}; })
      .Case([](RoundOp) {
        return ScalarFns{f1([](double x) { return std::nearbyint(x); }), {}};
      })
      .Case([](LeakyReluOp op) {
        double alpha = op.getAlpha().convertToDouble();
        return ScalarFns{f1([alpha](double x) { return x >= 0 ? x : alpha * x; }), {}};
      })
      .Case([](ClipOp op) {
        double lo = op.getMin() ? op.getMin()->convertToDouble() : -INFINITY;
        double hi = op.getMax() ? op.getMax()->convertToDouble() : INFINITY;
        return ScalarFns{f1([=](double x) { return std::min(std::max(x, lo), hi); }),
                         i1([=](int64_t x) -> std::optional<int64_t> {
                           double c = std::min(std::max(double(x), lo), hi);
                           return std::isfinite(c) ? std::optional<int64_t>(int64_t(c))
                                                   : std::optional<int64_t>(x);
                         })};
      })
      .Default([](Operation *) { return ScalarFns{}; });
}

ScalarFns binaryFns(Operation *op) {
  auto cmp = [](auto pred) {
    return ScalarFns{f2([pred](double a, double b) { return double(pred(a, b)); }),
                     i2([pred](int64_t a, int64_t b) { return int64_t(pred(a, b)); })};
  };
  return llvm::TypeSwitch<Operation *, ScalarFns>(op)
      .Case([](AddOp) { return ScalarFns{f2(std::plus<double>()), i2(std::plus<int64_t>())}; })
      .Case([](SubOp) {
        return ScalarFns{f2(std::minus<double>()), i2(std::minus<int64_t>())};
      })
      .Case([](MulOp) {
        return ScalarFns{f2(std::multiplies<double>()), i2(std::multiplies<int64_t>())};
      })
      .Case([](DivOp) {
        return ScalarFns{f2(std::divides<double>()),
                         i2([](int64_t a, int64_t b) -> std::optional<int64_t> {
                           if (b == 0 || (a == INT64_MIN && b == -1))
                             return std::nullopt;
                           return a / b;
                         })};
      })
      .Case([](PowOp) {
        return ScalarFns{f2([](double a, double b) { return std::pow(a, b); }),
                         i2([](int64_t a, int64_t b) { return intPow(a, b); })};
      })
      .Case([](MaxOp) {
        return ScalarFns{f2([](double a, double b) { return std::isnan(a) || a > b ? a : b; }),
                         i2([](int64_t a, int64_t b) { return std::max(a, b); })};
      })
      .Case([](MinOp) {
        return ScalarFns{f2([](double a, double b) { return std::isnan(a) || a < b ? a : b; }),
                         i2([](int64_t a, int64_t b) { return std::min(a, b); })};
      })
      .Case([](ModOp op) {
        bool fmod = op.getFmod();
        return ScalarFns{f2([](double a, double b) { return std::fmod(a, b); }),
                         i2([fmod](int64_t a, int64_t b) -> std::optional<int64_t> {
                           if (b == 0 || (a == INT64_MIN && b == -1))
                             return std::nullopt;
                           int64_t r = a % b;
                           if (!fmod && r != 0 && ((r < 0) != (b < 0)))
                             r += b;
                           return r;
                         })};
      })
      .Case([](AndOp) { return ScalarFns{{}, i2([](int64_t a, int64_t b) { return a & b; })}; })
      .Case([](OrOp) { return ScalarFns{{}, i2([](int64_t a, int64_t b) { return a | b; })}; })
      .Case([](XorOp) { return ScalarFns{{}, i2([](int64_t a, int64_t b) { return a ^ b; })}; })
      .Case([&](EqualOp) { return cmp([](auto a, auto b) { return a == b; }); })
      .Case([&](LessOp) { return cmp([](auto a, auto b) { return a < b; }); })
      .Case([&](LessEqualOp) { return cmp([](auto a, auto b) { return a <= b; }); })
      .Case([&](GreaterOp) { return cmp([](auto a, auto b) { return a > b; }); })
      .Case([&](GreaterEqualOp) { return cmp([](auto a, auto b) { return a >= b; }); })
      .Default([](Operation *) { return ScalarFns{}; });
}

/// ONNX Cast of one element; nullopt for NaN/inf/out-of-range to integers.
std::optional<Literal> evaluateCast(const Literal &input, RankedTensorType type) {
  Literal result = Literal::zeros(type);
  Type to = type.getElementType();
  for (int64_t i = 0, e = input.size(); i < e; ++i) {
    if (result.isFloat()) {
      result.floats[i] = roundToFloat(input.getDouble(i), to);
      continue;
    }
    if (!input.isFloat()) {
      result.ints[i] = wrapToInteger(input.ints[i], to);
      continue;
    }
    double v = input.floats[i];
    if (to.isInteger(1)) {
      result.ints[i] = v != 0;
      continue;
    }
    if (!std::isfinite(v) || std::fabs(v) >= 9.2e18)
      return std::nullopt;
    result.ints[i] = wrapToInteger(static_cast<int64_t>(std::trunc(v)), to);
  }
  return result;
}

/// Applies `fns` to the broadcast operands; comparisons read the operands'
/// kind, everything else the result's.
std::optional<Literal> applyBroadcast(const ScalarFns &fns, ArrayRef<Literal> operands,
                                      RankedTensorType type) {
  bool floatOperands = operands.front().isFloat();
  if ((floatOperands && !fns.onFloat) || (!floatOperands && !fns.onInt))
    return std::nullopt;
  Literal result = Literal::zeros(type);
  SmallVector<ArrayRef<int64_t>> shapes;
  for (const Literal &operand : operands)
    shapes.push_back(operand.type.getShape());
  bool ok = true;
  SmallVector<double> fargs(operands.size());
  SmallVector<int64_t> iargs(operands.size());
  Type element = type.getElementType();
  forEachBroadcast(type.getShape(), shapes, [&](int64_t out, ArrayRef<int64_t> at) {
    if (!ok)
      return;
    if (floatOperands) {
      for (size_t k = 0; k < operands.size(); ++k)
        fargs[k] = operands[k].floats[at[k]];
      std::optional<double> v = fns.onFloat(fargs);
      if (!v)
        ok = false;
      else if (result.isFloat())
        result.floats[out] = roundToFloat(*v, element);
      else
        result.ints[out] = static_cast<int64_t>(*v);
      return;
    }
    for (size_t k = 0; k < operands.size(); ++k)
      iargs[k] = operands[k].ints[at[k]];
    std::optional<int64_t> v = fns.onInt(iargs);
    if (!v)
      ok = false;
    else
      result.ints[out] = wrapToInteger(*v, element);
  });
  if (!ok)
    return std::nullopt;
  return result;
}

std::optional<Literal> evaluateSelect(ArrayRef<Literal> operands, RankedTensorType type) {
  Literal result = Literal::zeros(type);
  forEachBroadcast(type.getShape(),
                   {operands[0].type.getShape(), operands[1].type.getShape(),
                    operands[2].type.getShape()},
                   [&](int64_t out, ArrayRef<int64_t> at) {
                     const Literal &from = operands[0].ints[at[0]] ? operands[1] : operands[2];
                     result.copyFrom(from, at[operands[0].ints[at[0]] ? 1 : 2], out);
                   });
  return result;
}

} // namespace

std::optional<Literal> evaluateElementwise(Operation *op, ArrayRef<Literal> operands) {
  if (op->getNumResults() != 1)
    return std::nullopt;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (isa<CastOp>(op))
    return evaluateCast(operands[0], type);
  if (isa<SelectOp>(op))
    return evaluateSelect(operands, type);
  ScalarFns fns = operands.size() == 1 ? unaryFns(op) : binaryFns(op);
  if (!fns.onFloat && !fns.onInt)
    return std::nullopt;
  return applyBroadcast(fns, operands, type);
}

} // namespace kiln::consteval
