//===- KilnKernelOps.td - Kernel-level kiln ops -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-----------------------------------------------------------===//
//
// Ops below the graph level: destination-style, on tensors until
// bufferization and on buffers after it, lowered by a target's codegen.
//
//===-----------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNKERNELOPS_TD
#define KILN_DIALECT_KILN_IR_KILNKERNELOPS_TD

include "kiln/Dialect/Kiln/IR/KilnBase.td"
include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"

def Kiln_AttentionKernelOp : Kiln_Op<"attention_kernel", [
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "fused scaled dot-product attention (one CPU or CUDA kernel)";
  let description = [{
    `init[b, h, i, :] = softmax_j(scale * q[b, h, i, :] . key[b, h, j, :] +
    mask[b, h, j, i] (+ causal)) . value[b, h, j, :]`, the CPU lowering of
    `kiln.attention` (`kiln-cpu-attention` and `kiln-cuda-attention`
    compute it with an online softmax, one pass over the keys). Operands
    are rank 4, f32 (the CPU kernel), f16 or bf16 (CUDA), one element type
    for query, key, value and init (the mask any of the three):
    `query [B, H, Sq, D]`, `key [B, H, Sk, D]`, `value [B, H, Sk, D]`. The
    optional additive mask is given **key-major**, `[Bm, Hm, Sk, Sqm]` with
    `Bm` in {1, B}, `Hm` in {1, H}, `Sqm` in {1, Sq} (a size-1 dim
    broadcasts). `is_causal` masks keys after the query's position. The
    output `init` is `[B, H, Sq, D]`, or `[B, Sq, H, D]` with `merge_heads`
    (the head merge transpose that usually follows). On tensors the op has
    one result, the updated `init`; on buffers none.

    Example:

    ```mlir
    %o = kiln.attention_kernel %q, %k, %v, %m into %e {scale = 1.250000e-01 : f32} : tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x1x128x1xf32>, tensor<1x12x128x64xf32> -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins AnyShaped:$query, AnyShaped:$key, AnyShaped:$value,
                       Optional<AnyShaped>:$mask, AnyShaped:$init,
                       F32Attr:$scale, UnitAttr:$is_causal, UnitAttr:$merge_heads);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? `into` $init attr-dict `:`
    type(operands) (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return ::mlir::MutableOperandRange(getInitMutable()); }
  }];
}

def Kiln_MatmulNBitsKernelOp : Kiln_Op<"matmul_nbits_kernel", [
    DestinationStyleOpInterface,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    DeclareOpInterfaceMethods<BufferizableOpInterface,
        ["bufferizesToMemoryRead", "bufferizesToMemoryWrite",
         "getAliasingValues", "bufferize"]>]> {
  let summary = "matmul with a block-quantized low-bit weight (one CPU kernel)";
  let description = [{
    `init[m, n] = sum_k a[m, k] * (q[n, k] - zero_points[n, k / block_size])
    * scales[n, k / block_size]` in f32, the CPU form of onnxruntime's
    `MatMulNBits` (`kiln-recognize-nbits-matmul`; `kiln-cpu-nbits-matmul`
    generates the kernel). `a [M, K]` f32; `q [N, Kp]` i8, one quantized
    value per element read as unsigned (each below `2^bits`, `Kp = blocks * block_size >= K`,
    the values past `K` unused); `scales` and `zero_points` `[N, blocks]`
    f32; `init [M, N]` f32. `bits` (4 or 8) is the width the kernel keeps
    the weight in. On tensors the op has one result, the updated `init`;
    on buffers none.

    Example:

    ```mlir
    %y = kiln.matmul_nbits_kernel %a, %q, %s, %z into %e {bits = 4 : i64, block_size = 32 : i64} : tensor<1x768xf32>, tensor<768x768xi8>, tensor<768x24xf32>, tensor<768x24xf32>, tensor<1x768xf32> -> tensor<1x768xf32>
    ```
  }];
  let arguments = (ins AnyShaped:$a, AnyShaped:$q, AnyShaped:$scales,
                       AnyShaped:$zero_points, AnyShaped:$init,
                       I64Attr:$bits, I64Attr:$block_size);
  let results = (outs Variadic<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $a `,` $q `,` $scales `,` $zero_points `into` $init attr-dict `:`
    type(operands) (`->` type($result)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() { return ::mlir::MutableOperandRange(getInitMutable()); }
  }];
}

#endif // KILN_DIALECT_KILN_IR_KILNKERNELOPS_TD
