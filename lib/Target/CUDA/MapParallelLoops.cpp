//===- MapParallelLoops.cpp - The kiln-cuda-map-parallel-loops pass -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// One kernel per top-level scf.parallel: all dims collapsed into one so any
// iteration count fits the grid (x allows 2^31 - 1 blocks, y and z only
// 65535), tiled into blocks of `block-size` threads.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace kiln {
#define GEN_PASS_DEF_KILNCUDAMAPPARALLELLOOPSPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;
using gpu::Processor;

/// Maps every dim of `loop` to `processor` (identity index and bound).
void mapLoop(scf::ParallelOp loop, Processor processor) {
  MLIRContext *context = loop.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping(
      loop.getNumLoops(),
      gpu::ParallelLoopDimMappingAttr::get(context, processor, identity, identity));
  (void)gpu::setMappingAttr(loop, mapping);
}

/// Loops nested in a kernel body run sequentially in each thread: as scf.for
/// nests (convert-parallel-loops-to-gpu drops a sequentially mapped loop
/// nested in an scf.for), or mapped `sequential` when they reduce.
void mapNestedSequential(scf::ParallelOp kernelBody) {
  SmallVector<scf::ParallelOp> nested;
  kernelBody.getBody()->walk([&](scf::ParallelOp loop) { nested.push_back(loop); });
  IRRewriter rewriter(kernelBody.getContext());
  for (scf::ParallelOp loop : nested) {
    if (loop.getNumReductions() != 0) {
      mapLoop(loop, Processor::Sequential);
      continue;
    }
    rewriter.setInsertionPoint(loop);
    scf::LoopNest nest = scf::buildLoopNest(rewriter, loop.getLoc(), loop.getLowerBound(),
                                            loop.getUpperBound(), loop.getStep());
    Block *body = loop.getBody();
    rewriter.eraseOp(body->getTerminator());
    Block *inner = nest.loops.back().getBody();
    SmallVector<Value> ivs;
    for (scf::ForOp forOp : nest.loops)
      ivs.push_back(forOp.getInductionVar());
    rewriter.inlineBlockBefore(body, inner->getTerminator(), ivs);
    rewriter.eraseOp(loop);
  }
}

/// Collapses `loop` to one normalized dim, tiles it by `blockSize`, and maps
/// tiles to blocks and tile elements to threads.
void mapToBlocksAndThreads(scf::ParallelOp loop, int64_t blockSize, IRRewriter &rewriter) {
  if (loop.getNumLoops() > 1) {
    std::vector<unsigned> all(loop.getNumLoops());
    std::iota(all.begin(), all.end(), 0u);
    Operation *before = loop->getPrevNode();
    Block *block = loop->getBlock();
    collapseParallelLoops(rewriter, loop, {all});
    // The collapsed loop replaces `loop` at the same position.
    Operation *next = before ? before->getNextNode() : &block->front();
    while (!isa<scf::ParallelOp>(next))
      next = next->getNextNode();
    loop = cast<scf::ParallelOp>(next);
  }
  auto [outer, inner] = scf::tileParallelLoop(loop, {blockSize}, /*noMinMaxBounds=*/true);
  mapLoop(outer, Processor::BlockX);
  mapLoop(inner, Processor::ThreadX);
  mapNestedSequential(inner);
}

struct KilnCUDAMapParallelLoopsPass final
    : impl::KilnCUDAMapParallelLoopsPassBase<KilnCUDAMapParallelLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (blockSize < 1 || blockSize > 1024) {
      func.emitError() << "'block-size' value is " << static_cast<int64_t>(blockSize)
                       << ", accepted range is [1, 1024]";
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    SmallVector<scf::ParallelOp> loops;
    for (Operation &op : func.getBody().front())
      if (auto loop = dyn_cast<scf::ParallelOp>(op))
        loops.push_back(loop);
    for (scf::ParallelOp loop : loops) {
      if (loop->hasAttr(kSerialLoopAttr)) {
        mapLoop(loop, Processor::BlockX);
        mapNestedSequential(loop);
        continue;
      }
      rewriter.setInsertionPoint(loop);
      mapToBlocksAndThreads(loop, blockSize, rewriter);
    }
  }
};

} // namespace
} // namespace kiln
