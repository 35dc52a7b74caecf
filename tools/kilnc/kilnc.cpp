//===- kilnc.cpp - The Kiln compiler driver --------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Reads a model (`kiln` dialect `.mlir` today; ONNX once the importer lands),
// runs the ordered stages of kiln::Stage up to `--emit`, and writes the IR
// (or artifact) of the last stage. Flags live here, never in the libraries.
//
//===----------------------------------------------------------------------===//

#include "Check.h"
#include "ModelInput.h"
#include "Verify.h"

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"
#include "kiln/Dispatch/FusionReport.h"
#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Pipelines/TargetInfo.h"
#include "kiln/Target/Host/DispatchCost.h"
#include "kiln/Target/Host/MemoryPlan.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

// Shared with ModelInput.cpp, whose import flags belong in the same help section.
cl::OptionCategory kilncCategory("kilnc options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.mlir>"),
                                          cl::init("-"), cl::cat(kilncCategory));

static cl::opt<std::string> outputFilename("o", cl::desc("Output file (default: stdout)"),
                                           cl::value_desc("file"), cl::init("-"),
                                           cl::cat(kilncCategory));

// cl::desc keeps a StringRef: the text must outlive the option.
static const std::string emitHelp = "Stop after this stage and write its result; one of " +
                                    kiln::stageNameList() + " (default: lib)";
static cl::opt<std::string>
    emitStage("emit", cl::desc(emitHelp),
              cl::value_desc("stage"), cl::init("lib"), cl::cat(kilncCategory));

static cl::opt<kiln::Target> targetOption(
    "target", cl::desc("Code generation target"), cl::init(kiln::Target::CPU),
    cl::values(clEnumValN(kiln::Target::CPU, "cpu", "x86-64 host code (default)"),
               clEnumValN(kiln::Target::CUDA, "cuda", "NVIDIA sm_90 kernels")),
    cl::cat(kilncCategory));

static cl::opt<std::string>
    cpuOption("cpu",
              cl::desc("CPU to generate code for: native (the compiling machine, "
                       "default), x86-64-v3 (AVX2), x86-64-v4 (AVX-512), or any "
                       "LLVM x86 CPU name"),
              cl::value_desc("cpu"), cl::init("native"), cl::cat(kilncCategory));

static cl::opt<std::string> matmulTile(
    "matmul-tile",
    cl::desc("CPU matmul blocking ROWSxVECTORSxMxNxK: register tile of ROWS x "
             "VECTORS vectors, cache blocks MxNxK (default 6x4x72x256x256)"),
    cl::value_desc("tiles"), cl::init(""), cl::cat(kilncCategory));

static cl::opt<std::string>
    gpuOption("gpu",
              cl::desc("GPU architecture of --target=cuda kernels: sm_90a (Hopper, "
                       "default) or sm_80 and later sm_XY names"),
              cl::value_desc("sm_XY"), cl::init("sm_90a"), cl::cat(kilncCategory));

static cl::opt<std::string> precisionOption(
    "precision",
    cl::desc("Matmul arithmetic of --target=cuda kernels: fp32 (default), tf32 "
             "(f32 operands read as tf32 by the tensor cores), fp16 or bf16 "
             "(operands and weights in 16 bits); f32 accumulation and outputs"),
    cl::value_desc("fp32|tf32|fp16|bf16"), cl::init("fp32"), cl::cat(kilncCategory));

static cl::opt<std::string> f32GemmOption(
    "cuda-f32-gemm",
    cl::desc("--precision=fp32 products on sm_90a: 3xtf32 (split operands on tf32 "
             "tensor cores, error-compensated; default) or simt (FMA loops)"),
    cl::value_desc("3xtf32|simt"), cl::init("3xtf32"), cl::Hidden, cl::cat(kilncCategory));

static cl::opt<int64_t> gemmStagesOption(
    "cuda-gemm-stages",
    cl::desc("Shared-memory pipeline depth of the CUDA GEMM template, 2..4 (default 3)"),
    cl::value_desc("n"), cl::init(3), cl::Hidden, cl::cat(kilncCategory));

static cl::opt<int64_t> maxFoldBytes(
    "max-fold-bytes",
    cl::desc("Largest constant (in bytes) the compiler computes while folding; "
             "bigger results stay ops (default 67108864, 64 MiB)"),
    cl::value_desc("bytes"), cl::init(64 * 1024 * 1024), cl::cat(kilncCategory));

enum class Report { None, Fusion, Memory, Cost };
static cl::opt<Report> reportOption(
    "report", cl::desc("Print a report to stderr after its stage"), cl::init(Report::None),
    cl::values(clEnumValN(Report::Fusion, "fusion",
                          "each dispatch (kernel) after the dispatch stage: kind, op, "
                          "shapes, and the model nodes fused into it"),
               clEnumValN(Report::Memory, "memory",
                          "after the codegen stage: the planned arena (peak bytes) "
                          "against the sum of all intermediate buffers"),
               clEnumValN(Report::Cost, "cost",
                          "after the codegen stage: each dispatch's trace id, name, "
                          "FLOPs and bytes of compulsory traffic (roofline inputs)")),
    cl::cat(kilncCategory));

static cl::opt<kiln::WeightsMode> weightsOption(
    "weights", cl::desc("Where the weights go"), cl::init(kiln::WeightsMode::Embed),
    cl::values(clEnumValN(kiln::WeightsMode::Embed, "embed",
                          "inside the artifact (default)"),
               clEnumValN(kiln::WeightsMode::External, "external",
                          "a side file OUTPUT.weights next to the artifact, "
                          "memory-mapped by the runtime"),
               clEnumValN(kiln::WeightsMode::None, "none",
                          "nowhere: the runtime fills them with seeded pseudo-random "
                          "values (benchmarking only)")),
    cl::cat(kilncCategory));

static cl::opt<std::string> reportFormat("report-format",
                                         cl::desc("Report format: text (default) or json"),
                                         cl::init("text"), cl::cat(kilncCategory));

static cl::opt<std::string> debugBreakOp(
    "kiln-debug-break-op",
    cl::desc("Test only: lower this elementwise kiln op (relu, add, ...) wrongly, "
             "its result plus one, to give kilnc verify's tests a known wrong node"),
    cl::value_desc("op"), cl::init(""), cl::Hidden, cl::cat(kilncCategory));

static cl::opt<bool> verbose("v", cl::desc("Print each stage and its time to stderr"),
                             cl::cat(kilncCategory));

static constexpr const char *kOverview = R"(kilnc: the Kiln ahead-of-time tensor compiler

Compiles a model through Kiln's stages, in order:
  import    read the model into the `kiln` dialect
  graph     fold, canonicalize, CSE (kiln -> kiln)
  linalg    lower to linalg on tensors
  dispatch  group ops into fused kernels
  codegen   tile, vectorize, bufferize per target
  llvm      host LLVM IR;   ptx: CUDA kernels (cuda target only)
  obj       object file;    lib: loadable shared library (default)
--emit=<stage> stops after <stage> and writes its result.

Examples:
  kilnc model.mlir --emit=graph            print the optimized kiln IR
  kilnc model.mlir --emit=graph -v -o out.mlir
  kilnc verify model.onnx                  compare with onnxruntime; on a mismatch,
                                           find the first wrong node (kilnc verify --help)

Debugging (MLIR's standard flags, listed by --help-hidden):
  --mlir-print-ir-after-all   --mlir-timing   --mlir-pass-pipeline-crash-reproducer=<file>
)";

/// -o, or for binary outputs the input's name with the stage's extension.
static std::string outputPath(kiln::Stage stage) {
  if (outputFilename != "-" || stage < kiln::Stage::Obj)
    return outputFilename;
  llvm::SmallString<128> path(inputFilename == "-" ? "model" : inputFilename.getValue());
  llvm::sys::path::replace_extension(path, stage == kiln::Stage::Obj ? ".o" : ".so");
  return std::string(path);
}

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kilnc") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc >= 2 && llvm::StringRef(argv[1]) == "verify")
    return kilnc::runVerify(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(kilncCategory);
  cl::ParseCommandLineOptions(argc, argv, kOverview);
  if (reportFormat != "text" && reportFormat != "json")
    return fail("--report-format='" + reportFormat + "', expected text or json");
  std::optional<kiln::Stage> stage = kiln::parseStage(emitStage);
  if (!stage)
    return fail("unknown --emit stage '" + emitStage + "', expected one of " +
                kiln::stageNameList());
  if (reportOption == Report::Fusion && *stage < kiln::Stage::Dispatch)
    return fail("--report=fusion describes the dispatch stage; it needs --emit=dispatch or "
                "a later stage");
  if (reportOption == Report::Memory && *stage < kiln::Stage::Codegen)
    return fail("--report=memory describes the codegen stage's arena plan; it needs "
                "--emit=codegen or a later stage");
  if (reportOption == Report::Cost && *stage < kiln::Stage::Codegen)
    return fail("--report=cost describes the codegen stage's instrumented dispatches; it "
                "needs --emit=codegen or a later stage");
  if (weightsOption != kiln::WeightsMode::Embed && *stage < kiln::Stage::LLVM)
    return fail("--weights=external and --weights=none decide where the artifact's weights "
                "go; they need --emit=llvm, obj or lib");
  if (*stage == kiln::Stage::PTX && !kiln::isStageImplemented(*stage, targetOption))
    return fail("--emit=ptx writes CUDA kernels; it needs --target=cuda");
  kiln::PipelineOptions options;
  options.target = targetOption;
  kiln::TargetOptionText targetText;
  targetText.gpu = gpuOption;
  targetText.precision = precisionOption;
  targetText.f32Gemm = f32GemmOption;
  if (llvm::Error error = kiln::parsePipelineOptions(targetText, options))
    return fail(llvm::toString(std::move(error)));
  if (!kiln::isStageImplemented(*stage, targetOption))
    return fail("--emit=" + emitStage + ": stage '" + emitStage +
                "' is not implemented for --target=" +
                kiln::getTargetInfo(targetOption).name() +
                " in this build yet");
  options.cpu = cpuOption;
  options.cuda.gemmStages = gemmStagesOption;
  options.weights = weightsOption;
  if (maxFoldBytes < 0)
    return fail("--max-fold-bytes=" + std::to_string(maxFoldBytes) +
                ": expected a byte count >= 0");
  options.maxFoldBytes = maxFoldBytes;
  options.debugBreakOp = debugBreakOp;
  if (!matmulTile.empty()) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(matmulTile).split(parts, 'x');
    int64_t *fields[] = {&options.matmul.rows, &options.matmul.vectors, &options.matmul.m,
                         &options.matmul.n, &options.matmul.k};
    if (parts.size() != 5)
      return fail("--matmul-tile='" + matmulTile + "': expected ROWSxVECTORSxMxNxK");
    for (auto [part, field] : llvm::zip(parts, fields))
      if (part.getAsInteger(10, *field) || *field < 1 || *field > 4096)
        return fail("--matmul-tile='" + matmulTile + "': '" + part +
                    "' is not an integer in [1, 4096]");
  }
  if (kilnc::checkRequested()) {
    if (llvm::sys::path::extension(inputFilename) != ".onnx")
      return fail("--check reads ONNX models (.onnx) only");
    return kilnc::runCheck(inputFilename, options, llvm::outs());
  }
  DialectRegistry registry;
  registry.insert<kiln::KilnDialect, func::FuncDialect>();
  kiln::registerCodegenDialects(registry);
  MLIRContext context(registry);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  auto timeStage = [&](kiln::Stage s, auto &&body) -> LogicalResult {
    auto start = std::chrono::steady_clock::now();
    LogicalResult result = body();
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    if (verbose)
      llvm::errs() << "kilnc: " << kiln::stageName(s) << " "
                   << llvm::format("%.2f", ms) << " ms\n";
    return result;
  };

  OwningOpRef<ModuleOp> module;
  if (failed(timeStage(kiln::Stage::Import, [&] {
        module = kilnc::loadModel(inputFilename, sourceMgr, context);
        return success(static_cast<bool>(module));
      })))
    return 1;

  std::optional<kiln::ModelSignature> signature;
  for (int s = static_cast<int>(kiln::Stage::Graph); s <= static_cast<int>(*stage);
       ++s) {
    auto current = static_cast<kiln::Stage>(s);
    if (!kiln::hasStagePipeline(current))
      break;
    // The artifact descriptor needs the tensor-level signature.
    if (current == kiln::Stage::Codegen) {
      FailureOr<kiln::ModelSignature> read = kiln::readModelSignature(*module);
      if (failed(read))
        return 1;
      signature = *read;
    }
    PassManager pm(&context, ModuleOp::getOperationName());
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    applyDefaultTimingPassManagerCLOptions(pm);
    kiln::buildStagePipeline(pm, current, options);
    if (failed(timeStage(current, [&] { return pm.run(*module); })))
      return fail("stage '" + kiln::stageName(current) + "' failed");
    if (current == kiln::Stage::Dispatch && reportOption == Report::Fusion)
      kiln::printFusionReport(*module, llvm::errs(), reportFormat == "json");
    if (current == kiln::Stage::Codegen && reportOption == Report::Memory)
      kiln::printMemoryReport(*module, llvm::errs(), reportFormat == "json");
    if (current == kiln::Stage::Codegen && reportOption == Report::Cost)
      kiln::printDispatchCostReport(*module, llvm::errs(), reportFormat == "json");
  }

  if (*stage >= kiln::Stage::LLVM) {
    std::string path = outputPath(*stage);
    llvm::Error error = llvm::Error::success();
    (void)timeStage(*stage, [&] {
      error = kiln::getTargetInfo(targetOption)
                  .writeOutput(*module, *signature, *stage, options, path);
      return success();
    });
    if (error)
      return fail(llvm::toString(std::move(error)));
    return 0;
  }

  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output)
    return fail("cannot write '" + outputFilename + "': " + errorMessage);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}
