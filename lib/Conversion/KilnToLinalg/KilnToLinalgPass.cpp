//===- KilnToLinalgPass.cpp - The convert-kiln-to-linalg pass -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace kiln {
#define GEN_PASS_DEF_CONVERTKILNTOLINALGPASS
#include "kiln/Conversion/KilnToLinalg/Passes.h.inc"

namespace {
struct ConvertKilnToLinalgPass final
    : impl::ConvertKilnToLinalgPassBase<ConvertKilnToLinalgPass> {
  void runOnOperation() override {
    mlir::MLIRContext *context = &getContext();
    mlir::ConversionTarget target(*context);
    target.addIllegalDialect<KilnDialect>();
    target.addLegalOp<mlir::ModuleOp>();
    target.addLegalDialect<mlir::arith::ArithDialect, mlir::linalg::LinalgDialect,
                           mlir::math::MathDialect, mlir::tensor::TensorDialect,
                           mlir::func::FuncDialect>();
    mlir::RewritePatternSet patterns(context);
    populateElementwiseToLinalgPatterns(patterns);
    populateContractionToLinalgPatterns(patterns);
    populateConvToLinalgPatterns(patterns);
    populateReductionToLinalgPatterns(patterns);
    populateScanToLinalgPatterns(patterns);
    populateShapeToTensorPatterns(patterns);
    if (failed(mlir::applyFullConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
} // namespace kiln
