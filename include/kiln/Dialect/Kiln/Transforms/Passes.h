//===- Passes.h - Graph-level (stage 2) passes on kiln ops ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Each pass's logic is a populate function so that pipelines and other
// passes can reuse the patterns; the passes only apply them greedily.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_TRANSFORMS_PASSES_H
#define KILN_DIALECT_KILN_TRANSFORMS_PASSES_H

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Target/TargetOptions.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

#define GEN_PASS_DECL
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

/// Evaluates kiln ops on constant operands (results up to `maxResultBytes`)
/// and moves the transpose of a constant gemm operand into the constant.
void populateFoldConstantsPatterns(mlir::RewritePatternSet &patterns,
                                   int64_t maxResultBytes);
/// batch_norm(conv(x, W, b)) -> conv(x, W', b') on constant parameters.
void populateFoldConvBatchNormPatterns(mlir::RewritePatternSet &patterns);
/// Decomposed LayerNorm -> kiln.layer_norm (and its scale/bias absorption).
void populateRecognizeLayerNormPatterns(mlir::RewritePatternSet &patterns);
/// Erf and tanh forms of GELU -> kiln.gelu.
void populateRecognizeGeluPatterns(mlir::RewritePatternSet &patterns);
/// softmax(Q Kt * s + mask) V -> kiln.attention.
void populateRecognizeAttentionPatterns(mlir::RewritePatternSet &patterns);
/// unary(transpose(x)) -> transpose(unary(x)) and the binary forms.
void populateSinkTransposesPatterns(mlir::RewritePatternSet &patterns);
/// matmul(move(a * s1), move'(b * s2)) -> matmul(move(a * (s1 * s2)), move'(b)).
void populateFoldMatmulScalesPatterns(mlir::RewritePatternSet &patterns);
/// add(matmul(A, B), bias) -> kiln.gemm(A, B, bias).
void populateRecognizeGemmPatterns(mlir::RewritePatternSet &patterns);
/// kiln.attention -> matmul, transpose, mul, add/select, softmax.
/// What a kernel of `keep` computes (kiln::hasAttentionKernel) stays.
void populateDecomposeAttentionPatterns(mlir::RewritePatternSet &patterns,
                                        const AttentionKernelShapes &keep = {});

} // namespace kiln

#endif // KILN_DIALECT_KILN_TRANSFORMS_PASSES_H
