//===- LowerPrecision.cpp - The kiln-cuda-lower-precision pass ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kilnc --precision=fp16|bf16: matmul operands in 16-bit floats, f32
// accumulation and f32 results, so the Hopper GEMM template (wgmma) can take
// the product. Weights are converted here, at compile time.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/APFloat.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDALOWERPRECISIONPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// An elementwise generic converting `value` to `type` (truncf or extf).
Value castTensor(OpBuilder &b, Location loc, Value value, FloatType type) {
  auto tensorType = cast<RankedTensorType>(value.getType());
  auto converted = tensorType.clone(type);
  bool narrowing = type.getWidth() < tensorType.getElementType().getIntOrFloatBitWidth();
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, value), type);
  AffineMap identity = b.getMultiDimIdentityMap(tensorType.getRank());
  SmallVector<utils::IteratorType> parallel(tensorType.getRank(),
                                            utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{converted}, ValueRange{value}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, parallel,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value cast = narrowing
                         ? arith::TruncFOp::create(nested, nestedLoc, type, args[0]).getResult()
                         : arith::ExtFOp::create(nested, nestedLoc, type, args[0]).getResult();
        linalg::YieldOp::create(nested, nestedLoc, cast);
      });
  return generic.getResult(0);
}

/// `value` (an f32 tensor) as `type`'s element type: a constant folded now,
/// anything else through an elementwise truncf.
Value convertOperand(OpBuilder &b, Location loc, Value value, FloatType type) {
  auto tensorType = cast<RankedTensorType>(value.getType());
  auto converted = tensorType.clone(type);
  DenseElementsAttr dense;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (dense) {
    const llvm::fltSemantics &semantics = type.getFloatSemantics();
    auto values = llvm::map_to_vector(dense.getValues<APFloat>(), [&](APFloat v) {
      bool lost = false;
      v.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
      return v;
    });
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(converted, values));
  }
  return castTensor(b, loc, value, type);
}

/// Whether every operand of a (batch) matmul on tensors with default maps
/// has element type `element`.
template <typename OpTy> bool isPlainMatmulOf(OpTy op, Type element) {
  if (!op.hasPureTensorSemantics() || op.hasUserDefinedMaps())
    return false;
  return llvm::all_of(op->getOperands(), [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getElementType() == element;
  });
}

/// The f32 accumulator that replaces a 16-bit matmul's `init`: zeros when
/// `init` is a zero fill, else its values extended.
Value f32Init(OpBuilder &b, Location loc, Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
    if (value && value.getValue().isZero()) {
      Value empty = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, init),
                                            b.getF32Type());
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
      return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    }
  }
  return castTensor(b, loc, init, b.getF32Type());
}

/// An f32 matmul gets `type` operands; a matmul already in `type` (a model
/// in f16 or bf16) accumulates in f32 and rounds its result to `type` once.
template <typename OpTy> void lower(OpTy op, FloatType type, IRRewriter &rewriter) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  if (isPlainMatmulOf(op, rewriter.getF32Type())) {
    Value lhs = convertOperand(rewriter, loc, op.getDpsInputs()[0], type);
    Value rhs = convertOperand(rewriter, loc, op.getDpsInputs()[1], type);
    auto narrow = OpTy::create(rewriter, loc, op->getResultTypes(), ValueRange{lhs, rhs},
                               op.getDpsInits());
    rewriter.replaceOp(op, narrow->getResults());
  } else if (isPlainMatmulOf(op, type)) {
    Value init = f32Init(rewriter, loc, op.getDpsInits()[0]);
    auto wide = OpTy::create(rewriter, loc, TypeRange{init.getType()}, op.getDpsInputs(),
                             ValueRange{init});
    rewriter.replaceOp(op, castTensor(rewriter, loc, wide->getResult(0), type));
  }
}

struct KilnCUDALowerPrecisionPass final
    : impl::KilnCUDALowerPrecisionPassBase<KilnCUDALowerPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FloatType type;
    if (precision == "fp16")
      type = Float16Type::get(context);
    else if (precision == "bf16")
      type = BFloat16Type::get(context);
    else {
      getOperation().emitError() << "kiln-cuda-lower-precision: precision='" << precision
                                 << "', expected fp16 or bf16";
      return signalPassFailure();
    }
    SmallVector<Operation *> matmuls;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        matmuls.push_back(op);
    });
    IRRewriter rewriter(context);
    for (Operation *op : matmuls) {
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
        lower(matmul, type, rewriter);
      else
        lower(cast<linalg::BatchMatmulOp>(op), type, rewriter);
    }
  }
};

} // namespace
} // namespace kiln
