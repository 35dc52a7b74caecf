//===- NodeBinder.cpp - Operands, attributes and results of one node ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "ContribOps.h"
#include "ModelReader.h"
#include "ShapeFolding.h"
#include "SymbolicShapes.h"
#include "TensorLoader.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <onnx/onnx_pb.h>

using namespace mlir;
using onnx::AttributeProto;

namespace kiln::onnx_import {

NodeBinder::NodeBinder(GraphState &state, const onnx::NodeProto &node,
                       int64_t opset, Location loc)
    : state(state), node(node), opsetVersion(opset), location(loc) {}

StringRef NodeBinder::opType() const { return node.op_type(); }

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

unsigned NodeBinder::numInputs() const { return node.input_size(); }

bool NodeBinder::hasInput(unsigned i) const {
  return i < numInputs() && !node.input(i).empty();
}

FailureOr<Value> NodeBinder::anyInput(unsigned i) {
  if (!hasInput(i))
    return emitError() << "input " << i << " is required but not given";
  Value value = state.values.lookup(node.input(i));
  if (!value)
    return emitError() << "input " << i << " '" << node.input(i)
                       << "' has no imported value";
  return value;
}

FailureOr<Value> NodeBinder::input(unsigned i) {
  FailureOr<Value> value = anyInput(i);
  if (succeeded(value) && isComposite(*value))
    return emitError() << "input " << i << " '" << node.input(i) << "' is "
                       << compositeKind(*value) << ", expected a tensor";
  return value;
}

Value NodeBinder::optionalInput(unsigned i) {
  return hasInput(i) ? state.values.lookup(node.input(i)) : Value();
}

SmallVector<Value> NodeBinder::givenInputs() {
  SmallVector<Value> values;
  for (unsigned i = 0; i < numInputs(); ++i)
    if (Value value = optionalInput(i))
      values.push_back(value);
  return values;
}

/// Constants read as index lists (shapes, axes, pads, sizes, scalars) are
/// small; a larger one is not expanded (a splat's size is not bounded by the
/// file: ConstantOfShape of [10^12] is one value).
static constexpr int64_t kMaxConstantValues = 4096;

/// Most dims of a result whose shape is a computed tensor: its declared
/// length is one number, allocated per dim (the runtime's KILN_MAX_RANK).
static constexpr int64_t kMaxComputedRank = 32;

/// The elements of a constant value, dense or resource, as int64 or double.
static std::optional<SmallVector<int64_t>> intsOf(Value value) {
  ElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)) ||
      attr.getNumElements() > kMaxConstantValues)
    return std::nullopt;
  Type element = attr.getElementType();
  SmallVector<int64_t> result;
  if (auto dense = dyn_cast<DenseIntElementsAttr>(attr)) {
    bool isUnsigned = element.isUnsignedInteger() || element.isInteger(1);
    for (const APInt &v : dense.getValues<APInt>())
      result.push_back(isUnsigned ? static_cast<int64_t>(v.getZExtValue())
                                  : v.getSExtValue());
    return result;
  }
  if (auto resource = dyn_cast<DenseI64ResourceElementsAttr>(attr))
    if (std::optional<ArrayRef<int64_t>> data = resource.tryGetAsArrayRef())
      return SmallVector<int64_t>(*data);
  if (auto resource = dyn_cast<DenseI32ResourceElementsAttr>(attr))
    if (std::optional<ArrayRef<int32_t>> data = resource.tryGetAsArrayRef())
      return SmallVector<int64_t>(data->begin(), data->end());
  return std::nullopt;
}

static std::optional<SmallVector<double>> floatsOf(Value value) {
  ElementsAttr attr;
  if (!value || !matchPattern(value, m_Constant(&attr)) ||
      attr.getNumElements() > kMaxConstantValues)
    return std::nullopt;
  SmallVector<double> result;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(attr)) {
    for (const APFloat &v : dense.getValues<APFloat>())
      result.push_back(v.convertToDouble());
    return result;
  }
  if (auto resource = dyn_cast<DenseF32ResourceElementsAttr>(attr))
    if (std::optional<ArrayRef<float>> data = resource.tryGetAsArrayRef())
      return SmallVector<double>(data->begin(), data->end());
  if (std::optional<SmallVector<int64_t>> ints = intsOf(value))
    return SmallVector<double>(ints->begin(), ints->end());
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> constantIntsOf(Value value) {
  return intsOf(value);
}

std::optional<SmallVector<int64_t>> NodeBinder::constantInts(unsigned i) {
  return intsOf(optionalInput(i));
}

std::optional<SmallVector<double>> NodeBinder::constantFloats(unsigned i) {
  return floatsOf(optionalInput(i));
}

FailureOr<SmallVector<int64_t>> NodeBinder::requireConstantInts(unsigned i,
                                                                StringRef what) {
  if (failed(input(i)))
    return failure();
  if (std::optional<SmallVector<int64_t>> values = constantInts(i))
    return *values;
  return notConstant(i, what);
}

FailureOr<SmallVector<double>> NodeBinder::requireConstantFloats(unsigned i,
                                                                 StringRef what) {
  if (failed(input(i)))
    return failure();
  if (std::optional<SmallVector<double>> values = constantFloats(i))
    return *values;
  return notConstant(i, what);
}

FailureOr<SmallVector<int64_t>>
NodeBinder::requireSizesKeepingDims(unsigned i, StringRef what, Value like) {
  if (failed(input(i)))
    return failure();
  if (std::optional<SmallVector<int64_t>> values = constantInts(i))
    return *values;
  SymbolicShapes *shapes = SymbolicShapes::active();
  std::optional<SmallVector<DimExpr>> entries =
      shapes ? shapes->elementsOf(optionalInput(i)) : std::nullopt;
  if (!entries)
    return notConstant(i, what);
  SmallVector<DimExpr> likeDims = shapes->dimsOf(like);
  SmallVector<int64_t> sizes;
  for (auto [axis, entry] : llvm::enumerate(*entries)) {
    if (std::optional<int64_t> c = entry.getConstant())
      sizes.push_back(*c);
    else if (axis < likeDims.size() && entry == likeDims[axis])
      sizes.push_back(ShapedType::kDynamic);
    else
      return unsupported("input " + Twine(i) + " (" + what + ") entry " + Twine(axis) +
                         " is " + shapes->str(entry) +
                         ", neither a constant nor the input's own dim " + Twine(axis));
  }
  return sizes;
}

LogicalResult NodeBinder::notConstant(unsigned i, StringRef what) {
  ElementsAttr attr;
  if (matchPattern(optionalInput(i), m_Constant(&attr)))
    return unsupported("input " + Twine(i) + " (" + what + ") is a constant of " +
                       Twine(attr.getNumElements()) + " values, more than the " +
                       Twine(kMaxConstantValues) + " read at import time");
  return unsupported("input " + Twine(i) + " (" + what +
                     ") must be a constant known at import time, but it is "
                     "computed by the graph");
}

bool overflowsInt64Bytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.getElementType().isIntOrFloat())
    return false;
  int64_t bytes = std::max(1u, tensor.getElementTypeBitWidth() / 8);
  for (int64_t dim : tensor.getShape())
    if (!ShapedType::isDynamic(dim) && llvm::MulOverflow(bytes, dim, bytes))
      return true;
  return false;
}

LogicalResult NodeBinder::checkSize(Type type) {
  if (!overflowsInt64Bytes(type))
    return success();
  return emitError() << "the result type " << type
                     << " holds more bytes than int64 counts";
}

LogicalResult NodeBinder::checkComputedRank(int64_t length) {
  if (length <= kMaxComputedRank)
    return success();
  return unsupported("a shape tensor of " + Twine(length) +
                     " entries, more than the " + Twine(kMaxComputedRank) +
                     " dims Kiln allows");
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const AttributeProto *NodeBinder::findAttr(StringRef name) const {
  for (const AttributeProto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

bool NodeBinder::hasAttr(StringRef name) const { return findAttr(name); }

std::vector<std::string> NodeBinder::attrNames() const {
  std::vector<std::string> names;
  for (const AttributeProto &attr : node.attribute())
    names.push_back(attr.name());
  return names;
}

LogicalResult NodeBinder::wrongType(const AttributeProto &attr,
                                    StringRef expected) {
  return emitError() << "attribute '" << attr.name() << "' has type "
                     << AttributeProto::AttributeType_Name(attr.type())
                     << ", expected " << expected;
}

/// Reads a missing attribute as its default or reports it as required.
template <typename T>
static FailureOr<T> missing(NodeBinder &binder, StringRef name,
                            const std::optional<T> &fallback) {
  if (fallback)
    return *fallback;
  return binder.emitError() << "attribute '" << name << "' is required";
}

FailureOr<int64_t> NodeBinder::intAttr(StringRef name,
                                       std::optional<int64_t> fallback) {
  const AttributeProto *attr = findAttr(name);
  if (!attr)
    return missing(*this, name, fallback);
  if (attr->type() != AttributeProto::INT)
    return wrongType(*attr, "INT");
  return attr->i();
}

FailureOr<float> NodeBinder::floatAttr(StringRef name,
                                       std::optional<float> fallback) {
  const AttributeProto *attr = findAttr(name);
  if (!attr)
    return missing(*this, name, fallback);
  if (attr->type() != AttributeProto::FLOAT)
    return wrongType(*attr, "FLOAT");
  return attr->f();
}

FailureOr<std::string> NodeBinder::stringAttr(StringRef name,
                                              std::optional<StringRef> fallback) {
  const AttributeProto *attr = findAttr(name);
  if (!attr) {
    if (fallback)
      return fallback->str();
    return emitError() << "attribute '" << name << "' is required";
  }
  if (attr->type() != AttributeProto::STRING)
    return wrongType(*attr, "STRING");
  return attr->s();
}

FailureOr<SmallVector<int64_t>>
NodeBinder::intsAttr(StringRef name, std::optional<ArrayRef<int64_t>> fallback) {
  const AttributeProto *attr = findAttr(name);
  if (!attr) {
    if (fallback)
      return SmallVector<int64_t>(*fallback);
    return emitError() << "attribute '" << name << "' is required";
  }
  if (attr->type() != AttributeProto::INTS)
    return wrongType(*attr, "INTS");
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

FailureOr<SmallVector<float>>
NodeBinder::floatsAttr(StringRef name, std::optional<ArrayRef<float>> fallback) {
  const AttributeProto *attr = findAttr(name);
  if (!attr) {
    if (fallback)
      return SmallVector<float>(*fallback);
    return emitError() << "attribute '" << name << "' is required";
  }
  if (attr->type() != AttributeProto::FLOATS)
    return wrongType(*attr, "FLOATS");
  return SmallVector<float>(attr->floats().begin(), attr->floats().end());
}

FailureOr<SmallVector<std::string>> NodeBinder::stringsAttr(StringRef name) {
  const AttributeProto *attr = findAttr(name);
  if (!attr)
    return emitError() << "attribute '" << name << "' is required";
  if (attr->type() != AttributeProto::STRINGS)
    return wrongType(*attr, "STRINGS");
  return SmallVector<std::string>(attr->strings().begin(), attr->strings().end());
}

/// Most body nodes imported for one model (unrolled iterations count each
/// time) and the deepest nesting of bodies.
static constexpr int64_t kMaxInlinedNodes = 100000;
static constexpr int64_t kMaxGraphDepth = 16;

FailureOr<std::pair<unsigned, unsigned>> NodeBinder::graphArity(StringRef name) {
  const AttributeProto *attr = findAttr(name);
  if (!attr)
    return emitError() << "attribute '" << name << "' is required";
  if (attr->type() != AttributeProto::GRAPH || !attr->has_g())
    return wrongType(*attr, "GRAPH");
  return std::make_pair(static_cast<unsigned>(attr->g().input_size()),
                        static_cast<unsigned>(attr->g().output_size()));
}

FailureOr<SmallVector<Value>> NodeBinder::inlineGraph(StringRef name,
                                                      ValueRange args) {
  if (failed(graphArity(name)))
    return failure();
  const onnx::GraphProto &graph = findAttr(name)->g();
  if (static_cast<size_t>(graph.input_size()) != args.size())
    return emitError() << "attribute '" << name << "': the body has "
                       << graph.input_size() << " inputs, but " << args.size()
                       << " values are passed to it";
  state.inlinedNodes += std::max(1, graph.node_size());
  if (state.inlinedNodes > kMaxInlinedNodes)
    return unsupported("the control-flow bodies unroll to more than " +
                       Twine(kMaxInlinedNodes) + " nodes");
  if (state.depth >= kMaxGraphDepth)
    return unsupported("control-flow bodies nested more than " +
                       Twine(kMaxGraphDepth) + " deep");
  if (!state.importBody)
    return emitError() << "nested graphs cannot be imported here";
  SmallVector<Value> results;
  ++state.depth;
  LogicalResult imported = state.importBody(graph, args, results);
  --state.depth;
  if (failed(imported))
    return failure();
  return results;
}

FailureOr<ElementsAttr> NodeBinder::tensorAttr(StringRef name) {
  const AttributeProto *attr = findAttr(name);
  if (!attr)
    return emitError() << "attribute '" << name << "' is required";
  if (attr->type() != AttributeProto::TENSOR)
    return wrongType(*attr, "TENSOR");
  // The loader may take the raw bytes of a top-level node: it is not read
  // again after this. A body's nodes are, once per unrolled iteration: they
  // load a copy.
  if (state.depth > 0) {
    onnx::TensorProto copy = attr->t();
    return state.loader.load(copy, "attribute '" + name + "'");
  }
  auto &tensor = const_cast<onnx::TensorProto &>(attr->t());
  return state.loader.load(tensor, "attribute '" + name + "'");
}

LogicalResult NodeBinder::checkRange(StringRef what, int64_t value, int64_t lo,
                                     std::optional<int64_t> hi) {
  if (value >= lo && (!hi || value <= *hi))
    return success();
  InFlightDiagnostic diag = emitError();
  diag << what << " value is " << value << ", accepted range is [" << lo << ", ";
  if (hi)
    diag << *hi << "]";
  else
    diag << "inf)";
  return diag;
}

LogicalResult NodeBinder::unsupported(const Twine &why) {
  return emitError() << "unsupported: " << why;
}

//===----------------------------------------------------------------------===//
// Results
//===----------------------------------------------------------------------===//

unsigned NodeBinder::numOutputs() const { return node.output_size(); }

bool NodeBinder::outputUsed(unsigned i) const {
  return i < numOutputs() && !node.output(i).empty() &&
         state.used.contains(node.output(i));
}

LogicalResult NodeBinder::setOutput(unsigned i, Value value) {
  if (i >= numOutputs() || node.output(i).empty())
    return success(); // an omitted optional output
  if (!value)
    return emitError() << "output " << i << " '" << node.output(i)
                       << "' is not produced by this importer";
  state.values[node.output(i)] = value;
  return success();
}

LogicalResult NodeBinder::setOutputs(ValueRange values) {
  for (auto [i, value] : llvm::enumerate(values))
    if (failed(setOutput(i, value)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

Value NodeBinder::foldResult(Operation *op) {
  SymbolicShapes *shapes = SymbolicShapes::active();
  if (shapes)
    shapes->refine(op);
  auto replace = [&](Value result) {
    if (shapes)
      shapes->forget(op);
    op->erase();
    return result;
  };
  SmallVector<Value> folded;
  if (op->getNumResults() == 1 && succeeded(builder().tryFold(op, folded)) &&
      folded.size() == 1 && folded.front().getType() == op->getResult(0).getType())
    return replace(folded.front());
  if (DenseElementsAttr value = evaluateIntegerOp(op))
    return replace(constant(cast<ElementsAttr>(value)));
  // A shape entry that is a function of the input dims but a constant one
  // (a static dim read through Shape of a tensor with other dynamic dims).
  if (DenseElementsAttr value = shapes ? shapes->constantValue(op->getResult(0))
                                       : DenseElementsAttr())
    return replace(constant(cast<ElementsAttr>(value)));
  return op->getResult(0);
}

Value NodeBinder::constant(ElementsAttr attr) {
  return kiln::ConstantOp::create(builder(), location, attr);
}

Value NodeBinder::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (auto floatType = dyn_cast<FloatType>(elementType))
    element = FloatAttr::get(floatType, value);
  else if (elementType.isInteger(1))
    element = BoolAttr::get(context(), value != 0);
  else
    element = IntegerAttr::get(elementType, static_cast<int64_t>(value));
  return constant(DenseElementsAttr::get(type, element));
}

Value NodeBinder::i64Vector(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder().getI64Type());
  return constant(DenseIntElementsAttr::get(type, values));
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

/// The table key of an op: its type, prefixed by its domain outside ai.onnx.
static std::string handlerKey(StringRef domain, StringRef opType) {
  domain = canonicalDomain(domain);
  return domain.empty() ? opType.str() : (domain + "::" + opType).str();
}

void HandlerRegistry::add(StringRef opType, int64_t sinceVersion, HandlerFn fn,
                          StringRef domain) {
  auto &entries = handlers[handlerKey(domain, opType)];
  domains.insert(canonicalDomain(domain));
  entries.emplace_back(sinceVersion, fn);
  llvm::sort(entries, [](auto &a, auto &b) { return a.first < b.first; });
}

HandlerFn HandlerRegistry::lookup(StringRef domain, StringRef opType,
                                  int64_t opset, std::string &why) const {
  if (!domains.contains(canonicalDomain(domain))) {
    why = "domain '" + domain.str() +
          "' is not supported (only ai.onnx, ai.onnx.ml, "
          "ai.onnx.preview.training and com.microsoft)";
    return nullptr;
  }
  auto it = handlers.find(handlerKey(domain, opType));
  if (it == handlers.end()) {
    why = "no kiln lowering for this op";
    return nullptr;
  }
  HandlerFn best = nullptr;
  for (auto [since, fn] : it->second)
    if (since <= opset)
      best = fn;
  if (!best)
    why = "supported from opset " + std::to_string(it->second.front().first);
  return best;
}

std::vector<std::pair<std::string, std::vector<int64_t>>>
HandlerRegistry::listAll() const {
  std::vector<std::pair<std::string, std::vector<int64_t>>> all;
  for (const auto &entry : handlers) {
    std::vector<int64_t> versions;
    for (auto [since, fn] : entry.second)
      versions.push_back(since);
    all.emplace_back(entry.getKey().str(), versions);
  }
  llvm::sort(all);
  return all;
}

const HandlerRegistry &HandlerRegistry::get() {
  static const HandlerRegistry registry = [] {
    HandlerRegistry r;
    registerAttentionHandlers(r);
    registerControlFlowHandlers(r);
    registerRecurrentHandlers(r);
    registerLinearAttentionHandler(r);
    registerComposedHandlers(r);
    registerGridHandlers(r);
    registerIntegerHandlers(r);
    registerMatrixHandlers(r);
    registerMLHandlers(r);
    registerSequenceHandlers(r);
    registerTrainingHandlers(r);
    registerElementwiseHandlers(r);
    registerLossHandlers(r);
    registerNNHandlers(r);
    registerReductionHandlers(r);
    registerResizeHandlers(r);
    registerSamplingHandlers(r);
    registerShapeHandlers(r);
    registerSignalHandlers(r);
    registerTensorHandlers(r);
    registerTextHandlers(r);
    contrib::registerContribNormHandlers(r);
    contrib::registerContribAttentionHandlers(r);
    contrib::registerContribMatMulNBits(r);
    contrib::registerContribFusedHandlers(r);
    return r;
  }();
  return registry;
}

} // namespace kiln::onnx_import
