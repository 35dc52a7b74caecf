//===- Passes.td - Dispatch formation passes (stage 4) -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===------------------------------------------------------------------===//

#ifndef KILN_DISPATCH_PASSES_TD
#define KILN_DISPATCH_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnFuseElementwisePass : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg producers and consumers into one kernel";
  let description = [{
    Stage 4 fusion on linalg-on-tensors: an elementwise `linalg.generic` is
    fused into its consumer (bias after a matmul stays separate, but chains
    of activations, scaling, residual adds merge into one generic), using
    upstream's elementwise fusion with Kiln's control:

    - a producer is fused only when it is elementwise and every use of it is
      fused, so no expensive producer is recomputed;
    - `linalg.transpose` and `linalg.broadcast` are first rewritten as
      `linalg.generic`, so their index maps fold into their neighbours (a
      bias add followed by a head-split transpose is one kernel);
    - reshapes are *not* propagated through named ops, so `linalg.matmul` and
      `linalg.batch_matmul` stay named for the CPU kernel generator.

    - a fusion whose kernel body would exceed `max-fused-ops` operations is
      skipped: each fusion copies both bodies, so an unbounded chain of N
      elementwise nodes would cost O(N^2) (20,000 chained nodes took minutes).

    Pre-condition: linalg on tensors. Post-condition: the same computation
    with fewer, larger elementwise generics.
  }];
  let options = [
    Option<"maxFusedOps", "max-fused-ops", "int64_t", /*default=*/"256",
           "Largest kernel body (operations) elementwise fusion builds">
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

#endif // KILN_DISPATCH_PASSES_TD
