//===- Driver.h - The compile kilnc and the Python package run --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The compiler driver as a library: a CompileJob says what one compile does
// (model, stages, target options, reports), runCompile does it and prints
// every diagnostic the way kilnc does. kilnc fills the job from its flags; the
// Python package (kiln/Driver/Compile.h) from keyword arguments. Flags never
// live here.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DRIVER_DRIVER_H
#define KILN_DRIVER_DRIVER_H

#include "kiln/Import/ONNX/ONNXImporter.h"
#include "kiln/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::driver {

/// The reports kilnc --report prints after their stage.
enum class Report { None, Fusion, Memory, Cost, Tuning };

/// One compile: the model at `input` through the stages up to `stage`.
struct CompileJob {
  /// A `.onnx` model (imported with `import`) or `kiln` MLIR; `-` is stdin.
  std::string input = "-";
  /// Where the last stage's result goes; `-` is stdout for IR stages and, for
  /// obj and lib, the input's name with the stage's extension.
  std::string output = "-";
  Stage stage = Stage::Lib;
  PipelineOptions options;
  onnx_import::ImportOptions import;
  Report report = Report::None;
  bool reportJSON = false;
  /// A tuning database (kilnc --tuning-db; docs/tuning.md): its winners
  /// configure the CPU matmuls of their signatures, over the shipped
  /// databases' winners for the same keys. Empty: none.
  std::string tuningDB;
  /// Where the shipped tuning databases are (kilnc: share/kiln/tuning
  /// beside it, shippedTuningDirectory): every `*.jsonl` file there. Empty:
  /// none are used (kilnc --tuning-db=none, the Python package).
  std::string shippedTuningDir;
  /// Print each stage and its time.
  bool verbose = false;
  /// Applied to each stage's pass manager (kilnc: MLIR's --mlir-* flags).
  std::function<mlir::LogicalResult(mlir::PassManager &)> configurePassManager;
};

/// Adds `--input-shape NAME=AxBxC` (`NAME=` for a scalar) to `options`; the
/// last `=` separates the name.
llvm::Error addInputShape(llvm::StringRef flag, onnx_import::ImportOptions &options);

/// kilnc --decode-step=B with --kv-cache-length=L: the import shapes of one
/// decode step of a transformers export (input_ids and position_ids Bx1,
/// attention_mask BxL, past_key_values.* Bx?x(L-1)x?).
llvm::Error addDecodeStepShapes(int64_t batch, int64_t cacheLength,
                                onnx_import::ImportOptions &options);

/// Parses `--matmul-tile ROWSxVECTORSxMxNxK`.
llvm::Error parseMatmulTile(llvm::StringRef text, CPUMatmulTiling &tiling);

/// The checks between options that kilnc makes before reading the model: a
/// report needs its stage, --weights needs an artifact, the stage exists for
/// the target, --max-fold-bytes is a byte count.
llvm::Error validateJob(const CompileJob &job);

/// Reads `path`: `.onnx` through the importer with `import`, anything else as
/// MLIR (text or bytecode). Problems are diagnostics on `context`; null after
/// an error.
mlir::OwningOpRef<mlir::ModuleOp> loadModel(llvm::StringRef path,
                                            const onnx_import::ImportOptions &import,
                                            llvm::SourceMgr &sourceMgr,
                                            mlir::MLIRContext &context);

/// Runs `job` (validated first). Diagnostics (`file:line:col: error: ...`),
/// the driver's own errors (`kilnc: error: ...`), reports and -v timings go
/// to `diagnostics`. Returns kilnc's exit code: 0 on success, 1 otherwise.
int runCompile(const CompileJob &job, llvm::raw_ostream &diagnostics);

/// kilnc --check of the ONNX model `job.input` (a .onnx path) on `os`: the op types (count,
/// supported or why not; also into `opTypes` if given), then the compile's own
/// front half -- the import with its symbolic shape reasoning, the graph and
/// linalg stages and the model signature -- each with the error a compile
/// would print, naming the node. Returns the exit code: 0 when all passes.
int runCheck(const CompileJob &job, llvm::raw_ostream &os,
             std::vector<onnx_import::OpTypeSupport> *opTypes = nullptr);

} // namespace kiln::driver

#endif // KILN_DRIVER_DRIVER_H
