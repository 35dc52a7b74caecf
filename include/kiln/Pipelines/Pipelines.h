//===- Pipelines.h - Kiln's compilation stages and their pass pipelines -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===------------------------------------------------------------------------------===//
//
// The ordered stages of DESIGN.md. `kilnc --emit=<stage>` stops after a stage;
// `kiln-opt --kiln-<stage>-pipeline` runs exactly the passes kilnc runs for it.
//
//===------------------------------------------------------------------------------===//

#ifndef KILN_PIPELINES_PIPELINES_H
#define KILN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace kiln {

/// Compilation stages in pipeline order; later stages include earlier ones.
enum class Stage { Import, Graph, Linalg, Dispatch, Codegen, LLVM, PTX, Obj, Lib };

llvm::StringRef stageName(Stage stage);
std::optional<Stage> parseStage(llvm::StringRef name);
/// "import|graph|…|lib", for help texts and diagnostics.
std::string stageNameList();
/// Whether this build implements `stage` (the rest are reported, not faked).
bool isStageImplemented(Stage stage);

enum class Target { CPU, CUDA };

/// Everything a pipeline needs to know; filled by the tools from their flags.
struct PipelineOptions {
  Target target = Target::CPU;
};

/// Stage 2: graph-level simplification on `kiln` ops.
void buildGraphPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Appends the passes that take a module from the previous stage to `stage`.
/// Only valid for implemented stages after Import.
void buildStagePipeline(mlir::OpPassManager &pm, Stage stage,
                        const PipelineOptions &options);

/// Registers `--kiln-<stage>-pipeline` for every implemented stage.
void registerKilnPipelines();

} // namespace kiln

#endif // KILN_PIPELINES_PIPELINES_H
