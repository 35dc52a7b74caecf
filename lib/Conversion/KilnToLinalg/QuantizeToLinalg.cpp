//===- QuantizeToLinalg.cpp - kiln.{quantize,dequantize}_linear -> linalg --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Affine (de)quantization as one elementwise linalg.generic. The scale and
// zero point are scalars (per tensor) or 1-D along `axis` (per axis):
//   quantize:   y = clamp(roundeven(x / scale) + zero_point, lo, hi)
//   dequantize: y = (x - zero_point) * scale
// as the ONNX reference computes them: the division in the input's float
// type, round half to even, then the zero point and the saturation to the
// integer type's range (in floats for results of at most 16 bits, exact
// there; else in i64); the dequantize difference in i32 (i64 for
// i32 data), the product in f32 (or f64) and rounded once to the scale's
// type.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;

namespace kiln {
namespace {

/// Maps for (data, scale, zero point, result): identity for the data and
/// result, and the scale/zero point either scalars or along `axis`.
SmallVector<AffineMap> quantMaps(MLIRContext *context, int64_t rank, Value scale,
                                 int64_t axis) {
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  AffineMap param = cast<RankedTensorType>(scale.getType()).getRank() == 0
                        ? AffineMap::get(rank, 0, {}, context)
                        : AffineMap::get(rank, 0, getAffineDimExpr(axis, context), context);
  return {identity, param, param, identity};
}

int64_t normalizedAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// The all-parallel generic of a (de)quantization: result[i...] =
/// body(input[i...], scale, zero_point), the scale and zero point per tensor
/// or along `axis` (negative counts from the end).
template <typename OpTy>
Value quantGeneric(OpBuilder &b, Location loc, OpTy op, typename OpTy::Adaptor adaptor,
                   RankedTensorType result,
                   function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = result.getRank();
  int64_t axis = normalizedAxis(op.getAxis(), rank);
  Value init = lowering::createInit(b, loc, result,
                                    lowering::dynamicSizesOf(b, loc, adaptor.getInput()));
  SmallVector<utils::IteratorType> iterators(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, result,
             ValueRange{adaptor.getInput(), adaptor.getScale(), adaptor.getZeroPoint()}, init,
             quantMaps(b.getContext(), rank, adaptor.getScale(), axis), iterators, body)
      .getResult(0);
}

struct QuantizeToGeneric final : OpConversionPattern<QuantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QuantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = lowering::signlessType(op.getType());
    auto target = cast<IntegerType>(result.getElementType());
    bool isUnsigned = op.getType().getElementType().isUnsignedInteger();
    unsigned width = target.getWidth();
    auto inputType = cast<RankedTensorType>(adaptor.getInput().getType());
    auto floatType = cast<FloatType>(inputType.getElementType());
    FloatType compute = floatType.getWidth() < 32 ? rewriter.getF32Type() : floatType;
    int64_t lo = isUnsigned ? 0 : -(int64_t(1) << (width - 1));
    int64_t hi = isUnsigned ? (int64_t(1) << width) - 1 : (int64_t(1) << (width - 1)) - 1;
    Value lowered = quantGeneric(
        rewriter, loc, op, adaptor, result, [&](OpBuilder &b, Location l, ValueRange args) {
          // The division in the input's type, as the reference does.
          Value q = arith::DivFOp::create(b, l, args[0], args[1]);
          if (q.getType() != compute)
            q = arith::ExtFOp::create(b, l, compute, q);
          q = math::RoundEvenOp::create(b, l, q);
          if (width <= 16) {
            // The zero point and the saturation in floats: round(x / scale)
            // is an integer, so adding a zero point of at most 16 bits is
            // exact below 2^24 and cannot cross the range above it. No
            // integer compares: they vectorize worse and, left scalar,
            // become branches that ReLU outputs mispredict.
            Value zero = isUnsigned ? arith::UIToFPOp::create(b, l, compute, args[2]).getResult()
                                    : arith::SIToFPOp::create(b, l, compute, args[2]).getResult();
            q = arith::AddFOp::create(b, l, q, zero);
            q = arith::MaximumFOp::create(b, l, q, lowering::scalarConstant(b, l, compute, lo));
            q = arith::MinimumFOp::create(b, l, q, lowering::scalarConstant(b, l, compute, hi));
            Value out = isUnsigned ? arith::FPToUIOp::create(b, l, target, q).getResult()
                                   : arith::FPToSIOp::create(b, l, target, q).getResult();
            linalg::YieldOp::create(b, l, out);
            return;
          }
          // Into i64 (bounded first, so the conversion is defined), then the
          // zero point and the saturation in integers.
          q = arith::MaximumFOp::create(b, l, q, lowering::scalarConstant(b, l, compute, -0x1p62));
          q = arith::MinimumFOp::create(b, l, q, lowering::scalarConstant(b, l, compute, 0x1p62));
          Type i64 = b.getI64Type();
          Value qi = arith::FPToSIOp::create(b, l, i64, q);
          Value zero = isUnsigned ? arith::ExtUIOp::create(b, l, i64, args[2]).getResult()
                                  : arith::ExtSIOp::create(b, l, i64, args[2]).getResult();
          qi = arith::AddIOp::create(b, l, qi, zero);
          qi = arith::MaxSIOp::create(b, l, qi, arith::ConstantIntOp::create(b, l, i64, lo));
          qi = arith::MinSIOp::create(b, l, qi, arith::ConstantIntOp::create(b, l, i64, hi));
          Value out = arith::TruncIOp::create(b, l, target, qi);
          linalg::YieldOp::create(b, l, out);
        });
    rewriter.replaceOp(op, lowered);
    return success();
  }
};

struct DequantizeToGeneric final : OpConversionPattern<DequantizeLinearOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DequantizeLinearOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    auto floatType = cast<FloatType>(result.getElementType());
    bool isUnsigned = op.getInput().getType().getElementType().isUnsignedInteger();
    auto source = cast<IntegerType>(
        cast<RankedTensorType>(adaptor.getInput().getType()).getElementType());
    Type wide = rewriter.getIntegerType(source.getWidth() >= 32 ? 64 : 32);
    FloatType compute = floatType.getWidth() < 32 ? rewriter.getF32Type() : floatType;
    Value lowered = quantGeneric(
        rewriter, loc, op, adaptor, result, [&](OpBuilder &b, Location l, ValueRange args) {
          auto extend = [&](Value v) -> Value {
            return isUnsigned ? arith::ExtUIOp::create(b, l, wide, v).getResult()
                              : arith::ExtSIOp::create(b, l, wide, v).getResult();
          };
          Value difference = arith::SubIOp::create(b, l, extend(args[0]), extend(args[2]));
          Value y = arith::SIToFPOp::create(b, l, compute, difference);
          Value scale = args[1].getType() == compute
                            ? args[1]
                            : arith::ExtFOp::create(b, l, compute, args[1]).getResult();
          y = arith::MulFOp::create(b, l, y, scale);
          if (compute != floatType)
            y = arith::TruncFOp::create(b, l, floatType, y);
          linalg::YieldOp::create(b, l, y);
        });
    rewriter.replaceOp(op, lowered);
    return success();
  }
};

} // namespace

void populateQuantizeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<QuantizeToGeneric, DequantizeToGeneric>(patterns.getContext());
}

} // namespace kiln
