//===- ONNXImporter.h - ONNX model to kiln dialect ---------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Stage 1 of the pipeline: reads an ONNX model file and produces a module with
// one `func.func @main` of `kiln` ops. Every problem with the model is reported
// as an error diagnostic on the context; nothing here aborts on user input.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IMPORT_ONNX_ONNXIMPORTER_H
#define KILN_IMPORT_ONNX_ONNXIMPORTER_H

#include "kiln/Import/ONNX/OpTypeSupport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln::onnx_import {

/// What the caller may change about an import.
struct ImportOptions {
  /// Replaces the declared shape of graph inputs by name; the rank must match
  /// and a static declared dim must not be contradicted. A dim of
  /// ShapedType::kDynamic keeps the declared one; a key ending in `*` applies
  /// to every input whose name has that prefix (and no entry of its own).
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
};

/// Imports the model at `path`. Errors are emitted on `context` and the result
/// is null after any of them.
mlir::OwningOpRef<mlir::ModuleOp> importModel(llvm::StringRef path,
                                              mlir::MLIRContext &context,
                                              const ImportOptions &options = {});

/// Reads the model at `path` without importing it and prints, for each op type
/// (with its count), whether the importer supports it and why not; `opTypes`,
/// if given, receives the same survey in first-use order. Returns 0 when every
/// op is supported, 1 otherwise (including unreadable models, whose errors are
/// emitted on `context`).
int checkModel(llvm::StringRef path, mlir::MLIRContext &context,
               llvm::raw_ostream &os,
               std::vector<OpTypeSupport> *opTypes = nullptr);

/// The newest ai.onnx opset and IR version the importer knows. Opsets 23
/// to 28 changed the ops Kiln handles mostly by admitting new element types
/// (int2/uint2, float4/float6/float8 variants), which the tensor reader
/// rejects by name; the handlers of the others check the opset (Mod-28
/// allows floored float remainders, Range-27 adds stash_type). IR versions
/// 12 to 14 add only element types and Opaque types, which the reader
/// rejects. The conformance suite (onnx 1.23 writes IR 14 / opset 28 cases)
/// checks this stays true.
constexpr int64_t kMaxOpsetVersion = 28;
/// Opsets 1-6 are read too; an op is imported there only if its handler is
/// registered from a version at or below the model's opset (those whose
/// semantics did not change since opset 1, e.g. Not), others report the
/// opset they are supported from.
constexpr int64_t kMinOpsetVersion = 1;
constexpr int64_t kMaxIRVersion = 14;

/// The largest rank of any tensor a model declares or produces: the
/// runtime's KILN_MAX_RANK. Far above real models, it stops rank bombs
/// (a 100,000-dim shape) before passes that are linear in the rank per op.
constexpr int64_t kMaxRank = 32;

} // namespace kiln::onnx_import

#endif // KILN_IMPORT_ONNX_ONNXIMPORTER_H
