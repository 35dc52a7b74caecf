//===- Driver.cpp - The compile kilnc and the Python package run ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Driver/Driver.h"

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dispatch/FusionReport.h"
#include "kiln/Driver/TuningReport.h"
#include "kiln/Pipelines/TargetInfo.h"
#include "kiln/Target/CPU/MatmulTuning.h"
#include "kiln/Target/Host/DispatchCost.h"
#include "kiln/Target/Host/MemoryPlan.h"
#include "kiln/Target/Host/ModelSignature.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace mlir;

namespace kiln::driver {

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The driver's own error line, as kilnc has always printed it.
static int fail(llvm::raw_ostream &os, const llvm::Twine &message) {
  llvm::WithColor::error(os, "kilnc") << message << "\n";
  return 1;
}

llvm::Error addInputShape(llvm::StringRef flag, onnx_import::ImportOptions &options) {
  auto [name, dims] = flag.rsplit('=');
  if (name.empty() || name.size() == flag.size())
    return makeError("--input-shape '" + flag + "' is not of the form NAME=2x3x224x224");
  if (name.drop_back().contains('*'))
    return makeError("--input-shape '" + flag + "': '*' may only end the name (a prefix)");
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  if (!dims.empty())
    dims.split(parts, 'x');
  for (llvm::StringRef part : parts) {
    int64_t dim;
    if (part == "?") {
      shape.push_back(mlir::ShapedType::kDynamic); // as the model declares it
      continue;
    }
    if (part.getAsInteger(10, dim) || dim < 0)
      return makeError("--input-shape '" + flag + "': '" + part +
                       "' is not a dim size (a non-negative integer)");
    shape.push_back(dim);
  }
  if (!options.inputShapes.try_emplace(name, shape).second)
    return makeError("--input-shape gives '" + name + "' twice");
  return llvm::Error::success();
}

llvm::Error addDecodeStepShapes(int64_t batch, int64_t cacheLength,
                                onnx_import::ImportOptions &options) {
  if (batch < 1 || cacheLength < 2)
    return makeError("--decode-step=" + llvm::Twine(batch) + " with --kv-cache-length=" +
                     llvm::Twine(cacheLength) +
                     ": expected a batch of at least 1 and a cache of at least 2 rows");
  std::string b = std::to_string(batch);
  for (std::string flag : {"input_ids=" + b + "x1", "position_ids=" + b + "x1",
                           "attention_mask=" + b + "x" + std::to_string(cacheLength),
                           "past_key_values.*=" + b + "x?x" + std::to_string(cacheLength - 1) +
                               "x?"})
    if (llvm::Error error = addInputShape(flag, options))
      return makeError("--decode-step: " + llvm::toString(std::move(error)));
  return llvm::Error::success();
}

llvm::Error parseMatmulTile(llvm::StringRef text, CPUMatmulTiling &tiling) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, 'x');
  int64_t *fields[] = {&tiling.rows, &tiling.vectors, &tiling.m, &tiling.n, &tiling.k};
  if (parts.size() != 5)
    return makeError("--matmul-tile='" + text + "': expected ROWSxVECTORSxMxNxK");
  for (auto [part, field] : llvm::zip(parts, fields))
    if (part.getAsInteger(10, *field) || *field < 1 || *field > 4096)
      return makeError("--matmul-tile='" + text + "': '" + part +
                       "' is not an integer in [1, 4096]");
  tiling.costModel = false;
  return llvm::Error::success();
}

llvm::Error validateJob(const CompileJob &job) {
  Stage stage = job.stage;
  if (job.report == Report::Fusion && stage < Stage::Dispatch)
    return makeError("--report=fusion describes the dispatch stage; it needs "
                     "--emit=dispatch or a later stage");
  if (job.report == Report::Memory && stage < Stage::Codegen)
    return makeError("--report=memory describes the codegen stage's arena plan; it "
                     "needs --emit=codegen or a later stage");
  if (job.report == Report::Cost && stage < Stage::Codegen)
    return makeError("--report=cost describes the codegen stage's instrumented "
                     "dispatches; it needs --emit=codegen or a later stage");
  if (job.report == Report::Tuning && stage < Stage::Codegen)
    return makeError("--report=tuning describes the codegen stage's matmul configurations; "
                     "it needs --emit=codegen or a later stage");
  if (job.report == Report::Tuning && job.options.target != Target::CPU)
    return makeError("--report=tuning describes CPU matmuls; it needs --target=cpu");
  if (!job.tuningDB.empty() && job.options.target != Target::CPU)
    return makeError("--tuning-db configures CPU matmuls; it needs --target=cpu");
  if (job.options.weights != WeightsMode::Embed && stage < Stage::LLVM)
    return makeError("--weights=external and --weights=none decide where the "
                     "artifact's weights go; they need --emit=llvm, obj or lib");
  if (stage == Stage::PTX && !isStageImplemented(stage, job.options.target))
    return makeError("--emit=ptx writes CUDA kernels; it needs --target=cuda");
  if (!isStageImplemented(stage, job.options.target))
    return makeError("--emit=" + stageName(stage) + ": stage '" + stageName(stage) +
                     "' is not implemented for --target=" +
                     getTargetInfo(job.options.target).name() + " in this build yet");
  if (job.options.maxFoldBytes < 0)
    return makeError("--max-fold-bytes=" + std::to_string(job.options.maxFoldBytes) +
                     ": expected a byte count >= 0");
  return llvm::Error::success();
}

OwningOpRef<ModuleOp> loadModel(llvm::StringRef path,
                                const onnx_import::ImportOptions &import,
                                llvm::SourceMgr &sourceMgr, MLIRContext &context) {
  Location fileLoc = FileLineColLoc::get(&context, path, 0, 0);
  if (llvm::sys::path::extension(path) == ".onnx")
    return onnx_import::importModel(path, context, import);
  if (!import.inputShapes.empty()) {
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

/// The job's output, or for binary outputs the input's name with the stage's
/// extension.
static std::string outputPath(const CompileJob &job) {
  if (job.output != "-" || job.stage < Stage::Obj)
    return job.output;
  llvm::SmallString<128> path(job.input == "-" ? "model" : job.input);
  llvm::sys::path::replace_extension(path, job.stage == Stage::Obj ? ".o" : ".so");
  return std::string(path);
}

static void printReport(const CompileJob &job, Stage stage, ModuleOp module,
                        const TuningSource &tuning, const PipelineOptions &options,
                        llvm::raw_ostream &os) {
  if (stage == Stage::Codegen && job.report == Report::Tuning)
    printTuningReport(module, tuning, options, os, job.reportJSON);
  if (stage == Stage::Dispatch && job.report == Report::Fusion)
    printFusionReport(module, os, job.reportJSON);
  if (stage == Stage::Codegen && job.report == Report::Memory)
    printMemoryReport(module, os, job.reportJSON);
  if (stage == Stage::Codegen && job.report == Report::Cost)
    printDispatchCostReport(module, os, job.reportJSON);
}

/// Writes the IR of a stage before llvm to the job's output.
static int writeIR(const CompileJob &job, ModuleOp module, llvm::raw_ostream &os) {
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(job.output, &errorMessage);
  if (!output)
    return fail(os, "cannot write '" + job.output + "': " + errorMessage);
  module.print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

int runCompile(const CompileJob &job, llvm::raw_ostream &os) {
  if (llvm::Error error = validateJob(job))
    return fail(os, llvm::toString(std::move(error)));
  DialectRegistry registry;
  registry.insert<KilnDialect, func::FuncDialect>();
  registerCodegenDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context, os);

  auto timeStage = [&](Stage stage, auto &&body) -> LogicalResult {
    auto start = std::chrono::steady_clock::now();
    LogicalResult result = body();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (job.verbose)
      os << "kilnc: " << stageName(stage) << " " << llvm::format("%.2f", ms) << " ms\n";
    return result;
  };

  // The tuning databases' winners for this target (the shipped ones', the
  // given one's over them) become the CPU matmul pass's table before
  // anything is compiled.
  PipelineOptions options = job.options;
  TuningSource tuning;
  if (options.target == Target::CPU) {
    tuning.features = tuningFeatureSet(options.cpu);
    tuning.shippedDirectory = job.shippedTuningDir;
    std::vector<std::string> shipped;
    if (!job.shippedTuningDir.empty())
      shipped = listTuningDatabases(job.shippedTuningDir);
    llvm::Expected<TuningPlan> plan = planTuning(shipped, job.tuningDB, "cpu", tuning.features,
                                                 matmul_tuning::kSpaceVersion);
    if (!plan)
      return fail(os, llvm::toString(plan.takeError()));
    tuning.plan = std::move(*plan);
    options.matmul.tuned = tuning.plan.tuned;
  }

  OwningOpRef<ModuleOp> module;
  if (failed(timeStage(Stage::Import, [&] {
        module = loadModel(job.input, job.import, sourceMgr, context);
        return success(static_cast<bool>(module));
      })))
    return 1;

  std::optional<ModelSignature> signature;
  for (int s = static_cast<int>(Stage::Graph); s <= static_cast<int>(job.stage); ++s) {
    auto current = static_cast<Stage>(s);
    if (!hasStagePipeline(current))
      break;
    // The artifact descriptor needs the tensor-level signature.
    if (current == Stage::Codegen) {
      FailureOr<ModelSignature> read = readModelSignature(*module);
      if (failed(read))
        return 1;
      signature = *read;
    }
    PassManager pm(&context, ModuleOp::getOperationName());
    if (job.configurePassManager && failed(job.configurePassManager(pm)))
      return 1;
    buildStagePipeline(pm, current, options);
    if (failed(timeStage(current, [&] { return pm.run(*module); })))
      return fail(os, "stage '" + stageName(current) + "' failed");
    printReport(job, current, *module, tuning, options, os);
  }

  if (job.stage < Stage::LLVM)
    return writeIR(job, *module, os);
  llvm::Error error = llvm::Error::success();
  (void)timeStage(job.stage, [&] {
    error = getTargetInfo(job.options.target)
                .writeOutput(*module, *signature, job.stage, options, outputPath(job));
    return success();
  });
  if (error)
    return fail(os, llvm::toString(std::move(error)));
  return 0;
}

} // namespace kiln::driver
