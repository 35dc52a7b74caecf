//===- KVCacheDtype.cpp - The kiln-kv-cache-dtype pass --------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Exporters write a decoder's KV cache in the model's float type, f32, also
// when the model is compiled to run its products in f16: then every step
// copies the whole f32 past into the present and converts it to f16 for the
// attention products, twice the bytes of an f16 cache and one more pass.
// Here the cache inputs (past_key_values.*) and outputs (present.*) become
// f16 (or bf16), as a model run in that type keeps them: a present that is
// the concat of the past and the new keys is concatenated in the narrow
// type (the past copied as it is, the new keys rounded), and what read the
// f32 concat reads the narrow one widened, which the codegen's conversion
// to f16 then folds away.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "ModelFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNKVCACHEDTYPEPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

/// A rank-4 f32 cache tensor, and its type in `narrow`.
RankedTensorType narrowed(Type type, FloatType narrow) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() != 4 || !tensor.getElementType().isF32())
    return {};
  return tensor.clone(narrow);
}

/// `value` in `type`: the narrow source of a widening cast, else a cast.
Value castTo(OpBuilder &b, Location loc, Value value, Type type) {
  if (auto widen = value.getDefiningOp<CastOp>())
    if (widen.getInput().getType() == type)
      return widen.getInput();
  return CastOp::create(b, loc, type, value);
}

struct KilnKVCacheDtypePass final : impl::KilnKVCacheDtypePassBase<KilnKVCacheDtypePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    if (!isHalfPrecision(precision)) {
      getOperation().emitError("kiln-kv-cache-dtype: precision=")
          << precisionName(precision) << ", expected fp16 or bf16";
      return signalPassFailure();
    }
    FloatType narrow = precision == Precision::BF16 ? FloatType(BFloat16Type::get(context))
                                                    : FloatType(Float16Type::get(context));
    func::FuncOp func = modelFunction(getOperation());
    if (!func) {
      getOperation().emitError("kiln-kv-cache-dtype: expected one public function (the "
                               "model) or one named 'main'");
      return signalPassFailure();
    }
    Block &entry = func.getBody().front();
    OpBuilder b(context);
    b.setInsertionPointToStart(&entry);
    SmallVector<Type> inputs(func.getArgumentTypes());
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      RankedTensorType type = narrowed(inputs[i], narrow);
      if (!type || !hasModelName(func, i, /*result=*/false, "past_key_values."))
        continue;
      BlockArgument arg = entry.getArgument(i);
      arg.setType(type);
      auto widened = CastOp::create(b, func.getLoc(), inputs[i], arg);
      arg.replaceAllUsesExcept(widened, widened);
      inputs[i] = type;
    }
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    SmallVector<Type> results(func.getResultTypes());
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      RankedTensorType type = narrowed(results[i], narrow);
      if (!type || !hasModelName(func, i, /*result=*/true, "present."))
        continue;
      Value present = ret.getOperand(i);
      b.setInsertionPoint(ret);
      Value stored;
      if (auto concat = present.getDefiningOp<ConcatOp>()) {
        // The concat in the narrow type; its other readers widen that.
        b.setInsertionPointAfter(concat);
        SmallVector<Value> parts;
        for (Value part : concat.getInputs())
          parts.push_back(castTo(b, concat.getLoc(), part,
                                 cast<RankedTensorType>(part.getType()).clone(narrow)));
        stored = ConcatOp::create(b, concat.getLoc(), type, parts, concat.getAxisAttr());
        auto widened = CastOp::create(b, concat.getLoc(), concat.getType(), stored);
        concat.getResult().replaceAllUsesWith(widened.getResult());
        concat.erase();
      } else {
        stored = castTo(b, ret.getLoc(), present, type);
      }
      ret.setOperand(i, stored);
      results[i] = type;
    }
    func.setType(FunctionType::get(context, inputs, results));
  }
};

} // namespace
} // namespace kiln
