//===- NNHandlers.cpp - ONNX contractions, convolutions, pooling, norms ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The kiln ops here take explicit windows (strides, dilations, begin/end
// pads), so the handlers resolve ONNX's defaults and `auto_pad` first: SAME
// padding becomes explicit pads from the static spatial dims.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::onnx_import {
namespace {

LogicalResult matmul(NodeBinder &b) {
  FailureOr<Value> lhs = b.input(0), rhs = b.input(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> out = b.make<kiln::MatmulOp>(*lhs, *rhs);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult gemm(NodeBinder &b) {
  FailureOr<Value> a = b.input(0), bm = b.input(1);
  FailureOr<float> alpha = b.floatAttr("alpha", 1.0f);
  FailureOr<float> beta = b.floatAttr("beta", 1.0f);
  FailureOr<int64_t> transA = b.intAttr("transA", 0);
  FailureOr<int64_t> transB = b.intAttr("transB", 0);
  if (failed(a) || failed(bm) || failed(alpha) || failed(beta) ||
      failed(transA) || failed(transB) ||
      failed(b.checkRange("attribute 'transA'", *transA, 0, 1)) ||
      failed(b.checkRange("attribute 'transB'", *transB, 0, 1)))
    return failure();
  FailureOr<Value> out = b.make<kiln::GemmOp>(
      *a, *bm, b.optionalInput(2), APFloat(*alpha), APFloat(*beta),
      *transA == 1, *transB == 1);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// Windows: kernel, strides, dilations, pads with auto_pad resolved
//===----------------------------------------------------------------------===//

struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
  std::string autoPad;
};

LogicalResult checkLength(NodeBinder &b, StringRef name, ArrayRef<int64_t> values,
                          size_t expected) {
  if (values.size() == expected)
    return success();
  return b.emitError() << "attribute '" << name << "' has " << values.size()
                       << " entries, expected " << expected;
}

/// Reads the window attributes of a node whose input is `[N, C, D1..Dk]`;
/// `weightKernel` is the default kernel (a conv's weight dims) when known.
FailureOr<Window> readWindow(NodeBinder &b, RankedTensorType input,
                             std::optional<ArrayRef<int64_t>> weightKernel) {
  if (input.getRank() < 3)
    return b.emitError() << "input has rank " << input.getRank()
                         << ", expected at least 3 ([N, C, D1..Dk])";
  size_t k = input.getRank() - 2;
  SmallVector<int64_t> ones(k, 1), zeros(2 * k, 0);
  Window w;
  FailureOr<SmallVector<int64_t>> kernel = b.intsAttr("kernel_shape", weightKernel);
  FailureOr<SmallVector<int64_t>> strides = b.intsAttr("strides", ArrayRef(ones));
  FailureOr<SmallVector<int64_t>> dilations =
      b.intsAttr("dilations", ArrayRef(ones));
  FailureOr<SmallVector<int64_t>> pads = b.intsAttr("pads", ArrayRef(zeros));
  FailureOr<std::string> autoPad = b.stringAttr("auto_pad", "NOTSET");
  if (failed(kernel) || failed(strides) || failed(dilations) || failed(pads) ||
      failed(autoPad) || failed(checkLength(b, "kernel_shape", *kernel, k)) ||
      failed(checkLength(b, "strides", *strides, k)) ||
      failed(checkLength(b, "dilations", *dilations, k)) ||
      failed(checkLength(b, "pads", *pads, 2 * k)))
    return failure();
  for (auto [name, values, lo] :
       {std::tuple<StringRef, ArrayRef<int64_t>, int64_t>{"kernel_shape", *kernel, 1},
        {"strides", *strides, 1},
        {"dilations", *dilations, 1},
        {"pads", *pads, 0}})
    for (int64_t v : values)
      if (failed(b.checkRange(("attribute '" + name + "'").str(), v, lo, {})))
        return failure();
  w.kernel = *kernel, w.strides = *strides, w.dilations = *dilations;
  w.pads = *pads, w.autoPad = *autoPad;
  if (w.autoPad == "NOTSET")
    return w;
  if (w.autoPad == "VALID") {
    w.pads = zeros;
    return w;
  }
  if (w.autoPad != "SAME_UPPER" && w.autoPad != "SAME_LOWER")
    return b.emitError() << "attribute 'auto_pad' value is '" << w.autoPad
                         << "', accepted values are NOTSET, SAME_UPPER, "
                            "SAME_LOWER and VALID";
  return w;
}

/// SAME padding for a forward window: output = ceil(input / stride).
LogicalResult resolveSamePads(NodeBinder &b, RankedTensorType input, Window &w) {
  if (w.autoPad != "SAME_UPPER" && w.autoPad != "SAME_LOWER")
    return success();
  size_t k = w.kernel.size();
  for (size_t i = 0; i < k; ++i) {
    int64_t in = input.getDimSize(i + 2);
    if (ShapedType::isDynamic(in))
      return b.unsupported("auto_pad " + w.autoPad +
                           " needs static spatial dims, but dim " + Twine(i + 2) +
                           " is dynamic");
    // (out - 1) * stride + span - in with out = ceil(in / stride), checked:
    // strides, dilations and kernels are attributes up to 2^63 - 1.
    std::optional<int64_t> out = CheckedI64(in).add(w.strides[i] - 1).get();
    std::optional<int64_t> span =
        CheckedI64(w.kernel[i] - 1).mul(w.dilations[i]).add(1).get();
    std::optional<int64_t> need =
        out && span ? CheckedI64(*out / w.strides[i] - 1)
                          .mul(w.strides[i])
                          .add(*span)
                          .sub(in)
                          .get()
                    : std::nullopt;
    if (!need)
      return b.emitError() << "auto_pad " << w.autoPad << ": the padding of "
                           << "spatial dim " << i << " overflows int64";
    int64_t total = std::max<int64_t>(0, *need);
    int64_t small = total / 2, large = total - small;
    w.pads[i] = w.autoPad == "SAME_UPPER" ? small : large;
    w.pads[i + k] = w.autoPad == "SAME_UPPER" ? large : small;
  }
  return success();
}

/// The weight's spatial dims, the default kernel, when all are static.
std::optional<SmallVector<int64_t>> weightKernel(Value weight) {
  ArrayRef<int64_t> shape = tensorType(weight).getShape();
  if (shape.size() < 3 || llvm::any_of(shape.drop_front(2), ShapedType::isDynamic))
    return std::nullopt;
  return SmallVector<int64_t>(shape.drop_front(2));
}

LogicalResult checkKernelMatchesWeight(NodeBinder &b, const Window &w,
                                       Value weight) {
  std::optional<SmallVector<int64_t>> fromWeight = weightKernel(weight);
  if (!fromWeight || ArrayRef<int64_t>(*fromWeight) == ArrayRef(w.kernel))
    return success();
  InFlightDiagnostic diag = b.emitError() << "attribute 'kernel_shape' is [";
  llvm::interleaveComma(w.kernel, diag);
  diag << "] but the weight's spatial dims are [";
  llvm::interleaveComma(*fromWeight, diag);
  return diag << "]";
}

} // namespace

FailureOr<Value> buildConv(NodeBinder &b, Value x, Value weight, Value bias) {
  std::optional<SmallVector<int64_t>> kernel = weightKernel(weight);
  FailureOr<Window> w = readWindow(
      b, tensorType(x),
      kernel ? std::optional<ArrayRef<int64_t>>(*kernel) : std::nullopt);
  FailureOr<int64_t> group = b.intAttr("group", 1);
  if (failed(w) || failed(group) ||
      failed(b.checkRange("attribute 'group'", *group, 1, {})) ||
      failed(checkKernelMatchesWeight(b, *w, weight)) ||
      failed(resolveSamePads(b, tensorType(x), *w)))
    return failure();
  return b.make<kiln::ConvOp>(x, weight, bias, ArrayRef(w->strides), ArrayRef(w->dilations),
                              ArrayRef(w->pads), static_cast<uint64_t>(*group));
}

namespace {

LogicalResult conv(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), weight = b.input(1);
  if (failed(x) || failed(weight))
    return failure();
  FailureOr<Value> out = buildConv(b, *x, *weight, b.optionalInput(2));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// ConvTranspose pads from `output_shape` or SAME auto_pad (ONNX puts the odd
/// pixel at the end for SAME_UPPER). An output larger than the full window
/// sweep needs negative padding, which the ONNX reference splits with floor
/// division; a negative end pad is the same as that much more output_padding
/// (zeros plus bias past the last window), a negative begin pad is not
/// supported.
LogicalResult resolveTransposePads(NodeBinder &b, RankedTensorType input,
                                   Window &w, MutableArrayRef<int64_t> outputPadding) {
  FailureOr<SmallVector<int64_t>> outputShape =
      b.intsAttr("output_shape", ArrayRef<int64_t>());
  if (failed(outputShape))
    return failure();
  bool same = w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER";
  if (outputShape->empty() && !same)
    return success();
  size_t k = w.kernel.size();
  if (!outputShape->empty() && outputShape->size() < k)
    return b.emitError() << "attribute 'output_shape' has "
                         << outputShape->size() << " entries, expected " << k;
  for (size_t i = 0; i < k; ++i) {
    int64_t in = input.getDimSize(i + 2);
    if (ShapedType::isDynamic(in))
      return b.unsupported("output_shape/auto_pad need static spatial dims, but "
                           "dim " + Twine(i + 2) + " is dynamic");
    std::optional<int64_t> target =
        outputShape->empty() ? CheckedI64(in).mul(w.strides[i]).get()
                             : (*outputShape)[outputShape->size() - k + i];
    std::optional<int64_t> span =
        CheckedI64(w.kernel[i] - 1).mul(w.dilations[i]).add(1).get();
    std::optional<int64_t> need =
        target && span ? CheckedI64(in - 1)
                             .mul(w.strides[i])
                             .add(outputPadding[i])
                             .add(*span)
                             .sub(*target)
                             .get()
                       : std::nullopt;
    if (!need)
      return b.emitError() << "the padding of spatial dim " << i
                           << " overflows int64";
    int64_t total = *need;
    int64_t half = llvm::divideFloorSigned(total, 2);
    bool upper = w.autoPad == "SAME_UPPER";
    w.pads[i] = upper ? half : total - half;
    w.pads[i + k] = upper ? total - half : half;
    if (w.pads[i] < 0)
      return b.unsupported("output size " + Twine(*target) + " in spatial dim " +
                           Twine(i) + " needs negative padding in front");
    if (w.pads[i + k] < 0) {
      outputPadding[i] -= w.pads[i + k];
      w.pads[i + k] = 0;
    }
  }
  return success();
}

LogicalResult convTranspose(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), weight = b.input(1);
  if (failed(x) || failed(weight))
    return failure();
  std::optional<SmallVector<int64_t>> kernel = weightKernel(*weight);
  FailureOr<Window> w = readWindow(
      b, tensorType(*x),
      kernel ? std::optional<ArrayRef<int64_t>>(*kernel) : std::nullopt);
  FailureOr<int64_t> group = b.intAttr("group", 1);
  if (failed(w) || failed(group) ||
      failed(b.checkRange("attribute 'group'", *group, 1, {})) ||
      failed(checkKernelMatchesWeight(b, *w, *weight)))
    return failure();
  SmallVector<int64_t> zeros(w->kernel.size(), 0);
  FailureOr<SmallVector<int64_t>> outputPadding =
      b.intsAttr("output_padding", ArrayRef(zeros));
  if (failed(outputPadding) ||
      failed(checkLength(b, "output_padding", *outputPadding, zeros.size())))
    return failure();
  // ONNX: each output_padding value is less than its stride or dilation.
  for (auto [i, pad] : llvm::enumerate(*outputPadding))
    if (failed(b.checkRange("attribute 'output_padding'", pad, 0,
                            std::max(w->strides[i], w->dilations[i]) - 1)))
      return failure();
  if (failed(resolveTransposePads(b, tensorType(*x), *w, *outputPadding)))
    return failure();
  FailureOr<Value> out = b.make<kiln::ConvTransposeOp>(
      *x, *weight, b.optionalInput(2), ArrayRef(w->strides),
      ArrayRef(w->dilations), ArrayRef(w->pads), ArrayRef(*outputPadding),
      static_cast<uint64_t>(*group));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

template <bool isMax>
LogicalResult pool(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  FailureOr<Window> w = readWindow(b, tensorType(*x), std::nullopt);
  FailureOr<int64_t> ceilMode = b.intAttr("ceil_mode", 0);
  FailureOr<int64_t> countPad = b.intAttr("count_include_pad", 0);
  if (failed(w) || failed(ceilMode) || failed(countPad) ||
      failed(b.checkRange("attribute 'ceil_mode'", *ceilMode, 0, 1)) ||
      failed(b.checkRange("attribute 'count_include_pad'", *countPad, 0, 1)) ||
      failed(resolveSamePads(b, tensorType(*x), *w)))
    return failure();
  FailureOr<Value> out;
  if constexpr (isMax) {
    out = b.make<kiln::MaxPoolOp>(*x, ArrayRef(w->kernel), ArrayRef(w->strides),
                                  ArrayRef(w->dilations), ArrayRef(w->pads),
                                  *ceilMode == 1);
    if (succeeded(out) && b.outputUsed(1) &&
        failed(maxPoolIndices(b, *x, *out, w->kernel, w->strides, w->dilations, w->pads,
                              *ceilMode == 1)))
      return failure();
  }
  else
    out = b.make<kiln::AvgPoolOp>(*x, ArrayRef(w->kernel), ArrayRef(w->strides),
                                  ArrayRef(w->dilations), ArrayRef(w->pads),
                                  *ceilMode == 1, *countPad == 1);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// LpPool: (sum over the window of |x|^p)^(1/p), built from kiln ops: the
/// window sum is an average pool that counts the (zero) padding, times the
/// window size. Ceil mode is refused: its overhang is not counted by the
/// average, so the product would not be the sum.
LogicalResult lpPool(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  FailureOr<Window> w = readWindow(b, tensorType(*x), std::nullopt);
  FailureOr<int64_t> ceilMode = b.intAttr("ceil_mode", 0);
  FailureOr<int64_t> p = b.intAttr("p", 2);
  if (failed(w) || failed(ceilMode) || failed(p) ||
      failed(b.checkRange("attribute 'ceil_mode'", *ceilMode, 0, 1)) ||
      failed(b.checkRange("attribute 'p'", *p, 1, {})) ||
      failed(resolveSamePads(b, tensorType(*x), *w)))
    return failure();
  if (*ceilMode != 0)
    return b.unsupported("LpPool with ceil_mode 1");
  Type element = tensorType(*x).getElementType();
  auto unary = [&](auto tag, Value v) -> FailureOr<Value> {
    return b.make<decltype(tag)>(v);
  };
  auto binary = [&](auto tag, Value l, Value r) -> FailureOr<Value> {
    return b.make<decltype(tag)>(l, r);
  };
  FailureOr<Value> powered = unary(kiln::AbsOp(), *x);
  if (succeeded(powered) && *p == 2)
    powered = binary(kiln::MulOp(), *powered, *powered);
  else if (succeeded(powered) && *p > 2)
    powered = binary(kiln::PowOp(), *powered, b.scalar(element, static_cast<double>(*p)));
  if (failed(powered))
    return failure();
  FailureOr<Value> mean = b.make<kiln::AvgPoolOp>(
      *powered, ArrayRef(w->kernel), ArrayRef(w->strides), ArrayRef(w->dilations),
      ArrayRef(w->pads), /*ceil_mode=*/false, /*count_include_pad=*/true);
  if (failed(mean))
    return failure();
  double count = 1;
  for (int64_t k : w->kernel)
    count *= static_cast<double>(k);
  FailureOr<Value> sum = binary(kiln::MulOp(), *mean, b.scalar(element, count));
  if (succeeded(sum) && *p == 2)
    sum = unary(kiln::SqrtOp(), *sum);
  else if (succeeded(sum) && *p > 2)
    sum = binary(kiln::PowOp(), *sum, b.scalar(element, 1.0 / static_cast<double>(*p)));
  return failed(sum) ? failure() : b.setOutput(0, *sum);
}

/// Einsum: the equation made explicit for kiln.einsum. Spaces go; each
/// "..." becomes letters the equation does not use (right-aligned across
/// operands, as ONNX broadcasts them; their sizes must then agree); an
/// implicit output is the ellipsis letters, then the letters used once, in
/// alphabetical order.
LogicalResult einsum(NodeBinder &b) {
  FailureOr<std::string> attr = b.stringAttr("equation", std::nullopt);
  if (failed(attr))
    return failure();
  SmallVector<Value> inputs = b.givenInputs();
  std::string equation;
  for (char c : *attr)
    if (c != ' ')
      equation += c;
  StringRef text(equation);
  bool explicitOutput = text.contains("->");
  auto [lhs, rhs] = text.split("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (terms.size() != inputs.size())
    return b.emitError() << "equation '" << *attr << "' has " << terms.size()
                         << " operand terms for " << inputs.size() << " inputs";
  std::string unused;
  for (char c = 'A'; c <= 'z'; ++c)
    if (llvm::isAlpha(c) && !text.contains(c))
      unused += c;
  // Ellipsis dims: as many as the operand with the most needs.
  int64_t ellipsis = 0;
  for (auto [term, input] : llvm::zip(terms, inputs)) {
    if (!term.contains("..."))
      continue;
    int64_t letters = static_cast<int64_t>(term.size()) - 3;
    ellipsis = std::max<int64_t>(ellipsis, tensorType(input).getRank() - letters);
  }
  if (ellipsis > static_cast<int64_t>(unused.size()))
    return b.unsupported("an ellipsis of " + Twine(ellipsis) + " dims");
  std::string ellipsisLetters = unused.substr(0, ellipsis);
  auto expand = [&](StringRef term, int64_t rank) -> std::string {
    size_t at = term.find("...");
    if (at == StringRef::npos)
      return term.str();
    int64_t count = rank - (static_cast<int64_t>(term.size()) - 3);
    if (count < 0)
      return term.str(); // the verifier reports the rank mismatch
    return (term.take_front(at) + StringRef(ellipsisLetters).take_back(count) +
            term.drop_front(at + 3))
        .str();
  };
  std::string normalized, counted;
  for (auto [i, term] : llvm::enumerate(terms)) {
    std::string full = expand(term, tensorType(inputs[i]).getRank());
    normalized += (i ? "," : "") + full;
    counted += full;
  }
  std::string output;
  if (explicitOutput) {
    if (rhs.contains("...") || ellipsis == 0)
      output = expand(rhs, static_cast<int64_t>(rhs.size()) - 3 + ellipsis);
    else
      output = rhs.str();
  } else {
    output = ellipsisLetters;
    std::string once;
    for (char c : counted)
      if (llvm::count(counted, c) == 1 && !StringRef(ellipsisLetters).contains(c))
        once += c;
    llvm::sort(once);
    output += once;
  }
  normalized += "->" + output;
  // The result dims: each letter's size from the first operand that has it.
  SmallVector<int64_t> shape;
  SmallVector<StringRef> fullTerms;
  StringRef(normalized).split("->").first.split(fullTerms, ',');
  for (char letter : output) {
    int64_t size = ShapedType::kDynamic;
    for (auto [term, input] : llvm::zip(fullTerms, inputs)) {
      size_t at = term.find(letter);
      if (at != StringRef::npos && at < static_cast<size_t>(tensorType(input).getRank())) {
        size = tensorType(input).getDimSize(at);
        break;
      }
    }
    shape.push_back(size);
  }
  if (inputs.empty())
    return b.emitError() << "Einsum has no inputs";
  auto type = RankedTensorType::get(shape, tensorType(inputs.front()).getElementType());
  FailureOr<Value> out =
      b.makeTyped<kiln::EinsumOp>(type, inputs, b.builder().getStringAttr(normalized));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// MeanVarianceNormalization as its ONNX function body: (x - E[x]) /
/// (sqrt(E[x^2] - E[x]^2) + 1e-9), the means over `axes` (default 0, 2, 3).
LogicalResult meanVarianceNorm(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<SmallVector<int64_t>> axes = b.intsAttr("axes", ArrayRef<int64_t>{0, 2, 3});
  if (failed(x) || failed(axes))
    return failure();
  FailureOr<SmallVector<int64_t>> normalized =
      kiln::normalizeAxes(b.loc(), "axes", *axes, tensorType(*x).getRank());
  if (failed(normalized))
    return failure();
  Type element = tensorType(*x).getElementType();
  auto mean = [&](Value v) {
    return b.make<kiln::ReduceOp>(v, ReduceKind::mean, ArrayRef(*normalized),
                                  /*keepdims=*/true);
  };
  FailureOr<Value> m = mean(*x);
  FailureOr<Value> square = b.make<kiln::MulOp>(*x, *x);
  if (failed(m) || failed(square))
    return failure();
  FailureOr<Value> meanSquare = mean(*square);
  FailureOr<Value> squaredMean = b.make<kiln::MulOp>(*m, *m);
  if (failed(meanSquare) || failed(squaredMean))
    return failure();
  FailureOr<Value> deviation = b.make<kiln::SubOp>(*meanSquare, *squaredMean);
  if (succeeded(deviation))
    deviation = b.make<kiln::SqrtOp>(*deviation);
  if (succeeded(deviation))
    deviation = b.make<kiln::AddOp>(*deviation, b.scalar(element, 1e-9));
  FailureOr<Value> centered = b.make<kiln::SubOp>(*x, *m);
  if (failed(deviation) || failed(centered))
    return failure();
  FailureOr<Value> out = b.make<kiln::DivOp>(*centered, *deviation);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

template <typename OpTy>
LogicalResult globalPool(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  FailureOr<Value> out = b.make<OpTy>(*x);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// Softmax and normalizations
//===----------------------------------------------------------------------===//

/// Before opset 13, softmax normalizes the flattened [d0*..*d(a-1), rest]
/// matrix; it equals the single-axis form only when `axis` is the last dim.
template <typename OpTy>
LogicalResult softmax(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> axis = b.intAttr("axis", b.opset() < 13 ? 1 : -1);
  if (failed(x) || failed(axis))
    return failure();
  RankedTensorType type = tensorType(*x);
  FailureOr<int64_t> normalized =
      kiln::normalizeAxis(b.loc(), "axis", *axis, type.getRank());
  if (failed(normalized))
    return failure();
  if (b.opset() >= 13 || *normalized == type.getRank() - 1) {
    FailureOr<Value> out = b.make<OpTy>(*x, static_cast<uint64_t>(*normalized));
    return failed(out) ? failure() : b.setOutput(0, *out);
  }
  FailureOr<Value> flat =
      b.make<kiln::FlattenOp>(*x, static_cast<uint64_t>(*normalized));
  if (failed(flat))
    return failure();
  FailureOr<Value> soft = b.make<OpTy>(*flat, static_cast<uint64_t>(1));
  if (failed(soft))
    return failure();
  Value shape;
  if (!type.hasStaticShape()) {
    FailureOr<Value> dims = b.make<kiln::ShapeOp>(*x, IntegerAttr(), IntegerAttr());
    if (failed(dims))
      return failure();
    shape = *dims;
  }
  FailureOr<Value> out = b.makeTyped<kiln::ReshapeOp>(type, *soft, shape);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult noTrainingOutputs(NodeBinder &b, unsigned first) {
  for (unsigned i = first; i < b.numOutputs(); ++i)
    if (b.outputUsed(i))
      return b.unsupported("output " + Twine(i) +
                           " (training statistics) is used");
  return success();
}

/// `x` as f32 (the stash_type 1 computations of the normalizations).
FailureOr<Value> widenToF32(NodeBinder &b, Value x) {
  RankedTensorType type = tensorType(x);
  Type f32 = b.builder().getF32Type();
  if (type.getElementType() == f32)
    return x;
  return b.makeTyped<kiln::CastOp>(type.clone(f32), x);
}

/// Reads stash_type, which Kiln supports only as 1 (float).
LogicalResult checkStashType(NodeBinder &b, StringRef what) {
  FailureOr<int64_t> stash = b.intAttr("stash_type", 1);
  if (failed(stash))
    return failure();
  if (*stash != 1)
    return b.unsupported(what + " with 'stash_type' " + Twine(*stash) +
                         " (only 1, float, is supported)");
  return success();
}

/// mean(x) over dims [axis, rank), kept as 1s.
FailureOr<Value> meanFrom(NodeBinder &b, Value x, int64_t axis) {
  int64_t rank = tensorType(x).getRank();
  FailureOr<int64_t> first = kiln::normalizeAxis(b.loc(), "axis", axis, rank);
  if (failed(first))
    return failure();
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(*first, rank));
  return b.make<kiln::ReduceOp>(x, ReduceKind::mean, ArrayRef(axes), true);
}

/// 1 / sqrt(v + epsilon) for an f32 `v`.
FailureOr<Value> invSqrtPlus(NodeBinder &b, Value v, float epsilon) {
  FailureOr<Value> shifted = b.make<kiln::AddOp>(v, b.scalar(b.builder().getF32Type(), epsilon));
  if (failed(shifted))
    return failure();
  return b.make<kiln::RsqrtOp>(*shifted);
}

/// LayerNormalization's Mean and InvStdDev outputs over dims [axis, rank),
/// kept as 1s: mean(x) and 1 / sqrt(mean((x - mean)^2) + epsilon), in f32.
LogicalResult layerNormStats(NodeBinder &b, Value x, int64_t axis, float epsilon) {
  if (failed(checkStashType(b, "LayerNormalization statistics")))
    return failure();
  FailureOr<Value> wide = widenToF32(b, x);
  if (failed(wide))
    return failure();
  FailureOr<Value> mean = meanFrom(b, *wide, axis);
  if (failed(mean))
    return failure();
  FailureOr<Value> centered = b.make<kiln::SubOp>(*wide, *mean);
  if (failed(centered))
    return failure();
  FailureOr<Value> square = b.make<kiln::MulOp>(*centered, *centered);
  if (failed(square))
    return failure();
  FailureOr<Value> var = meanFrom(b, *square, axis);
  if (failed(var))
    return failure();
  FailureOr<Value> inv = invSqrtPlus(b, *var, epsilon);
  if (failed(inv))
    return failure();
  if (b.outputUsed(1) && failed(b.setOutput(1, *mean)))
    return failure();
  return b.outputUsed(2) ? b.setOutput(2, *inv) : success();
}

/// RMSNormalization: x / sqrt(mean(x^2) + epsilon) * scale over dims
/// [axis, rank), in f32, cast to the scale's type before the scaling.
LogicalResult rmsNorm(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), scale = b.input(1);
  FailureOr<int64_t> axis = b.intAttr("axis", -1);
  FailureOr<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  if (failed(x) || failed(scale) || failed(axis) || failed(epsilon) ||
      failed(checkStashType(b, "RMSNormalization")))
    return failure();
  FailureOr<Value> wide = widenToF32(b, *x);
  if (failed(wide))
    return failure();
  FailureOr<Value> square = b.make<kiln::MulOp>(*wide, *wide);
  if (failed(square))
    return failure();
  FailureOr<Value> meanSquare = meanFrom(b, *square, *axis);
  if (failed(meanSquare))
    return failure();
  FailureOr<Value> inv = invSqrtPlus(b, *meanSquare, *epsilon);
  if (failed(inv))
    return failure();
  FailureOr<Value> normed = b.make<kiln::MulOp>(*wide, *inv);
  if (failed(normed))
    return failure();
  RankedTensorType normedType = tensorType(*normed);
  Type element = tensorType(*scale).getElementType();
  if (normedType.getElementType() != element) {
    normed = b.makeTyped<kiln::CastOp>(normedType.clone(element), *normed);
    if (failed(normed))
      return failure();
  }
  FailureOr<Value> out = b.make<kiln::MulOp>(*normed, *scale);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

/// LpNormalization: x / ||x||_p along one axis (p = 1 or 2), 0 where the norm is 0.
LogicalResult lpNorm(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> axis = b.intAttr("axis", -1), p = b.intAttr("p", 2);
  if (failed(x) || failed(axis) || failed(p) || failed(b.checkRange("attribute 'p'", *p, 1, 2)))
    return failure();
  FailureOr<int64_t> normalized =
      kiln::normalizeAxis(b.loc(), "axis", *axis, tensorType(*x).getRank());
  if (failed(normalized))
    return failure();
  FailureOr<Value> norm = b.make<kiln::ReduceOp>(
      *x, *p == 1 ? ReduceKind::l1 : ReduceKind::l2, ArrayRef<int64_t>{*normalized}, true);
  if (failed(norm))
    return failure();
  FailureOr<Value> ratio = b.make<kiln::DivOp>(*x, *norm);
  // A zero norm gives 0, not 0 / 0 (ONNX's reference).
  Type element = tensorType(*x).getElementType();
  FailureOr<Value> zeroNorm = b.make<kiln::EqualOp>(*norm, b.scalar(element, 0));
  if (failed(ratio) || failed(zeroNorm))
    return failure();
  FailureOr<Value> out = b.make<kiln::SelectOp>(*zeroNorm, b.scalar(element, 0), *ratio);
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult layerNorm(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), scale = b.input(1);
  FailureOr<int64_t> axis = b.intAttr("axis", -1);
  FailureOr<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  if (failed(x) || failed(scale) || failed(axis) || failed(epsilon))
    return failure();
  FailureOr<Value> out =
      b.make<kiln::LayerNormOp>(*x, *scale, b.optionalInput(2),
                                static_cast<uint64_t>(*axis), APFloat(*epsilon));
  if (failed(out) || failed(b.setOutput(0, *out)))
    return failure();
  if (!b.outputUsed(1) && !b.outputUsed(2))
    return success();
  return layerNormStats(b, *x, *axis, *epsilon);
}

LogicalResult batchNorm(NodeBinder &b) {
  SmallVector<Value> operands;
  for (unsigned i = 0; i < 5; ++i) {
    FailureOr<Value> v = b.input(i);
    if (failed(v))
      return failure();
    operands.push_back(*v);
  }
  FailureOr<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  FailureOr<int64_t> training = b.intAttr("training_mode", 0);
  FailureOr<int64_t> spatial = b.intAttr("spatial", 1);
  if (failed(epsilon) || failed(training) || failed(spatial))
    return failure();
  if (*training != 0 && b.opset() >= 14)
    return batchNormTraining(b, operands, *epsilon);
  if (failed(noTrainingOutputs(b, 1)))
    return failure();
  if (*training != 0)
    return b.unsupported("training_mode = 1 (Kiln compiles inference)");
  if (b.opset() < 9 && *spatial != 1)
    return b.unsupported("spatial = 0 (per-activation statistics)");
  FailureOr<Value> out = b.make<kiln::BatchNormOp>(
      operands[0], operands[1], operands[2], operands[3], operands[4],
      APFloat(*epsilon));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult instanceNorm(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), scale = b.input(1), bias = b.input(2);
  FailureOr<float> epsilon = b.floatAttr("epsilon", 1e-5f);
  if (failed(x) || failed(scale) || failed(bias) || failed(epsilon))
    return failure();
  FailureOr<Value> out =
      b.make<kiln::InstanceNormOp>(*x, *scale, *bias, APFloat(*epsilon));
  return failed(out) ? failure() : b.setOutput(0, *out);
}

} // namespace

void registerNNHandlers(HandlerRegistry &r) {
  r.add("MatMul", 7, matmul);
  r.add("Einsum", 12, einsum);
  r.add("Gemm", 7, gemm);
  r.add("Conv", 7, conv);
  r.add("ConvTranspose", 7, convTranspose);
  r.add("MaxPool", 7, pool<true>);
  r.add("AveragePool", 7, pool<false>);
  r.add("LpPool", 2, lpPool);
  r.add("GlobalAveragePool", 7, globalPool<kiln::GlobalAvgPoolOp>);
  r.add("GlobalMaxPool", 7, globalPool<kiln::GlobalMaxPoolOp>);
  r.add("Softmax", 7, softmax<kiln::SoftmaxOp>);
  r.add("LogSoftmax", 7, softmax<kiln::LogSoftmaxOp>);
  r.add("LayerNormalization", 17, layerNorm);
  r.add("RMSNormalization", 23, rmsNorm);
  r.add("LpNormalization", 7, lpNorm);
  r.add("BatchNormalization", 7, batchNorm);
  r.add("InstanceNormalization", 7, instanceNorm);
  r.add("MeanVarianceNormalization", 9, meanVarianceNorm);
}

} // namespace kiln::onnx_import
