//===- KilnDispatchOps.td - kiln.dispatch regions -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-------------------------------------------------------------===//
//
// The dispatch stage's unit: one future kernel as a region on tensors.
//
//===-------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNDISPATCHOPS_TD
#define KILN_DIALECT_KILN_IR_KILNDISPATCHOPS_TD

include "kiln/Dialect/Kiln/IR/KilnBase.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Kiln_DispatchOp : Kiln_Op<"dispatch", [
    IsolatedFromAbove, SingleBlock, RecursiveMemoryEffects]> {
  let summary = "one dispatch (future kernel) of the dispatch stage, on tensors";
  let description = [{
    The ops of one kernel: a root (matmul, conv taps, pooling, reduction,
    attention kernel, elementwise generic) with what the dispatch stage
    fused into it (a matmul's epilogue and the views between them, the
    members of a row group), and the zero fills and empty tensors only they
    use. `kiln-form-dispatch-regions` builds them after the dispatch stage;
    `kiln-inline-dispatch-regions` dissolves them again before
    bufferization.

    The region is isolated from above: the operands are exactly the values
    the dispatch reads from outside (weights, activations, the empty
    tensors of its outputs, index constants), each bound to the entry block
    argument of the same position and type. The results are the values the
    dispatch defines and the rest of the function uses, yielded in order by
    the `kiln.yield` that ends the single block. Operands and results are
    tensors or scalars (tensor semantics: no memrefs).

    `kind` is the kernel's kind: `contraction`, `convolution`, `pooling`,
    `reduction`, `elementwise`, `data_movement`, `row_group` or
    `attention`; `nodes` the model (ONNX) nodes the kernel covers, from the
    fused locations of its ops (what `kilnc --report=fusion` prints).

    Example:

    ```mlir
    %r = kiln.dispatch contraction ["fc/Gemm", "fc/Relu"] (%a = %x, %b = %w, %e = %empty)
        : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
      %m = linalg.matmul ins(%a, %b : ...) outs(%e : ...) -> tensor<4x16xf32>
      kiln.yield %m : tensor<4x16xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$inputs, StrAttr:$kind, StrArrayAttr:$nodes);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The kinds a dispatch may have.
    static ::llvm::ArrayRef<::llvm::StringRef> getKinds();
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield", [
    Pure, ReturnLike, Terminator, HasParent<"DispatchOp">]> {
  let summary = "the results of a kiln.dispatch";
  let description = [{
    Ends the region of a `kiln.dispatch`; its operands are the dispatch's
    results, in order.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

#endif // KILN_DIALECT_KILN_IR_KILNDISPATCHOPS_TD
