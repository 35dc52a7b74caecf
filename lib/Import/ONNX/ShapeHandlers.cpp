//===- ShapeHandlers.cpp - ONNX data movement and shape ops ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Most of these ops moved their index lists (axes, pads, split sizes, slice
// bounds) from attributes to inputs over the opsets; kiln takes them as
// attributes, so such inputs must be constants at import time. Reshape and
// Expand are the exception: a computed shape becomes the shape operand and
// the result dims stay dynamic.
//
//===----------------------------------------------------------------------===//

#include "DynamicSlice.h"
#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

static constexpr int64_t kDyn = ShapedType::kDynamic;

/// Integer values from an attribute before `inputOpset`, from constant input
/// `index` from then on; `absent` when neither is given.
FailureOr<std::optional<SmallVector<int64_t>>>
intsAttrOrInput(NodeBinder &b, StringRef name, unsigned index, int64_t inputOpset) {
  if (b.opset() >= inputOpset) {
    if (!b.hasInput(index))
      return std::optional<SmallVector<int64_t>>();
    FailureOr<SmallVector<int64_t>> values =
        b.requireConstantInts(index, ("'" + name + "'").str());
    if (failed(values))
      return failure();
    return std::optional<SmallVector<int64_t>>(*values);
  }
  if (!b.hasAttr(name))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> values = b.intsAttr(name, std::nullopt);
  if (failed(values))
    return failure();
  return std::optional<SmallVector<int64_t>>(*values);
}

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

/// Result dims of a constant ONNX shape: 0 copies the input dim (unless
/// allowzero), -1 is inferred. A dynamic input dim that is copied cancels
/// against itself, so `[0, -1]` of `?x8x4` still gives `?x32`.
FailureOr<SmallVector<int64_t>> resolveStaticShape(NodeBinder &b,
                                                   RankedTensorType input,
                                                   ArrayRef<int64_t> shape,
                                                   bool allowZero) {
  if (allowZero && llvm::is_contained(shape, 0) && llvm::is_contained(shape, -1))
    return b.emitError() << "shape has both a 0 and a -1 entry, which "
                            "allowzero = 1 forbids (the -1 would divide by 0)";
  SmallVector<int64_t> dims;
  SmallVector<bool> inputUsed(input.getRank(), false);
  int64_t inferred = -1;
  for (auto [i, entry] : llvm::enumerate(shape)) {
    if (entry == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= input.getRank())
        return b.emitError() << "shape entry " << i << " is 0 (copy the input "
                             << "dim) but the input has rank " << input.getRank();
      dims.push_back(input.getDimSize(i));
      inputUsed[i] = true;
      continue;
    }
    if (entry == -1) {
      if (inferred >= 0)
        return b.emitError() << "shape has more than one -1 entry";
      inferred = i;
      dims.push_back(kDyn);
      continue;
    }
    if (entry < -1)
      return b.emitError() << "shape entry " << i << " is " << entry
                           << ", accepted range is [-1, inf)";
    dims.push_back(entry);
  }
  if (inferred < 0)
    return dims;
  int64_t numerator = 1, denominator = 1;
  bool known = true;
  for (auto [i, d] : llvm::enumerate(input.getShape())) {
    if (inputUsed[i])
      continue; // cancels with the copied result dim
    known &= !ShapedType::isDynamic(d);
    if (known && llvm::MulOverflow(numerator, d, numerator))
      return b.emitError() << "input element count overflows int64";
  }
  for (auto [i, d] : llvm::enumerate(dims))
    if (static_cast<int64_t>(i) != inferred && !(shape[i] == 0 && !allowZero))
      denominator *= d;
  if (known && denominator != 0) {
    if (numerator % denominator != 0)
      return b.emitError() << "cannot reshape " << input << " to the given "
                           << "shape: " << numerator << " elements do not "
                           << "divide into parts of " << denominator;
    dims[inferred] = numerator / denominator;
  }
  return dims;
}

/// Builds the resolved shape operand (no 0 or -1 left) at run time:
///   s = select(s == 0, shape(x)[:n], s); s = select(s == -1, size(x) / prod(s'), s)
FailureOr<Value> resolveDynamicShape(NodeBinder &b, Value x, Value shape,
                                     int64_t n, bool zeros, bool minusOne) {
  RankedTensorType input = tensorType(x);
  Type i64 = b.builder().getI64Type();
  auto vecType = RankedTensorType::get({n}, i64);
  Value s = shape;
  if (zeros) {
    FailureOr<Value> dims = b.make<kiln::ShapeOp>(x, IntegerAttr(), IntegerAttr());
    if (failed(dims))
      return failure();
    int64_t r = input.getRank();
    FailureOr<Value> firstN =
        r >= n ? b.make<kiln::SliceOp>(*dims, ArrayRef<int64_t>{0},
                                       ArrayRef<int64_t>{n}, ArrayRef<int64_t>{0},
                                       ArrayRef<int64_t>{1})
               : b.make<kiln::ConcatOp>(
                     ValueRange{*dims, b.i64Vector(SmallVector<int64_t>(n - r, 1))},
                     static_cast<uint64_t>(0));
    if (failed(firstN))
      return failure();
    FailureOr<Value> isZero = b.make<kiln::EqualOp>(s, b.scalar(i64, 0));
    if (failed(isZero))
      return failure();
    FailureOr<Value> next = b.make<kiln::SelectOp>(*isZero, *firstN, s);
    if (failed(next))
      return failure();
    s = *next;
  }
  if (!minusOne)
    return s;
  FailureOr<Value> isNeg = b.make<kiln::EqualOp>(s, b.scalar(i64, -1));
  if (failed(isNeg))
    return failure();
  FailureOr<Value> known = b.make<kiln::SelectOp>(*isNeg, b.scalar(i64, 1), s);
  if (failed(known))
    return failure();
  FailureOr<Value> product = b.make<kiln::ReduceOp>(
      *known, ReduceKind::prod, ArrayRef<int64_t>{0}, true);
  FailureOr<Value> total = b.make<kiln::SizeOp>(x);
  if (failed(product) || failed(total))
    return failure();
  FailureOr<Value> missing = b.make<kiln::DivOp>(*total, *product);
  if (failed(missing))
    return failure();
  FailureOr<Value> out = b.make<kiln::SelectOp>(*isNeg, *missing, s);
  if (failed(out) || tensorType(*out) != vecType)
    return failed(out) ? failure() : b.emitError() << "internal: bad shape type";
  return *out;
}

LogicalResult reshape(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> allowZero = b.intAttr("allowzero", 0);
  if (failed(x) || failed(allowZero) ||
      failed(b.checkRange("attribute 'allowzero'", *allowZero, 0, 1)))
    return failure();
  RankedTensorType input = tensorType(*x);
  FailureOr<Value> shapeInput = b.input(1);
  if (failed(shapeInput))
    return failure();
  Value shapeValue = *shapeInput;
  std::optional<SmallVector<int64_t>> shape = b.constantInts(1);
  if (shape) {
    FailureOr<SmallVector<int64_t>> dims =
        resolveStaticShape(b, input, *shape, *allowZero);
    if (failed(dims))
      return failure();
    auto type = RankedTensorType::get(*dims, input.getElementType());
    Value operand;
    if (!type.hasStaticShape()) {
      bool zeros = !*allowZero && llvm::is_contained(*shape, 0);
      FailureOr<Value> resolved = resolveDynamicShape(
          b, *x, b.i64Vector(*shape), shape->size(), zeros,
          llvm::is_contained(*shape, -1));
      if (failed(resolved))
        return failure();
      operand = *resolved;
    }
    FailureOr<Value> out = b.makeTyped<kiln::ReshapeOp>(type, *x, operand);
    return failed(out) ? failure() : b.setOutput(0, *out);
  }
  RankedTensorType shapeType = tensorType(shapeValue);
  if (shapeType.getRank() != 1 || shapeType.isDynamicDim(0) ||
      !shapeType.getElementType().isInteger(64))
    return b.emitError() << "unsupported: a computed shape must be a 1-D i64 "
                            "tensor of known length, got "
                         << shapeType;
  int64_t n = shapeType.getDimSize(0);
  if (failed(b.checkComputedRank(n)))
    return failure();
  FailureOr<Value> resolved =
      resolveDynamicShape(b, *x, shapeValue, n, !*allowZero, true);
  if (failed(resolved))
    return failure();
  auto type = RankedTensorType::get(SmallVector<int64_t>(n, kDyn),
                                    input.getElementType());
  FailureOr<Value> out = b.makeTyped<kiln::ReshapeOp>(type, *x, *resolved);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// Expand, Transpose, Concat, Split, Slice
//===----------------------------------------------------------------------===//

LogicalResult expand(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), shapeValue = b.input(1);
  if (failed(x) || failed(shapeValue))
    return failure();
  RankedTensorType input = tensorType(*x);
  RankedTensorType shapeType = tensorType(*shapeValue);
  if (shapeType.getRank() != 1 || shapeType.isDynamicDim(0))
    return b.unsupported("the shape input must be 1-D with a known length");
  int64_t n = shapeType.getDimSize(0), r = input.getRank();
  std::optional<SmallVector<int64_t>> shape = b.constantInts(1);
  if (!shape && failed(b.checkComputedRank(n)))
    return failure();
  for (auto [i, d] : llvm::enumerate(shape ? *shape : SmallVector<int64_t>()))
    if (d < 0)
      return b.emitError() << "shape entry " << i << " is " << d
                           << ", accepted range is [0, inf)";
  // A shorter shape broadcasts like one padded with leading 1s.
  SmallVector<int64_t> target(std::max<int64_t>(r - n, 0), 1);
  if (shape)
    llvm::append_range(target, *shape);
  else
    target.append(n, kDyn);
  FailureOr<SmallVector<int64_t>> dims =
      kiln::broadcastShapes(b.loc(), {input.getShape(), target});
  if (failed(dims))
    return failure();
  auto type = RankedTensorType::get(*dims, input.getElementType());
  Value operand;
  if (!type.hasStaticShape()) {
    operand = shape ? b.i64Vector(target) : *shapeValue;
    if (!shape && r > n) {
      FailureOr<Value> padded = b.make<kiln::ConcatOp>(
          ValueRange{b.i64Vector(SmallVector<int64_t>(r - n, 1)), operand},
          static_cast<uint64_t>(0));
      if (failed(padded))
        return failure();
      operand = *padded;
    }
  }
  FailureOr<Value> out = b.makeTyped<kiln::ExpandOp>(type, *x, operand);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult transpose(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  auto reversed = llvm::to_vector(
      llvm::reverse(llvm::seq<int64_t>(0, tensorType(*x).getRank())));
  FailureOr<SmallVector<int64_t>> perm = b.intsAttr("perm", ArrayRef(reversed));
  if (failed(perm))
    return failure();
  FailureOr<Value> out = b.make<kiln::TransposeOp>(*x, ArrayRef(*perm));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult concat(NodeBinder &b) {
  SmallVector<Value> inputs = b.givenInputs();
  FailureOr<int64_t> axis = b.intAttr("axis", std::nullopt);
  if (failed(axis))
    return failure();
  if (inputs.empty())
    return b.emitError() << "needs at least one input";
  FailureOr<int64_t> normalized = kiln::normalizeAxis(
      b.loc(), "axis", *axis, tensorType(inputs.front()).getRank());
  if (failed(normalized))
    return failure();
  FailureOr<Value> out =
      b.make<kiln::ConcatOp>(ValueRange(inputs), static_cast<uint64_t>(*normalized));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// Split sizes when none are given: equal parts, or at opset 18 with
/// `num_outputs`, ceil-sized parts with a smaller last one.
FailureOr<SmallVector<int64_t>> defaultSplit(NodeBinder &b, int64_t length) {
  FailureOr<int64_t> numOutputs = b.intAttr("num_outputs", b.numOutputs());
  // Bounded by the node's outputs before any per-part work (a huge value
  // would allocate that many sizes).
  if (failed(numOutputs) ||
      failed(b.checkRange("attribute 'num_outputs'", *numOutputs, 1,
                          static_cast<int64_t>(b.numOutputs()))))
    return failure();
  int64_t n = *numOutputs;
  if (ShapedType::isDynamic(length))
    return b.unsupported("splitting a dynamic dim without explicit sizes");
  if (!b.hasAttr("num_outputs") && length % n != 0)
    return b.emitError() << "the axis length " << length
                         << " does not divide into " << n << " equal parts";
  int64_t chunk = (length + n - 1) / n;
  SmallVector<int64_t> sizes;
  for (int64_t i = 0, left = length; i < n; ++i, left -= chunk)
    sizes.push_back(std::max<int64_t>(0, std::min(chunk, left)));
  return sizes;
}

LogicalResult split(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> axis = b.intAttr("axis", 0);
  if (failed(x) || failed(axis))
    return failure();
  RankedTensorType input = tensorType(*x);
  FailureOr<int64_t> normalized =
      kiln::normalizeAxis(b.loc(), "axis", *axis, input.getRank());
  if (failed(normalized))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> given =
      intsAttrOrInput(b, "split", 1, 13);
  if (failed(given))
    return failure();
  FailureOr<SmallVector<int64_t>> sizes =
      *given ? FailureOr<SmallVector<int64_t>>(**given)
             : defaultSplit(b, input.getDimSize(*normalized));
  if (failed(sizes))
    return failure();
  if (sizes->size() != b.numOutputs())
    return b.emitError() << "split has " << sizes->size()
                         << " parts but the node has " << b.numOutputs()
                         << " outputs";
  // A 1-D integer constant (a shape taken apart, as in function bodies) is
  // split into slices, which fold: the parts stay constants.
  if (input.getRank() == 1 && isa<IntegerType>(input.getElementType()) &&
      b.constantInts(0)) {
    SmallVector<Value> parts;
    int64_t start = 0;
    for (int64_t size : *sizes) {
      FailureOr<Value> part = b.make<kiln::SliceOp>(
          *x, ArrayRef<int64_t>{start}, ArrayRef<int64_t>{start + size},
          ArrayRef<int64_t>{0}, ArrayRef<int64_t>{1});
      if (failed(part))
        return failure();
      parts.push_back(*part);
      start += size;
    }
    return b.setOutputs(parts);
  }
  FailureOr<kiln::SplitOp> op = b.build<kiln::SplitOp>(
      *x, static_cast<uint64_t>(*normalized), ArrayRef(*sizes));
  return failed(op) ? failure() : b.setOutputs(op->getResults());
}

LogicalResult slice(NodeBinder &b) {
  if (hasComputedSliceBounds(b))
    return importDynamicSlice(b);
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  auto read = [&](StringRef name, unsigned index) {
    return intsAttrOrInput(b, name, index, 10);
  };
  FailureOr<std::optional<SmallVector<int64_t>>> starts = read("starts", 1);
  if (failed(starts))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> ends = read("ends", 2);
  if (failed(ends))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axes = read("axes", 3);
  if (failed(axes))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> steps = read("steps", 4);
  if (failed(steps))
    return failure();
  if (!*starts || !*ends)
    return b.emitError() << "'starts' and 'ends' are required";
  size_t n = (*starts)->size();
  SmallVector<int64_t> axisList = *axes ? **axes
                                        : llvm::to_vector(llvm::seq<int64_t>(0, n));
  SmallVector<int64_t> stepList = *steps ? **steps : SmallVector<int64_t>(n, 1);
  if ((*ends)->size() != n || axisList.size() != n || stepList.size() != n)
    return b.emitError() << "'starts', 'ends', 'axes' and 'steps' have "
                            "different lengths";
  FailureOr<SmallVector<int64_t>> normalized =
      kiln::normalizeAxes(b.loc(), "axes", axisList, rank);
  if (failed(normalized))
    return failure();
  FailureOr<Value> out = b.make<kiln::SliceOp>(*x, ArrayRef(**starts),
                                               ArrayRef(**ends),
                                               ArrayRef(*normalized),
                                               ArrayRef(stepList));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

/// kiln index operands are i32 or i64; other integer indices are widened.
FailureOr<Value> indexOperand(NodeBinder &b, unsigned i) {
  FailureOr<Value> indices = b.input(i);
  if (failed(indices))
    return failure();
  Type element = tensorType(*indices).getElementType();
  if (element.isSignlessInteger(32) || element.isSignlessInteger(64))
    return *indices;
  if (!isa<IntegerType>(element))
    return b.emitError() << "input " << i << " (indices) has element type "
                         << element << ", expected an integer type";
  auto type = RankedTensorType::get(tensorType(*indices).getShape(),
                                    b.builder().getI64Type());
  return b.makeTyped<kiln::CastOp>(type, *indices);
}

template <typename OpTy>
LogicalResult gather(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<Value> indices = indexOperand(b, 1);
  FailureOr<int64_t> axis = b.intAttr("axis", 0);
  if (failed(x) || failed(indices) || failed(axis))
    return failure();
  FailureOr<int64_t> normalized =
      kiln::normalizeAxis(b.loc(), "axis", *axis, tensorType(*x).getRank());
  if (failed(normalized))
    return failure();
  FailureOr<Value> out =
      b.make<OpTy>(*x, *indices, static_cast<uint64_t>(*normalized));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult gatherND(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<Value> indices = indexOperand(b, 1);
  FailureOr<int64_t> batchDims = b.intAttr("batch_dims", 0);
  if (failed(x) || failed(indices) || failed(batchDims))
    return failure();
  FailureOr<Value> out =
      b.make<kiln::GatherNDOp>(*x, *indices, static_cast<uint64_t>(*batchDims));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult scatterElements(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), updates = b.input(2);
  FailureOr<Value> indices = indexOperand(b, 1);
  FailureOr<int64_t> axis = b.intAttr("axis", 0);
  FailureOr<std::string> reduction = b.stringAttr("reduction", "none");
  if (failed(x) || failed(updates) || failed(indices) || failed(axis) ||
      failed(reduction))
    return failure();
  std::optional<ScatterReduction> kind = symbolizeScatterReduction(*reduction);
  if (!kind)
    return b.emitError() << "attribute 'reduction' value is '" << *reduction
                         << "', accepted values are none, add, mul, max, min";
  FailureOr<int64_t> normalized =
      kiln::normalizeAxis(b.loc(), "axis", *axis, tensorType(*x).getRank());
  if (failed(normalized))
    return failure();
  FailureOr<Value> out = b.make<kiln::ScatterElementsOp>(
      *x, *indices, *updates, static_cast<uint64_t>(*normalized), *kind);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// Squeeze, Unsqueeze, Flatten, Pad, Tile, Shape, Size
//===----------------------------------------------------------------------===//

template <bool isUnsqueeze>
LogicalResult squeeze(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      intsAttrOrInput(b, "axes", 1, 13);
  if (failed(axes))
    return failure();
  if (isUnsqueeze && !*axes)
    return b.emitError() << "'axes' is required";
  SmallVector<int64_t> list = *axes ? **axes : SmallVector<int64_t>();
  int64_t rank = tensorType(*x).getRank() + (isUnsqueeze ? list.size() : 0);
  FailureOr<SmallVector<int64_t>> normalized =
      kiln::normalizeAxes(b.loc(), "axes", list, rank);
  if (failed(normalized))
    return failure();
  FailureOr<Value> out =
      isUnsqueeze ? b.make<kiln::UnsqueezeOp>(*x, ArrayRef(*normalized))
                  : b.make<kiln::SqueezeOp>(*x, ArrayRef(*normalized));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult flatten(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> axis = b.intAttr("axis", 1);
  if (failed(x) || failed(axis))
    return failure();
  int64_t rank = tensorType(*x).getRank();
  if (failed(b.checkRange("'axis'", *axis, -rank, rank)))
    return failure();
  int64_t normalized = *axis < 0 ? *axis + rank : *axis;
  FailureOr<Value> out =
      b.make<kiln::FlattenOp>(*x, static_cast<uint64_t>(normalized));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// Pad amounts for every dim from amounts for `axes` (opset 18).
FailureOr<SmallVector<int64_t>> fullPads(NodeBinder &b, ArrayRef<int64_t> pads,
                                         int64_t rank) {
  FailureOr<std::optional<SmallVector<int64_t>>> axes =
      intsAttrOrInput(b, "axes", 3, 18);
  if (failed(axes))
    return failure();
  if (!*axes || b.opset() < 18) {
    if (static_cast<int64_t>(pads.size()) != 2 * rank)
      return b.emitError() << "'pads' has " << pads.size()
                           << " entries, expected " << 2 * rank;
    return SmallVector<int64_t>(pads);
  }
  FailureOr<SmallVector<int64_t>> normalized =
      kiln::normalizeAxes(b.loc(), "axes", **axes, rank);
  if (failed(normalized))
    return failure();
  size_t n = normalized->size();
  if (pads.size() != 2 * n)
    return b.emitError() << "'pads' has " << pads.size() << " entries, expected "
                         << 2 * n << " (two per axis)";
  SmallVector<int64_t> full(2 * rank, 0);
  for (auto [i, axis] : llvm::enumerate(*normalized)) {
    full[axis] = pads[i];
    full[axis + rank] = pads[i + n];
  }
  return full;
}

LogicalResult pad(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<std::string> modeName = b.stringAttr("mode", "constant");
  if (failed(x) || failed(modeName))
    return failure();
  std::optional<PadMode> mode = symbolizePadMode(*modeName);
  if (!mode || (*mode == PadMode::wrap && b.opset() < 19))
    return b.emitError() << "attribute 'mode' value is '" << *modeName
                         << "', accepted values are constant, reflect, edge"
                         << (b.opset() >= 19 ? ", wrap" : "");
  FailureOr<SmallVector<int64_t>> pads;
  double value = 0.0;
  // A constant_value computed by the graph (constant mode only: the other
  // modes ignore it).
  Value runtimeValue;
  if (b.opset() < 11) {
    pads = b.intsAttr("pads", std::nullopt);
    FailureOr<float> attr = b.floatAttr("value", 0.0f);
    if (failed(attr))
      return failure();
    value = *attr;
  } else {
    pads = b.requireConstantInts(1, "'pads'");
    if (succeeded(pads) && b.hasInput(2) && *mode == PadMode::constant &&
        !b.constantFloats(2) && tensorType(*x).hasStaticShape()) {
      FailureOr<Value> given = b.input(2);
      if (failed(given))
        return failure();
      RankedTensorType valueType = tensorType(*given);
      if (!valueType.hasStaticShape() || valueType.getNumElements() != 1)
        return b.emitError() << "'constant_value' has " << valueType
                             << ", expected one element";
      runtimeValue = *given;
    } else if (succeeded(pads) && b.hasInput(2)) {
      FailureOr<SmallVector<double>> given =
          b.requireConstantFloats(2, "'constant_value'");
      if (failed(given))
        return failure();
      if (given->size() != 1)
        return b.emitError() << "'constant_value' has " << given->size()
                             << " elements, expected 1";
      value = given->front();
    }
  }
  if (failed(pads))
    return failure();
  FailureOr<SmallVector<int64_t>> full =
      fullPads(b, *pads, tensorType(*x).getRank());
  if (failed(full))
    return failure();
  FailureOr<Value> out =
      b.make<kiln::PadOp>(*x, *mode, ArrayRef(*full), APFloat(value));
  if (failed(out) || !runtimeValue)
    return failed(out) ? failure() : b.setOutput(0, *out);
  // The run-time fill: select(pad(true, false), pad(x, 0), constant_value),
  // the mask marking where the padded result holds x.
  RankedTensorType xType = tensorType(*x);
  auto maskType = RankedTensorType::get(xType.getShape(), b.builder().getI1Type());
  Value ones = b.constant(DenseElementsAttr::get(maskType, true));
  FailureOr<Value> mask =
      b.make<kiln::PadOp>(ones, PadMode::constant, ArrayRef(*full), APFloat(0.0));
  if (failed(mask))
    return failure();
  FailureOr<Value> filled = b.make<kiln::SelectOp>(*mask, *out, runtimeValue);
  return failed(filled) ? failure() : b.setOutput(0, *filled);
}

LogicalResult tile(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> repeats = b.requireConstantInts(1, "'repeats'");
  if (failed(repeats))
    return failure();
  FailureOr<Value> out = b.make<kiln::TileOp>(*x, ArrayRef(*repeats));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult shape(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  IntegerAttr bounds[2];
  static constexpr StringRef kNames[] = {"start", "end"};
  for (auto [i, name] : llvm::enumerate(kNames)) {
    if (!b.hasAttr(name))
      continue;
    FailureOr<int64_t> value = b.intAttr(name, std::nullopt);
    if (failed(value))
      return failure();
    bounds[i] = b.builder().getI64IntegerAttr(*value);
  }
  FailureOr<Value> out = b.make<kiln::ShapeOp>(*x, bounds[0], bounds[1]);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult size(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> out = b.make<kiln::SizeOp>(*x);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// DepthToSpace / SpaceToDepth: a reshape that splits the moved dims, a
/// transpose that orders them (DCR: blocks before channels, CRD: after), and
/// a reshape that merges them.
template <bool toSpace>
LogicalResult depthSpace(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> bs = b.intAttr("blocksize", std::nullopt);
  FailureOr<std::string> mode = b.stringAttr("mode", StringRef("DCR"));
  if (failed(x) || failed(bs) || failed(mode) ||
      failed(b.checkRange("attribute 'blocksize'", *bs, 1, std::nullopt)))
    return failure();
  if (*mode != "DCR" && *mode != "CRD")
    return b.emitError() << "attribute 'mode' value is '" << *mode
                         << "', accepted values are DCR and CRD";
  bool dcr = *mode == "DCR";
  RankedTensorType type = tensorType(*x);
  if (type.getRank() != 4)
    return b.emitError() << "input 0 has rank " << type.getRank() << ", expected 4";
  if (!type.hasStaticShape())
    return b.unsupported(b.opType() + " of dynamic dims");
  int64_t n = type.getDimSize(0), c = type.getDimSize(1), h = type.getDimSize(2),
          w = type.getDimSize(3), k = *bs;
  SmallVector<int64_t> split, perm, merged;
  if (toSpace) {
    if (c % (k * k) != 0)
      return b.emitError() << "channels " << c << " are not a multiple of blocksize^2 "
                           << k * k;
    int64_t out = c / (k * k);
    split = dcr ? SmallVector<int64_t>{n, k, k, out, h, w}
                : SmallVector<int64_t>{n, out, k, k, h, w};
    perm = dcr ? SmallVector<int64_t>{0, 3, 4, 1, 5, 2} : SmallVector<int64_t>{0, 1, 4, 2, 5, 3};
    merged = {n, out, h * k, w * k};
  } else {
    if (h % k != 0 || w % k != 0)
      return b.emitError() << "spatial dims " << h << "x" << w
                           << " are not multiples of blocksize " << k;
    split = {n, c, h / k, k, w / k, k};
    perm = dcr ? SmallVector<int64_t>{0, 3, 5, 1, 2, 4} : SmallVector<int64_t>{0, 1, 3, 5, 2, 4};
    merged = {n, c * k * k, h / k, w / k};
  }
  auto reshapeTo = [&](Value v, ArrayRef<int64_t> shape) {
    return b.makeTyped<kiln::ReshapeOp>(RankedTensorType::get(shape, type.getElementType()),
                                        v, b.i64Vector(shape));
  };
  FailureOr<Value> blocks = reshapeTo(*x, split);
  FailureOr<Value> moved =
      succeeded(blocks) ? b.make<kiln::TransposeOp>(*blocks, ArrayRef(perm)) : blocks;
  FailureOr<Value> out = succeeded(moved) ? reshapeTo(*moved, merged) : moved;
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

void registerShapeHandlers(HandlerRegistry &r) {
  r.add("DepthToSpace", 7, depthSpace<true>);
  r.add("SpaceToDepth", 7, depthSpace<false>);
  r.add("Reshape", 7, reshape);
  r.add("Expand", 8, expand);
  r.add("Transpose", 1, transpose); // Transpose-13 adds types only
  r.add("Concat", 7, concat);
  r.add("Split", 7, split);
  r.add("Slice", 7, slice);
  r.add("Gather", 7, gather<kiln::GatherOp>);
  r.add("GatherElements", 11, gather<kiln::GatherElementsOp>);
  r.add("GatherND", 11, gatherND);
  r.add("Scatter", 9, scatterElements); // ScatterElements' former name
  r.add("ScatterElements", 11, scatterElements);
  r.add("Squeeze", 7, squeeze<false>);
  r.add("Unsqueeze", 7, squeeze<true>);
  r.add("Flatten", 7, flatten);
  r.add("Pad", 7, pad);
  r.add("Tile", 7, tile);
  r.add("Shape", 7, shape);
  r.add("Size", 7, size);
}

} // namespace kiln::onnx_import
