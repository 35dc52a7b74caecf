//===- CUDAPipelines.cpp - The CUDA target: its policy, stages 5-6, its writer ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Everything kilnc --target=cuda runs that is the CUDA target's own, top to
// bottom: the codegen and LLVM pipelines (each step with why it is where it
// is), the answers its policy gives the shared stages 2-4, the output writer
// and `kiln-opt --kiln-cuda-<stage>-pipeline`.
//
//===----------------------------------------------------------------------===//

#include "TargetPipelines.h"

#include "kiln/Dispatch/Passes.h"
#include "kiln/Target/CUDA/CUDAPolicy.h"
#include "kiln/Target/CUDA/CUDATarget.h"
#include "kiln/Target/CUDA/Passes.h"
#include "kiln/Target/Host/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {
namespace {

/// Whether fp32 products take the 3xTF32 route (the only f32 products with
/// a K-major B in that mode are kiln-cuda-split-f32's).
bool usesSplitF32(const CUDAOptions &cuda) {
  return cuda.precision == Precision::FP32 && cuda.chip.hasWgmma() &&
         cuda.f32Gemm == F32Gemm::Split3xTF32;
}

/// Stage 5 (codegen): buffers, the GEMM/attention/row kernels, one kernel
/// per parallel loop, outlined into one gpu.module.
void buildCUDACodegenPipeline(OpPassManager &pm, const PipelineOptions &options) {
  // 0. The dispatch stage's kiln.dispatch regions dissolve in place.
  pm.addNestedPass<func::FuncOp>(createKilnInlineDispatchRegionsPass());
  // 0a. Shape elements the host reads (computed shapes: allocation sizes,
  //     loop bounds, reshape shapes) as host scalars, on tensors: after
  //     bufferization every tensor is device memory.
  pm.addNestedPass<func::FuncOp>(createKilnCUDAHostShapesPass());
  // 0b. --precision=fp16|bf16: matmul operands narrowed (weights now);
  //    tf32: B transposed to K-major (weights now).
  if (options.cuda.precision != Precision::FP32) {
    KilnCUDALowerPrecisionPassOptions precision;
    precision.precision = options.cuda.precision;
    // Convolutions as im2col + a product only where the GEMM template runs.
    precision.convolutions = options.cuda.chip.hasWgmma();
    pm.addNestedPass<func::FuncOp>(createKilnCUDALowerPrecisionPass(precision));
  }
  // 0c. fp32 on sm_90a: products as error-compensated tf32 products
  //     (3xTF32: split operands, weights now), convolutions then as
  //     im2col + products; --cuda-f32-gemm=simt keeps the SIMT loops.
  bool split = usesSplitF32(options.cuda);
  if (split) {
    pm.addNestedPass<func::FuncOp>(createKilnCUDASplitF32Pass());
    KilnCUDALowerPrecisionPassOptions convs;
    convs.precision = Precision::TF32;
    convs.matmuls = false;
    pm.addNestedPass<func::FuncOp>(createKilnCUDALowerPrecisionPass(convs));
  }
  // 0d. Each user of a shared (CSE'd) zero fill gets its own, as on the
  //     CPU: the GEMM template then finds its dispatch's C zero-filled
  //     right before the product (not a buffer other products reuse).
  pm.addNestedPass<func::FuncOp>(createKilnSplitFillsPass());
  // 1-5. Entry, trace hooks around each dispatch, buffers, out-params,
  //      deallocation, copies, as on the CPU (no CPU row kernels).
  pm.addPass(createKilnPrepareEntryPass());
  pm.addPass(createKilnInstrumentDispatchesPass());
  buildBufferizePipeline(pm);
  buildDeallocationPipeline(pm);
  // 5a. Attention the graph stage kept (fp16/bf16, sm_80+): one
  //     flash-attention kernel each (mma.sync).
  if (isHalfPrecision(options.cuda.precision)) {
    KilnCUDAAttentionPassOptions attention;
    attention.precision = options.cuda.precision;
    pm.addNestedPass<func::FuncOp>(createKilnCUDAAttentionPass(attention));
  }
  // 5b. f16/bf16 (and tf32) matmuls on sm_90a: the TMA + wgmma template (host code
  //     and a gpu.launch), before the generic path turns them into loops.
  KilnCUDAGemmPassOptions gemm;
  gemm.chip = options.cuda.chip;
  gemm.tf32 = options.cuda.precision == Precision::TF32 || split;
  gemm.stages = options.cuda.gemmStages;
  gemm.gemv = options.cuda.gemv;
  gemm.gemvBlocks = options.cuda.gemvBlocks;
  pm.addNestedPass<func::FuncOp>(createKilnCUDAGemmPass(gemm));
  // 5c. ArgMax/ArgMin over the last axis: a block per row.
  pm.addNestedPass<func::FuncOp>(createKilnCUDAArgReductionsPass());
  // 5c'. A KV cache write (kiln.kv_cache_write's generic over the whole
  //      cache) writes the new rows only, before the elementwise kernels
  //      take it.
  pm.addNestedPass<func::FuncOp>(createKilnCacheRowWritesPass());
  // 5d. Other results are computed in their output buffers (no copy kernel).
  pm.addNestedPass<func::FuncOp>(createKilnCUDAForwardOutputCopiesPass());
  // 5e. Row groups (softmax, layer_norm, reductions over the last axis
  //     with their elementwise neighbours): one kernel each.
  pm.addNestedPass<func::FuncOp>(createKilnCUDARowKernelsPass());
  // 5f. Elementwise generics over contiguous rows: 16-byte accesses.
  pm.addNestedPass<func::FuncOp>(createKilnCUDAVectorElementwisePass());
  // 6. Every linalg op becomes loops, parallel where the iteration space is.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  // 6b. Reductions accumulate in registers, not in the output buffer.
  pm.addNestedPass<func::FuncOp>(createKilnCUDAPromoteAccumulatorsPass());
  // 7. exp/tanh/erf/... as polynomials: kernels then need no libdevice.
  pm.addNestedPass<func::FuncOp>(createKilnApproximateMathPass());
  // 8. Host code that would touch device memory becomes one-thread kernels.
  pm.addNestedPass<func::FuncOp>(createKilnCUDASerialKernelsPass());
  // 8b. f32 constants (and the f16/bf16 weights of --precision) into one
  //     weights blob and static intermediates into one arena planned from
  //     their lifetimes, as on the CPU; the runtime hands both over as
  //     device memory (views are host pointer math).
  KilnPackWeightsPassOptions weights;
  weights.halfFloats = true;
  pm.addPass(createKilnPackWeightsPass(weights));
  pm.addPass(createKilnPlanArenaPass());
  // 8c. Row reductions: one warp per row, lanes combined with shuffles.
  pm.addNestedPass<func::FuncOp>(createKilnCUDAWarpReductionsPass());
  // 9. One kernel per top-level parallel loop: blocks x threads.
  KilnCUDAMapParallelLoopsPassOptions map;
  map.blockSize = options.cuda.blockSize;
  pm.addNestedPass<func::FuncOp>(createKilnCUDAMapParallelLoopsPass(map));
  pm.addPass(createConvertParallelLoopToGpuPass());
  // 10. nvgpu ops (the GEMM template) to NVVM before outlining, so kernels
  //     take tensor maps as pointers; then kernel bodies move into
  //     gpu.modules and launches stay in the host.
  pm.addPass(createConvertNVGPUToNVVMPass());
  //     Constants and index computations move into the launch bodies
  //     first: else they become kernel parameters, and a generic
  //     kernel's index delinearization divides by run-time values.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createKilnCUDAMergeKernelModulesPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Stage 6 (llvm): host to LLVM, kernels to NVVM and PTX.
void buildCUDALLVMPipeline(OpPassManager &pm, const PipelineOptions &options) {
  // 1. Structured control flow and views, in host and kernels alike.
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createKilnExpandShapeToReinterpretCastPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // 2. Kernels to NVVM for the chosen chip (PTX 8.0 for sm_90a's wgmma).
  GpuNVVMAttachTargetOptions target;
  target.chip = options.cuda.chip.str();
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // Dynamic shared memory as PTX's extern array, 1024-byte aligned (the
  // GEMM template's TMA buffers), also when several kernels use it.
  kernels.addPass(createKilnCUDAExternDynamicSharedPass());
  kernels.addPass(createConvertNVVMToLLVMPass()); // inline-PTX NVVM ops (wgmma, mbarrier)
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  // 3. Host to LLVM. Buffers are allocated through the generic
  //    _mlir_memref_to_llvm_alloc/free, which the artifact routes to the
  //    runtime's device allocator; launches stay gpu.launch_func.
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // 4. Weights reach kernels as their device copies.
  pm.addPass(createKilnCUDADeviceConstantsPass());
  // 5. Kernels to PTX (NVPTX backend, in process).
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  binary.toolkitPath = options.cuda.toolkit.empty() ? findCUDAToolkit() : options.cuda.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

class CUDATargetInfo final : public TargetInfo {
public:
  llvm::StringRef name() const override { return "cuda"; }
  bool implementsStage(Stage) const override { return true; }
  TargetPolicy policy(const PipelineOptions &options) const override {
    TargetPolicy policy;
    policy.attention = cudaAttentionKernelShapes(options.cuda.chip, options.cuda.precision);
    // Gathers read indices in device memory, which host checks cannot.
    policy.indexChecks = false;
    // Every product kernel takes a K-major B (the GEMM template's wgmma
    // descriptors, the SIMT loops' indexing maps): attention's K^T (a KV
    // cache) is read where it lies instead of transposed by a kernel.
    policy.kMajorBatchedRhs = true;
    policy.conv = cudaConvLowering();
    // The CPU matmul kernel's dispatches (conv taps, prologues) are not the
    // CUDA kernels'; the GEMM template's epilogues are formed here, and the
    // row kernel runs a row group as one kernel.
    policy.formDispatches = false;
    policy.formRowGroups = true;
    policy.rowGroupHalfFloats = true;
    policy.rowGroupOneLength = true;
    policy.gemmEpilogues = cudaGemmEpilogues(options.cuda.chip, options.cuda.precision,
                                             usesSplitF32(options.cuda));
    return policy;
  }

  void buildCodegenPipeline(OpPassManager &pm,
                            const PipelineOptions &options) const override {
    buildCUDACodegenPipeline(pm, options);
  }
  void buildLLVMPipeline(OpPassManager &pm, const PipelineOptions &options) const override {
    buildCUDALLVMPipeline(pm, options);
  }
  llvm::Error writeOutput(ModuleOp module, const ModelSignature &signature, Stage stage,
                          const PipelineOptions &options,
                          llvm::StringRef path) const override {
    CUDAArtifactOptions artifact;
    artifact.chip = options.cuda.chip;
    artifact.ptxas = options.cuda.ptxas;
    artifact.host.cpu = options.cpu;
    artifact.host.weights = options.weights;
    auto kind = stage == Stage::LLVM  ? CUDAOutput::HostLLVMIR
                : stage == Stage::PTX ? CUDAOutput::PTX
                : stage == Stage::Obj ? CUDAOutput::Object
                                      : CUDAOutput::SharedLibrary;
    return writeCUDAOutput(module, signature, kind, artifact, path);
  }
};

/// `--kiln-cuda-<stage>-pipeline="precision=fp16 gpu=sm_80"`: kilnc's
/// --precision and --gpu for the CUDA stage pipelines, parsed as the pass
/// options of the same types are.
struct CUDAPipelineFlags : public PassPipelineOptions<CUDAPipelineFlags> {
  Option<Precision> precision{
      *this, "precision", llvm::cl::desc("Matmul operand precision (kilnc --precision)"),
      llvm::cl::init(Precision::FP32),
      llvm::cl::values(clEnumValN(Precision::FP32, "fp32", "f32 operands"),
                       clEnumValN(Precision::TF32, "tf32", "f32 operands read as tf32"),
                       clEnumValN(Precision::FP16, "fp16", "f16 operands"),
                       clEnumValN(Precision::BF16, "bf16", "bf16 operands"))};
  Option<Chip> gpu{*this, "gpu", llvm::cl::desc("GPU architecture (kilnc --gpu)"),
                   llvm::cl::init(Chip())};

  PipelineOptions options() const {
    PipelineOptions options;
    options.target = Target::CUDA;
    options.cuda.precision = precision;
    options.cuda.chip = gpu;
    return options;
  }
};

} // namespace

const TargetInfo &cudaTargetInfo() {
  static const CUDATargetInfo cuda;
  return cuda;
}

void registerCUDAStagePipelines() {
  PassPipelineRegistration<CUDAPipelineFlags>(
      "kiln-cuda-dispatch-pipeline",
      "Stage 4 (dispatch, CUDA): fuse elementwise ops, one kiln.dispatch per kernel",
      [](OpPassManager &pm, const CUDAPipelineFlags &flags) {
        buildStagePipeline(pm, Stage::Dispatch, flags.options());
      });
  PassPipelineRegistration<CUDAPipelineFlags>(
      "kiln-cuda-codegen-pipeline", "Stage 5 (codegen, CUDA): buffers, loops, kernels",
      [](OpPassManager &pm, const CUDAPipelineFlags &flags) {
        buildStagePipeline(pm, Stage::Codegen, flags.options());
      });
  PassPipelineRegistration<CUDAPipelineFlags>(
      "kiln-cuda-llvm-pipeline", "Stage 6 (llvm, CUDA): host to LLVM, kernels to PTX",
      [](OpPassManager &pm, const CUDAPipelineFlags &flags) {
        buildStagePipeline(pm, Stage::LLVM, flags.options());
      });
}

} // namespace kiln
