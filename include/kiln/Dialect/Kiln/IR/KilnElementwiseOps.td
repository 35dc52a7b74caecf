//===- KilnElementwiseOps.td - Constants, elementwise and select ops -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNELEMENTWISEOPS_TD
#define KILN_DIALECT_KILN_IR_KILNELEMENTWISEOPS_TD

include "kiln/Dialect/Kiln/IR/KilnBase.td"

def Kiln_ConstantOp : Kiln_Op<"constant", [ConstantLike, Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "a tensor constant (dense or a resource blob)";
  let description = [{
    Materializes a tensor from an `ElementsAttr`. Model weights use
    `dense_resource` blobs so that large initializers are never printed or
    copied as attributes.

    Example:

    ```mlir
    %w = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    %b = kiln.constant dense_resource<fc1_bias> : tensor<128xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Kiln_NegOp : Kiln_UnaryOp<"neg", "-x", Kiln_SignedTensor> { let hasFolder = 1; }
def Kiln_AbsOp : Kiln_UnaryOp<"abs", "|x|", Kiln_NumericTensor>;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", "e^x", Kiln_FloatTensor>;
def Kiln_LogOp : Kiln_UnaryOp<"log", "ln(x)", Kiln_FloatTensor>;
def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", "sqrt(x)", Kiln_FloatTensor>;
def Kiln_RsqrtOp : Kiln_UnaryOp<"rsqrt", "1 / sqrt(x)", Kiln_FloatTensor>;
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", "1 / x", Kiln_FloatTensor>;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", "tanh(x)", Kiln_FloatTensor>;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", "1 / (1 + e^-x)", Kiln_FloatTensor>;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", "max(x, 0)", Kiln_SignedTensor> { let hasFolder = 1; }
def Kiln_ErfOp : Kiln_UnaryOp<"erf", "erf(x)", Kiln_FloatTensor>;
def Kiln_AsinOp : Kiln_UnaryOp<"asin", "asin(x)", Kiln_FloatTensor>;
def Kiln_AcosOp : Kiln_UnaryOp<"acos", "acos(x)", Kiln_FloatTensor>;
def Kiln_AtanOp : Kiln_UnaryOp<"atan", "atan(x)", Kiln_FloatTensor>;
def Kiln_SinOp : Kiln_UnaryOp<"sin", "sin(x)", Kiln_FloatTensor>;
def Kiln_CosOp : Kiln_UnaryOp<"cos", "cos(x)", Kiln_FloatTensor>;
def Kiln_FloorOp : Kiln_UnaryOp<"floor", "floor(x)", Kiln_FloatTensor> { let hasFolder = 1; }
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", "ceil(x)", Kiln_FloatTensor> { let hasFolder = 1; }
def Kiln_RoundOp : Kiln_UnaryOp<"round",
    "round(x), halfway cases to even", Kiln_FloatTensor>;
def Kiln_SignOp : Kiln_UnaryOp<"sign", "sign(x) in {-1, 0, 1}", Kiln_NumericTensor>;
def Kiln_NotOp : Kiln_UnaryOp<"not", "not x (logical on i1, bitwise on integers)",
                              Kiln_BitsTensor> {
  let hasFolder = 1;
}

def Kiln_LeakyReluOp : Kiln_UnaryOp<"leaky_relu", "x >= 0 ? x : alpha * x",
                                    Kiln_FloatTensor> {
  let arguments = (ins Kiln_FloatTensor:$input, F32Attr:$alpha);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Kiln_GeluOp : Kiln_UnaryOp<"gelu", "x * Phi(x)", Kiln_FloatTensor> {
  let description = [{
    Gaussian error linear unit, `x * 0.5 * (1 + erf(x / sqrt(2)))`; with
    `tanh` approximation `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`.

    Example:

    ```mlir
    %y = kiln.gelu none %x : tensor<1x128x3072xf32>
    %z = kiln.gelu tanh %x : tensor<1x128x3072xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input,
                       Kiln_GeluApproximation:$approximation);
  let assemblyFormat = "$approximation $input attr-dict `:` type($input)";
}

def Kiln_ClipOp : Kiln_UnaryOp<"clip", "min(max(x, min), max)", Kiln_NumericTensor> {
  let description = [{
    Clamps every element to `[min, max]`; a missing bound leaves that side open.

    Example:

    ```mlir
    %y = kiln.clip %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<1x32x112x112xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input, OptionalAttr<F64Attr>:$min,
                       OptionalAttr<F64Attr>:$max);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_CastOp : Kiln_Op<"cast", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts every element to the result's element type with ONNX `Cast`
    semantics (floats to integers truncate toward zero; to `i1` is `x != 0`).
    Casts to an 8-bit float round to nearest even; `saturate` (ONNX's
    attribute, default true) makes an out-of-range value the largest finite
    value of its sign, else it becomes infinity (f8E5M2) or NaN. `saturate`
    means nothing for other result types.

    Example:

    ```mlir
    %y = kiln.cast %x : tensor<4xf32> -> tensor<4xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input,
                       DefaultValuedAttr<BoolAttr, "true">:$saturate);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasFolder = 1;
}

def Kiln_BitcastOp : Kiln_Op<"bitcast", [Pure, Elementwise, SameOperandsAndResultShape]> {
  let summary = "elementwise reinterpretation of the bits as another element type";
  let description = [{
    Keeps every element's bits and reads them as the result's element type of
    the same width (ONNX BitCast); a bool (`i1`) counts as one byte, 0 or 1.

    Example:

    ```mlir
    %y = kiln.bitcast %x : tensor<4xf32> -> tensor<4xi32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "x + y", Kiln_NumericTensor, 0,
                               [Commutative]> { let hasFolder = 1; }
def Kiln_SubOp : Kiln_BinaryOp<"sub", "x - y", Kiln_NumericTensor> {
  let hasFolder = 1;
}
def Kiln_MulOp : Kiln_BinaryOp<"mul", "x * y", Kiln_NumericTensor, 0,
                               [Commutative]> { let hasFolder = 1; }
def Kiln_DivOp : Kiln_BinaryOp<"div", "x / y", Kiln_NumericTensor> {
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}
def Kiln_PowOp : Kiln_BinaryOp<"pow", "x ^ y", Kiln_NumericTensor> {
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}
def Kiln_MaxOp : Kiln_BinaryOp<"max", "max(x, y)", Kiln_NumericTensor, 0,
                               [Commutative]>;
def Kiln_MinOp : Kiln_BinaryOp<"min", "min(x, y)", Kiln_NumericTensor, 0,
                               [Commutative]>;
def Kiln_ModOp : Kiln_BinaryOp<"mod", "x mod y", Kiln_NumericTensor> {
  let description = [{
    Remainder. With `fmod` the quotient is truncated, so the result has the
    sign of the dividend (C `fmod`); otherwise it is floored, so the result has
    the sign of the divisor (Python `%`; for floats a zero result takes the
    divisor's sign, as ONNX Mod-28 specifies).

    Example:

    ```mlir
    %z = kiln.mod %x, %y {fmod = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$lhs, Kiln_NumericTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$fmod);
}
// Logical on i1, bitwise on integers (ONNX And/Or/Xor and BitwiseAnd/Or/Xor).
def Kiln_AndOp : Kiln_BinaryOp<"and", "x and y", Kiln_BitsTensor, 0, [Commutative]>;
def Kiln_OrOp : Kiln_BinaryOp<"or", "x or y", Kiln_BitsTensor, 0, [Commutative]>;
def Kiln_XorOp : Kiln_BinaryOp<"xor", "x xor y", Kiln_BitsTensor, 0, [Commutative]>;
def Kiln_BitShiftOp : Kiln_BinaryOp<"bit_shift", "x << y or x >> y", Kiln_IntegerTensor> {
  let description = [{
    Shifts every element of `lhs` by the matching element of `rhs` bits, left
    when `left` is set, else right (arithmetic for signless, which are signed,
    logical for unsigned integers). A shift amount outside [0, bit width) gives
    the full shift: 0, or -1 for a right shift of a negative signed value
    (ONNX BitShift-28).

    Example:

    ```mlir
    %z = kiln.bit_shift %x, %y {left = true} : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
    ```
  }];
  let arguments = (ins Kiln_IntegerTensor:$lhs, Kiln_IntegerTensor:$rhs, BoolAttr:$left);
}
def Kiln_EqualOp : Kiln_BinaryOp<"equal", "x == y", Kiln_Tensor, 1, [Commutative]>;
def Kiln_LessOp : Kiln_BinaryOp<"less", "x < y", Kiln_NumericTensor, 1>;
def Kiln_LessEqualOp : Kiln_BinaryOp<"less_equal", "x <= y", Kiln_NumericTensor, 1>;
def Kiln_GreaterOp : Kiln_BinaryOp<"greater", "x > y", Kiln_NumericTensor, 1>;
def Kiln_GreaterEqualOp : Kiln_BinaryOp<"greater_equal", "x >= y",
                                        Kiln_NumericTensor, 1>;

def Kiln_SelectOp : Kiln_InferOp<"select",
    [AllElementTypesMatch<["on_true", "on_false", "output"]>]> {
  let summary = "elementwise choice between two tensors (ONNX Where)";
  let description = [{
    `condition ? on_true : on_false` per element, with the three operands
    broadcast against each other.

    Example:

    ```mlir
    %z = kiln.select %c, %x, %y : (tensor<1x1x4x4xi1>, tensor<f32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_Tensor:$on_true,
                       Kiln_Tensor:$on_false);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

#endif // KILN_DIALECT_KILN_IR_KILNELEMENTWISEOPS_TD
