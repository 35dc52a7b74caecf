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

#include "kiln/Target/Host/ArtifactWriter.h"
#include "kiln/Target/TargetOptions.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// Compilation stages in pipeline order; later stages include earlier ones.
enum class Stage { Import, Graph, Linalg, Dispatch, Codegen, LLVM, PTX, Obj, Lib };

llvm::StringRef stageName(Stage stage);
std::optional<Stage> parseStage(llvm::StringRef name);
/// "import|graph|…|lib", for help texts and diagnostics.
std::string stageNameList();
enum class Target { CPU, CUDA };

/// Whether this build implements `stage` for `target` (the rest are
/// reported, not faked).
bool isStageImplemented(Stage stage, Target target);

/// Blocking of the CPU matmul kernels (see the kiln-cpu-matmul pass): a
/// register tile of `rows` x `vectors` vectors, cache blocks of m x n x k.
/// The default for 32 vector registers (AVX-512) is 6 x 4 vectors (24
/// accumulators, one broadcast of A per 4 FMAs), measured faster than 8 x 2
/// on Zen 5 (docs/benchmarks.md); for 16 (AVX2) parsePipelineOptions sets
/// 6 x 2 (12 accumulators, as BLIS's Haswell kernel), see
/// defaultCPUMatmulTiling.
/// It is the configuration of the matmuls the tuning database does not
/// cover unless the cost model predicts another one far faster
/// (kiln/Target/CPU/MatmulTuning.h, docs/tuning.md).
struct CPUMatmulTiling {
  int64_t rows = 6, vectors = 4;
  int64_t m = 72, n = 256, k = 256;
  /// Parallel tasks a matmul with fewer column blocks aims for.
  int64_t tasks = 4;
  /// Matmuls the database does not cover take the cost model's pick (which
  /// keeps this tiling on every zoo model); off with --matmul-tile, which
  /// fixes the tiling, or kilnc --matmul-cost-model=false.
  bool costModel = true;
  /// The tuning database's winners (kilnc --tuning-db) as
  /// KEY=RxVxMxNxKxT@MICROSECONDS, in the database's key order.
  std::vector<std::string> tuned;
};

/// CUDA code generation (kilnc --gpu).
struct CUDAOptions {
  /// The NVVM target chip: sm_90a (wgmma-capable Hopper) or e.g. sm_80.
  Chip chip;
  /// Threads per block of the generic elementwise/loop kernels.
  int64_t blockSize = 256;
  /// Shared-memory stages of the GEMM template (kiln-cuda-gemm), 2..4.
  int64_t gemmStages = 3;
  /// One-row products through the one-row kernel (kilnc --cuda-gemv).
  bool gemv = true;
  /// The one-row kernel splits K until it has this many blocks
  /// (kilnc --cuda-gemv-blocks).
  int64_t gemvBlocks = 528;
  /// ptxas to turn PTX into a cubin; empty = search PATH and /usr/local/cuda/bin.
  std::string ptxas;
  /// CUDA toolkit for libdevice; empty = $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
  std::string toolkit;
  /// Matmul operand precision (kilnc --precision).
  Precision precision = Precision::FP32;
  /// fp32 products on sm_90a (kilnc --cuda-f32-gemm): 3xTF32 (split
  /// operands on tf32 tensor cores, kiln-cuda-split-f32) or SIMT loops.
  F32Gemm f32Gemm = F32Gemm::Split3xTF32;
};

/// Everything a pipeline needs to know; filled by the tools from their flags.
struct PipelineOptions {
  Target target = Target::CPU;
  /// f32 lanes of the CPU's vectors: 16 with AVX-512, 8 with AVX2, 4 with
  /// SSE; and how many vector registers it has: 32 with AVX-512, 16
  /// otherwise. parsePipelineOptions sets both from --cpu's features (the
  /// defaults here, AVX-512's, are what kiln-opt's pipelines use).
  int64_t vectorWidth = 16;
  int64_t vectorRegisters = 32;
  CPUMatmulTiling matmul;
  /// The host CPU of the artifact (kilnc --cpu); the compiling machine by default.
  HostCPU cpu;
  /// The instruction set of the CPU matmul kernels: from --precision and
  /// the features of `cpu` (parsePipelineOptions).
  CPUMatmulISA cpuMatmul = CPUMatmulISA::F32FMA;
  CUDAOptions cuda;
  /// Where the CPU artifact's weights go (kilnc --weights); CUDA: Embed only.
  WeightsMode weights = WeightsMode::Embed;
  /// Largest result (bytes) constant folding computes; bigger ones stay ops,
  /// so a hostile ConstantOfShape cannot make the compiler allocate it.
  int64_t maxFoldBytes = 64 * 1024 * 1024;
  /// kilnc --greedy-ids: the model gets the output greedy_ids, the ArgMax of
  /// its logits over the last axis (kiln-append-greedy-ids).
  bool greedyIds = false;
  /// kilnc --kv-cache-dtype: the 16-bit type (FP16, BF16) the decoder's KV
  /// cache inputs and outputs get (kiln-kv-cache-dtype); none: as exported.
  std::optional<Precision> kvCache;
  /// kilnc --kv-cache-length: rows of the fixed-length KV cache the decoder
  /// updates in place (kiln-kv-cache-in-place); 0: as exported (each step
  /// concatenates the past and the new rows into a new present).
  int64_t kvCacheLength = 0;
  /// kilnc --decode-step: the decoder was imported as one static decode
  /// step (one token per sequence, a full-length mask); its cache rows are
  /// written at position_ids, so no shape depends on the cache's fill.
  bool decodeStep = false;
  /// Test only (kilnc --kiln-debug-break-op): an elementwise kiln op, without
  /// its `kiln.` prefix, lowered wrongly on purpose; empty = none.
  std::string debugBreakOp;
};

/// The target options as text (kilnc's flags), before parsePipelineOptions.
struct TargetOptionText {
  std::string cpu = "native";
  std::string gpu = "sm_90a";
  std::string precision = "fp32";
  std::string f32Gemm = "3xtf32";
};

/// The CPU's vectors as the kernels use them: f32 lanes and registers.
struct CPUVectorUnit {
  /// "avx512", "avx2", "avx" or "sse": the feature that decided the shape.
  llvm::StringRef isa;
  int64_t width, registers;
};

/// The widest vector unit `cpu` has: AVX-512F (16 f32 lanes, 32
/// registers), AVX2 or AVX (8 lanes, 16 registers), else SSE (4 lanes, 16
/// registers). Without FMA (AVX, SSE) the kernels' vector.fma still
/// compiles, to slow library calls.
CPUVectorUnit cpuVectorUnit(const HostCPU &cpu);

/// The default blocking of the CPU matmul kernels for `unit`: 6 x 4 vectors
/// with 32 registers, 6 x 2 with 16 (the cache blocks and parallel split
/// are CPUMatmulTiling's).
CPUMatmulTiling defaultCPUMatmulTiling(const CPUVectorUnit &unit);

/// The one parser of the target options: fills `options.cpu`,
/// `options.cpuMatmul` and `options.cuda` from `text` for `options.target`,
/// and for the CPU `options.vectorWidth`, `options.vectorRegisters` and the
/// default register tile of `options.matmul` from --cpu's vector unit
/// (cpuVectorUnit; an explicit --matmul-tile, parsed after, still wins).
/// An error names the flag, the bad value and the accepted values
/// (`--precision='fp8': expected fp32, tf32, fp16 or bf16`), or the CPU
/// feature a precision needs and the --cpu that lacks it.
llvm::Error parsePipelineOptions(const TargetOptionText &text, PipelineOptions &options);

/// Stage 2: graph-level simplification on `kiln` ops.
void buildGraphPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);
/// Stage 3: kiln -> linalg on tensors.
void buildLinalgPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);
/// Stage 4: fusion into kernels.
void buildDispatchPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);
/// Stage 5, the parts every target shares (after kiln-prepare-entry):
/// one-shot bufferization with results written to out-params, ...
void buildBufferizePipeline(mlir::OpPassManager &pm);
/// ... then deallocation and copies as linalg.copy. The CPU puts its row
/// kernels between the two. (Each target's stages 5-6 are its TargetInfo's,
/// lib/Pipelines/{CPU,CUDA}Pipelines.cpp.)
void buildDeallocationPipeline(mlir::OpPassManager &pm);

/// Whether `stage` is a pass pipeline on the module (graph..llvm); the
/// later stages (ptx, obj, lib) are translations done by the driver.
bool hasStagePipeline(Stage stage);

/// Appends the passes that take a module from the previous stage to `stage`.
/// Only valid when hasStagePipeline(stage).
void buildStagePipeline(mlir::OpPassManager &pm, Stage stage,
                        const PipelineOptions &options);

/// Adds the dialects and external interface models (bufferization of
/// tensor/linalg/arith/scf/func) that the stage pipelines need.
void registerCodegenDialects(mlir::DialectRegistry &registry);

/// Registers `--kiln-<stage>-pipeline` for every implemented stage.
void registerKilnPipelines();

} // namespace kiln

#endif // KILN_PIPELINES_PIPELINES_H
