//===- KilnShapeOps.td - Data movement, indexing and shape ops -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_IR_KILNSHAPEOPS_TD
#define KILN_DIALECT_KILN_IR_KILNSHAPEOPS_TD

include "kiln/Dialect/Kiln/IR/KilnBase.td"

def Kiln_ReshapeOp : Kiln_Op<"reshape", [Pure, AllElementTypesMatch<["input", "output"]>]> {
  let summary = "same elements, another shape";
  let description = [{
    Reinterprets the elements (row-major) with the result's shape. The shape
    operand (ONNX semantics already resolved: no `0` or `-1` entries left)
    is needed only while the result type has dynamic dims; once static it is
    dropped by canonicalization.

    Example:

    ```mlir
    %y = kiln.reshape %x : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    %z = kiln.reshape %x, %s : (tensor<?x768xf32>, tensor<3xi64>) -> tensor<?x12x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Optional<Kiln_ShapeTensor>:$shape);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = [{
    $input (`,` $shape^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Kiln_TransposeOp : Kiln_InferOp<"transpose", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "permutation of dims";
  let description = [{
    Result dim `i` is input dim `perm[i]`.

    Example:

    ```mlir
    %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_InferOp<"concat", [SameOperandsElementType]> {
  let summary = "joins tensors along one axis";
  let description = [{
    All inputs share rank and every dim but `axis`.

    Example:

    ```mlir
    %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x96x28x28xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_KVCacheUpdateOp : Kiln_InferOp<"kv_cache_update",
    [AllElementTypesMatch<["cache", "update", "updated"]>]> {
  let summary = "writes new rows into a fixed-length KV cache in place";
  let description = [{
    `updated` is `cache` with rows `[offset, offset + n)` along `axis`
    replaced by `update` (n rows); `past` is its first `offset` rows (the
    cache before the update) and `valid` its first `offset + n` rows (what
    the ONNX concat of past and new rows computed). The cache's length along
    `axis` is static; every other dim matches `update`'s. Rows outside
    `[0, offset + n)` are left as they are. A run whose
    `offset + n` exceeds the cache length fails (a run-time check).

    Written by `kiln-kv-cache-in-place` (kilnc --kv-cache-length); bufferized
    in place into the cache argument, so the views are not copies.

    Example:

    ```mlir
    %updated, %past, %valid = kiln.kv_cache_update %cache, %new, %offset {axis = 2 : i64} : (tensor<?x12x384x64xf16>, tensor<?x12x?x64xf16>, tensor<i64>) -> (tensor<?x12x384x64xf16>, tensor<?x12x?x64xf16>, tensor<?x12x?x64xf16>)
    ```
  }];
  let arguments = (ins Kiln_Tensor:$cache, Kiln_Tensor:$update,
                       0DTensorOf<[I64]>:$offset, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$updated, Kiln_Tensor:$past, Kiln_Tensor:$valid);
  let assemblyFormat = "$cache `,` $update `,` $offset attr-dict `:` functional-type(operands, results)";
}

def Kiln_KVCacheWriteOp : Kiln_InferOp<"kv_cache_write",
    [AllElementTypesMatch<["cache", "update", "updated"]>]> {
  let summary = "writes one new row per sequence into a KV cache at positions held in a tensor";
  let description = [{
    `updated` is `cache` with row `positions[b, 0]` of sequence `b` along
    `axis` replaced by `update`'s single row of that sequence; every other
    row is left as it is, and a position outside `[0, length)` writes
    nothing. Dim 0 is the batch (the sequences); the update has one row
    along `axis` and the cache's dims elsewhere; `positions` is i64
    `[batch, 1]`. Unlike `kiln.kv_cache_update`, the row is device data (a
    decode step's position ids), not a host-known offset, so a step whose
    shapes are all static can be replayed as it was recorded.

    Written by `kiln-kv-cache-in-place` in its `decode-step` mode (kilnc
    --decode-step); bufferized in place into the cache argument.

    Example:

    ```mlir
    %updated = kiln.kv_cache_write %cache, %new, %positions {axis = 2 : i64} : (tensor<1x12x384x64xf16>, tensor<1x12x1x64xf16>, tensor<1x1xi64>) -> tensor<1x12x384x64xf16>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$cache, Kiln_Tensor:$update,
                       TensorOf<[I64]>:$positions, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$updated);
  let assemblyFormat = "$cache `,` $update `,` $positions attr-dict `:` functional-type(operands, results)";
}

def Kiln_SplitOp : Kiln_InferOp<"split"> {
  let summary = "cuts a tensor along one axis into pieces of given sizes";
  let description = [{
    One result per entry of `sizes`, which must add up to the axis length.

    Example:

    ```mlir
    %q, %k, %v = kiln.split %qkv {axis = 2 : i64, sizes = array<i64: 768, 768, 768>} : (tensor<1x128x2304xf32>) -> (tensor<1x128x768xf32>, tensor<1x128x768xf32>, tensor<1x128x768xf32>)
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Kiln_Tensor>:$outputs);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_SliceOp : Kiln_InferOp<"slice", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "strided window along some axes (ONNX Slice with constant bounds)";
  let description = [{
    For each listed axis takes `starts[i]:ends[i]:steps[i]` with Python
    semantics: negative bounds count from the end and bounds clamp to the dim.

    Example:

    ```mlir
    %y = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 64>, axes = array<i64: -1>, steps = array<i64: 1>} : (tensor<1x128x768xf32>) -> tensor<1x128x64xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$axes,
                       DenseI64ArrayAttr:$steps);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_GatherOp : Kiln_InferOp<"gather", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "takes slices along an axis at the given indices (ONNX Gather)";
  let description = [{
    Result shape is `input[:axis] ++ indices.shape ++ input[axis+1:]`;
    negative indices count from the end.

    Example:

    ```mlir
    %e = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<30522x768xf32>, tensor<1x128xi64>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Kiln_GatherElementsOp : Kiln_InferOp<"gather_elements",
    [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "elementwise gather along an axis (result shape = indices shape)";
  let description = [{
    `out[i][j] = input[indices[i][j]][j]` for `axis = 0`, and so on.

    Example:

    ```mlir
    %y = kiln.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Kiln_GatherNDOp : Kiln_InferOp<"gather_nd", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "gathers slices addressed by index tuples (ONNX GatherND)";
  let description = [{
    The last dim of `indices` holds k coordinates into the dims after the
    first `batch_dims` of `input` (which `indices` shares); each tuple
    selects `input[b..., i_1..i_k, :]`. Result shape:
    `indices.shape[:-1] ++ input.shape[batch_dims + k:]`.

    Example:

    ```mlir
    %y = kiln.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<4x5x6xf32>, tensor<3x2xi64>) -> tensor<3x6xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Kiln_ScatterElementsOp : Kiln_InferOp<"scatter_elements",
    [AllElementTypesMatch<["input", "updates", "output"]>]> {
  let summary = "writes updates into a copy of the input at per-element indices";
  let description = [{
    Inverse of `gather_elements`; `reduction` combines with the existing value.

    Example:

    ```mlir
    %y = kiln.scatter_elements add %x, %i, %u {axis = 0 : i64} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_IndexTensor:$indices,
                       Kiln_Tensor:$updates, I64Attr:$axis,
                       Kiln_ScatterReduction:$reduction);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = [{
    $reduction $input `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)
  }];
}

def Kiln_ExpandOp : Kiln_Op<"expand", [Pure, AllElementTypesMatch<["input", "output"]>]> {
  let summary = "broadcasts a tensor to a larger shape";
  let description = [{
    Numpy-broadcasts the input to the result shape. The shape operand is kept
    while the result type has dynamic dims.

    Example:

    ```mlir
    %y = kiln.expand %x : (tensor<1x1x128xf32>) -> tensor<8x12x128xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Optional<Kiln_ShapeTensor>:$shape);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = [{
    $input (`,` $shape^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Kiln_SqueezeOp : Kiln_InferOp<"squeeze", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "removes dims of size 1";
  let description = [{
    Removes the listed `axes` (each must be 1), or every dim of size 1 when
    `axes` is empty.

    Example:

    ```mlir
    %y = kiln.squeeze %x {axes = array<i64: 2, 3>} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_UnsqueezeOp : Kiln_InferOp<"unsqueeze", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "inserts dims of size 1";
  let description = [{
    `axes` are positions in the result (negative counts from its end).

    Example:

    ```mlir
    %y = kiln.unsqueeze %x {axes = array<i64: 1, 2>} : (tensor<1x128xi64>) -> tensor<1x1x1x128xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_FlattenOp : Kiln_InferOp<"flatten", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "collapses to 2-D at an axis";
  let description = [{
    Dims before `axis` form the first result dim, the rest the second.

    Example:

    ```mlir
    %y = kiln.flatten %x {axis = 1 : i64} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_PadOp : Kiln_InferOp<"pad", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "pads (or, with negative amounts, crops) every dim";
  let description = [{
    `pads` holds the begin amounts of every dim then the end amounts; `mode`
    chooses the fill (`value` for `constant`).

    Example:

    ```mlir
    %y = kiln.pad constant %x {pads = array<i64: 0, 0, 1, 1, 0, 0, 1, 1>, value = 0.0 : f64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x6x6xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, Kiln_PadMode:$mode,
                       DenseI64ArrayAttr:$pads,
                       DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$mode $input attr-dict `:` functional-type(operands, results)";
}

def Kiln_TileOp : Kiln_InferOp<"tile", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "repeats a tensor along each dim";
  let description = [{
    Result dim `i` is `input dim i * repeats[i]`.

    Example:

    ```mlir
    %y = kiln.tile %x {repeats = array<i64: 2, 1>} : (tensor<3x4xf32>) -> tensor<6x4xf32>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, DenseI64ArrayAttr:$repeats);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_RangeOp : Kiln_Op<"range", [Pure,
    AllElementTypesMatch<["start", "limit", "delta", "output"]>]> {
  let summary = "1-D sequence start, start + delta, … up to (excluding) limit";
  let description = [{
    The length is `max(ceil((limit - start) / delta), 0)`; the result type is
    given (static once the bounds are known). Element `i` is
    `start + i * delta` computed in a wider type and then rounded, which is
    ONNX Range-27's `stash_type` = float for 16-bit floats.

    Example:

    ```mlir
    %r = kiln.range %start, %limit, %delta : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins Kiln_ScalarTensor:$start, Kiln_ScalarTensor:$limit,
                       Kiln_ScalarTensor:$delta);
  let results = (outs 1DTensorOf<[Kiln_FloatElement, Kiln_IntElement]>:$output);
  let assemblyFormat = [{
    $start `,` $limit `,` $delta attr-dict `:` functional-type(operands, results)
  }];
  }

def Kiln_ConstantOfShapeOp : Kiln_Op<"constant_of_shape", [Pure]> {
  let summary = "a tensor of a run-time shape filled with one value";
  let description = [{
    The shape operand holds the dims; every element is `value`.

    Example:

    ```mlir
    %z = kiln.constant_of_shape %s {value = 0.0 : f32} : (tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins Kiln_ShapeTensor:$shape, TypedAttrInterface:$value);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$shape attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Kiln_ShapeOp : Kiln_InferOp<"shape"> {
  let summary = "the dims of a tensor as a 1-D i64 tensor";
  let description = [{
    Returns dims `start..end` (Python slice semantics; default all).

    Example:

    ```mlir
    %s = kiln.shape %x : (tensor<?x128x768xf32>) -> tensor<3xi64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input, OptionalAttr<I64Attr>:$start,
                       OptionalAttr<I64Attr>:$end);
  let results = (outs Kiln_ShapeTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_SizeOp : Kiln_InferOp<"size"> {
  let summary = "the element count of a tensor as a 0-D i64 tensor";
  let description = [{
    Example:

    ```mlir
    %n = kiln.size %x : (tensor<?x768xf32>) -> tensor<i64>
    ```
  }];
  let arguments = (ins Kiln_Tensor:$input);
  let results = (outs 0DTensorOf<[I64]>:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_ResizeOp : Kiln_Op<"resize", [Pure, AllElementTypesMatch<["input", "output"]>]> {
  let summary = "spatial resampling (nearest, linear, cubic)";
  let description = [{
    Resizes to the result shape. `scales` (one per dim, optional) records the
    scale factors the model gave, which some coordinate modes use instead of
    the size ratio.

    Example:

    ```mlir
    %y = kiln.resize nearest asymmetric floor %x {scales = array<f32: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x256x20x20xf32>) -> tensor<1x256x40x40xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_ResizeMode:$mode,
                       Kiln_CoordinateTransform:$coordinate_transformation_mode,
                       Kiln_NearestMode:$nearest_mode,
                       DefaultValuedAttr<DenseF32ArrayAttr, "{}">:$scales,
                       DefaultValuedAttr<F32Attr, "-0.75f">:$cubic_coeff_a);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $mode $coordinate_transformation_mode $nearest_mode $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_GridSampleOp : Kiln_Op<"grid_sample",
    [Pure, AllElementTypesMatch<["input", "grid", "output"]>]> {
  let summary = "samples the input at normalized grid coordinates";
  let description = [{
    Input `[N, C, D1..Dk]`, grid `[N, O1..Om, k]` holding per output point
    the sample position in [-1, 1] per spatial dim, innermost dim first
    (x, then y, then z); the result is `[N, C, O1..Om]`. `mode` interpolates
    (nearest rounds half to even; cubic uses Keys' kernel with a = -0.75),
    `padding_mode` decides what positions outside the input read, and
    `align_corners` maps -1 and 1 to the centers (true) or the outer edges
    (false) of the corner elements. As ONNX GridSample.

    Example:

    ```mlir
    %y = kiln.grid_sample linear zeros %x, %g {align_corners = false} : (tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32>) -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins Kiln_FloatTensor:$input, Kiln_FloatTensor:$grid,
                       Kiln_ResizeMode:$mode, Kiln_GridSamplePadding:$padding_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$align_corners);
  let results = (outs Kiln_FloatTensor:$output);
  let assemblyFormat = [{
    $mode $padding_mode $input `,` $grid attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Kiln_OneHotOp : Kiln_InferOp<"one_hot", [AllElementTypesMatch<["values", "output"]>]> {
  let summary = "one-hot encoding with [off, on] values";
  let description = [{
    Inserts a dim of size `depth` at `axis`; the element at each index is
    `values[1]`, every other `values[0]`.

    Example:

    ```mlir
    %y = kiln.one_hot %i, %v {depth = 10 : i64, axis = -1 : i64} : (tensor<4xi64>, tensor<2xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Kiln_IndexTensor:$indices, Kiln_Tensor:$values,
                       I64Attr:$depth, I64Attr:$axis);
  let results = (outs Kiln_Tensor:$output);
  let assemblyFormat = "$indices `,` $values attr-dict `:` functional-type(operands, results)";
}

#endif // KILN_DIALECT_KILN_IR_KILNSHAPEOPS_TD
