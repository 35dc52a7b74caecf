//===- Pipelines.cpp - Kiln's compilation stages as pass pipelines --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Pipelines/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

namespace kiln {

static constexpr Stage kAllStages[] = {
    Stage::Import, Stage::Graph, Stage::Linalg, Stage::Dispatch, Stage::Codegen,
    Stage::LLVM,   Stage::PTX,   Stage::Obj,    Stage::Lib};

llvm::StringRef stageName(Stage stage) {
  switch (stage) {
  case Stage::Import: return "import";
  case Stage::Graph: return "graph";
  case Stage::Linalg: return "linalg";
  case Stage::Dispatch: return "dispatch";
  case Stage::Codegen: return "codegen";
  case Stage::LLVM: return "llvm";
  case Stage::PTX: return "ptx";
  case Stage::Obj: return "obj";
  case Stage::Lib: return "lib";
  }
  llvm_unreachable("unknown stage");
}

std::optional<Stage> parseStage(llvm::StringRef name) {
  for (Stage stage : kAllStages)
    if (stageName(stage) == name)
      return stage;
  return std::nullopt;
}

std::string stageNameList() {
  std::string list;
  for (Stage stage : kAllStages)
    list += (list.empty() ? "" : "|") + stageName(stage).str();
  return list;
}

bool isStageImplemented(Stage stage) {
  return stage == Stage::Import || stage == Stage::Graph;
}

void buildGraphPipeline(OpPassManager &pm, const PipelineOptions &) {
  // 1. Folders and canonical forms first: they expose identical subgraphs.
  pm.addPass(createCanonicalizerPass());
  // 2. Merge what canonicalization made identical (repeated shape plumbing).
  pm.addPass(createCSEPass());
  // 3. Drop private functions nothing calls any more.
  pm.addPass(createSymbolDCEPass());
}

void buildStagePipeline(OpPassManager &pm, Stage stage,
                        const PipelineOptions &options) {
  switch (stage) {
  case Stage::Graph:
    buildGraphPipeline(pm, options);
    return;
  default:
    llvm_unreachable("stage has no pipeline in this build");
  }
}

void registerKilnPipelines() {
  PassPipelineRegistration<>(
      "kiln-graph-pipeline",
      "Stage 2 (graph): canonicalize, CSE and DCE kiln ops, as kilnc runs it",
      [](OpPassManager &pm) { buildGraphPipeline(pm, PipelineOptions()); });
}

} // namespace kiln
