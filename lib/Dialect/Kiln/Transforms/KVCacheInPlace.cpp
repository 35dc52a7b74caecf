//===- KVCacheInPlace.cpp - The kiln-kv-cache-in-place pass ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// An exported decoder step reads its KV cache as `past_key_values.*` inputs
// of the past's length and returns `present.*` outputs, each the concat of
// the past and the step's new rows: every step copies the whole cache into
// a new buffer one row longer. Here each such pair becomes one fixed-length
// cache (`cache-length` rows) that the step updates in place:
//
//   past input   [b, h, past, d]  ->  [b, h, L, d]
//   present      concat(past, new) -> kiln.kv_cache_update(cache, new, offset)
//                                     (the present output aliases the input)
//
// The offset (the number of cached rows) is the attention mask's length
// minus the step's tokens, `dim(attention_mask, 1) - dim(input_ids, 1)`, as
// transformers' exports define the mask; what read the past's shape reads
// `[b, h, offset, d]`, and what read the concat reads the update's first
// `offset + new` rows. The present result is marked `kiln.aliases_input`
// (its input's index): the artifact records it and the runtime passes the
// output's buffer as the input's, so the cache is never copied.
//
// With `decode-step` (kilnc --decode-step), the model was imported for one
// token per sequence with every shape static: the past is `[b, h, L-1, d]`
// and the mask `[b, L]`. Then the update is `kiln.kv_cache_write` at the
// step's `position_ids` (device data, not a dim), what read the concat
// reads the whole updated cache (the mask hides the rows not yet written,
// and the query's causal row, L-1, admits every key), and the past's shape
// stays the constant it was: no shape depends on the fill, so the runtime
// can replay the recorded step.
//
//===----------------------------------------------------------------------===//

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dialect/Kiln/Transforms/Passes.h"

#include "ModelFunction.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNKVCACHEINPLACEPASS
#include "kiln/Dialect/Kiln/Transforms/Passes.h.inc"

namespace {

constexpr int64_t kSequenceAxis = 2;

std::optional<unsigned> findInput(func::FuncOp func, StringRef name) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto given = func.getArgAttrOfType<StringAttr>(i, "kiln.name");
        given && given.getValue() == name)
      return i;
  return std::nullopt;
}

Value i64Scalar(OpBuilder &b, Location loc, int64_t value) {
  auto type = RankedTensorType::get({}, b.getI64Type());
  return ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getI64IntegerAttr(value)));
}

/// dim `d` of `value` as a tensor<i64>.
Value dimOf(OpBuilder &b, Location loc, Value value, int64_t d) {
  Value shape = ShapeOp::create(b, loc, value, IntegerAttr(), IntegerAttr());
  return GatherOp::create(b, loc, shape, i64Scalar(b, loc, d), b.getI64IntegerAttr(0));
}

struct KilnKVCacheInPlacePass final : impl::KilnKVCacheInPlacePassBase<KilnKVCacheInPlacePass> {
  using Base::Base;

  /// Every reader of `value` (the past input, or casts of it) other than
  /// `concat` and `keep` reads only its shape: those read `pastShape`.
  LogicalResult redirectShapeReads(Value value, Operation *concat, Operation *keep,
                                   Value pastShape, StringRef name) {
    for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
      Operation *user = use.getOwner();
      if (user == concat || user == keep)
        continue;
      if (auto cast = dyn_cast<CastOp>(user)) {
        if (failed(redirectShapeReads(cast.getResult(), concat, keep, pastShape, name)))
          return failure();
        if (cast->use_empty())
          cast->erase();
        continue;
      }
      auto shape = dyn_cast<ShapeOp>(user);
      if (!shape)
        return user->emitError("kiln-kv-cache-in-place: the past '")
               << name << "' is read by '" << user->getName()
               << "'; only its shape and the concat with the new rows may read it";
      OpBuilder b(shape);
      Value replacement = pastShape;
      if (shape.getStart() || shape.getEnd()) {
        int64_t start = shape.getStart().value_or(0);
        int64_t end = shape.getEnd().value_or(std::numeric_limits<int64_t>::max());
        replacement = SliceOp::create(b, shape.getLoc(), shape.getType(), pastShape,
                                      b.getDenseI64ArrayAttr({start}),
                                      b.getDenseI64ArrayAttr({end}),
                                      b.getDenseI64ArrayAttr({0}), b.getDenseI64ArrayAttr({1}));
      }
      shape.replaceAllUsesWith(replacement);
      shape.erase();
    }
    return success();
  }

  /// decode-step: the model's `position_ids` as i64 `[b, 1]`, after checking
  /// the step's static shapes (one token per sequence, a mask of
  /// `cache-length` columns); null after an error.
  Value stepPositions(func::FuncOp func, unsigned ids, unsigned mask) {
    std::optional<unsigned> given = findInput(func, "position_ids");
    if (!given) {
      func.emitError("kiln-kv-cache-in-place: decode-step writes each sequence's row at its "
                     "'position_ids', but the model has no such input");
      return {};
    }
    Block &entry = func.getBody().front();
    auto idsType = cast<RankedTensorType>(entry.getArgument(ids).getType());
    auto maskType = cast<RankedTensorType>(entry.getArgument(mask).getType());
    auto positionType = dyn_cast<RankedTensorType>(entry.getArgument(*given).getType());
    bool oneToken = idsType.hasStaticShape() && idsType.getRank() == 2 &&
                    idsType.getDimSize(1) == 1;
    int64_t batch = oneToken ? idsType.getDimSize(0) : 0;
    if (!oneToken || !maskType.hasStaticShape() || maskType.getRank() != 2 ||
        maskType.getShape() != ArrayRef<int64_t>{batch, cacheLength} || !positionType ||
        positionType.getShape() != ArrayRef<int64_t>{batch, 1} ||
        !positionType.getElementType().isInteger()) {
      func.emitError("kiln-kv-cache-in-place: decode-step expects 'input_ids' and "
                     "'position_ids' of one static token per sequence and an "
                     "'attention_mask' of ")
          << static_cast<int64_t>(cacheLength) << " columns, found " << idsType << ", "
          << entry.getArgument(*given).getType() << " and " << maskType
          << " (kilnc --decode-step imports them so)";
      return {};
    }
    Value positions = entry.getArgument(*given);
    if (!positionType.getElementType().isInteger(64)) {
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      positions = CastOp::create(
          b, func.getLoc(), RankedTensorType::get({batch, 1}, b.getI64Type()), positions);
    }
    return positions;
  }

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    if (cacheLength < 1) {
      getOperation().emitError("kiln-kv-cache-in-place: cache-length=")
          << static_cast<int64_t>(cacheLength) << ", expected at least 1";
      return signalPassFailure();
    }
    func::FuncOp func = modelFunction(getOperation());
    if (!func) {
      getOperation().emitError("kiln-kv-cache-in-place: expected one public function (the "
                               "model) or one named 'main'");
      return signalPassFailure();
    }
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    SmallVector<unsigned> presents;
    for (unsigned i = 0; i < func.getNumResults(); ++i)
      if (hasModelName(func, i, /*result=*/true, "present."))
        presents.push_back(i);
    if (presents.empty())
      return; // not a decoder with a cache
    std::optional<unsigned> mask = findInput(func, "attention_mask");
    std::optional<unsigned> ids = findInput(func, "input_ids");
    if (!mask || !ids) {
      func.emitError("kiln-kv-cache-in-place: the cache's fill level is the length of "
                     "'attention_mask' minus that of 'input_ids', but the model has no '")
          << (mask ? "input_ids" : "attention_mask") << "' input";
      return signalPassFailure();
    }
    Block &entry = func.getBody().front();
    OpBuilder b(context);
    b.setInsertionPointToStart(&entry);
    Location loc = func.getLoc();
    Value offset, positions;
    if (decodeStep) {
      positions = stepPositions(func, *ids, *mask);
      if (!positions)
        return signalPassFailure();
    } else {
      offset = SubOp::create(b, loc, dimOf(b, loc, entry.getArgument(*mask), 1),
                             dimOf(b, loc, entry.getArgument(*ids), 1));
    }

    SmallVector<Type> inputs(func.getArgumentTypes()), results(func.getResultTypes());
    for (unsigned result : presents) {
      auto concat = ret.getOperand(result).getDefiningOp<ConcatOp>();
      auto name = func.getResultAttrOfType<StringAttr>(result, "kiln.name").getValue();
      auto past = concat && concat.getInputs().size() == 2
                      ? dyn_cast<BlockArgument>(concat.getInputs()[0])
                      : BlockArgument();
      auto type = concat ? dyn_cast<RankedTensorType>(concat.getType()) : RankedTensorType();
      if (!past || !type || type.getRank() != 4 ||
          (static_cast<int64_t>(concat.getAxis()) != kSequenceAxis &&
           static_cast<int64_t>(concat.getAxis()) != kSequenceAxis - 4) ||
          !hasModelName(func, past.getArgNumber(), /*result=*/false, "past_key_values.")) {
        func.emitError("kiln-kv-cache-in-place: output '")
            << name << "' is not the concat of a past_key_values input and new rows "
            << "along axis 2";
        return signalPassFailure();
      }
      unsigned input = past.getArgNumber();
      StringRef pastName = func.getArgAttrOfType<StringAttr>(input, "kiln.name").getValue();
      auto pastType = cast<RankedTensorType>(past.getType());
      SmallVector<int64_t> shape(pastType.getShape());
      shape[kSequenceAxis] = cacheLength;
      auto cacheType = RankedTensorType::get(shape, pastType.getElementType());
      if (decodeStep) {
        if (!pastType.hasStaticShape() || pastType.getDimSize(kSequenceAxis) != cacheLength - 1 ||
            type != cacheType) {
          func.emitError("kiln-kv-cache-in-place: decode-step expects the static past '")
              << pastName << "' of " << cacheLength - 1 << " rows and its concat of "
              << static_cast<int64_t>(cacheLength) << ", found " << pastType << " and " << type
              << " (kilnc --decode-step imports them so)";
          return signalPassFailure();
        }
        past.setType(cacheType);
        inputs[input] = cacheType;
        OpBuilder at(context);
        at.setInsertionPointToStart(&entry);
        auto shapeType = RankedTensorType::get({4}, at.getI64Type());
        Value pastShape = ConstantOp::create(
            at, loc, DenseElementsAttr::get(shapeType, pastType.getShape()));
        if (failed(redirectShapeReads(past, concat, nullptr, pastShape, pastName)))
          return signalPassFailure();
        b.setInsertionPoint(concat);
        auto write = KVCacheWriteOp::create(b, concat.getLoc(), cacheType, past,
                                            concat.getInputs()[1], positions,
                                            b.getI64IntegerAttr(kSequenceAxis));
        concat.getResult().replaceAllUsesWith(write.getUpdated());
        concat.erase();
        ret.setOperand(result, write.getUpdated());
        results[result] = cacheType;
        func.setResultAttr(result, "kiln.aliases_input", b.getI64IntegerAttr(input));
        continue;
      }
      past.setType(cacheType);
      inputs[input] = cacheType;

      // [b, h, offset, d] for what read the past's shape.
      OpBuilder at(context);
      at.setInsertionPointAfter(offset.getDefiningOp());
      Value cacheShape = ShapeOp::create(at, loc, past, IntegerAttr(), IntegerAttr());
      auto onAxis = RankedTensorType::get({4}, at.getI64Type());
      Value axisOnly = ConstantOp::create(
          at, loc, DenseElementsAttr::get(onAxis, ArrayRef<int64_t>{0, 0, 1, 0}));
      Value pastShape = AddOp::create(
          at, loc, cacheShape,
          MulOp::create(at, loc, axisOnly,
                        SubOp::create(at, loc, offset, i64Scalar(at, loc, cacheLength))));
      if (failed(redirectShapeReads(past, concat, cacheShape.getDefiningOp(), pastShape, pastName)))
        return signalPassFailure();

      b.setInsertionPoint(concat);
      auto update = KVCacheUpdateOp::create(b, concat.getLoc(), past, concat.getInputs()[1],
                                            offset, b.getI64IntegerAttr(kSequenceAxis));
      update.getUpdated().setType(cacheType);
      concat.getResult().replaceAllUsesWith(update.getValid());
      concat.erase();
      ret.setOperand(result, update.getUpdated());
      results[result] = cacheType;
      func.setResultAttr(result, "kiln.aliases_input", b.getI64IntegerAttr(input));
      if (Attribute dims = func.getArgAttr(input, "kiln.dim_names"))
        func.setResultAttr(result, "kiln.dim_names", dims);
    }
    func.setType(FunctionType::get(context, inputs, results));
  }
};

} // namespace
} // namespace kiln
