//===- kilnc.cpp - The Kiln compiler driver --------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Parses the flags into a kiln::driver::CompileJob and runs it (lib/Driver):
// the model (ONNX or `kiln` MLIR) through the ordered stages of kiln::Stage up
// to `--emit`, writing the IR (or artifact) of the last stage. The Python
// package runs the same driver. Flags live here, never in the libraries.
//
//===----------------------------------------------------------------------===//

#include "PythonTools.h"

#include "kiln/Driver/Driver.h"
#include "kiln/Driver/TuningDatabase.h"

#include "mlir/IR/AsmState.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory kilncCategory("kilnc options");

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
             "VECTORS vectors, cache blocks MxNxK (default 6x4x72x256x256 with "
             "AVX-512, 6x2x72x256x256 with AVX2: --cpu's vector unit)"),
    cl::value_desc("tiles"), cl::init(""), cl::cat(kilncCategory));

static cl::opt<bool> matmulCostModel(
    "matmul-cost-model",
    cl::desc("CPU matmuls the tuning database does not cover take the analytic cost "
             "model's configuration (default on; it keeps the default blocking unless "
             "it predicts one far faster; off with --matmul-tile)"),
    cl::init(true), cl::cat(kilncCategory));

static cl::opt<std::string> tuningDB(
    "tuning-db",
    cl::desc("Tuning database (JSON lines, docs/tuning.md): its winners configure "
             "the CPU matmuls of their signatures, over the databases shipped in "
             "share/kiln/tuning beside kilnc (used by default: the records of the "
             "compile's CPU); the others get the cost model's pick. 'none': no "
             "database, not even the shipped ones"),
    cl::value_desc("file|none"), cl::init(""), cl::cat(kilncCategory));

static cl::opt<std::string> shippedTuningDir(
    "shipped-tuning-dir",
    cl::desc("Test only: look for the shipped tuning databases in this directory "
             "instead of share/kiln/tuning beside kilnc"),
    cl::value_desc("dir"), cl::init(""), cl::Hidden, cl::cat(kilncCategory));

static cl::opt<std::string>
    gpuOption("gpu",
              cl::desc("GPU architecture of --target=cuda kernels: sm_90a (Hopper, "
                       "default) or sm_80 and later sm_XY names"),
              cl::value_desc("sm_XY"), cl::init("sm_90a"), cl::cat(kilncCategory));

static cl::opt<std::string> precisionOption(
    "precision",
    cl::desc("Matmul arithmetic: fp32 (default); --target=cuda also tf32 (f32 "
             "operands read as tf32 by the tensor cores), fp16 or bf16 (operands and "
             "weights in 16 bits); --target=cpu also bf16 (AVX-512 BF16, which --cpu "
             "must have); f32 accumulation and outputs"),
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

static cl::opt<bool> gemvOption(
    "cuda-gemv",
    cl::desc("Products whose A has one row (decode steps) through the CUDA one-row "
             "kernel (default true; false keeps the GEMM template, for comparisons)"),
    cl::init(true), cl::Hidden, cl::cat(kilncCategory));

static cl::opt<int64_t> gemvBlocksOption(
    "cuda-gemv-blocks",
    cl::desc("The CUDA one-row kernel splits K (up to 8 slices) until it has at least "
             "this many blocks (default 528; 1 never splits), for tuning"),
    cl::value_desc("n"), cl::init(528), cl::Hidden, cl::cat(kilncCategory));

static cl::opt<int64_t> maxFoldBytes(
    "max-fold-bytes",
    cl::desc("Largest constant (in bytes) the compiler computes while folding; "
             "bigger results stay ops (default 67108864, 64 MiB)"),
    cl::value_desc("bytes"), cl::init(64 * 1024 * 1024), cl::cat(kilncCategory));

static cl::opt<bool> greedyIdsOption(
    "greedy-ids",
    cl::desc("Add the output greedy_ids [batch, sequence] (i64): the ArgMax of the output "
             "'logits' over its last axis, which the runtime's decoder reads instead of "
             "copying the logits back (greedy generation on CUDA)"),
    cl::init(false), cl::cat(kilncCategory));

static cl::opt<std::string> kvCacheDtypeOption(
    "kv-cache-dtype",
    cl::desc("Element type of a decoder's KV cache: its f32 inputs past_key_values.* and "
             "outputs present.* become f16 (fp16) or bf16, the cache's values rounded to it as a "
             "model run in that type keeps them (with --precision=fp16|bf16 on CUDA: half "
             "the cache bytes per step, no per-step conversion)"),
    cl::value_desc("fp16|bf16"), cl::cat(kilncCategory));

static cl::opt<int64_t> kvCacheLengthOption(
    "kv-cache-length",
    cl::desc("Rows of a decoder's fixed-length KV cache, updated in place: each past_key_values.* "
             "input becomes [batch, heads, N, head] and its present.* output the same buffer "
             "with the step's rows written at the cached length (no per-step copy of the "
             "cache; the runtime's decoder holds at most N tokens per sequence)"),
    cl::value_desc("N"), cl::init(0), cl::cat(kilncCategory));

static cl::opt<int64_t> decodeStepOption(
    "decode-step",
    cl::desc("With --kv-cache-length=N: compile one static decode step of a transformers "
             "decoder for batch B (input_ids and position_ids Bx1, attention_mask BxN, "
             "past_key_values.* Bx?x(N-1)x?), its cache rows written at position_ids: no "
             "shape depends on the cache's fill, so the runtime replays the recorded step "
             "(CUDA graphs); the runtime's decoder feeds a prompt through it one token at a "
             "time"),
    cl::value_desc("B"), cl::init(0), cl::cat(kilncCategory));

using kiln::driver::Report;
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
                          "FLOPs and bytes of compulsory traffic (roofline inputs)"),
               clEnumValN(Report::Tuning, "tuning",
                          "after the codegen stage: each CPU matmul's tuning key, "
                          "configuration, and whether the tuning database or the cost "
                          "model chose it, with the measured time")),
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
  kilnc quantize model.onnx --calibration DIR -o model.qdq.onnx
                                           calibrate and write an int8 QDQ model
                                           (kilnc quantize --help)

Debugging (MLIR's standard flags, listed by --help-hidden):
  --mlir-print-ir-after-all   --mlir-timing   --mlir-pass-pipeline-crash-reproducer=<file>
)";

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "kilnc") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc >= 2 && llvm::StringRef(argv[1]) == "verify")
    return kilnc::runPythonTool(argc, argv, kilnc::kVerifyTool);
  if (argc >= 2 && llvm::StringRef(argv[1]) == "quantize")
    return kilnc::runPythonTool(argc, argv, kilnc::kQuantizeTool);
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
  kiln::driver::CompileJob job;
  job.input = inputFilename;
  job.output = outputFilename;
  job.stage = *stage;
  job.report = reportOption;
  if (tuningDB != "none") {
    job.tuningDB = tuningDB;
    job.shippedTuningDir =
        !shippedTuningDir.empty()
            ? std::string(shippedTuningDir)
            : kiln::driver::shippedTuningDirectory(
                  llvm::sys::fs::getMainExecutable(argv[0], (void *)&fail));
  }
  job.options.matmul.costModel = matmulCostModel;
  job.reportJSON = reportFormat == "json";
  job.verbose = verbose;
  job.options.target = targetOption;
  kiln::TargetOptionText targetText;
  targetText.cpu = cpuOption;
  targetText.gpu = gpuOption;
  targetText.precision = precisionOption;
  targetText.f32Gemm = f32GemmOption;
  if (llvm::Error error = kiln::parsePipelineOptions(targetText, job.options))
    return fail(llvm::toString(std::move(error)));
  job.options.cuda.gemmStages = gemmStagesOption;
  job.options.cuda.gemv = gemvOption;
  job.options.cuda.gemvBlocks = gemvBlocksOption;
  job.options.weights = weightsOption;
  job.options.maxFoldBytes = maxFoldBytes;
  job.options.greedyIds = greedyIdsOption;
  if (!kvCacheDtypeOption.empty()) {
    std::optional<kiln::Precision> cache = kiln::parsePrecision(kvCacheDtypeOption);
    if (!cache || !kiln::isHalfPrecision(*cache))
      return fail("--kv-cache-dtype='" + kvCacheDtypeOption + "': expected fp16 or bf16");
    job.options.kvCache = cache;
  }
  if (kvCacheLengthOption.getNumOccurrences() && kvCacheLengthOption < 1)
    return fail("--kv-cache-length=" + std::to_string(kvCacheLengthOption) +
                ": expected at least 1 row");
  job.options.kvCacheLength = kvCacheLengthOption;
  if (decodeStepOption.getNumOccurrences()) {
    if (!kvCacheLengthOption.getNumOccurrences())
      return fail("--decode-step needs --kv-cache-length (the step's fixed cache rows)");
    if (llvm::Error error = kiln::driver::addDecodeStepShapes(decodeStepOption,
                                                              kvCacheLengthOption, job.import))
      return fail(llvm::toString(std::move(error)));
    job.options.decodeStep = true;
  }
  job.options.debugBreakOp = debugBreakOp;
  if (!matmulTile.empty())
    if (llvm::Error error = kiln::driver::parseMatmulTile(matmulTile, job.options.matmul))
      return fail(llvm::toString(std::move(error)));
  for (const std::string &flag : inputShapes)
    if (llvm::Error error = kiln::driver::addInputShape(flag, job.import))
      return fail(llvm::toString(std::move(error)));
  if (checkOnly) {
    if (llvm::Error error = kiln::driver::validateJob(job))
      return fail(llvm::toString(std::move(error)));
    if (llvm::sys::path::extension(inputFilename) != ".onnx")
      return fail("--check reads ONNX models (.onnx) only");
    return kiln::driver::runCheck(job, llvm::outs());
  }
  job.configurePassManager = [](PassManager &pm) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
    return success();
  };
  return kiln::driver::runCompile(job, llvm::errs());
}
