//===- Passes.td - kiln -> linalg conversion passes -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------------===//

#ifndef KILN_CONVERSION_KILNTOLINALG_PASSES_TD
#define KILN_CONVERSION_KILNTOLINALG_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertKilnToLinalgPass : Pass<"convert-kiln-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lower kiln ops to linalg on tensors (plus tensor, arith, math)";
  let description = [{
    Stage 3 of the pipeline. Every `kiln` op becomes linalg named ops where
    they exist (`linalg.matmul`, `linalg.conv_2d_nchw_fchw`,
    `linalg.pooling_nchw_max`, `linalg.transpose`) and `linalg.generic`
    otherwise; shape-only ops become `tensor` ops.

    Pre-conditions: the module verifies; shape plumbing has been folded by the
    graph stage (`kiln.shape`/`kiln.size` on dynamic dims are lowered to
    `tensor.dim` arithmetic). Broadcasting is decided from static shapes: a
    dynamic dim is assumed not to broadcast (it must equal the result dim).
    Such assumptions (dynamic dims of elementwise operands, matmul
    contraction and batch dims, concat inputs) become run-time checks,
    `func.call @kiln_check(%ok, %got, %expected)` with a `kiln.check_message`;
    so do gather indices (in [-size, size), unless `index-checks=false`).
    Static shapes need no check. The `conv-*` and `depthwise-*` options are
    the target policy's cut-offs for the conv forms (kiln::ConvLoweringOptions).

    Post-conditions: no `kiln` op is left; an op this pass cannot lower is an
    error naming the op (`failed to legalize operation 'kiln.…'`).
  }];
  let options = [
    Option<"indexChecks", "index-checks", "bool", /*default=*/"true",
           "Check gather indices at run time (a reduction of the indices read "
           "by host code; off where host code cannot read them)">,
    Option<"kMajorBatchedRhs", "k-major-batched-rhs", "bool", /*default=*/"false",
           "A batched matmul whose rhs transposes its last two dims reads the "
           "transpose's input K-major (C = A * B^T maps), not a materialized "
           "transpose (kiln::TargetPolicy::kMajorBatchedRhs)">,
    Option<"convMatmulMaxBatch", "conv-matmul-max-batch", "int64_t", /*default=*/"16",
           "Static 2-D f32 convs of up to this many images run as matmuls "
           "(kiln::ConvLoweringOptions)">,
    Option<"convShiftedDiscardDivisor", "conv-shifted-discard-divisor", "int64_t",
           /*default=*/"8",
           "Stride-1 convs run as shifted matmuls while the discarded columns "
           "are at most 1/N of a row (0: never)">,
    Option<"depthwiseMaxUnrolledTaps", "depthwise-max-unrolled-taps", "int64_t",
           /*default=*/"49", "Depthwise windows up to this many taps are unrolled">,
    Option<"stridedWindowsOnPhases", "strided-windows-on-phases", "bool",
           /*default=*/"false",
           "Strided depthwise convs and max pooling run on the stride x stride "
           "phases of their padded input, each tap a contiguous slice">,
    Option<"depthwiseRowsMaxWidth", "depthwise-rows-max-width", "int64_t",
           /*default=*/"0",
           "Stride-1 depthwise convs with output rows up to this wide whose result "
           "reaches a reader other than 1x1 convs through elementwise ops run on "
           "the image rows (their activation joins them), not flat; 0: never">,
    Option<"stridedDepthwiseColumns", "strided-depthwise-columns", "int64_t",
           /*default=*/"0",
           "Strided depthwise convs compute output rows rounded up to a multiple "
           "of this many columns on strided views of their padded input, the "
           "extra columns discarded (no phases); 0: never">,
    Option<"debugBreakOp", "debug-break-op", "std::string", /*default=*/"\"\"",
           "Test only: lower this elementwise kiln op (e.g. relu) wrongly, its "
           "result plus one (a known wrong node for the tests of kilnc verify)">
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::tensor::TensorDialect"
  ];
}

def KilnDropPassedChecksPass : Pass<"kiln-drop-passed-checks", "mlir::ModuleOp"> {
  let summary = "Erase the run-time checks that folding proved to pass";
  let description = [{
    `convert-kiln-to-linalg` checks that two dynamic dims it takes to be
    equal are equal at run time. Where canonicalization then finds the two
    dims to be one value (the dims of a tensor and of its own elementwise
    result), the check's condition folds to `true`, but the call stays: an
    op with effects between the linalg ops of a kernel, which keeps the
    dispatch stage from grouping them (a softmax over a symbolic sequence
    split from its division). This pass erases every
    `func.call @kiln_check(%ok, ...)` whose `%ok` is the constant true.

    Pre-condition: after the linalg stage's canonicalization. Post-condition:
    every `@kiln_check` call left can fail.
  }];
}

#endif // KILN_CONVERSION_KILNTOLINALG_PASSES_TD
