//===- Pipelines.cpp - Kiln's compilation stages as pass pipelines --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Pipelines/Pipelines.h"
#include "kiln/Pipelines/TargetInfo.h"

#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"
#include "kiln/Dispatch/Passes.h"
#include "kiln/Target/CPU/Passes.h"
#include "kiln/Target/CUDA/CUDATarget.h"
#include "kiln/Target/CUDA/Passes.h"
#include "kiln/Target/Host/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
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

bool isStageImplemented(Stage stage, Target target) {
  return getTargetInfo(target).implementsStage(stage);
}

void buildGraphPipeline(OpPassManager &pm, const PipelineOptions &options) {
  KilnFoldConstantsPassOptions fold;
  fold.maxResultBytes = options.maxFoldBytes;
  TargetPolicy policy = getTargetInfo(options.target).policy(options);
  // 0. A decoder's greedy pick as an output (kilnc --greedy-ids).
  if (options.greedyIds)
    pm.addPass(createKilnAppendGreedyIdsPass());
  //    A decoder's KV cache in f16/bf16 (kilnc --kv-cache-dtype).
  if (options.kvCache) {
    KilnKVCacheDtypePassOptions cache;
    cache.precision = *options.kvCache;
    pm.addPass(createKilnKVCacheDtypePass(cache));
  }
  //    The cache updated in place in a fixed-length buffer (kilnc
  //    --kv-cache-length), after its type is settled.
  if (options.kvCacheLength > 0) {
    KilnKVCacheInPlacePassOptions inPlace;
    inPlace.cacheLength = options.kvCacheLength;
    inPlace.decodeStep = options.decodeStep;
    pm.addPass(createKilnKVCacheInPlacePass(inPlace));
  }
  // 0a. Matmuls with block-quantized constant weights (MatMulNBits) as one
  //    low-bit kernel op, before any folding (the greedy rewrites of the
  //    next pass too) turns the weights into f32.
  if (policy.lowBitMatmuls)
    pm.addPass(createKilnRecognizeNBitsMatmulPass());
  // 0b. Quantized matmuls as integer products where the target has integer
  //     kernels, before folding turns dequantized weights into f32 constants.
  if (policy.integerMatmuls)
    pm.addPass(createKilnRecognizeIntegerMatmulPass());
  // 1. Folders and canonical forms first: they expose identical subgraphs
  //    and put composites in the forms the recognizers expect.
  pm.addPass(createCanonicalizerPass());
  // 2. Evaluate constant subgraphs (exporter shape plumbing, transposed
  //    weights) so reshapes get static shapes and gemm a plain B.
  pm.addPass(createKilnFoldConstantsPass(fold));
  // 3. Batch norm into the conv before it (needs the constants of step 2).
  pm.addPass(createKilnFoldConvBatchNormPass());
  // 4. Composites, GELU before LayerNorm/attention: none contains another.
  pm.addPass(createKilnRecognizeGeluPass());
  pm.addPass(createKilnRecognizeLayerNormPass());
  pm.addPass(createKilnRecognizeAttentionPass());
  pm.addPass(createKilnRecognizeGemmPass());
  // 4b. Transposes towards the outputs, where round trips cancel in step 5.
  pm.addPass(createKilnSinkTransposesPass());
  //     One scalar factor per product, on its lhs: a scaled KV cache is
  //     then read as it is (after the sinking, which puts the transposes
  //     between the factors and the products).
  pm.addPass(createKilnFoldMatmulScalesPass());
  //     One-row products of one activation (a decode step's q, k, v) as
  //     one product by the concatenated weights, which step 5 folds.
  KilnMergeSiblingMatmulsPassOptions siblings;
  siblings.maxWeightBytes = options.maxFoldBytes;
  pm.addPass(createKilnMergeSiblingMatmulsPass(siblings));
  // 5. Evaluate what steps 3-4 wrote on constants (folded conv weights,
  //    the transposes recognition introduced), then clean up.
  pm.addPass(createKilnFoldConstantsPass(fold));
  pm.addPass(createCanonicalizerPass());
  // 6. Merge what canonicalization made identical (repeated shape plumbing).
  pm.addPass(createCSEPass());
  // 7. Drop private functions nothing calls any more.
  pm.addPass(createSymbolDCEPass());
  // 8. Attention the target's kernel does not compute (its policy's
  //    kernel shapes) is expanded again into matmuls and a softmax for the
  //    linalg stage.
  AttentionKernelShapes keep = getTargetInfo(options.target).policy(options).attention;
  KilnDecomposeAttentionPassOptions decompose;
  decompose.keepF32 = keep.f32;
  decompose.keepHalfFloats = keep.halfFloats;
  decompose.headDimMultiple = keep.headDimMultiple;
  decompose.maxHeadDim = keep.maxHeadDim;
  pm.addPass(createKilnDecomposeAttentionPass(decompose));
}

void buildLinalgPipeline(OpPassManager &pm, const PipelineOptions &options) {
  TargetPolicy policy = getTargetInfo(options.target).policy(options);
  // 1. Every kiln op to linalg/tensor/arith/math on tensors, with run-time
  //    checks where the target's host code can read what they check; convs
  //    in the forms the target's cut-offs pick; transposed batched B operands
  //    read K-major where the target's kernels take them.
  ConvertKilnToLinalgPassOptions linalg;
  linalg.indexChecks = policy.indexChecks;
  linalg.kMajorBatchedRhs = policy.kMajorBatchedRhs;
  linalg.convMatmulMaxBatch = policy.conv.matmulMaxBatch;
  linalg.convShiftedDiscardDivisor = policy.conv.shiftedDiscardDivisor;
  linalg.depthwiseMaxUnrolledTaps = policy.conv.depthwiseMaxUnrolledTaps;
  linalg.stridedWindowsOnPhases = policy.conv.stridedWindowsOnPhases;
  linalg.depthwiseRowsMaxWidth = policy.conv.depthwiseRowsMaxWidth;
  linalg.stridedDepthwiseColumns = policy.conv.stridedDepthwiseColumns;
  linalg.debugBreakOp = options.debugBreakOp;
  pm.addPass(createConvertKilnToLinalgPass(linalg));
  // 2. Fold the index arithmetic and empty tensors the patterns leave behind.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // 3. Checks of dims that folding made one value pass: gone, so that they
  //    do not sit between the ops of a kernel (the dispatch stage next).
  pm.addPass(createKilnDropPassedChecksPass());
}

void buildDispatchPipeline(OpPassManager &pm, const PipelineOptions &options) {
  TargetPolicy policy = getTargetInfo(options.target).policy(options);
  // 1. Fuse producer/consumer elementwise generics (bias, activation,
  //    residual) so each remaining linalg op is one future kernel.
  pm.addNestedPass<func::FuncOp>(createKilnFuseElementwisePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // 2. Where the target's matmul kernel applies a matmul's elementwise
  //    consumer to its output tiles: mark those epilogues (and conv taps,
  //    B prologues) as part of the matmul's dispatch.
  if (policy.formDispatches) {
    KilnFormDispatchesPassOptions dispatches;
    dispatches.epilogueColumnAlign = policy.epilogueColumnAlign;
    pm.addNestedPass<func::FuncOp>(createKilnFormDispatchesPass(dispatches));
  }
  //    Where the target's GEMM kernel stores its tiles through the
  //    product's elementwise consumer: mark those epilogues.
  if (policy.gemmEpilogues.enabled) {
    KilnFormGemmEpiloguesPassOptions gemm;
    gemm.kMultiple = policy.gemmEpilogues.kMultiple;
    gemm.nMultiple = policy.gemmEpilogues.nMultiple;
    gemm.batchedKMultiple = policy.gemmEpilogues.batchedKMultiple;
    gemm.denseA = policy.gemmEpilogues.denseA;
    pm.addNestedPass<func::FuncOp>(createKilnFormGemmEpiloguesPass(gemm));
  }
  //    Where the target's row kernel runs a row reduction with its
  //    elementwise neighbours (kiln-form-dispatches forms these itself,
  //    between its steps): mark those row groups.
  if (policy.formRowGroups && !policy.formDispatches) {
    KilnFormRowGroupsPassOptions rows;
    rows.halfFloats = policy.rowGroupHalfFloats;
    rows.oneRowLength = policy.rowGroupOneLength;
    pm.addNestedPass<func::FuncOp>(createKilnFormRowGroupsPass(rows));
  }
  // 3. Each dispatch (one future kernel) as a kiln.dispatch region; the
  //    target's codegen dissolves them again (kiln-inline-dispatch-regions).
  pm.addNestedPass<func::FuncOp>(createKilnFormDispatchRegionsPass());
}

void buildBufferizePipeline(OpPassManager &pm) {
  // Tensors to buffers; function boundaries get identity layouts so the
  // wrapper can pass plain dense buffers. Results inserted into a slice of
  // a larger tensor (per-image conv matmuls) are first computed in place
  // there instead of in an empty tensor that is then copied.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Outputs that are an input's buffer updated in place (a KV cache) are no
  // results at all.
  pm.addPass(createKilnDropAliasedResultsPass());
  // Results are written into caller-provided output buffers: a returned
  // alloc becomes the output buffer itself, once per output.
  pm.addPass(createKilnDistinctResultBuffersPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
}

void buildDeallocationPipeline(OpPassManager &pm) {
  // Free every temporary buffer after its last use.
  bufferization::buildBufferDeallocationPipeline(pm);
  // Copies into strided views become linalg.copy (no runtime library).
  pm.addNestedPass<func::FuncOp>(createKilnCopiesToLinalgPass());
}

bool hasStagePipeline(Stage stage) {
  return stage >= Stage::Graph && stage <= Stage::LLVM;
}

void buildStagePipeline(OpPassManager &pm, Stage stage,
                        const PipelineOptions &options) {
  switch (stage) {
  case Stage::Graph:
    return buildGraphPipeline(pm, options);
  case Stage::Linalg:
    return buildLinalgPipeline(pm, options);
  case Stage::Dispatch:
    return buildDispatchPipeline(pm, options);
  case Stage::Codegen:
    return getTargetInfo(options.target).buildCodegenPipeline(pm, options);
  case Stage::LLVM:
    return getTargetInfo(options.target).buildLLVMPipeline(pm, options);
  default:
    llvm_unreachable("stage has no pass pipeline");
  }
}

void registerCodegenDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, tensor::TensorDialect, ub::UBDialect,
                  x86vector::X86VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // memref.alloc as an allocation: buffer-results-to-out-params then hoists
  // a returned alloc into the caller's output buffer instead of copying it
  // there (kiln-opt registers every extension and always did).
  memref::registerAllocationOpInterfaceExternalModels(registry);
  registerCUDACodegenDialects(registry);
}

void registerKilnPipelines() {
  registerKilnTransformsPasses();
  registerKilnToLinalgPasses();
  registerKilnHostPasses();
  registerKilnCPUPasses();
  registerKilnCUDAPasses();
  registerKilnDispatchPasses();
  auto registerStage = [](Stage stage, llvm::StringRef summary) {
    PassPipelineRegistration<>(
        ("kiln-" + stageName(stage) + "-pipeline").str(), summary,
        [stage](OpPassManager &pm) { buildStagePipeline(pm, stage, PipelineOptions()); });
  };
  registerStage(Stage::Graph,
                "Stage 2 (graph): canonicalize, CSE and DCE kiln ops, as kilnc runs it");
  registerStage(Stage::Linalg, "Stage 3 (linalg): kiln to linalg on tensors");
  registerStage(Stage::Dispatch, "Stage 4 (dispatch): fused kernels as kiln.dispatch regions");
  registerStage(Stage::Codegen, "Stage 5 (codegen, CPU): bufferize and lower to loops");
  registerStage(Stage::LLVM, "Stage 6 (llvm): lower everything to the LLVM dialect");
  // The other targets' stages, as `kilnc --target=<name>` runs them.
  registerTargetPipelines();
}

} // namespace kiln
