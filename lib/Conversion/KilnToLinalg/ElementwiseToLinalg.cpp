//===- ElementwiseToLinalg.cpp - kiln elementwise ops -> linalg.generic ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Each elementwise kiln op becomes one all-parallel linalg.generic whose body
// is the scalar formula below; broadcasting lives in the indexing maps. Later
// stages fuse neighbouring generics, so nothing here tries to combine ops.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "LinalgBuilders.h"
#include "LowFloat.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

using namespace mlir;

namespace kiln {
namespace {

using lowering::scalarConstant;

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

/// Unsigned kiln tensors become signless ones here (the pass's type
/// converter); the formulas read the signedness from the kiln op's operand.
bool isUnsignedTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isUnsignedInteger();
}
bool unsignedOperands(Operation *op) { return isUnsignedTensor(op->getOperand(0).getType()); }
Type signless(Type type) {
  if (lowering::isNarrowStorage(type))
    return IntegerType::get(type.getContext(), 8);
  if (type.isUnsignedInteger())
    return IntegerType::get(type.getContext(), type.getIntOrFloatBitWidth());
  return type;
}

Value c(OpBuilder &b, Location loc, Value like, double value) {
  return scalarConstant(b, loc, like.getType(), value);
}

// --- Unary formulas ----------------------------------------------------------

Value scalar(NegOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::NegFOp::create(b, loc, a[0]);
  return arith::SubIOp::create(b, loc, c(b, loc, a[0], 0), a[0]);
}
Value scalar(AbsOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return math::AbsFOp::create(b, loc, a[0]);
  return math::AbsIOp::create(b, loc, a[0]);
}
Value scalar(ExpOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::ExpOp::create(b, loc, a[0]);
}
Value scalar(LogOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::LogOp::create(b, loc, a[0]);
}
Value scalar(SqrtOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::SqrtOp::create(b, loc, a[0]);
}
Value scalar(RsqrtOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::RsqrtOp::create(b, loc, a[0]);
}
Value scalar(ReciprocalOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::DivFOp::create(b, loc, c(b, loc, a[0], 1), a[0]);
}
Value scalar(TanhOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::TanhOp::create(b, loc, a[0]);
}
// sigmoid(x) = 1 / (1 + e^-x)
Value scalar(SigmoidOp, OpBuilder &b, Location loc, ValueRange a) {
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, a[0]));
  Value one = c(b, loc, a[0], 1);
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}
Value scalar(ReluOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return arith::MaximumFOp::create(b, loc, a[0], c(b, loc, a[0], 0));
  return arith::MaxSIOp::create(b, loc, a[0], c(b, loc, a[0], 0));
}
Value scalar(ErfOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::ErfOp::create(b, loc, a[0]);
}
Value scalar(AsinOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::AsinOp::create(b, loc, a[0]);
}
Value scalar(AcosOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::AcosOp::create(b, loc, a[0]);
}
Value scalar(AtanOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::AtanOp::create(b, loc, a[0]);
}
Value scalar(SinOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::SinOp::create(b, loc, a[0]);
}
Value scalar(CosOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::CosOp::create(b, loc, a[0]);
}
Value scalar(FloorOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::FloorOp::create(b, loc, a[0]);
}
Value scalar(CeilOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::CeilOp::create(b, loc, a[0]);
}
Value scalar(RoundOp, OpBuilder &b, Location loc, ValueRange a) {
  return math::RoundEvenOp::create(b, loc, a[0]);
}
// sign(x) = (x > 0) - (x < 0)
Value scalar(SignOp, OpBuilder &b, Location loc, ValueRange a) {
  Value zero = c(b, loc, a[0], 0), one = c(b, loc, a[0], 1), minus = c(b, loc, a[0], -1);
  Value positive, negative;
  if (isFloat(a[0])) {
    positive = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, a[0], zero);
    negative = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, a[0], zero);
  } else {
    positive = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, a[0], zero);
    negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, a[0], zero);
  }
  Value low = arith::SelectOp::create(b, loc, negative, minus, zero);
  return arith::SelectOp::create(b, loc, positive, one, low);
}
Value scalar(NotOp, OpBuilder &b, Location loc, ValueRange a) {
  // All ones: logical not on i1, bitwise not on wider integers.
  return arith::XOrIOp::create(b, loc, a[0], c(b, loc, a[0], -1));
}
// leaky_relu(x) = x >= 0 ? x : alpha x
Value scalar(LeakyReluOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value scaled = arith::MulFOp::create(
      b, loc, a[0], c(b, loc, a[0], op.getAlpha().convertToDouble()));
  Value keep = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, a[0],
                                     c(b, loc, a[0], 0));
  return arith::SelectOp::create(b, loc, keep, a[0], scaled);
}
// gelu(x) = 0.5 x (1 + erf(x / sqrt 2)), or with tanh:
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
Value scalar(GeluOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0];
  Value inner;
  if (op.getApproximation() == GeluApproximation::tanh) {
    Value x3 = arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly = arith::AddFOp::create(
        b, loc, x, arith::MulFOp::create(b, loc, c(b, loc, x, 0.044715), x3));
    inner = math::TanhOp::create(
        b, loc, arith::MulFOp::create(b, loc, c(b, loc, x, std::sqrt(2.0 / M_PI)), poly));
  } else {
    inner = math::ErfOp::create(
        b, loc, arith::MulFOp::create(b, loc, x, c(b, loc, x, M_SQRT1_2)));
  }
  Value half = arith::MulFOp::create(b, loc, x, c(b, loc, x, 0.5));
  return arith::MulFOp::create(b, loc, half,
                               arith::AddFOp::create(b, loc, c(b, loc, x, 1), inner));
}
// clip(x) = min(max(x, lo), hi)
Value scalar(ClipOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value v = a[0];
  if (op.getMin()) {
    Value lo = c(b, loc, v, op.getMin()->convertToDouble());
    v = isFloat(v) ? arith::MaximumFOp::create(b, loc, v, lo).getResult()
                   : arith::MaxSIOp::create(b, loc, v, lo).getResult();
  }
  if (op.getMax()) {
    Value hi = c(b, loc, v, op.getMax()->convertToDouble());
    v = isFloat(v) ? arith::MinimumFOp::create(b, loc, v, hi).getResult()
                   : arith::MinSIOp::create(b, loc, v, hi).getResult();
  }
  return v;
}

// --- Binary formulas ---------------------------------------------------------

template <typename FloatOp, typename IntOp>
Value arithmetic(OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return FloatOp::create(b, loc, a[0], a[1]);
  return IntOp::create(b, loc, a[0], a[1]);
}

Value scalar(AddOp, OpBuilder &b, Location loc, ValueRange a) {
  return arithmetic<arith::AddFOp, arith::AddIOp>(b, loc, a);
}
Value scalar(SubOp, OpBuilder &b, Location loc, ValueRange a) {
  return arithmetic<arith::SubFOp, arith::SubIOp>(b, loc, a);
}
Value scalar(MulOp, OpBuilder &b, Location loc, ValueRange a) {
  return arithmetic<arith::MulFOp, arith::MulIOp>(b, loc, a);
}
Value scalar(DivOp op, OpBuilder &b, Location loc, ValueRange a) {
  if (unsignedOperands(op))
    return arith::DivUIOp::create(b, loc, a[0], a[1]);
  return arithmetic<arith::DivFOp, arith::DivSIOp>(b, loc, a);
}
Value scalar(MaxOp op, OpBuilder &b, Location loc, ValueRange a) {
  if (unsignedOperands(op))
    return arith::MaxUIOp::create(b, loc, a[0], a[1]);
  return arithmetic<arith::MaximumFOp, arith::MaxSIOp>(b, loc, a);
}
Value scalar(MinOp op, OpBuilder &b, Location loc, ValueRange a) {
  if (unsignedOperands(op))
    return arith::MinUIOp::create(b, loc, a[0], a[1]);
  return arithmetic<arith::MinimumFOp, arith::MinSIOp>(b, loc, a);
}
/// x^e of integers by square-and-multiply over the exponent's bits (the CPU
/// pipeline has no lowering for math.ipowi). A negative exponent gives the
/// integer part of 1 / x^|e|: 1 for x = 1, +-1 for x = -1, else 0.
Value integerPower(OpBuilder &b, Location loc, Value x, Value e) {
  auto type = cast<IntegerType>(x.getType());
  auto constant = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, type, v); };
  Value one = constant(1), zero = constant(0);
  Value result = one, base = x;
  for (unsigned bit = 0; bit + 1 < type.getWidth(); ++bit) {
    Value set = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ne,
        arith::AndIOp::create(b, loc, arith::ShRUIOp::create(b, loc, e, constant(bit)), one),
        zero);
    result = arith::SelectOp::create(b, loc, set, arith::MulIOp::create(b, loc, result, base),
                                     result);
    base = arith::MulIOp::create(b, loc, base, base);
  }
  Value odd = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                    arith::AndIOp::create(b, loc, e, one), zero);
  Value minusOne = constant(-1);
  Value reciprocal = arith::SelectOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, one), one,
      arith::SelectOp::create(
          b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, minusOne),
          arith::SelectOp::create(b, loc, odd, minusOne, one), zero));
  Value negative = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, e, zero);
  return arith::SelectOp::create(b, loc, negative, reciprocal, result);
}
Value scalar(PowOp, OpBuilder &b, Location loc, ValueRange a) {
  if (isFloat(a[0]))
    return math::PowFOp::create(b, loc, a[0], a[1]);
  return integerPower(b, loc, a[0], a[1]);
}
Value compare(OpBuilder &b, Location loc, ValueRange a, arith::CmpFPredicate f,
              arith::CmpIPredicate i) {
  if (isFloat(a[0]))
    return arith::CmpFOp::create(b, loc, f, a[0], a[1]);
  return arith::CmpIOp::create(b, loc, i, a[0], a[1]);
}

// fmod: sign of the dividend; otherwise floored (sign of the divisor):
// r = x rem y; r != 0 && (r < 0) != (y < 0) ? r + y : r. A floored float
// zero takes the divisor's sign (ONNX Mod-28).
Value scalar(ModOp op, OpBuilder &b, Location loc, ValueRange a) {
  // Unsigned: truncated and floored remainders agree.
  if (unsignedOperands(op))
    return arith::RemUIOp::create(b, loc, a[0], a[1]);
  bool fp = isFloat(a[0]);
  Value r = fp ? arith::RemFOp::create(b, loc, a[0], a[1]).getResult()
               : arith::RemSIOp::create(b, loc, a[0], a[1]).getResult();
  if (op.getFmod())
    return r;
  Value zero = c(b, loc, r, 0);
  Value nonzero = compare(b, loc, {r, zero}, arith::CmpFPredicate::UNE,
                          arith::CmpIPredicate::ne);
  Value rNeg = compare(b, loc, {r, zero}, arith::CmpFPredicate::OLT,
                       arith::CmpIPredicate::slt);
  Value yNeg = compare(b, loc, {a[1], zero}, arith::CmpFPredicate::OLT,
                       arith::CmpIPredicate::slt);
  Value differ = arith::XOrIOp::create(b, loc, rNeg, yNeg);
  Value fix = arith::AndIOp::create(b, loc, nonzero, differ);
  Value floored = arith::SelectOp::create(
      b, loc, fix, arithmetic<arith::AddFOp, arith::AddIOp>(b, loc, {r, a[1]}), r);
  if (!fp)
    return floored;
  Value signedZero = math::CopySignOp::create(b, loc, floored, a[1]);
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, floored, zero);
  return arith::SelectOp::create(b, loc, isZero, signedZero, floored);
}
Value scalar(AndOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::AndIOp::create(b, loc, a[0], a[1]);
}
Value scalar(OrOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::OrIOp::create(b, loc, a[0], a[1]);
}
Value scalar(XorOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::XOrIOp::create(b, loc, a[0], a[1]);
}

// x << y, x >> y (arithmetic if signed); an amount outside [0, width) shifts
// everything out: 0, or for a signed right shift x >> (width - 1).
Value scalar(BitShiftOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0], y = a[1];
  unsigned width = x.getType().getIntOrFloatBitWidth();
  // Compared unsigned, a negative amount is out of range too.
  Value outOfRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, y,
                                           c(b, loc, x, width));
  Value safe = arith::SelectOp::create(b, loc, outOfRange, c(b, loc, x, 0), y);
  if (op.getLeft()) {
    Value shifted = arith::ShLIOp::create(b, loc, x, safe);
    return arith::SelectOp::create(b, loc, outOfRange, c(b, loc, x, 0), shifted);
  }
  if (unsignedOperands(op)) {
    Value shifted = arith::ShRUIOp::create(b, loc, x, safe);
    return arith::SelectOp::create(b, loc, outOfRange, c(b, loc, x, 0), shifted);
  }
  Value full = arith::SelectOp::create(b, loc, outOfRange, c(b, loc, x, width - 1), y);
  return arith::ShRSIOp::create(b, loc, x, full);
}

/// The signed integer predicate, or its unsigned twin for unsigned operands.
arith::CmpIPredicate integerPredicate(Operation *op, arith::CmpIPredicate p) {
  if (!unsignedOperands(op))
    return p;
  switch (p) {
  case arith::CmpIPredicate::slt: return arith::CmpIPredicate::ult;
  case arith::CmpIPredicate::sle: return arith::CmpIPredicate::ule;
  case arith::CmpIPredicate::sgt: return arith::CmpIPredicate::ugt;
  case arith::CmpIPredicate::sge: return arith::CmpIPredicate::uge;
  default: return p;
  }
}

Value scalar(EqualOp, OpBuilder &b, Location loc, ValueRange a) {
  return compare(b, loc, a, arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq);
}
Value scalar(LessOp op, OpBuilder &b, Location loc, ValueRange a) {
  return compare(b, loc, a, arith::CmpFPredicate::OLT,
                 integerPredicate(op, arith::CmpIPredicate::slt));
}
Value scalar(LessEqualOp op, OpBuilder &b, Location loc, ValueRange a) {
  return compare(b, loc, a, arith::CmpFPredicate::OLE,
                 integerPredicate(op, arith::CmpIPredicate::sle));
}
Value scalar(GreaterOp op, OpBuilder &b, Location loc, ValueRange a) {
  return compare(b, loc, a, arith::CmpFPredicate::OGT,
                 integerPredicate(op, arith::CmpIPredicate::sgt));
}
Value scalar(GreaterEqualOp op, OpBuilder &b, Location loc, ValueRange a) {
  return compare(b, loc, a, arith::CmpFPredicate::OGE,
                 integerPredicate(op, arith::CmpIPredicate::sge));
}
Value scalar(SelectOp, OpBuilder &b, Location loc, ValueRange a) {
  return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
}

// bitcast: the same bits; a bool is the byte 0 or 1.
Value scalar(BitcastOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0];
  Type to = signless(op.getType().getElementType());
  if (x.getType() == to)
    return x;
  if (x.getType().isInteger(1))
    return arith::ExtUIOp::create(b, loc, to, x);
  if (to.isInteger(1)) {
    Value asInt = x;
    if (isFloat(x))
      asInt = arith::BitcastOp::create(b, loc, b.getIntegerType(8), x);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, asInt, c(b, loc, asInt, 0));
  }
  return arith::BitcastOp::create(b, loc, to, x);
}

// cast: ONNX semantics; float -> int truncates toward zero, to i1 is x != 0.
Value scalar(CastOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0];
  Type fromElement = op.getInput().getType().getElementType();
  Type toElement = op.getType().getElementType();
  if (fromElement == toElement)
    return x;
  Type from = x.getType(), to = signless(toElement);
  bool fromUnsigned = fromElement.isUnsignedInteger();
  bool toUnsigned = toElement.isUnsignedInteger();
  // The sub-byte types and f8E8M0FNU are i8 bytes here (LowFloat.h).
  if (lowering::isNarrowStorage(fromElement)) {
    x = lowering::decodeNarrow(b, loc, x, fromElement);
    from = x.getType();
  }
  if (lowering::isNarrowStorage(toElement)) {
    if (lowering::isLowFloat(from))
      x = lowering::extendLowFloat(b, loc, x, b.getF32Type());
    return lowering::encodeNarrow(b, loc, x, fromUnsigned, toElement, op.getSaturate());
  }
  if (from == to)
    return x;
  // 8-bit floats go through f32 (LowFloat.h).
  if (lowering::isLowFloat(from)) {
    if (auto toFloat = dyn_cast<FloatType>(to); toFloat && !lowering::isLowFloat(to))
      return lowering::extendLowFloat(b, loc, x, toFloat);
    x = lowering::extendLowFloat(b, loc, x, b.getF32Type());
    from = x.getType();
  }
  if (lowering::isLowFloat(to)) {
    if (!isa<FloatType>(from))
      x = fromUnsigned || from.isInteger(1)
              ? arith::UIToFPOp::create(b, loc, b.getF32Type(), x).getResult()
              : arith::SIToFPOp::create(b, loc, b.getF32Type(), x).getResult();
    return lowering::truncateToLowFloat(b, loc, x, cast<FloatType>(to), op.getSaturate());
  }
  if (to.isInteger(1)) {
    if (isa<FloatType>(from))
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, x,
                                   scalarConstant(b, loc, from, 0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, x,
                                 scalarConstant(b, loc, from, 0));
  }
  bool fromFloat = isa<FloatType>(from), toFloat = isa<FloatType>(to);
  // Bools are unsigned (0 or 1), so are ui*; other integers are signed.
  bool zeroExtend = from.isInteger(1) || fromUnsigned;
  if (fromFloat && toFloat)
    return from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth()
               ? arith::ExtFOp::create(b, loc, to, x).getResult()
               : arith::TruncFOp::create(b, loc, to, x).getResult();
  if (fromFloat)
    return toUnsigned ? arith::FPToUIOp::create(b, loc, to, x).getResult()
                      : arith::FPToSIOp::create(b, loc, to, x).getResult();
  if (toFloat)
    return zeroExtend ? arith::UIToFPOp::create(b, loc, to, x).getResult()
                      : arith::SIToFPOp::create(b, loc, to, x).getResult();
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (fw < tw)
    return zeroExtend ? arith::ExtUIOp::create(b, loc, to, x).getResult()
                      : arith::ExtSIOp::create(b, loc, to, x).getResult();
  return arith::TruncIOp::create(b, loc, to, x);
}

bool hasUnsignedElements(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isUnsignedTensor) ||
         llvm::any_of(op->getResultTypes(), isUnsignedTensor);
}

bool isNarrowTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && lowering::isNarrowStorage(tensor.getElementType());
}

/// Whether `op` reads or makes tensors stored as i8 bytes (LowFloat.h).
bool hasNarrowElements(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isNarrowTensor) ||
         llvm::any_of(op->getResultTypes(), isNarrowTensor);
}

/// The wrong value of a lowering broken for a test (debug-break-op): x + 1,
/// or not x for i1.
Value breakOnPurpose(OpBuilder &b, Location loc, Value value) {
  if (isFloat(value))
    return arith::AddFOp::create(b, loc, value, c(b, loc, value, 1));
  if (value.getType().isInteger(1))
    return arith::XOrIOp::create(b, loc, value, c(b, loc, value, 1));
  return arith::AddIOp::create(b, loc, value, c(b, loc, value, 1));
}

/// The ops whose formulas above know unsigned integers (they become signless
/// tensors; the formula picks the unsigned arith op).
template <typename OpTy>
constexpr bool kHandlesUnsigned =
    llvm::is_one_of<OpTy, AddOp, SubOp, MulOp, DivOp, ModOp, MaxOp, MinOp, AndOp, OrOp,
                    XorOp, NotOp, BitShiftOp, EqualOp, LessOp, LessEqualOp, GreaterOp,
                    GreaterEqualOp, SelectOp, CastOp, BitcastOp>::value;

template <typename OpTy>
struct ElementwiseToGeneric final : OpConversionPattern<OpTy> {
  ElementwiseToGeneric(const TypeConverter &converter, MLIRContext *context,
                       StringRef brokenOp)
      : OpConversionPattern<OpTy>(converter, context), brokenOp(brokenOp) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!kHandlesUnsigned<OpTy> && hasUnsignedElements(op))
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    if (!std::is_same_v<OpTy, CastOp> && hasNarrowElements(op))
      return lowering::failLowering(rewriter, op, "sub-byte or f8E8M0FNU tensors");
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    resultType = resultType.clone(signless(resultType.getElementType()));
    Value result = lowering::buildElementwise(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value value = scalar(op, b, loc, args);
          if (op->getName().stripDialect() == brokenOp)
            value = breakOnPurpose(b, loc, value);
          return value;
        },
        op->getName().stripDialect());
    rewriter.replaceOp(op, result);
    return success();
  }

  std::string brokenOp;
};

/// Bool resource blobs (one byte per element, as ONNX stores them) as a
/// dense attribute: LLVM translation knows no i1 resource layout.
ElementsAttr boolResourceAsDense(ElementsAttr value) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource || !resource.getElementType().isInteger(1))
    return value;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return {};
  ArrayRef<char> bytes = blob->getData();
  auto type = cast<ShapedType>(resource.getType());
  if (static_cast<int64_t>(bytes.size()) != type.getNumElements())
    return {};
  SmallVector<bool> bits;
  for (char byte : bytes)
    bits.push_back(byte != 0);
  return DenseElementsAttr::get(type, bits);
}

/// The same bits with signless elements (an unsigned tensor's constant); a
/// sub-byte or f8E8M0FNU constant as its i8 bytes (the loader's blobs are
/// already one byte per element, the element's bits low).
ElementsAttr signlessElements(ElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto signlessType = type.clone(signless(type.getElementType()));
  if (lowering::isNarrowStorage(type.getElementType())) {
    if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
      auto bits = [](Attribute a) -> APInt {
        if (auto f = dyn_cast<FloatAttr>(a))
          return f.getValue().bitcastToAPInt().zext(8);
        return cast<IntegerAttr>(a).getValue().zext(8);
      };
      if (dense.isSplat())
        return DenseElementsAttr::get(signlessType, bits(dense.getSplatValue<Attribute>()));
      SmallVector<APInt> bytes;
      for (Attribute a : dense.getValues<Attribute>())
        bytes.push_back(bits(a));
      return DenseElementsAttr::get(signlessType, bytes);
    }
  }
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.bitcast(signlessType.getElementType());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    return DenseResourceElementsAttr::get(signlessType, resource.getRawHandle());
  return {};
}

/// Splats with more elements than this become fills: as constants they
/// would be materialized element by element in the artifact (a
/// ConstantOfShape to [10^6, 10^6] would be a 4 TB global).
constexpr int64_t kMaxMaterializedSplat = 1 << 16;

struct ConstantToArith final : OpConversionPattern<ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    ElementsAttr value = boolResourceAsDense(op.getValueAttr());
    if (!value)
      return lowering::failLowering(rewriter, op, "bool resource blob without data");
    auto type = cast<RankedTensorType>(op.getType());
    if (hasUnsignedElements(op) || hasNarrowElements(op)) {
      value = signlessElements(value);
      if (!value)
        return lowering::failLowering(rewriter, op, "unsigned constant of another kind");
      type = cast<RankedTensorType>(value.getType());
    }
    auto splat = dyn_cast<SplatElementsAttr>(value);
    if (splat && type.getNumElements() > kMaxMaterializedSplat) {
      // splat(c) of a big shape = fill(empty, c)
      Location loc = op.getLoc();
      Value scalar = arith::ConstantOp::create(
          rewriter, loc, cast<TypedAttr>(splat.getSplatValue<Attribute>()));
      Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                            type.getElementType());
      rewriter.replaceOpWithNewOp<linalg::FillOp>(op, scalar, empty);
      return success();
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, type, cast<TypedAttr>(value));
    return success();
  }
};

} // namespace

void populateElementwiseToLinalgPatterns(RewritePatternSet &patterns,
                                         const TypeConverter &converter,
                                         StringRef brokenOp) {
  MLIRContext *context = patterns.getContext();
  patterns.add<ConstantToArith>(converter, context);
  patterns.add<ElementwiseToGeneric<NegOp>, ElementwiseToGeneric<AbsOp>,
               ElementwiseToGeneric<ExpOp>, ElementwiseToGeneric<LogOp>,
               ElementwiseToGeneric<SqrtOp>, ElementwiseToGeneric<RsqrtOp>,
               ElementwiseToGeneric<ReciprocalOp>, ElementwiseToGeneric<TanhOp>,
               ElementwiseToGeneric<SigmoidOp>, ElementwiseToGeneric<ReluOp>,
               ElementwiseToGeneric<ErfOp>, ElementwiseToGeneric<SinOp>,
               ElementwiseToGeneric<AsinOp>, ElementwiseToGeneric<AcosOp>,
               ElementwiseToGeneric<AtanOp>,
               ElementwiseToGeneric<CosOp>, ElementwiseToGeneric<FloorOp>,
               ElementwiseToGeneric<CeilOp>, ElementwiseToGeneric<RoundOp>,
               ElementwiseToGeneric<SignOp>, ElementwiseToGeneric<NotOp>,
               ElementwiseToGeneric<LeakyReluOp>, ElementwiseToGeneric<GeluOp>,
               ElementwiseToGeneric<ClipOp>, ElementwiseToGeneric<CastOp>,
               ElementwiseToGeneric<BitcastOp>>(converter, context, brokenOp);
  patterns.add<ElementwiseToGeneric<AddOp>, ElementwiseToGeneric<SubOp>,
               ElementwiseToGeneric<MulOp>, ElementwiseToGeneric<DivOp>,
               ElementwiseToGeneric<PowOp>, ElementwiseToGeneric<MaxOp>,
               ElementwiseToGeneric<MinOp>, ElementwiseToGeneric<ModOp>,
               ElementwiseToGeneric<AndOp>, ElementwiseToGeneric<OrOp>,
               ElementwiseToGeneric<XorOp>, ElementwiseToGeneric<EqualOp>,
               ElementwiseToGeneric<LessOp>, ElementwiseToGeneric<LessEqualOp>,
               ElementwiseToGeneric<GreaterOp>, ElementwiseToGeneric<GreaterEqualOp>,
               ElementwiseToGeneric<SelectOp>, ElementwiseToGeneric<BitShiftOp>>(
      converter, context, brokenOp);
}

} // namespace kiln
