//===- ModelInput.cpp - How kilnc reads the model it is given -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "ModelInput.h"

#include "kiln/Import/ONNX/ONNXImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

// Defined in kilnc.cpp: flags listed in it are the ones --help shows.
extern cl::OptionCategory kilncCategory;

static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Fix the shape of an ONNX graph input, e.g. "
             "--input-shape=input=1x3x224x224 (repeatable; `NAME=` for a scalar)"),
    cl::value_desc("name=dims"), cl::cat(kilncCategory));

static cl::opt<bool> checkOnly(
    "check",
    cl::desc("Report whether Kiln compiles the ONNX model: its op types (count, "
             "and why not), then the import with its shape reasoning and the "
             "graph and linalg stages, each with the error a compile would give; "
             "exit code 0 when all pass"),
    cl::cat(kilncCategory));

namespace kilnc {

static bool isONNX(llvm::StringRef path) {
  return llvm::sys::path::extension(path) == ".onnx";
}

/// A usage error, in the driver's own "kilnc: error: ..." form.
static llvm::raw_ostream &usageError() {
  return llvm::WithColor::error(llvm::errs(), "kilnc");
}

/// Parses every `--input-shape NAME=AxBxC`; the last `=` separates the name.
static LogicalResult parseInputShapes(kiln::onnx_import::ImportOptions &options) {
  for (const std::string &flag : inputShapes) {
    auto [name, dims] = llvm::StringRef(flag).rsplit('=');
    if (name.empty() || name.size() == flag.size()) {
      usageError() << "--input-shape '" << flag
                   << "' is not of the form NAME=2x3x224x224\n";
      return failure();
    }
    llvm::SmallVector<int64_t> shape;
    llvm::SmallVector<llvm::StringRef> parts;
    if (!dims.empty())
      dims.split(parts, 'x');
    for (llvm::StringRef part : parts) {
      int64_t dim;
      if (part.getAsInteger(10, dim) || dim < 0) {
        usageError() << "--input-shape '" << flag << "': '" << part
                     << "' is not a dim size (a non-negative integer)\n";
        return failure();
      }
      shape.push_back(dim);
    }
    if (!options.inputShapes.try_emplace(name, shape).second) {
      usageError() << "--input-shape gives '" << name << "' twice\n";
      return failure();
    }
  }
  return success();
}

OwningOpRef<ModuleOp> loadModel(llvm::StringRef path, llvm::SourceMgr &sourceMgr,
                                MLIRContext &context) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  if (isONNX(path)) {
    kiln::onnx_import::ImportOptions options;
    if (failed(parseInputShapes(options)))
      return nullptr;
    return kiln::onnx_import::importModel(path, context, options);
  }
  if (!inputShapes.empty()) {
    emitError(fileLoc) << "--input-shape applies to ONNX models only";
    return nullptr;
  }
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input = openInputFile(path, &errorMessage);
  if (!input) {
    emitError(fileLoc) << errorMessage;
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

bool checkRequested() { return checkOnly; }

} // namespace kilnc
