//===- CPUPipelines.cpp - The CPU target: its policy, stages 5-6, its writer ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Everything kilnc --target=cpu runs that is the CPU's own, top to bottom:
// the answers its policy gives the shared stages 2-4, the codegen and LLVM
// pipelines (each step with why it is where it is) and the artifact writer.
//
//===----------------------------------------------------------------------===//

#include "TargetPipelines.h"

#include "kiln/Dispatch/Passes.h"
#include "kiln/Target/CPU/CPUPolicy.h"
#include "kiln/Target/CPU/Passes.h"
#include "kiln/Target/Host/HostArtifact.h"
#include "kiln/Target/Host/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace kiln {
namespace {

/// Stage 5 (codegen): buffers, the CPU kernels, loops on the runtime's pool.
void buildCPUCodegenPipeline(OpPassManager &pm, const PipelineOptions &options) {
  // 0. The dispatch stage's kiln.dispatch regions dissolve in place.
  pm.addNestedPass<func::FuncOp>(createKilnInlineDispatchRegionsPass());
  // 1. The model function becomes the private @kiln_entry the artifact's
  //    kiln_run wrapper calls.
  pm.addPass(createKilnPrepareEntryPass());
  // 1a. Each user of a shared (CSE'd) fill gets its own: bufferization
  //     then fills a buffer per conv instead of copying one filled buffer;
  //     a conv epilogue's zero padding is filled (around the image only)
  //     before the epilogue, which empty-tensor elimination then computes
  //     in it (the dispatch stage's PaddedEpilogue.cpp).
  KilnSplitFillsPassOptions splitFills;
  splitFills.paddingInPlace = true;
  pm.addNestedPass<func::FuncOp>(createKilnSplitFillsPass(splitFills));
  // 1b. Trace hooks around each dispatch (linalg op) while the ops are
  //     still the fusion stage's kernels, named after its model nodes.
  pm.addPass(createKilnInstrumentDispatchesPass());
  // 2-3. Tensors to buffers, results to out-params.
  buildBufferizePipeline(pm);
  // 3a. Attention: one online-softmax kernel per kiln.attention_kernel.
  KilnCPUAttentionPassOptions attention;
  attention.vectorWidth = options.vectorWidth;
  attention.vectorRegisters = options.vectorRegisters;
  pm.addNestedPass<func::FuncOp>(createKilnCPUAttentionPass(attention));
  // 3b. Softmax, norms, last-axis reductions and their elementwise
  //     neighbours: one vectorized loop over rows per run of row-wise ops.
  //     Before deallocation, so per-row scratch buffers have no other users.
  KilnCPURowKernelsPassOptions rowKernels;
  rowKernels.vectorWidth = options.vectorWidth;
  pm.addNestedPass<func::FuncOp>(createKilnCPURowKernelsPass(rowKernels));
  // 4-5. Deallocation, copies as linalg.copy.
  buildDeallocationPipeline(pm);
  // 6a. Integer matmuls (kiln.matmul of i16 operands) with their requantization
  //     epilogues, before kiln-cpu-matmul would report those left over.
  KilnCPUIntegerMatmulPassOptions integer;
  integer.avx2 = hostCPUHasFeature(options.cpu, "avx2");
  integer.vnni = hostCPUHasFeature(options.cpu, "avx512vnni") &&
                 hostCPUHasFeature(options.cpu, "avx512bw");
  integer.avxvnni = hostCPUHasFeature(options.cpu, "avxvnni");
  pm.addPass(createKilnCPUIntegerMatmulPass(integer));
  // 6b. Low-bit weight matmuls (kiln.matmul_nbits_kernel, MatMulNBits):
  //     their weights repacked at compile time into new globals.
  KilnCPUNBitsMatmulPassOptions nbits;
  nbits.vectorWidth = options.vectorWidth;
  pm.addPass(createKilnCPUNBitsMatmulPass(nbits));
  // 6. Matmuls get register-blocked vector kernels (before the generic
  //    loops below would take them).
  KilnCPUMatmulPassOptions matmul;
  matmul.vectorWidth = options.vectorWidth;
  matmul.vectorRegisters = options.vectorRegisters;
  matmul.tileRows = options.matmul.rows;
  matmul.tileVectors = options.matmul.vectors;
  matmul.tileM = options.matmul.m;
  matmul.tileN = options.matmul.n;
  matmul.tileK = options.matmul.k;
  matmul.isa = options.cpuMatmul;
  matmul.parallelTasks = options.matmul.tasks;
  // Each matmul's configuration: the tuning database's for its signature,
  // else the cost model's (unless --matmul-tile fixed the tiling above).
  matmul.costModel = options.matmul.costModel;
  matmul.tuned.assign(options.matmul.tuned.begin(), options.matmul.tuned.end());
  pm.addPass(createKilnCPUMatmulPass(matmul));
  // 6c. A KV cache write (kiln.kv_cache_write's generic over the whole
  //     cache) writes the new rows only, before it becomes loops.
  pm.addNestedPass<func::FuncOp>(createKilnCacheRowWritesPass());
  // 7. Everything else: loops, parallel where the iteration space is;
  //    LLVM's vectorizer works on the innermost ones.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  // 7b. f32 constants (including the matmul pass's packed panels) into one
  //     blob, then the static temporaries into one arena planned from their
  //     lifetimes; both become entry arguments before outlining captures
  //     the views (order: host, arena, weights, tensors).
  //     The bf16 kernels' packed weights go in as bf16.
  KilnPackWeightsPassOptions weights;
  weights.halfFloats = readsBF16(options.cpuMatmul);
  pm.addPass(createKilnPackWeightsPass(weights));
  pm.addPass(createKilnPlanArenaPass());
  // 7c. The buffers left on the heap (dynamic sizes) are freed after their
  //     last use, not at the end of the run: the runtime's heap cache then
  //     reuses them within the run, as the arena does (before outlining,
  //     while their uses are still in the entry).
  pm.addPass(createKilnFreeAfterLastUsePass());
  // 8. Outermost parallel loops with enough work run on the runtime's pool.
  pm.addPass(createKilnOutlineParallelLoopsPass());
  // 9. exp/tanh/erf/... as polynomials, so their loops vectorize.
  pm.addNestedPass<func::FuncOp>(createKilnApproximateMathPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// Stage 6 (llvm): everything to the LLVM dialect.
void buildCPULLVMPipeline(OpPassManager &pm, const PipelineOptions &options) {
  // Structured control flow and views first, then each dialect to LLVM;
  // affine.apply from the view expansion needs lower-affine after it.
  pm.addPass(createConvertVectorToSCFPass());
  // The bf16 kernels' x86vector ops become their LLVM intrinsics here.
  ConvertVectorToLLVMPassOptions vector;
  vector.x86Vector = readsBF16(options.cpuMatmul);
  pm.addPass(createConvertVectorToLLVMPass(vector));
  pm.addPass(createSCFToControlFlowPass());
  // expand-strided-metadata takes one dynamic dim per expand_shape group.
  pm.addPass(createKilnExpandShapeToReinterpretCastPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Heap buffers (dynamic sizes) through _mlir_memref_to_llvm_alloc/free,
  // which the artifact writer routes to the runtime (kiln_abi_host::alloc):
  // the session's byte limit applies to them.
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

class CPUTargetInfo final : public TargetInfo {
public:
  llvm::StringRef name() const override { return "cpu"; }
  bool implementsStage(Stage stage) const override { return stage != Stage::PTX; }
  TargetPolicy policy(const PipelineOptions &) const override {
    TargetPolicy policy;
    policy.attention = cpuAttentionKernelShapes();
    policy.integerMatmuls = true;
    policy.lowBitMatmuls = true;
    policy.indexChecks = true;
    policy.conv = cpuConvLowering();
    policy.formDispatches = true;
    policy.formRowGroups = true;
    policy.epilogueColumnAlign = kCPUEpilogueColumnAlign;
    return policy;
  }
  void buildCodegenPipeline(OpPassManager &pm,
                            const PipelineOptions &options) const override {
    buildCPUCodegenPipeline(pm, options);
  }
  void buildLLVMPipeline(OpPassManager &pm, const PipelineOptions &options) const override {
    buildCPULLVMPipeline(pm, options);
  }
  llvm::Error writeOutput(ModuleOp module, const ModelSignature &signature, Stage stage,
                          const PipelineOptions &options,
                          llvm::StringRef path) const override {
    auto kind = stage == Stage::LLVM  ? ArtifactKind::LLVMIR
                : stage == Stage::Obj ? ArtifactKind::Object
                                      : ArtifactKind::SharedLibrary;
    CPUTargetOptions cpu;
    cpu.cpu = options.cpu;
    cpu.weights = options.weights;
    return writeCPUArtifact(module, signature, kind, cpu, path);
  }
};

} // namespace

const TargetInfo &cpuTargetInfo() {
  static const CPUTargetInfo cpu;
  return cpu;
}

} // namespace kiln
