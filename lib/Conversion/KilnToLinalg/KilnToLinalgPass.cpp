//===- KilnToLinalgPass.cpp - The convert-kiln-to-linalg pass -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "LowFloat.h"
#include "LoweringFailure.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALGPASS
#include "kiln/Conversion/KilnToLinalg/Passes.h.inc"

void populateUnsignedToSignlessConversion(mlir::TypeConverter &converter) {
  converter.addConversion([](mlir::Type type) { return type; });
  converter.addConversion([](mlir::IntegerType type) -> mlir::Type {
    if (lowering::isNarrowStorage(type))
      return mlir::IntegerType::get(type.getContext(), 8);
    if (!type.isUnsigned())
      return type;
    return mlir::IntegerType::get(type.getContext(), type.getWidth());
  });
  converter.addConversion([](mlir::FloatType type) -> mlir::Type {
    if (lowering::isNarrowStorage(type))
      return mlir::IntegerType::get(type.getContext(), 8);
    return type;
  });
  converter.addConversion([&converter](mlir::RankedTensorType type) -> mlir::Type {
    return type.clone(converter.convertType(type.getElementType()));
  });
}

namespace {
/// Whether `type` (or its elements) become signless or i8 storage here:
/// unsigned integers, and tensors of the sub-byte types and f8E8M0FNU (only
/// tensors: the patterns compute on such elements in i8, i32 and f32).
bool hasUnsignedElement(mlir::Type type) {
  if (auto shaped = mlir::dyn_cast<mlir::ShapedType>(type)) {
    if (lowering::isNarrowStorage(shaped.getElementType()))
      return true;
    type = shaped.getElementType();
  }
  return type.isUnsignedInteger();
}

mlir::Type elementOf(mlir::Type type) {
  if (auto shaped = mlir::dyn_cast<mlir::ShapedType>(type))
    return shaped.getElementType();
  return type;
}

/// Marks unsigned arguments and results `kiln.unsigned` before they become
/// signless, so that the artifact's descriptor still says u8/u16/u32/u64;
/// and sub-byte or f8E8M0FNU ones `kiln.element` (their type), stored as i8.
void markUnsignedBoundary(mlir::func::FuncOp func) {
  mlir::FunctionType type = func.getFunctionType();
  auto unit = mlir::UnitAttr::get(func.getContext());
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    if (elementOf(t).isUnsignedInteger())
      func.setArgAttr(i, "kiln.unsigned", unit);
    if (lowering::isNarrowStorage(elementOf(t)))
      func.setArgAttr(i, "kiln.element", mlir::TypeAttr::get(elementOf(t)));
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    if (elementOf(t).isUnsignedInteger())
      func.setResultAttr(i, "kiln.unsigned", unit);
    if (lowering::isNarrowStorage(elementOf(t)))
      func.setResultAttr(i, "kiln.element", mlir::TypeAttr::get(elementOf(t)));
  }
}

bool mentionsUnsigned(mlir::Operation *op) {
  return llvm::any_of(op->getOperandTypes(), hasUnsignedElement) ||
         llvm::any_of(op->getResultTypes(), hasUnsignedElement);
}

/// The private declaration the patterns' run-time checks call.
void declareCheckFunction(mlir::ModuleOp module) {
  if (module.lookupSymbol(kCheckFunctionName))
    return;
  bool used = false;
  module.walk([&](mlir::func::CallOp call) {
    if (call.getCallee() == kCheckFunctionName)
      used = true;
  });
  if (!used)
    return;
  mlir::OpBuilder b = mlir::OpBuilder::atBlockEnd(module.getBody());
  auto type = b.getFunctionType({b.getI1Type(), b.getIndexType(), b.getIndexType()}, {});
  auto check = mlir::func::FuncOp::create(b, module.getLoc(), kCheckFunctionName, type);
  check.setPrivate();
}

struct ConvertKilnToLinalgPass final
    : impl::ConvertKilnToLinalgPassBase<ConvertKilnToLinalgPass> {
  using ConvertKilnToLinalgPassBase::ConvertKilnToLinalgPassBase;

  void runOnOperation() override {
    mlir::MLIRContext *context = &getContext();
    mlir::ConversionTarget target(*context);
    target.addIllegalDialect<KilnDialect>();
    // Kernel-level ops (IR of a later stage fed to kilnc again) stay.
    target.addLegalOp<mlir::ModuleOp, AttentionKernelOp, MatmulNBitsKernelOp, DispatchOp, YieldOp>();
    // arith/linalg work on signless integers: what the patterns build must
    // not mention an unsigned type (a pattern that cannot handle one fails).
    target.addDynamicallyLegalDialect<mlir::arith::ArithDialect, mlir::linalg::LinalgDialect,
                                      mlir::math::MathDialect, mlir::tensor::TensorDialect,
                                      mlir::func::FuncDialect>(
        [](mlir::Operation *op) { return !mentionsUnsigned(op); });
    target.addDynamicallyLegalOp<mlir::func::FuncOp>([](mlir::func::FuncOp func) {
      return !llvm::any_of(func.getFunctionType().getInputs(), hasUnsignedElement) &&
             !llvm::any_of(func.getFunctionType().getResults(), hasUnsignedElement);
    });
    getOperation().walk(markUnsignedBoundary);
    mlir::TypeConverter converter;
    populateUnsignedToSignlessConversion(converter);
    mlir::RewritePatternSet patterns(context);
    mlir::populateFunctionOpInterfaceTypeConversionPattern<mlir::func::FuncOp>(patterns,
                                                                             converter);
    mlir::populateReturnOpTypeConversionPattern(patterns, converter);
    mlir::populateCallOpTypeConversionPattern(patterns, converter);
    populateElementwiseToLinalgPatterns(patterns, converter, debugBreakOp);
    populateContractionToLinalgPatterns(patterns, kMajorBatchedRhs);
    populateAttentionToLinalgPatterns(patterns);
    ConvLoweringOptions conv;
    conv.matmulMaxBatch = convMatmulMaxBatch;
    conv.shiftedDiscardDivisor = convShiftedDiscardDivisor;
    conv.depthwiseMaxUnrolledTaps = depthwiseMaxUnrolledTaps;
    conv.stridedWindowsOnPhases = stridedWindowsOnPhases;
    conv.depthwiseRowsMaxWidth = depthwiseRowsMaxWidth;
    conv.stridedDepthwiseColumns = stridedDepthwiseColumns;
    populateConvToLinalgPatterns(patterns, conv);
    populatePoolToLinalgPatterns(patterns, conv);
    populateReductionToLinalgPatterns(patterns);
    populateQuantizeToLinalgPatterns(patterns);
    populateResizeToLinalgPatterns(patterns);
    populateScanToLinalgPatterns(patterns);
    populateSelectScatterToLinalgPatterns(patterns);
    populateKVCacheUpdateToLinalgPatterns(patterns);
    populateRotateHalfToLinalgPatterns(patterns);
    populateShapeToTensorPatterns(patterns);
    populateGatherToLinalgPatterns(patterns, indexChecks);
    lowering::LoweringFailures failures(context);
    if (failed(mlir::applyFullConversion(getOperation(), target, std::move(patterns)))) {
      failures.report(getOperation());
      return signalPassFailure();
    }
    declareCheckFunction(getOperation());
  }
};
} // namespace
} // namespace kiln
