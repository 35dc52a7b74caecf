//===- DropAliasedResults.cpp - The kiln-drop-aliased-results pass --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// An output marked `kiln.aliases_input` (a KV cache updated in place,
// kiln-kv-cache-in-place) is its input's buffer: after one-shot
// bufferization the entry function returns that argument itself. Such a
// result is dropped before results become out-params, so no copy of the
// whole buffer into an output is made; the artifact's run wrapper passes
// the output's buffer as the input's (ArtifactWriter.cpp). A marked result
// that bufferization did not keep in place is an error: silently copying
// the cache would undo the point of the marking.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/BitVector.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNDROPALIASEDRESULTSPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

/// The block argument that is model input `input` (arguments marked
/// `kiln.host` are not model inputs).
BlockArgument modelInput(func::FuncOp func, int64_t input) {
  int64_t seen = 0;
  for (BlockArgument arg : func.getArguments()) {
    if (func.getArgAttr(arg.getArgNumber(), "kiln.host"))
      continue;
    if (seen++ == input)
      return arg;
  }
  return {};
}

StringRef nameOf(DictionaryAttr attrs, StringRef fallback) {
  auto name = attrs ? attrs.getAs<StringAttr>("kiln.name") : StringAttr();
  return name ? name.getValue() : fallback;
}

struct KilnDropAliasedResultsPass final
    : impl::KilnDropAliasedResultsPassBase<KilnDropAliasedResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      llvm::BitVector dropped(func.getNumResults());
      for (unsigned r = 0; r < func.getNumResults(); ++r) {
        auto alias = func.getResultAttrOfType<IntegerAttr>(r, "kiln.aliases_input");
        if (!alias)
          continue;
        BlockArgument input = modelInput(func, alias.getInt());
        StringRef output = nameOf(func.getResultAttrDict(r), "output");
        if (!input) {
          func.emitError("output '") << output << "' aliases input " << alias.getInt()
                                     << ", which the model does not have";
          return signalPassFailure();
        }
        bool inPlace = llvm::all_of(func.getBody().getBlocks(), [&](Block &block) {
          auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
          if (!ret)
            return true;
          Value returned = ret.getOperand(r);
          while (auto cast = returned.getDefiningOp<memref::CastOp>())
            returned = cast.getSource();
          return returned == input;
        });
        if (!inPlace) {
          func.emitError("output '")
              << output << "' should be input '"
              << nameOf(func.getArgAttrDict(input.getArgNumber()), "input")
              << "' updated in place, but bufferization gives it a buffer of its own";
          return signalPassFailure();
        }
        dropped.set(r);
      }
      if (dropped.none())
        continue;
      for (Block &block : func.getBody().getBlocks())
        if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
          ret->eraseOperands(dropped);
      if (failed(func.eraseResults(dropped)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace kiln
