//===- Check.cpp - kilnc --check: what a compile of the model would say ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The op-type survey alone said "supported" for models whose import then
// failed (a Split of a dynamic dim, an output dim that depends on values) or
// whose lowering did (a conv with dynamic channels). --check runs what the
// compile runs up to the target-independent linalg stage and reports each
// step with the compile's own diagnostics.
//
//===----------------------------------------------------------------------===//

#include "kiln/Driver/Driver.h"

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Import/ONNX/ONNXImporter.h"
#include "kiln/Target/Host/ModelSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace kiln::driver {

namespace {
/// Collects the error diagnostics of one step as the compile prints them.
class StepErrors {
public:
  explicit StepErrors(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() != DiagnosticSeverity::Error)
            return success();
          std::string text = "error: " + diag.str();
          for (Diagnostic &note : diag.getNotes())
            text += "\n      note: " + note.str();
          messages.push_back(std::move(text));
          return success();
        }) {}

  /// Prints the errors so far, if any, under `step`.
  void flush(llvm::raw_ostream &os, llvm::StringRef step) {
    for (const std::string &message : messages)
      os << "  " << step << ": " << message << "\n";
    messages.clear();
  }

  /// Prints `step: ok` or the step's errors; true when it passed.
  bool report(llvm::raw_ostream &os, llvm::StringRef step, bool passed) {
    if (passed && messages.empty()) {
      os << "  " << step << ": ok\n";
      return true;
    }
    if (messages.empty())
      messages.push_back("error: failed");
    for (const std::string &message : messages)
      os << "  " << step << ": " << message << "\n";
    messages.clear();
    return false;
  }

private:
  std::vector<std::string> messages;
  ScopedDiagnosticHandler handler;
};

/// `name [batch, sequence, 64]` for each output: the dims the import proved.
void printOutputs(ModuleOp module, llvm::raw_ostream &os) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.getName() != "main")
      continue;
    for (auto [i, type] : llvm::enumerate(func.getFunctionType().getResults())) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      auto name = func.getResultAttrOfType<StringAttr>(i, "kiln.name");
      auto dimNames = func.getResultAttrOfType<ArrayAttr>(i, "kiln.dim_names");
      if (!tensor || !name)
        continue;
      os << "  output '" << name.getValue() << "': [";
      for (auto [d, size] : llvm::enumerate(tensor.getShape())) {
        os << (d ? ", " : "");
        if (!ShapedType::isDynamic(size))
          os << size;
        else if (dimNames && d < dimNames.size())
          os << cast<StringAttr>(dimNames[d]).getValue();
        else
          os << "?";
      }
      os << "] " << tensor.getElementType() << "\n";
    }
  }
}
} // namespace

int runCheck(const CompileJob &job, llvm::raw_ostream &os,
             std::vector<onnx_import::OpTypeSupport> *opTypes) {
  llvm::StringRef path = job.input;
  DialectRegistry registry;
  registry.insert<KilnDialect, func::FuncDialect>();
  registerCodegenDialects(registry);
  MLIRContext context(registry);
  StepErrors errors(context);
  if (onnx_import::checkModel(path, context, os, opTypes) != 0) {
    errors.flush(os, "read");
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  OwningOpRef<ModuleOp> module = loadModel(path, job.import, sourceMgr, context);
  if (!errors.report(os, "import", static_cast<bool>(module))) {
    os << "not supported: the import fails\n";
    return 1;
  }
  printOutputs(*module, os);
  for (Stage stage : {Stage::Graph, Stage::Linalg}) {
    PassManager pm(&context, ModuleOp::getOperationName());
    buildStagePipeline(pm, stage, job.options);
    if (!errors.report(os, stageName(stage), succeeded(pm.run(*module)))) {
      os << "not supported: stage '" << stageName(stage) << "' fails\n";
      return 1;
    }
  }
  if (!errors.report(os, "signature",
                     succeeded(readModelSignature(*module)))) {
    os << "not supported: the model signature\n";
    return 1;
  }
  os << "supported: the model imports and lowers; run-time shapes follow from "
        "the inputs\n";
  return 0;
}

} // namespace kiln::driver
