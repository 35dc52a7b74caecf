//===- KilnToLinalg.h - Patterns lowering kiln ops to linalg ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H
#define KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H

#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"

namespace kiln {

/// A run-time check of an assumption the generated code makes (two dynamic
/// dims are equal, an index is in range): `func.call @kiln_check(%ok, %got,
/// %expected) {kiln.check_message = "..."}` to this private declaration of
/// type (i1, index, index) -> (). In the message "{0}" and "{1}" stand for
/// got and expected. kiln-prepare-entry gives the checks the host (they
/// become calls of kCheckHookName); when %ok is false at run time, the run
/// fails with the message (kiln_abi_host::fail).
inline constexpr llvm::StringLiteral kCheckFunctionName = "kiln_check";
inline constexpr llvm::StringLiteral kCheckMessageAttr = "kiln.check_message";

#define GEN_PASS_DECL
#include "kiln/Conversion/KilnToLinalg/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Conversion/KilnToLinalg/Passes.h.inc"

/// Constants, unary/binary elementwise ops, select, cast: linalg.generic.
/// `converter` makes unsigned integer tensors signless; the patterns for
/// arithmetic, comparisons, bitwise ops, shifts, select and cast then pick the
/// unsigned arith ops. `brokenOp` (test only, normally empty) names an
/// elementwise op, without the `kiln.` prefix, whose lowering is made wrong on
/// purpose: its result plus one (true and false swapped for i1).
void populateElementwiseToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                         const mlir::TypeConverter &converter,
                                         llvm::StringRef brokenOp = {});
/// Unsigned integer tensors (and scalars) to signless ones of the same width;
/// everything else unchanged.
void populateUnsignedToSignlessConversion(mlir::TypeConverter &converter);
/// matmul, gemm: linalg.matmul / contraction generics. With `kMajorRhs`, a
/// batched matmul whose rhs is a transpose of its last two dims is a
/// linalg.batch_matmul reading the transpose's input through
/// transposedBIndexingMaps (ContractionMaps.h): a K-major B, for targets
/// whose product kernels take one.
void populateContractionToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                         bool kMajorRhs = false);
/// kiln.attention the graph stage kept (static rank-4 layout) ->
/// kiln.attention_kernel.
void populateAttentionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// How convolutions are lowered: the cut-offs of a target's policy (the
/// values below are the CPU's, measured on its matmul kernels).
struct ConvLoweringOptions {
  /// Static 2-D ungrouped f32 convs of up to this many images run as matmuls
  /// per image (im2col or shifted); bigger batches as linalg convs.
  int64_t matmulMaxBatch = 16;
  /// A stride-1 window wider than 1x1 runs as shifted matmuls (no im2col)
  /// while its discarded columns dw*(kw-1) are at most 1/N of the output
  /// row; 0: never.
  int64_t shiftedDiscardDivisor = 8;
  /// Depthwise windows up to this many taps are unrolled into one generic
  /// (stride 1: on the flattened padded input); larger ones keep loops.
  int64_t depthwiseMaxUnrolledTaps = 49;
  /// Strided depthwise convs and max pooling run as the stride-1 flat form
  /// on the s*s phases of their padded input (contiguous taps) instead of on
  /// strided views.
  bool stridedWindowsOnPhases = false;
  /// Stride-1 depthwise convs with output rows up to this wide whose result
  /// reaches a reader other than 1x1 convs through elementwise ops run on
  /// the image rows, where their activation joins them, instead of on the
  /// flattened padded input; 0: never.
  int64_t depthwiseRowsMaxWidth = 0;
  /// Strided depthwise convs compute output rows rounded up to a multiple
  /// of this many columns on strided views of their padded input (padded
  /// wide enough), the extra columns discarded, instead of on phases; 0:
  /// never.
  int64_t stridedDepthwiseColumns = 0;
};

/// conv, conv_transpose: linalg named conv ops or matmul forms.
void populateConvToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                  const ConvLoweringOptions &options = {});
/// max/avg pooling (1-D to 3-D) and global pooling; `options` for strided
/// max pooling on phases (stridedWindowsOnPhases).
void populatePoolToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                  const ConvLoweringOptions &options = {});
/// reduce, softmax, log_softmax, norms: reduction generics.
void populateReductionToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// quantize_linear, dequantize_linear: elementwise generics.
void populateQuantizeToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// resize (nearest, linear, cubic): a gathering generic over the output.
void populateResizeToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// top_k, scatter_elements: generics with a reduction dim along the axis.
void populateSelectScatterToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// kv_cache_update: an insert_slice into the cache and slices of it.
void populateKVCacheUpdateToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// concat(-x[h:n], x[0:h]) and the like (rotary embeddings' rotate_half):
/// one generic reading x at (j + h) mod n, which fuses into its reader.
void populateRotateHalfToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// cumsum: a generic with a masked reduction along the axis.
void populateScanToLinalgPatterns(mlir::RewritePatternSet &patterns);
/// reshape family, transpose, concat, slice, pad, tile, shape/size: tensor ops.
void populateShapeToTensorPatterns(mlir::RewritePatternSet &patterns);
/// gather, gather_elements, gather_nd: generics over clamped indices.
/// `indexChecks`: gather and gather_elements check their indices at run time
/// (the CUDA target, whose host code cannot read the indices, only clamps).
void populateGatherToLinalgPatterns(mlir::RewritePatternSet &patterns,
                                    bool indexChecks = true);

} // namespace kiln

#endif // KILN_CONVERSION_KILNTOLINALG_KILNTOLINALG_H
