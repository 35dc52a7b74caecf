//===- KilnNNOps.td - Contractions, convolutions, pooling, reductions, norms -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNNNOPS_TD
#define KILN_DIALECT_KILN_IR_KILNNNOPS_TD

include "kiln/Dialect/Kiln/IR/KilnBase.td"

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Kiln_MatmulOp : Kiln_InferOp<"matmul", [AllElementTypesMatch<["lhs", "rhs"]>]> {
  let summary = "matrix product with numpy semantics (batched, broadcast)";
  let description = [{
    `numpy.matmul`: the last two dims are multiplied, leading (batch) dims
    broadcast. A 1-D lhs is treated as a row and a 1-D rhs as a column; the
    inserted dim is removed from the result.

    Example:

    ```mlir
    %y = kiln.matmul %a, %b : (tensor<8x128x768xf32>, tensor<768x3072xf32>) -> tensor<8x128x3072xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Kiln_EinsumOp : Kiln_Op<"einsum", [Pure]> {
  let summary = "Einstein summation over one letter per operand dim";
  let description = [{
    `equation` is `term,term,...->term` with one letter per dim of each
    operand and of the result (the importer expands ONNX's ellipsis and
    implicit output). Each result element is the sum, over every value of the
    letters missing from the result, of the product of the operands' elements
    addressed by the letters; a letter repeated within a term walks a
    diagonal. All operands and the result share one element type.

    Example:

    ```mlir
    %c = kiln.einsum "bij,bjk->bik" %a, %b : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_NumericTensor>:$inputs, StrAttr:$equation);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$equation $inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
}

def Kiln_GemmOp : Kiln_InferOp<"gemm", [AllElementTypesMatch<["a", "b", "output"]>]> {
  let summary = "general matrix product: alpha * op(A) * op(B) + beta * C";
  let description = [{
    ONNX `Gemm` on 2-D operands; `op(X)` transposes when `trans_a`/`trans_b`
    is set. The optional `c` broadcasts to `[M, N]`.

    Example:

    ```mlir
    %y = kiln.gemm %x, %w, %b {trans_b = true} : (tensor<1x512xf32>, tensor<1000x512xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$a, Kiln_NumericTensor:$b,
                       Optional<Kiln_NumericTensor>:$c,
                       DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0f">:$beta,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Kiln_AttentionOp : Kiln_InferOp<"attention",
    [AllElementTypesMatch<["query", "key", "value", "output"]>]> {
  let summary = "scaled dot-product attention";
  let description = [{
    `softmax(scale * Q Kᵀ + mask) V` over the last two dims, leading dims
    broadcast (batch, heads). `scale` defaults to `1/sqrt(D)`. The optional
    mask is boolean (false masks out) or additive, broadcastable to
    `[..., Sq, Sk]`; `is_causal` masks keys after the query's position.

    Example:

    ```mlir
    %o = kiln.attention %q, %k, %v {is_causal = true} : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$query, Kiln_FloatTensor:$key,
                       Kiln_FloatTensor:$value, Optional<Kiln_Tensor>:$mask,
                       OptionalAttr<F32Attr>:$scale,
                       DefaultValuedAttr<BoolAttr, "false">:$is_causal);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Convolution and pooling (NC + spatial layout, ONNX pads: begins then ends)
//===----------------------------------------------------------------------===//

def Kiln_ConvOp : Kiln_InferOp<"conv", [AllElementTypesMatch<["input", "weight", "output"]>]> {
  let summary = "N-d convolution (1-D to 3-D) with groups, strides, dilations, pads";
  let description = [{
    Input `[N, C, D1..Dk]`, weight `[M, C/group, K1..Kk]`, optional bias `[M]`.
    `pads` holds the k begin paddings then the k end paddings. Each output dim is
    `floor((D + pad_begin + pad_end - dilation * (K - 1) - 1) / stride) + 1`.

    Example:

    ```mlir
    %y = kiln.conv %x, %w, %b {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, group = 1 : i64} : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Kiln_ConvTransposeOp : Kiln_InferOp<"conv_transpose",
    [AllElementTypesMatch<["input", "weight", "output"]>]> {
  let summary = "N-d transposed convolution (the gradient of conv)";
  let description = [{
    Input `[N, C, D1..Dk]`, weight `[C, M/group, K1..Kk]`, optional bias.
    Each output dim is `stride * (D - 1) + output_padding + dilation * (K - 1)
    + 1 - pad_begin - pad_end`.

    Example:

    ```mlir
    %y = kiln.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<64x32x3x3xf32>) -> tensor<1x32x56x56xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$weight,
                       Optional<Kiln_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$group);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

class Kiln_PoolOp<string mnemonic, string what> : Kiln_InferOp<mnemonic,
    [AllElementTypesMatch<["input", "output"]>]> {
  let summary = what # " pooling over the spatial dims of an NC... tensor";
  let description = "Slides a `kernel_shape` window with `strides`, "
    # "`dilations` and `pads` (begins then ends) over each spatial dim and takes "
    # "the " # what # ". `ceil_mode` rounds the output size up (a window that "
    # "would start inside the end padding is dropped).\n\nExample:\n\n```mlir\n"
    # "%y = kiln." # mnemonic # " %x {kernel_shape = array<i64: 3, 3>, "
    # "strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} "
    # ": (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>\n```";
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_MaxPoolOp : Kiln_PoolOp<"max_pool", "maximum"> {
  let arguments = (ins Kiln_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
}

def Kiln_AvgPoolOp : Kiln_PoolOp<"avg_pool", "mean"> {
  let arguments = (ins Kiln_FloatTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
}

class Kiln_GlobalPoolOp<string mnemonic, string what> : Kiln_InferOp<mnemonic,
    [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "global " # what # " pooling: every spatial dim becomes 1";
  let description = "Takes the " # what # " over all spatial dims of "
    # "`[N, C, D1..Dk]`, giving `[N, C, 1..1]`.\n\nExample:\n\n```mlir\n"
    # "%y = kiln." # mnemonic
    # " %x : (tensor<1x2048x7x7xf32>) -> tensor<1x2048x1x1xf32>\n```";
  let arguments = (ins Kiln_FloatTensor:$input);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_GlobalAvgPoolOp : Kiln_GlobalPoolOp<"global_avg_pool", "mean">;
def Kiln_GlobalMaxPoolOp : Kiln_GlobalPoolOp<"global_max_pool", "maximum">;

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

def Kiln_ReduceOp : Kiln_InferOp<"reduce", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "reduction over a set of axes (sum, mean, max, min, prod, l1, l2, …)";
  let description = [{
    Combines the elements along `axes` (empty: all axes) with `kind`. With
    `keepdims` the reduced dims stay as 1.

    Example:

    ```mlir
    %m = kiln.reduce mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<1x128x768xf32>) -> tensor<1x128x1xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, Kiln_ReduceKind:$kind,
                       DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$kind $input attr-dict `:` functional-type(operands, results)";
}

class Kiln_ArgReduceOp<string mnemonic, string what> : Kiln_InferOp<mnemonic> {
  let summary = "index of the " # what # " along an axis";
  let description = "Returns, as `i64`, the index of the " # what
    # " along `axis` (the first one, or the last with `select_last_index`)."
    # "\n\nExample:\n\n```mlir\n%i = kiln." # mnemonic
    # " %x {axis = 1 : i64, keepdims = false} : (tensor<8x1000xf32>) -> tensor<8xi64>\n```";
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_ArgMaxOp : Kiln_ArgReduceOp<"argmax", "largest element">;
def Kiln_ArgMinOp : Kiln_ArgReduceOp<"argmin", "smallest element">;

class Kiln_SoftmaxLikeOp<string mnemonic, string formula>
    : Kiln_Op<mnemonic, [Pure, SameOperandsAndResultType]> {
  let summary = formula # " along one axis";
  let description = "Computes `" # formula # "` along `axis` (opset-13 "
    # "semantics: a single axis).\n\nExample:\n\n```mlir\n%y = kiln."
    # mnemonic # " %x {axis = -1 : i64} : tensor<1x12x128x128xf32>\n```";
  let arguments = (ins Kiln_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Kiln_SoftmaxOp : Kiln_SoftmaxLikeOp<"softmax", "exp(x) / sum(exp(x))">;
def Kiln_LogSoftmaxOp : Kiln_SoftmaxLikeOp<"log_softmax", "x - log(sum(exp(x)))">;

def Kiln_LayerNormOp : Kiln_Op<"layer_norm", [Pure,
    AllTypesMatch<["input", "output"]>]> {
  let summary = "layer normalization over the trailing dims from `axis`";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, with mean and variance
    over dims `axis..rank-1`. `scale` and `bias` broadcast to those dims.

    Example:

    ```mlir
    %y = kiln.layer_norm %x, %gamma, %beta {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Optional<Kiln_FloatTensor>:$bias, I64Attr:$axis,
                       F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_BatchNormOp : Kiln_Op<"batch_norm", [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = "batch normalization with running statistics (inference)";
  let description = [{
    `(x - mean[c]) / sqrt(var[c] + epsilon) * scale[c] + bias[c]` over channel
    dim 1 of `[N, C, ...]`; the four parameters are `[C]` tensors.

    Example:

    ```mlir
    %y = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Kiln_FloatTensor:$bias, Kiln_FloatTensor:$mean,
                       Kiln_FloatTensor:$variance, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_InstanceNormOp : Kiln_Op<"instance_norm", [Pure, AllTypesMatch<["input", "output"]>]> {
  let summary = "instance normalization: per sample and channel over spatial dims";
  let description = [{
    Normalizes `[N, C, ...]` over the spatial dims of each `(n, c)` then applies
    `scale[c]` and `bias[c]`.

    Example:

    ```mlir
    %y = kiln.instance_norm %x, %s, %b {epsilon = 1.0e-05 : f32} : (tensor<1x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x32x32xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Kiln_FloatTensor:$bias, F32Attr:$epsilon);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_CumSumOp : Kiln_Op<"cumsum", [Pure, SameOperandsAndResultType]> {
  let summary = "cumulative sum along an axis";
  let description = [{
    Running sum along `axis`; `exclusive` leaves out the current element,
    `reverse` runs from the end.

    Example:

    ```mlir
    %y = kiln.cumsum %x {axis = 1 : i64} : tensor<2x8xi64>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Kiln_CumProdOp : Kiln_Op<"cumprod", [Pure, SameOperandsAndResultType]> {
  let summary = "cumulative product along an axis";
  let description = [{
    Running product along `axis`; `exclusive` leaves out the current element
    (the first product is 1), `reverse` runs from the end (ONNX CumProd).

    Example:

    ```mlir
    %y = kiln.cumprod %x {axis = 0 : i64, reverse = true} : tensor<5xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Kiln_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Kiln_TopKOp : Kiln_InferOp<"top_k", [AllElementTypesMatch<["input", "values"]>]> {
  let summary = "the k largest (or smallest) elements along an axis, and their indices";
  let description = [{
    Returns the `k` largest (`largest = true`) or smallest elements along
    `axis`, and their `i64` indices; `sorted` orders them.

    Example:

    ```mlir
    %v, %i = kiln.top_k %x {k = 5 : i64, axis = -1 : i64} : (tensor<1x1000xf32>) -> (tensor<1x5xf32>, tensor<1x5xi64>)
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, I64Attr:$k, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$largest,
                       DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Kiln_NumericTensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

def Kiln_QuantizeLinearOp : Kiln_Op<"quantize_linear", [Pure]> {
  let summary = "affine quantization: saturate(round(x / scale) + zero_point)";
  let description = [{
    Per-tensor (scalar `scale`) or per-axis (1-D `scale` along `axis`)
    quantization to the result's integer type, which must match the
    zero point's.

    Example:

    ```mlir
    %q = kiln.quantize_linear %x, %s, %z {axis = 1 : i64} : (tensor<1x64xf32>, tensor<f32>, tensor<i8>) -> tensor<1x64xi8>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$scale,
                       Kiln_QuantTensor:$zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Kiln_QuantTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_DequantizeLinearOp : Kiln_Op<"dequantize_linear", [Pure]> {
  let summary = "affine dequantization: (x - zero_point) * scale";
  let description = [{
    Inverse of `kiln.quantize_linear`; the result has the scale's element
    type and the input's shape.

    Example:

    ```mlir
    %x = kiln.dequantize_linear %q, %s, %z {axis = 0 : i64} : (tensor<64x3x3x3xi8>, tensor<64xf32>, tensor<64xi8>) -> tensor<64x3x3x3xf32>
    ```
  }];
  let arguments = (ins Kiln_QuantTensor:$input, Kiln_FloatTensor:$scale,
                       Kiln_QuantTensor:$zero_point,
                       DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $zero_point attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // KILN_DIALECT_KILN_IR_KILNNNOPS_TD
