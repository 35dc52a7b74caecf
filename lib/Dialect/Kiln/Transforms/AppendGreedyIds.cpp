//===- AppendGreedyIds.cpp - The kiln-append-greedy-ids pass --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A decoder generating greedily needs, per sequence, the index of the
// largest logit of the last position; the logits themselves (batch x
// vocabulary floats, 6.4 MB for 32 GPT-2 sequences) it does not. Copied back
// and scanned on the host they cost a CUDA decode step more than its
// kernels. Here the model gets one more output, `greedy_ids` = ArgMax of
// `logits` over its last axis ([batch, sequence], i64), computed where the
// logits are; the runtime's decoder reads that output instead.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNAPPENDGREEDYIDSPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kLogits = "logits", kGreedyIds = "greedy_ids";

/// The model: @main, else the module's one public function with a body.
func::FuncOp modelFunction(ModuleOp module) {
  func::FuncOp found;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.getName() == "main")
      return func;
    if (func.isPublic() && !func.isExternal()) {
      if (found)
        return {};
      found = func;
    }
  }
  return found;
}

StringAttr resultName(func::FuncOp func, unsigned i) {
  return func.getResultAttrOfType<StringAttr>(i, "kiln.name");
}

struct KilnAppendGreedyIdsPass final
    : impl::KilnAppendGreedyIdsPassBase<KilnAppendGreedyIdsPass> {
  void runOnOperation() override {
    func::FuncOp func = modelFunction(getOperation());
    if (!func) {
      getOperation().emitError("kiln-append-greedy-ids: expected one public function (the "
                               "model) or one named 'main'");
      return signalPassFailure();
    }
    std::optional<unsigned> logits;
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      StringAttr name = resultName(func, i);
      if (name && name.getValue() == kGreedyIds) {
        func.emitError("kiln-append-greedy-ids: the model already has an output '")
            << kGreedyIds << "'";
        return signalPassFailure();
      }
      if (name && name.getValue() == kLogits)
        logits = i;
    }
    if (!logits) {
      func.emitError("kiln-append-greedy-ids: the model has no output 'logits'");
      return signalPassFailure();
    }
    auto type = dyn_cast<RankedTensorType>(func.getResultTypes()[*logits]);
    if (!type || type.getRank() != 3 || !isa<FloatType>(type.getElementType())) {
      func.emitError("kiln-append-greedy-ids: output 'logits' is ")
          << func.getResultTypes()[*logits]
          << "; expected a float tensor [batch, sequence, vocabulary]";
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    OpBuilder b(ret);
    auto idsType = RankedTensorType::get(type.getShape().take_front(2), b.getI64Type());
    Value ids = ArgMaxOp::create(b, ret.getLoc(), idsType, ret.getOperand(*logits),
                                 b.getI64IntegerAttr(2), b.getBoolAttr(false),
                                 b.getBoolAttr(false));
    ret.getOperandsMutable().append(ids);
    SmallVector<Type> results(func.getResultTypes());
    results.push_back(idsType);
    func.setType(FunctionType::get(&getContext(), func.getArgumentTypes(), results));
    unsigned index = func.getNumResults() - 1;
    func.setResultAttr(index, "kiln.name", b.getStringAttr(kGreedyIds));
    if (auto dims = func.getResultAttrOfType<ArrayAttr>(*logits, "kiln.dim_names"))
      func.setResultAttr(index, "kiln.dim_names",
                         b.getArrayAttr(dims.getValue().take_front(2)));
  }
};

} // namespace
} // namespace kiln
