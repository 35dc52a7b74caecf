//===- ControlFlowHandlers.cpp - ONNX If, Scan and Loop ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Control flow is resolved at import time; no region op reaches the kiln
// dialect:
// - If with a condition that is a constant at import time (the usual case in
//   function bodies, where it derives from shapes or attributes) imports the
//   taken branch inline. A run-time condition imports both branches and
//   selects between their results (`kiln.select` on a scalar condition),
//   which needs both branches to give the same types: the branches of an
//   ONNX If are side-effect free, so evaluating both is equivalent.
// - Scan has a static trip count (the scan axis of its inputs): the body is
//   unrolled, iteration t reading slice t (or T-1-t in reverse) of each scan
//   input, state carried from one copy to the next, scan outputs stacked.
// - Loop needs a trip count and a condition known at import time, and a
//   condition its body computes that folds to a constant in every
//   iteration; it is unrolled the same way.
// Unrolling is bounded by the importer's budget of body nodes (NodeBinder).
// Loop-carried values and If results may be sequences or optionals (built
// at import, see SequenceHandlers.cpp); scan inputs and outputs are tensors.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

/// `x[..., i, ...]` along `axis`, that axis removed.
FailureOr<Value> takeIndex(NodeBinder &b, Value x, int64_t axis, int64_t i) {
  FailureOr<Value> slice = b.make<kiln::SliceOp>(
      x, ArrayRef<int64_t>{i}, ArrayRef<int64_t>{i + 1},
      ArrayRef<int64_t>{axis}, ArrayRef<int64_t>{1});
  if (failed(slice))
    return failure();
  return b.make<kiln::SqueezeOp>(*slice, ArrayRef<int64_t>{axis});
}

/// Checks that a body has `inputs` inputs and (when given) `outputs` outputs.
LogicalResult checkBody(NodeBinder &b, StringRef name, unsigned inputs,
                        std::optional<unsigned> outputs) {
  FailureOr<std::pair<unsigned, unsigned>> arity = b.graphArity(name);
  if (failed(arity))
    return failure();
  if (arity->first != inputs)
    return b.emitError() << "attribute '" << name << "': the body has "
                         << arity->first << " inputs, expected " << inputs;
  if (outputs && arity->second != *outputs)
    return b.emitError() << "attribute '" << name << "': the body has "
                         << arity->second << " outputs, expected " << *outputs;
  return success();
}

/// A one-element boolean condition as a rank-0 tensor.
FailureOr<Value> scalarCondition(NodeBinder &b, Value cond) {
  if (isComposite(cond))
    return b.emitError() << "the condition is " << compositeKind(cond)
                         << ", expected one bool";
  RankedTensorType type = tensorType(cond);
  if (!type.getElementType().isInteger(1) || !type.hasStaticShape() ||
      type.getNumElements() != 1)
    return b.emitError() << "the condition has type " << type
                         << ", expected one bool";
  if (type.getRank() == 0)
    return cond;
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  return b.make<kiln::SqueezeOp>(cond, ArrayRef<int64_t>(axes));
}

//===----------------------------------------------------------------------===//
// If
//===----------------------------------------------------------------------===//

LogicalResult ifNode(NodeBinder &b) {
  unsigned outputs = b.numOutputs();
  if (failed(checkBody(b, "then_branch", 0, outputs)) ||
      failed(checkBody(b, "else_branch", 0, outputs)))
    return failure();
  FailureOr<Value> cond = b.input(0);
  if (failed(cond))
    return failure();
  FailureOr<Value> scalar = scalarCondition(b, *cond);
  if (failed(scalar))
    return failure();
  if (std::optional<SmallVector<int64_t>> known = constantIntsOf(*scalar)) {
    FailureOr<SmallVector<Value>> taken =
        b.inlineGraph(known->front() ? "then_branch" : "else_branch", {});
    if (failed(taken))
      return failure();
    return b.setOutputs(*taken);
  }
  FailureOr<SmallVector<Value>> thenValues = b.inlineGraph("then_branch", {});
  if (failed(thenValues))
    return failure();
  FailureOr<SmallVector<Value>> elseValues = b.inlineGraph("else_branch", {});
  if (failed(elseValues))
    return failure();
  SmallVector<Value> results;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(*thenValues, *elseValues))) {
    auto [onTrue, onFalse] = pair;
    if (isComposite(onTrue) || isComposite(onFalse)) {
      FailureOr<Value> chosen = selectComposite(b, *scalar, onTrue, onFalse);
      if (failed(chosen))
        return failure();
      results.push_back(*chosen);
      continue;
    }
    if (onTrue.getType() != onFalse.getType())
      return b.unsupported("an If whose condition is computed at run time and "
                           "whose branches give different types for output " +
                           Twine(i) + " (the then branch " +
                           llvm::formatv("{0}", onTrue.getType()) +
                           ", the else branch " +
                           llvm::formatv("{0}", onFalse.getType()) + ")");
    FailureOr<Value> chosen = b.make<kiln::SelectOp>(*scalar, onTrue, onFalse);
    if (failed(chosen))
      return failure();
    results.push_back(*chosen);
  }
  return b.setOutputs(results);
}

//===----------------------------------------------------------------------===//
// Scan
//===----------------------------------------------------------------------===//

struct ScanAxes {
  SmallVector<int64_t> inputAxes, inputDirections, outputAxes, outputDirections;
};

/// One scan (no batch): the final states followed by the stacked scan outputs.
FailureOr<SmallVector<Value>> scanOnce(NodeBinder &b, ArrayRef<Value> initial,
                                       ArrayRef<Value> scanned,
                                       unsigned numScanOutputs,
                                       const ScanAxes &axes) {
  int64_t trips = -1;
  SmallVector<int64_t> inputAxes;
  for (auto [j, x] : llvm::enumerate(scanned)) {
    int64_t rank = tensorType(x).getRank(), axis = axes.inputAxes[j];
    if (failed(b.checkRange("scan input axis", axis, -rank, rank - 1)))
      return failure();
    axis = axis < 0 ? axis + rank : axis;
    inputAxes.push_back(axis);
    int64_t dim = tensorType(x).getDimSize(axis);
    if (ShapedType::isDynamic(dim))
      return b.unsupported("scan input " + Twine(j) +
                           " has a dynamic length along its scan axis");
    if (trips >= 0 && dim != trips)
      return b.emitError() << "the scan inputs have lengths " << trips << " and "
                           << dim << " along their scan axes";
    trips = dim;
  }
  if (trips <= 0)
    return b.unsupported("a Scan of 0 iterations (its scan outputs would have "
                         "no known shape)");
  SmallVector<Value> states(initial);
  SmallVector<SmallVector<Value>> parts(numScanOutputs);
  for (int64_t t = 0; t < trips; ++t) {
    SmallVector<Value> args(states);
    for (auto [j, x] : llvm::enumerate(scanned)) {
      int64_t index = axes.inputDirections[j] ? trips - 1 - t : t;
      FailureOr<Value> slice = takeIndex(b, x, inputAxes[j], index);
      if (failed(slice))
        return failure();
      args.push_back(*slice);
    }
    FailureOr<SmallVector<Value>> out = b.inlineGraph("body", args);
    if (failed(out))
      return failure();
    for (auto [i, state] : llvm::enumerate(states))
      state = (*out)[i];
    for (unsigned k = 0; k < numScanOutputs; ++k)
      parts[k].push_back((*out)[states.size() + k]);
  }
  SmallVector<Value> results(states);
  for (unsigned k = 0; k < numScanOutputs; ++k) {
    if (axes.outputDirections[k])
      std::reverse(parts[k].begin(), parts[k].end());
    int64_t rank = tensorType(parts[k].front()).getRank() + 1;
    int64_t axis = axes.outputAxes[k];
    if (failed(b.checkRange("scan output axis", axis, -rank, rank - 1)))
      return failure();
    FailureOr<Value> stacked = stackParts(b, parts[k], axis < 0 ? axis + rank : axis);
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  return results;
}

/// Reads an INTS attribute of `count` entries, each 0 or 1 when `binary`.
FailureOr<SmallVector<int64_t>> perValueAttr(NodeBinder &b, StringRef name,
                                             size_t count, bool binary) {
  SmallVector<int64_t> zeros(count, 0);
  FailureOr<SmallVector<int64_t>> values = b.intsAttr(name, ArrayRef<int64_t>(zeros));
  if (failed(values))
    return failure();
  if (values->size() != count)
    return b.emitError() << "attribute '" << name << "' has " << values->size()
                         << " entries, expected " << count;
  if (binary)
    for (int64_t v : *values)
      if (failed(b.checkRange("attribute '" + name.str() + "'", v, 0, 1)))
        return failure();
  return values;
}

LogicalResult scanNode(NodeBinder &b) {
  bool batched = b.opset() < 9; // Scan-8: sequence_lens first, batch dim 0
  if (batched && b.hasInput(0))
    return b.unsupported("Scan-8's 'sequence_lens' input");
  unsigned first = batched ? 1 : 0;
  SmallVector<Value> operands;
  for (unsigned i = first; i < b.numInputs(); ++i) {
    FailureOr<Value> x = b.input(i);
    if (failed(x))
      return failure();
    operands.push_back(*x);
  }
  FailureOr<int64_t> numScanInputs = b.intAttr("num_scan_inputs", std::nullopt);
  if (failed(numScanInputs) ||
      failed(b.checkRange("attribute 'num_scan_inputs'", *numScanInputs, 1,
                          static_cast<int64_t>(operands.size()))))
    return failure();
  unsigned numScans = *numScanInputs, numStates = operands.size() - numScans;
  FailureOr<std::pair<unsigned, unsigned>> arity = b.graphArity("body");
  if (failed(arity) || failed(checkBody(b, "body", numStates + numScans, {})))
    return failure();
  if (arity->second < numStates)
    return b.emitError() << "the body has " << arity->second
                         << " outputs, fewer than the " << numStates << " states";
  unsigned numScanOutputs = arity->second - numStates;
  if (b.numOutputs() != arity->second)
    return b.emitError() << "the node has " << b.numOutputs()
                         << " outputs, but its body " << arity->second;
  ScanAxes axes;
  auto read = [&](StringRef name, size_t count, bool binary,
                  SmallVector<int64_t> &into) {
    FailureOr<SmallVector<int64_t>> values = perValueAttr(b, name, count, binary);
    if (failed(values))
      return failure();
    into = *values;
    return success();
  };
  if (batched) {
    if (failed(read("directions", numScans, true, axes.inputDirections)))
      return failure();
    axes.inputAxes.assign(numScans, 0);
    axes.outputAxes.assign(numScanOutputs, 0);
    axes.outputDirections.assign(numScanOutputs, 0);
  } else if (failed(read("scan_input_axes", numScans, false, axes.inputAxes)) ||
             failed(read("scan_input_directions", numScans, true,
                         axes.inputDirections)) ||
             failed(read("scan_output_axes", numScanOutputs, false,
                         axes.outputAxes)) ||
             failed(read("scan_output_directions", numScanOutputs, true,
                         axes.outputDirections))) {
    return failure();
  }
  ArrayRef<Value> all(operands);
  if (!batched) {
    FailureOr<SmallVector<Value>> results =
        scanOnce(b, all.take_front(numStates), all.drop_front(numStates),
                 numScanOutputs, axes);
    if (failed(results))
      return failure();
    return b.setOutputs(*results);
  }
  // Scan-8: every operand has the batch as dim 0; scan each batch alone.
  int64_t batch = -1;
  for (Value x : operands) {
    RankedTensorType type = tensorType(x);
    if (type.getRank() == 0 || ShapedType::isDynamic(type.getDimSize(0)))
      return b.unsupported("Scan-8 with an operand of type " +
                           llvm::formatv("{0}", type).str() +
                           " (a static batch dim is needed)");
    if (batch >= 0 && type.getDimSize(0) != batch)
      return b.emitError() << "the operands have batch sizes " << batch
                           << " and " << type.getDimSize(0);
    batch = type.getDimSize(0);
  }
  if (batch == 0)
    return b.unsupported("Scan-8 with a batch of 0");
  SmallVector<SmallVector<Value>> perBatch(arity->second);
  for (int64_t n = 0; n < batch; ++n) {
    SmallVector<Value> sliced;
    for (Value x : operands) {
      FailureOr<Value> one = takeIndex(b, x, 0, n);
      if (failed(one))
        return failure();
      sliced.push_back(*one);
    }
    ArrayRef<Value> slicedRef(sliced);
    FailureOr<SmallVector<Value>> results =
        scanOnce(b, slicedRef.take_front(numStates),
                 slicedRef.drop_front(numStates), numScanOutputs, axes);
    if (failed(results))
      return failure();
    for (auto [i, value] : llvm::enumerate(*results))
      perBatch[i].push_back(value);
  }
  SmallVector<Value> outputs;
  for (ArrayRef<Value> parts : perBatch) {
    FailureOr<Value> stacked = stackParts(b, parts, 0);
    if (failed(stacked))
      return failure();
    outputs.push_back(*stacked);
  }
  return b.setOutputs(outputs);
}

//===----------------------------------------------------------------------===//
// Loop
//===----------------------------------------------------------------------===//

LogicalResult loopNode(NodeBinder &b) {
  std::optional<int64_t> tripCount;
  if (b.hasInput(0)) {
    FailureOr<SmallVector<int64_t>> m =
        b.requireConstantInts(0, "'M', the trip count");
    if (failed(m))
      return failure();
    if (m->size() != 1)
      return b.emitError() << "input 0 ('M') has " << m->size()
                           << " values, expected one";
    tripCount = m->front();
  }
  bool running = true;
  if (b.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> cond =
        b.requireConstantInts(1, "'cond', the initial condition");
    if (failed(cond))
      return failure();
    if (cond->size() != 1)
      return b.emitError() << "input 1 ('cond') has " << cond->size()
                           << " values, expected one";
    running = cond->front() != 0;
  }
  SmallVector<Value> carried; // tensors, sequences or optionals
  for (unsigned i = 2; i < b.numInputs(); ++i) {
    FailureOr<Value> x = b.anyInput(i);
    if (failed(x))
      return failure();
    carried.push_back(*x);
  }
  unsigned numCarried = carried.size();
  FailureOr<std::pair<unsigned, unsigned>> arity = b.graphArity("body");
  if (failed(arity) || failed(checkBody(b, "body", numCarried + 2, {})))
    return failure();
  if (arity->second < numCarried + 1)
    return b.emitError() << "the body has " << arity->second
                         << " outputs, expected the condition and the "
                         << numCarried << " carried values at least";
  unsigned numScanOutputs = arity->second - 1 - numCarried;
  if (b.numOutputs() > numCarried + numScanOutputs)
    return b.emitError() << "the node has " << b.numOutputs()
                         << " outputs, but its body gives "
                         << numCarried + numScanOutputs;
  MLIRContext *context = b.context();
  Type i64 = IntegerType::get(context, 64), i1 = IntegerType::get(context, 1);
  SmallVector<SmallVector<Value>> parts(numScanOutputs);
  int64_t trips = 0;
  for (; running && (!tripCount || trips < *tripCount); ++trips) {
    SmallVector<Value> args = {b.scalar(i64, static_cast<double>(trips)),
                               b.scalar(i1, 1)};
    args.append(carried);
    FailureOr<SmallVector<Value>> out = b.inlineGraph("body", args);
    if (failed(out))
      return failure();
    FailureOr<Value> next = scalarCondition(b, (*out)[0]);
    if (failed(next))
      return failure();
    std::optional<SmallVector<int64_t>> known = constantIntsOf(*next);
    if (!known)
      return b.unsupported("a Loop whose body computes its condition at run "
                           "time (it must fold to a constant at import time)");
    running = known->front() != 0;
    for (unsigned i = 0; i < numCarried; ++i)
      carried[i] = (*out)[1 + i];
    for (unsigned k = 0; k < numScanOutputs; ++k)
      parts[k].push_back((*out)[1 + numCarried + k]);
  }
  SmallVector<Value> results(carried);
  for (unsigned k = 0; k < numScanOutputs; ++k) {
    if (parts[k].empty())
      return b.unsupported("a Loop that runs 0 times and has scan outputs "
                           "(their shape is not known)");
    FailureOr<Value> stacked = stackParts(b, parts[k], 0);
    if (failed(stacked))
      return failure();
    results.push_back(*stacked);
  }
  results.resize(b.numOutputs());
  return b.setOutputs(results);
}

} // namespace

/// The parts stacked along a new dim `axis` (each part gets a unit dim there).
FailureOr<Value> stackParts(NodeBinder &b, ArrayRef<Value> parts, int64_t axis) {
  SmallVector<Value> wide;
  for (Value part : parts) {
    if (isComposite(part))
      return b.unsupported(compositeKind(part) +
                           " as a scan output (scan outputs are stacked tensors)");
    FailureOr<Value> unit = b.make<kiln::UnsqueezeOp>(part, ArrayRef<int64_t>{axis});
    if (failed(unit))
      return failure();
    wide.push_back(*unit);
  }
  if (wide.size() == 1)
    return wide.front();
  return b.make<kiln::ConcatOp>(ValueRange(wide), static_cast<uint64_t>(axis));
}

void registerControlFlowHandlers(HandlerRegistry &r) {
  r.add("If", 1, ifNode);
  r.add("Scan", 8, scanNode);
  r.add("Loop", 1, loopNode);
}

} // namespace kiln::onnx_import
