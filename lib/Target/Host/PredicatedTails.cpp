//===- PredicatedTails.cpp - Masked vector tails for short unit-stride loops -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The loops that `linalg` ops without a kernel of their own become (an
// elementwise op over an image row, a depthwise conv's output rows) are
// vectorized by LLVM's loop vectorizer, which runs the iterations past the
// last whole vector in a scalar epilogue. On rows of 7, 14, 28 or 49
// elements that epilogue is most of the row: EfficientNet's SiLU over
// [480, 14, 14] ran 14 scalar iterations per row, with a scalar exp and
// division each, at 5x the time of the same loop folded into one masked
// vector iteration per row. This pass asks the vectorizer to fold the tail
// (`llvm.loop.vectorize.predicate.enable`) for the innermost loops where
// that pays: with 512-bit vectors, a small constant trip count that is not
// a multiple of the vector's f32 lanes, and only unit-stride or
// loop-invariant memory accesses. A
// strided access (a stride-2 depthwise conv's taps, pooling) is vectorized as
// wide loads and shuffles, which a masked tail would turn into gathers:
// measured 2-3x slower, so those loops keep their epilogue.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/ArtifactWriter.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ScalarEvolutionExpressions.h"
#include "llvm/Analysis/TargetTransformInfo.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

namespace kiln {
namespace {

/// Rows up to this many iterations get a masked tail: beyond it the scalar
/// epilogue is a small share of the loop.
constexpr unsigned kMaxPredicatedTripCount = 64;
/// Masked tails only with 512-bit vectors (AVX-512's mask registers): AVX2's
/// masked stores (vmaskmovps) are slow on some CPUs, about 12 cycles each on
/// Zen 3, and were not measured against the scalar epilogue there.
constexpr unsigned kMinVectorBits = 512;

/// Whether every load and store of `loop` reads or writes consecutive
/// elements from one iteration to the next, or one loop-invariant address.
bool hasOnlyUnitStrideAccesses(llvm::Loop &loop, llvm::ScalarEvolution &scalarEvolution) {
  for (llvm::BasicBlock *block : loop.blocks())
    for (llvm::Instruction &inst : *block) {
      llvm::Value *pointer = llvm::getLoadStorePointerOperand(&inst);
      if (!pointer) {
        if (inst.mayReadOrWriteMemory())
          return false; // a call or an atomic: leave the loop alone
        continue;
      }
      const llvm::SCEV *address = scalarEvolution.getSCEV(pointer);
      if (scalarEvolution.isLoopInvariant(address, &loop))
        continue;
      auto *recurrence = llvm::dyn_cast<llvm::SCEVAddRecExpr>(address);
      if (!recurrence || recurrence->getLoop() != &loop || !recurrence->isAffine())
        return false;
      auto *step = llvm::dyn_cast<llvm::SCEVConstant>(recurrence->getStepRecurrence(scalarEvolution));
      llvm::Type *element = llvm::getLoadStoreType(&inst);
      const llvm::DataLayout &layout = inst.getDataLayout();
      if (!step || step->getAPInt().getSExtValue() !=
                       static_cast<int64_t>(layout.getTypeStoreSize(element).getFixedValue()))
        return false;
    }
  return true;
}

struct PredicatedTailsPass : llvm::PassInfoMixin<PredicatedTailsPass> {
  llvm::PreservedAnalyses run(llvm::Function &function, llvm::FunctionAnalysisManager &analyses) {
    auto &target = analyses.getResult<llvm::TargetIRAnalysis>(function);
    unsigned bits = target.getRegisterBitWidth(llvm::TargetTransformInfo::RGK_FixedWidthVector)
                        .getFixedValue();
    if (bits < kMinVectorBits)
      return llvm::PreservedAnalyses::all();
    unsigned lanes = bits / 32;
    auto &loops = analyses.getResult<llvm::LoopAnalysis>(function);
    auto &scalarEvolution = analyses.getResult<llvm::ScalarEvolutionAnalysis>(function);
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      if (!loop->isInnermost())
        continue;
      unsigned trips = scalarEvolution.getSmallConstantTripCount(loop);
      if (trips == 0 || trips > kMaxPredicatedTripCount || trips % lanes == 0 ||
          !hasOnlyUnitStrideAccesses(*loop, scalarEvolution))
        continue;
      llvm::addStringMetadataToLoop(loop, "llvm.loop.vectorize.predicate.enable", 1);
    }
    // Loop metadata only: no analysis is invalidated.
    return llvm::PreservedAnalyses::all();
  }
};

} // namespace

void addPredicatedTailsPass(llvm::FunctionPassManager &passes) {
  passes.addPass(PredicatedTailsPass());
}

} // namespace kiln
