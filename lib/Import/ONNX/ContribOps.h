//===- ContribOps.h - Shared pieces of the com.microsoft handlers -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===------------------------------------------------------------------------===//
//
// The onnxruntime contrib ops (domain com.microsoft) that LLM exports use are
// built from kiln ops with symbolic batch and sequence dims: reshapes take
// their dynamic dims from other values at run time (kiln.shape), positions
// and causal frontiers are kiln.range over a run-time length.
//
//===------------------------------------------------------------------------===//

#ifndef KILN_LIB_IMPORT_ONNX_CONTRIBOPS_H
#define KILN_LIB_IMPORT_ONNX_CONTRIBOPS_H

#include "NodeBinder.h"

namespace kiln::onnx_import::contrib {

inline constexpr llvm::StringLiteral kDomain = "com.microsoft";

/// One dim of a reshape target: a static size, or dim `axis` of `from`.
struct DimOf {
  int64_t size = 0;
  mlir::Value from;
  int64_t axis = 0;
  static DimOf fixed(int64_t size) { return {size, {}, 0}; }
  static DimOf of(mlir::Value from, int64_t axis) { return {0, from, axis}; }
};

/// `x` reshaped to `dims`; dynamic entries are read at run time.
mlir::FailureOr<mlir::Value> reshapeDims(NodeBinder &b, mlir::Value x,
                                         llvm::ArrayRef<DimOf> dims);
/// Dim `axis` of `x` as a rank-0 i64 tensor.
mlir::FailureOr<mlir::Value> dimScalar(NodeBinder &b, mlir::Value x, int64_t axis);
/// 0, 1, ..., n - 1 (i64) for a rank-0 i64 `n`.
mlir::FailureOr<mlir::Value> iota(NodeBinder &b, mlir::Value n);

/// Rotates `x` [B, S, heads, D] (BSNH) by the cos/sin rows [B or 1, S, >=
/// dim/2] (already gathered by position): the first `dim` values of each head,
/// as halves or interleaved pairs; the rest passes through.
mlir::FailureOr<mlir::Value> rotate(NodeBinder &b, mlir::Value x, mlir::Value cosRows,
                                    mlir::Value sinRows, int64_t dim, bool interleaved);
/// Rows of a [max_positions, n] cache picked by `positions` ([B or 1, S] i64).
mlir::FailureOr<mlir::Value> cacheRows(NodeBinder &b, mlir::Value cache,
                                       mlir::Value positions);
/// Positions offset + 0..S-1 as [1, S] i64, S = dim `axis` of `like`, for a
/// rank-0 or one-element i64 `offset` (null: 0).
mlir::FailureOr<mlir::Value> positionsFrom(NodeBinder &b, mlir::Value offset,
                                           mlir::Value like, int64_t axis);

/// Fails (unsupported) when input `i` is given: "<what> (input i)".
mlir::LogicalResult rejectInput(NodeBinder &b, unsigned i, llvm::StringRef what);
/// Fails (unsupported) when output `i` is used.
mlir::LogicalResult rejectOutput(NodeBinder &b, unsigned i, llvm::StringRef what);

void registerContribNormHandlers(HandlerRegistry &registry);
void registerContribAttentionHandlers(HandlerRegistry &registry);
void registerContribMatMulNBits(HandlerRegistry &registry);
void registerContribFusedHandlers(HandlerRegistry &registry);

} // namespace kiln::onnx_import::contrib

#endif // KILN_LIB_IMPORT_ONNX_CONTRIBOPS_H
