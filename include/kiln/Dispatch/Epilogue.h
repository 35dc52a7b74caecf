//===- Epilogue.h - Elementwise epilogues of matmul dispatches -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A matmul epilogue is the elementwise `linalg.generic` right after a
// `linalg.matmul` or `linalg.batch_matmul` that reads its result C (bias
// add, activation, residual add, cast, and the multi-head transposes: C
// may be read through an expand_shape and the output written permuted). The dispatch stage (kiln-form-dispatches) marks it with
// `kEpilogueAttr` = the index of the input that is C; the CPU matmul kernel
// (kiln-cpu-matmul) then applies it to each output tile while the tile is
// in registers and writes the generic's output instead of C, so matmul and
// epilogue are one kernel. Both stages check the same conditions here.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DISPATCH_EPILOGUE_H
#define KILN_DISPATCH_EPILOGUE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {

/// On a `linalg.generic`: it is the epilogue of the matmul whose result is
/// its input number N (an i64 attribute).
inline constexpr llvm::StringLiteral kEpilogueAttr = "kiln.epilogue";

/// Whether the matmul kernel can apply `generic` per output tile, with its
/// input `cIndex` being the contraction result C -- [M, N] of a matmul,
/// [batch, M, N] of a batch_matmul -- seen through `groups` (the
/// reassociation of an expand_shape of C, or one group per dim of C): all
/// loops parallel, one output; C's map and the output's map name every loop
/// exactly once (constant 0 only for unit dims), so each output element is
/// one element of C (a permutation such as the multi-head transposes is
/// allowed); the loop of C's innermost dim ("the column loop") is also the
/// output's innermost dim, and every other input is indexed by loops or the
/// constant 0 with the column loop only last (a vector load along the
/// tile's columns, or a scalar broadcast); where N is split (the head split
/// [S, H*D] -> [S, H, D]), its innermost dim is a multiple of `columnAlign`
/// -- the target's kernel's, from its policy: no vector of the kernel then
/// spans two of its rows -- or (wrapPitch) at least `columnAlign` wide, a
/// vector then spanning at most two rows (with a `pitch`, see
/// EpilogueView, or wrapping rows: the pitch and the columns read are at least that, there
/// are at least two image rows, and inputs not read along the columns do
/// not depend on the column dims); a body of elementwise arith
/// and math operations (no integer division, which could trap in the masked
/// lanes) on block arguments and scalar constants, not reading the output.
bool isMatmulEpilogue(mlir::linalg::GenericOp generic, unsigned cIndex,
                      llvm::ArrayRef<mlir::ReassociationIndices> groups, int64_t columnAlign,
                      int64_t pitch = 0);

/// Wrapping rows narrower than a vector: at most this many rows a vector.
inline constexpr int64_t kMaxWrapRows = 4;

/// How many rows a vector of `vectorWidth` columns spans at most, at any
/// start, where rows of `width` read columns lie at `pitch`.
int64_t wrapRows(int64_t width, int64_t pitch, int64_t vectorWidth);

/// The row pitch at which a vector of the kernel's columns may span two rows
/// of C's innermost group, for an epilogue whose C input (of type `cType`)
/// views C through `groups` and `pitch` (EpilogueView): `pitch` itself if
/// non-zero; else, where C's columns are split into rows whose static width
/// is not a multiple of `columnAlign` (a 1x1 conv's output rows of 56 or 14
/// columns, written into the next conv's zero padding), that width, as if
/// C were at a pitch of its own width (a vector then spans up to wrapRows
/// rows, at most kMaxWrapRows); else 0 (no vector spans two rows).
int64_t wrapPitch(mlir::ShapedType cType, llvm::ArrayRef<mlir::ReassociationIndices> groups,
                  int64_t columnAlign, int64_t pitch);

/// How an epilogue's C input views the contraction result C.
struct EpilogueView {
  /// C itself.
  mlir::Value source;
  /// The reassociation of the expand_shape of C (one group per dim of C
  /// without one).
  llvm::SmallVector<mlir::ReassociationIndices> groups;
  /// C expanded by `groups`: the dims the kernel delinearizes its rows and
  /// columns into.
  mlir::Value expanded;
  /// Non-zero for a conv computed at the padded input's row pitch: the
  /// innermost dim of `expanded` is this wide and the epilogue reads only
  /// its first columns (a slice [..., :ow] of it). A vector of the kernel's
  /// columns then spans the end of one image row and the start of the next;
  /// the kernel accesses the two parts with two masked loads or stores.
  int64_t pitch = 0;
};

/// The view of C behind an epilogue's C input: one expand_shape (tensor or
/// memref) of C, optionally followed by a slice of the innermost dim's
/// first columns (extract_slice or subview, zero offsets, unit strides).
EpilogueView epilogueView(mlir::Value cInput);

/// The contraction result behind an epilogue's C input (epilogueView's
/// source), its groups in `groups`.
mlir::Value epilogueSource(mlir::Value cInput,
                           llvm::SmallVectorImpl<mlir::ReassociationIndices> &groups);

/// The epilogue `kEpilogueAttr` marks on `generic` and its C input index.
std::optional<unsigned> epilogueInput(mlir::linalg::GenericOp generic);

/// Whether `value` is inserted whole or in part into a larger tensor
/// (tensor.insert_slice with `value` as its source: a pad, a concat).
bool isInsertedIntoSlice(mlir::Value value);

/// When `value` is inserted into a larger tensor and the destination-style
/// chain that writes it (through each op's tied init, whose intermediate
/// values nothing else uses) starts from an empty tensor: the chain starts
/// from a `bufferization.alloc_tensor` of its own instead (the empty tensor,
/// which CSE may have shared, stays for its other users), so empty-tensor
/// elimination does not
/// compute `value` in place in the slice, a strided view with an offset
/// (which a GEMM kernel's dense loads and stores cannot use); the insertion
/// stays a copy. Returns whether `value` gets a dense buffer of its own
/// (true when it is not inserted anywhere).
bool keepDenseWhenInserted(mlir::Value value);

/// Whether keepDenseWhenInserted(`value`) would return true (changing
/// nothing).
bool canKeepDense(mlir::Value value);

/// Makes `generic` the epilogue of `contraction`: marks it (`kEpilogueAttr`
/// = the index of `cInput`, its input reading C), gives its output an
/// empty tensor of its own (the kernel writes it while it still reads A
/// and B, so bufferization must not place it in their buffers), and moves
/// `views` (the reshapes between C and the generic, in order), the
/// contraction and the zero fill only it uses right before the generic.
void joinEpilogue(mlir::linalg::LinalgOp contraction, mlir::linalg::GenericOp generic,
                  mlir::OpOperand &cInput, llvm::ArrayRef<mlir::Operation *> views);

/// What a target's GEMM kernel (one that stores each output tile through
/// the product's elementwise consumer) takes as a product with an
/// epilogue: the target policy's answer, kiln-form-gemm-epilogues' options.
struct GemmEpilogueShapes {
  /// Whether the target forms such epilogues at all.
  bool enabled = false;
  /// K and N multiples (the kernel's load and store widths); K of a batched
  /// product a multiple of `batchedKMultiple`.
  int64_t kMultiple = 8, nMultiple = 8, batchedKMultiple = 64;
  /// The kernel reads A as a dense buffer: no A that is a slice.
  bool denseA = false;
};

/// On the generics of a row group (softmax, a norm, and their elementwise
/// neighbours over the same rows): they are one dispatch, group N of the
/// function (an i64 attribute). kiln-cpu-row-kernels emits each group as
/// one loop over the rows; kiln-cpu-matmul, which runs after it, rejects a
/// marked generic left over.
inline constexpr llvm::StringLiteral kRowGroupAttr = "kiln.row_group";

/// Whether `map` addresses a row group member's operand from (outer ivs,
/// row index): every index is a loop dim or a constant, and the row dim
/// `inner` (when the op has it) appears only as the last index. The
/// dispatch stage forms row groups with it, the row kernels of both targets
/// check their members with it.
bool isRowAccess(mlir::AffineMap map, int64_t inner);

/// On a `linalg.generic`: the taps of a 2-D conv as one contraction over
/// loops (f, p, c, i, j), out[f, p] += w[f, c, i, j] * x[c, at(p, i, j)],
/// x one image's flattened padded input [C, Hp*Wp] (see ConvTapsLayout).
/// The CPU matmul kernel runs it as one matmul with K = C*kh*kw whose B
/// rows it packs straight from the input (an implicit GEMM: no im2col
/// buffer). kiln-form-dispatches forms it from the per-tap matmuls of a
/// stride-1 conv and from an im2col matmul.
/// The batched form has a batch loop first, (n, f, p, c, i, j):
/// out[n, f, p] += w[f, c, i, j] * x[n, c, at(p, i, j)], x [N, C, L] and out
/// [N, F, P] (N static or dynamic); one dispatch for every image, whose
/// kernel loops over the images (kiln-form-dispatches merges the images of
/// a static batch and rewrites a conv with a dynamic one: ConvBatch.cpp).
inline constexpr llvm::StringLiteral kConvTapsAttr = "kiln.conv_taps";

/// Where a conv taps generic reads x: at(p, i, j) = pixel(p) + i*rowStep +
/// j*colStep, with pixel(p) = p*xStep when `width` is 0 (a stride-1 conv
/// computed at the padded input's row pitch: p runs along the flattened
/// input), else (p floordiv width)*yStep + (p mod width)*xStep (p is output
/// row p / width, column p % width: yStep = sh*Wp, xStep = sw).
struct ConvTapsLayout {
  int64_t rowStep = 0, colStep = 0;
  int64_t width = 0, yStep = 0, xStep = 1;
  /// Whether a vector of consecutive p reads consecutive elements of x.
  bool isContiguous() const { return width == 0 && xStep == 1; }
};

/// The map of x in a conv taps generic: (d2, at(d1, d3, d4)). A width of 1
/// is the linear form with xStep = yStep.
mlir::AffineMap convTapsInputMap(mlir::MLIRContext *context, const ConvTapsLayout &layout);

/// The layout when `generic` has the structure of kConvTapsAttr (f32,
/// static w [F, C, kh, kw], x [C, L], out [F, P], the body out + w * x),
/// else nothing. Also the form with a B prologue: B's element is computed
/// in the body from x, further inputs read like x (same map and shape:
/// "x inputs") and inputs read per channel (maps on d2 and constants only:
/// "row inputs", isConvTapsRowMap), as out + w * b(x inputs, row inputs)
/// with an elementwise arith/math b (hasVectorizableScalarBody): the
/// producer of a 1x1 conv's input (a stride-1 depthwise conv and its
/// activation, a squeeze-excite channel scale) computed while the kernel
/// packs B instead of in a dispatch of its own (kiln-form-dispatches,
/// ConvPrologue.cpp).
/// For the batched form, the same of each image: w does not read n, x
/// inputs and out read it first, row inputs per image and channel (d0, d3
/// and constants).
std::optional<ConvTapsLayout> convTapsLayout(mlir::linalg::GenericOp generic);

/// Whether `generic` is a conv taps contraction in the batched form.
bool isBatchedConvTaps(mlir::linalg::GenericOp generic);

/// Whether `map` (over a conv taps generic's loops) reads only per input
/// channel: each result is d2 or a constant.
bool isConvTapsRowMap(mlir::AffineMap map);

/// Whether conv taps `generic` (convTapsLayout holds) has a B prologue.
inline bool hasConvTapsPrologue(mlir::linalg::GenericOp generic) {
  return generic.getNumDpsInputs() > 2 ||
         generic.getRegion().front().getOperations().size() != 3;
}

/// The body test of epilogues and row groups: every op is elementwise
/// arith/math on scalars (no integer division) and takes block arguments,
/// body results or scalar constants.
bool hasVectorizableScalarBody(mlir::linalg::GenericOp generic);

/// Marked dispatch groups still present as separate linalg ops after
/// codegen formed its kernels: emits an error on each, fails if any. With
/// `rowGroups` false only epilogues are checked (the row kernels run later).
mlir::LogicalResult verifyDispatchGroupsFused(mlir::Operation *root, bool rowGroups = true);

/// Whether the buffer `value` bufferizes to will have unit stride along its
/// last dim (a prediction on tensors): only a strided `tensor.extract_slice`
/// (through reshapes) gives it another.
bool bufferizesWithUnitInnerStride(mlir::Value value);

} // namespace kiln

#endif // KILN_DISPATCH_EPILOGUE_H
