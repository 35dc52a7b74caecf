//===- SequenceHandlers.cpp - ONNX sequences and optionals, resolved statically ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Sequences and optionals exist only while importing (NodeBinder.h says how
// they are carried). Every sequence op is resolved on the list of tensors:
// positions must be constants at import time (a position computed at run
// time is an `unsupported:` error), SequenceLength is a constant,
// ConcatFromSequence one `concat` (or a stack), SplitToSequence `slice`s of
// a static dim, SequenceMap its body imported once per element (like an
// unrolled Loop). An optional is known to be empty or not, so
// OptionalHasElement is a constant and OptionalGetElement of an empty
// optional is an error.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln::onnx_import {

static constexpr StringLiteral kCompositeAttr = "kiln.composite";

bool isComposite(Value value) { return !isa<RankedTensorType>(value.getType()); }

std::optional<Composite> compositeOf(Value value) {
  auto cast = value.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || !cast->hasAttr(kCompositeAttr))
    return std::nullopt;
  Composite composite;
  composite.optional =
      cast->getAttrOfType<StringAttr>(kCompositeAttr).getValue() == "optional";
  composite.elements.assign(cast.getInputs().begin(), cast.getInputs().end());
  return composite;
}

StringRef compositeKind(Value value) {
  std::optional<Composite> composite = compositeOf(value);
  return composite && composite->optional ? "an optional" : "a sequence";
}

Value makeComposite(NodeBinder &b, const Composite &composite) {
  SmallVector<Type> types;
  for (Value element : composite.elements)
    types.push_back(element.getType());
  auto cast = UnrealizedConversionCastOp::create(
      b.builder(), b.loc(), TypeRange{TupleType::get(b.context(), types)},
      ValueRange(composite.elements));
  cast->setAttr(kCompositeAttr,
                b.builder().getStringAttr(composite.optional ? "optional" : "sequence"));
  return cast.getResult(0);
}

FailureOr<Value> selectComposite(NodeBinder &b, Value cond, Value onTrue,
                                 Value onFalse) {
  std::optional<Composite> t = compositeOf(onTrue), f = compositeOf(onFalse);
  auto describe = [](const std::optional<Composite> &c) -> std::string {
    if (!c)
      return "a tensor";
    return (c->optional ? (c->elements.empty() ? "an empty optional" : "an optional")
                        : "a sequence of " + std::to_string(c->elements.size()));
  };
  if (!t || !f || t->optional != f->optional ||
      t->elements.size() != f->elements.size())
    return b.unsupported("an If whose condition is computed at run time and whose "
                         "branches give " + describe(t) + " and " + describe(f) +
                         " (sequence lengths and optionals' presence must be "
                         "known at import)");
  Composite chosen{t->optional, {}};
  for (auto [x, y] : llvm::zip(t->elements, f->elements)) {
    FailureOr<Value> picked;
    if (isComposite(x) || isComposite(y))
      picked = selectComposite(b, cond, x, y);
    else if (x.getType() != y.getType())
      return b.unsupported("an If whose condition is computed at run time and "
                           "whose branches give sequences of different tensor types");
    else
      picked = b.make<kiln::SelectOp>(cond, x, y);
    if (failed(picked))
      return failure();
    chosen.elements.push_back(*picked);
  }
  return makeComposite(b, chosen);
}

bool takesComposites(StringRef domain, StringRef opType) {
  static const llvm::StringSet<> ops = {
      "SequenceEmpty",      "SequenceConstruct", "SequenceInsert",
      "SequenceAt",         "SequenceErase",     "SequenceLength",
      "ConcatFromSequence", "SplitToSequence",   "SequenceMap",
      "Optional",           "OptionalHasElement", "OptionalGetElement",
      "Identity",           "If",                "Loop"};
  return (domain.empty() || domain == "ai.onnx") && ops.contains(opType);
}

namespace {

/// Input `i` as a sequence: its elements.
FailureOr<SmallVector<Value>> sequenceInput(NodeBinder &b, unsigned i) {
  FailureOr<Value> value = b.anyInput(i);
  if (failed(value))
    return failure();
  std::optional<Composite> composite = compositeOf(*value);
  if (!composite || composite->optional)
    return b.emitError() << "input " << i << " is "
                         << (composite ? "an optional" : "a tensor")
                         << ", expected a sequence";
  return composite->elements;
}

Value sequence(NodeBinder &b, ArrayRef<Value> elements) {
  return makeComposite(b, Composite{false, SmallVector<Value>(elements)});
}

/// A constant position (input `i`, one integer) in [-size, size + extra).
FailureOr<int64_t> position(NodeBinder &b, unsigned i, int64_t size,
                            int64_t extra) {
  FailureOr<Value> operand = b.input(i);
  if (failed(operand))
    return failure();
  std::optional<SmallVector<int64_t>> values = b.constantInts(i);
  if (!values)
    return b.unsupported("input " + Twine(i) + " ('position') computed at run "
                         "time (sequence positions must be constants at import)");
  if (values->size() != 1)
    return b.emitError() << "input " << i << " ('position') has " << values->size()
                         << " values, expected one";
  int64_t at = values->front();
  if (failed(b.checkRange("input 'position'", at, -size, size + extra - 1)))
    return failure();
  return at < 0 ? at + size : at;
}

/// Every element of a sequence has one element type.
LogicalResult checkElementType(NodeBinder &b, ArrayRef<Value> elements, Value added) {
  if (elements.empty())
    return success();
  Type want = tensorType(elements.front()).getElementType();
  Type got = tensorType(added).getElementType();
  if (want == got)
    return success();
  return b.emitError() << "a sequence of " << want << " tensors cannot hold a "
                       << added.getType();
}

LogicalResult sequenceEmpty(NodeBinder &b) {
  FailureOr<int64_t> dtype = b.intAttr("dtype", 1);
  if (failed(dtype))
    return failure();
  return b.setOutput(0, sequence(b, {}));
}

LogicalResult sequenceConstruct(NodeBinder &b) {
  if (b.numInputs() == 0)
    return b.emitError() << "needs at least one input";
  SmallVector<Value> elements;
  for (unsigned i = 0; i < b.numInputs(); ++i) {
    FailureOr<Value> x = b.input(i);
    if (failed(x) || failed(checkElementType(b, elements, *x)))
      return failure();
    elements.push_back(*x);
  }
  return b.setOutput(0, sequence(b, elements));
}

LogicalResult sequenceInsert(NodeBinder &b) {
  FailureOr<SmallVector<Value>> elements = sequenceInput(b, 0);
  FailureOr<Value> x = b.input(1);
  if (failed(elements) || failed(x) || failed(checkElementType(b, *elements, *x)))
    return failure();
  int64_t size = elements->size();
  FailureOr<int64_t> at = b.hasInput(2) ? position(b, 2, size, 1) : size;
  if (failed(at))
    return failure();
  elements->insert(elements->begin() + *at, *x);
  return b.setOutput(0, sequence(b, *elements));
}

LogicalResult sequenceAt(NodeBinder &b) {
  FailureOr<SmallVector<Value>> elements = sequenceInput(b, 0);
  if (failed(elements))
    return failure();
  FailureOr<int64_t> at = position(b, 1, elements->size(), 0);
  return failed(at) ? failure() : b.setOutput(0, (*elements)[*at]);
}

LogicalResult sequenceErase(NodeBinder &b) {
  FailureOr<SmallVector<Value>> elements = sequenceInput(b, 0);
  if (failed(elements))
    return failure();
  int64_t size = elements->size();
  if (size == 0)
    return b.emitError() << "erases from an empty sequence";
  FailureOr<int64_t> at = b.hasInput(1) ? position(b, 1, size, 0) : size - 1;
  if (failed(at))
    return failure();
  elements->erase(elements->begin() + *at);
  return b.setOutput(0, sequence(b, *elements));
}

LogicalResult sequenceLength(NodeBinder &b) {
  FailureOr<SmallVector<Value>> elements = sequenceInput(b, 0);
  if (failed(elements))
    return failure();
  return b.setOutput(0, b.scalar(b.builder().getI64Type(),
                                 static_cast<double>(elements->size())));
}

LogicalResult concatFromSequence(NodeBinder &b) {
  FailureOr<SmallVector<Value>> elements = sequenceInput(b, 0);
  FailureOr<int64_t> axis = b.intAttr("axis", std::nullopt);
  FailureOr<int64_t> newAxis = b.intAttr("new_axis", 0);
  if (failed(elements) || failed(axis) || failed(newAxis) ||
      failed(b.checkRange("attribute 'new_axis'", *newAxis, 0, 1)))
    return failure();
  if (elements->empty())
    return b.emitError() << "concatenates an empty sequence (its result has no type)";
  int64_t rank = tensorType(elements->front()).getRank() + *newAxis;
  if (failed(b.checkRange("attribute 'axis'", *axis, -rank, rank - 1)))
    return failure();
  int64_t normalized = *axis < 0 ? *axis + rank : *axis;
  FailureOr<Value> out =
      *newAxis ? stackParts(b, *elements, normalized)
               : elements->size() == 1
                     ? FailureOr<Value>(elements->front())
                     : b.make<kiln::ConcatOp>(ValueRange(*elements),
                                              static_cast<uint64_t>(normalized));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult splitToSequence(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> axis = b.intAttr("axis", 0);
  FailureOr<int64_t> keepDims = b.intAttr("keepdims", 1);
  if (failed(x) || failed(axis) || failed(keepDims))
    return failure();
  RankedTensorType type = tensorType(*x);
  int64_t rank = type.getRank();
  if (failed(b.checkRange("attribute 'axis'", *axis, -rank, rank - 1)))
    return failure();
  int64_t dimAxis = *axis < 0 ? *axis + rank : *axis;
  int64_t dim = type.getDimSize(dimAxis);
  if (ShapedType::isDynamic(dim))
    return b.unsupported("a split of a dynamic dim (the sequence length must be "
                         "known at import)");
  SmallVector<int64_t> sizes;
  bool squeeze = false;
  if (!b.hasInput(1)) {
    sizes.assign(dim, 1);
    squeeze = *keepDims == 0;
  } else {
    FailureOr<Value> split = b.input(1);
    if (failed(split))
      return failure();
    std::optional<SmallVector<int64_t>> values = b.constantInts(1);
    if (!values)
      return b.unsupported("input 1 ('split') computed at run time (the sequence "
                           "length must be known at import)");
    if (tensorType(*split).getRank() == 0) {
      int64_t chunk = values->front();
      if (failed(b.checkRange("input 'split'", chunk, 1, std::nullopt)))
        return failure();
      for (int64_t start = 0; start < dim; start += chunk)
        sizes.push_back(std::min(chunk, dim - start));
    } else {
      int64_t total = 0;
      for (int64_t size : *values) {
        if (failed(b.checkRange("an input 'split' entry", size, 0, std::nullopt)))
          return failure();
        total += size;
      }
      if (total != dim)
        return b.emitError() << "input 'split' sums to " << total << ", but dim "
                             << dimAxis << " is " << dim;
      sizes.assign(values->begin(), values->end());
    }
  }
  constexpr int64_t kMaxElements = 100000;
  if (static_cast<int64_t>(sizes.size()) > kMaxElements)
    return b.unsupported("a sequence of more than " + Twine(kMaxElements) + " tensors");
  SmallVector<Value> parts;
  int64_t start = 0;
  for (int64_t size : sizes) {
    FailureOr<Value> part = b.make<kiln::SliceOp>(
        *x, ArrayRef<int64_t>{start}, ArrayRef<int64_t>{start + size},
        ArrayRef<int64_t>{dimAxis}, ArrayRef<int64_t>{1});
    if (succeeded(part) && squeeze)
      part = b.make<kiln::SqueezeOp>(*part, ArrayRef<int64_t>{dimAxis});
    if (failed(part))
      return failure();
    parts.push_back(*part);
    start += size;
  }
  return b.setOutput(0, sequence(b, parts));
}

/// SequenceMap: the body once per element of the first sequence; further
/// inputs are sequences of the same length (element i) or tensors (whole).
LogicalResult sequenceMap(NodeBinder &b) {
  FailureOr<SmallVector<Value>> first = sequenceInput(b, 0);
  FailureOr<std::pair<unsigned, unsigned>> arity = b.graphArity("body");
  if (failed(first) || failed(arity))
    return failure();
  if (arity->first != b.numInputs() || arity->second != b.numOutputs())
    return b.emitError() << "the body has " << arity->first << " inputs and "
                         << arity->second << " outputs, expected " << b.numInputs()
                         << " and " << b.numOutputs();
  int64_t length = first->size();
  SmallVector<std::optional<SmallVector<Value>>> extra;
  SmallVector<Value> whole;
  for (unsigned i = 1; i < b.numInputs(); ++i) {
    FailureOr<Value> value = b.anyInput(i);
    if (failed(value))
      return failure();
    std::optional<Composite> composite = compositeOf(*value);
    if (composite && composite->optional)
      return b.emitError() << "input " << i << " is an optional, expected a "
                              "sequence or a tensor";
    if (composite && static_cast<int64_t>(composite->elements.size()) != length)
      return b.emitError() << "input " << i << " is a sequence of "
                           << composite->elements.size() << " tensors, but input 0 "
                           << "has " << length;
    extra.push_back(composite ? std::optional(composite->elements) : std::nullopt);
    whole.push_back(*value);
  }
  SmallVector<SmallVector<Value>> outputs(b.numOutputs());
  for (int64_t n = 0; n < length; ++n) {
    SmallVector<Value> args = {(*first)[n]};
    for (auto [elements, value] : llvm::zip(extra, whole))
      args.push_back(elements ? (*elements)[n] : value);
    FailureOr<SmallVector<Value>> results = b.inlineGraph("body", args);
    if (failed(results))
      return failure();
    for (auto [k, result] : llvm::enumerate(*results)) {
      if (isComposite(result))
        return b.unsupported("a SequenceMap body output that is " +
                             compositeKind(result) + " (sequences of tensors only)");
      outputs[k].push_back(result);
    }
  }
  for (auto [k, elements] : llvm::enumerate(outputs))
    if (failed(b.setOutput(k, sequence(b, elements))))
      return failure();
  return success();
}

LogicalResult optional(NodeBinder &b) {
  Composite composite{true, {}};
  if (b.hasInput(0)) {
    FailureOr<Value> value = b.anyInput(0);
    if (failed(value))
      return failure();
    if (std::optional<Composite> inner = compositeOf(*value); inner && inner->optional)
      return b.emitError() << "input 0 is an optional; optionals of optionals "
                              "are not valid ONNX";
    composite.elements.push_back(*value);
  } else if (!b.hasAttr("type")) {
    return b.emitError() << "an Optional without input needs attribute 'type'";
  }
  return b.setOutput(0, makeComposite(b, composite));
}

/// A tensor or sequence counts as present (OptionalHasElement-18 takes them;
/// earlier opsets are read the same way, like ONNX's reference); no input
/// is an empty optional.
LogicalResult optionalHasElement(NodeBinder &b) {
  bool has = false;
  if (b.hasInput(0)) {
    FailureOr<Value> value = b.anyInput(0);
    if (failed(value))
      return failure();
    std::optional<Composite> composite = compositeOf(*value);
    has = !composite || !composite->optional || !composite->elements.empty();
  }
  return b.setOutput(0, b.scalar(b.builder().getI1Type(), has));
}

/// A tensor or sequence is passed on (OptionalGetElement-18).
LogicalResult optionalGetElement(NodeBinder &b) {
  FailureOr<Value> value = b.anyInput(0);
  if (failed(value))
    return failure();
  std::optional<Composite> composite = compositeOf(*value);
  if (!composite || !composite->optional)
    return b.setOutput(0, *value);
  if (composite->elements.empty())
    return b.emitError() << "input 0 is an optional that is empty (known at "
                            "import); getting its element is an error";
  return b.setOutput(0, composite->elements.front());
}

} // namespace

void registerSequenceHandlers(HandlerRegistry &r) {
  r.add("SequenceEmpty", 11, sequenceEmpty);
  r.add("SequenceConstruct", 11, sequenceConstruct);
  r.add("SequenceInsert", 11, sequenceInsert);
  r.add("SequenceAt", 11, sequenceAt);
  r.add("SequenceErase", 11, sequenceErase);
  r.add("SequenceLength", 11, sequenceLength);
  r.add("ConcatFromSequence", 11, concatFromSequence);
  r.add("SplitToSequence", 11, splitToSequence);
  r.add("SequenceMap", 17, sequenceMap);
  r.add("Optional", 15, optional);
  r.add("OptionalHasElement", 15, optionalHasElement);
  r.add("OptionalGetElement", 15, optionalGetElement);
}

} // namespace kiln::onnx_import
