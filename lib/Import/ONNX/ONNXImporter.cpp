//===- ONNXImporter.cpp - ONNX graph to func.func @main of kiln ops -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Drives the two stages: the reader validates the file and orders the nodes;
// then graph inputs become function arguments, initializers constants, and
// each node goes through its handler. All unsupported ops are reported before
// anything is built, so a user sees the whole list at once.
//
//===----------------------------------------------------------------------===//

#include "kiln/Import/ONNX/ONNXImporter.h"

#include "ModelReader.h"
#include "NodeBinder.h"
#include "SymbolicShapes.h"
#include "TensorLoader.h"

#include "kiln/Dialect/Kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"

#include <map>

#include <onnx/onnx_pb.h>

using namespace mlir;

namespace kiln::onnx_import {

namespace {
/// A graph input or output as the function signature sees it.
struct Signature {
  RankedTensorType type;
  SmallVector<std::string> dimNames; // "" for static dims
};
} // namespace

//===----------------------------------------------------------------------===//
// Support check (shared by import and --check)
//===----------------------------------------------------------------------===//

namespace {
struct OpTypeUse {
  std::string domain, opType, why;
  int64_t count = 0;
  std::vector<std::string> nodes;
};
/// Op types in first-use order.
using OpSurvey =
    llvm::MapVector<std::string, OpTypeUse, std::map<std::string, unsigned>>;
} // namespace

static int64_t opsetOf(const ModelFile &file, const onnx::NodeProto &node) {
  return file.domains.lookup(canonicalDomain(node.domain()));
}

/// Calls `fn` on `node` and on every node of the graphs its attributes hold,
/// at any depth.
static void forEachNestedNode(const onnx::NodeProto &node,
                              llvm::function_ref<void(const onnx::NodeProto &)> fn) {
  fn(node);
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (attr.has_g())
      for (const onnx::NodeProto &inner : attr.g().node())
        forEachNestedNode(inner, fn);
    for (const onnx::GraphProto &graph : attr.graphs())
      for (const onnx::NodeProto &inner : graph.node())
        forEachNestedNode(inner, fn);
  }
}

/// Every op type of the model (body nodes of control-flow ops included)
/// with its count and, if unsupported, why.
static OpSurvey surveyOps(const ModelFile &file) {
  OpSurvey uses;
  const HandlerRegistry &registry = HandlerRegistry::get();
  std::vector<const onnx::NodeProto *> all;
  for (const onnx::NodeProto *top : file.order)
    forEachNestedNode(*top, [&](const onnx::NodeProto &node) { all.push_back(&node); });
  for (const onnx::NodeProto *node : all) {
    StringRef domain = canonicalDomain(node->domain());
    OpTypeUse &use = uses[(domain + "::" + node->op_type()).str()];
    if (use.count++ == 0) {
      use.domain = domain.empty() ? "ai.onnx" : domain.str();
      use.opType = node->op_type();
      registry.lookup(domain, node->op_type(), opsetOf(file, *node), use.why);
    }
    if (!use.why.empty())
      use.nodes.push_back(!node->name().empty()
                              ? "'" + node->name() + "'"
                          : file.nodeIndex.count(node)
                              ? "#" + std::to_string(file.nodeIndex.lookup(node))
                              : "(in a body)");
  }
  return uses;
}

static LogicalResult reportUnsupported(const ModelFile &file, Location loc) {
  OpSurvey uses = surveyOps(file);
  int64_t types = 0, nodes = 0;
  for (auto &entry : uses)
    if (!entry.second.why.empty())
      ++types, nodes += entry.second.count;
  if (types == 0)
    return success();
  InFlightDiagnostic diag = emitError(loc)
                            << types << " op type" << (types > 1 ? "s" : "")
                            << " in the model " << (types > 1 ? "are" : "is")
                            << " not supported (" << nodes << " node"
                            << (nodes > 1 ? "s" : "") << ")";
  for (auto &entry : uses) {
    const OpTypeUse &use = entry.second;
    if (use.why.empty())
      continue;
    Diagnostic &note = diag.attachNote();
    note << use.opType << " (domain " << use.domain << ", opset "
         << file.domains.lookup(canonicalDomain(use.domain)) << "): " << use.why
         << "; nodes: ";
    for (auto [i, name] : llvm::enumerate(use.nodes)) {
      if (i == 6) {
        note << ", ... (" << use.nodes.size() - i << " more)";
        break;
      }
      note << (i ? ", " : "") << name;
    }
  }
  return diag;
}

int checkModel(StringRef path, MLIRContext &context, llvm::raw_ostream &os,
               std::vector<OpTypeSupport> *opTypes) {
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  FailureOr<ModelFile> file = readModel(path, loc);
  if (failed(file))
    return 1;
  OpSurvey uses = surveyOps(*file);
  os << path << ": ir_version " << file->proto->ir_version() << ", ai.onnx opset "
     << file->opset << ", " << file->order.size() << " nodes, " << uses.size()
     << " op types\n";
  int64_t bad = 0;
  for (auto &entry : uses) {
    const OpTypeUse &use = entry.second;
    std::string name = use.domain == "ai.onnx" ? use.opType
                                               : use.domain + "::" + use.opType;
    os << "  " << llvm::left_justify(name, 28) << llvm::format_decimal(use.count, 6)
       << "  " << (use.why.empty() ? "supported" : "unsupported: " + use.why)
       << "\n";
    bad += !use.why.empty();
    if (opTypes)
      opTypes->push_back({use.domain, use.opType, use.count, use.why, use.nodes});
  }
  os << (bad ? "not supported: " : "supported: ") << uses.size() - bad << " of "
     << uses.size() << " op types can be imported\n";
  return bad ? 1 : 0;
}

//===----------------------------------------------------------------------===//
// Signature
//===----------------------------------------------------------------------===//

static FailureOr<Signature> convertValueInfo(const onnx::ValueInfoProto &info,
                                             StringRef role, Location loc) {
  MLIRContext *context = loc.getContext();
  const onnx::TypeProto &type = info.type();
  if (!type.has_tensor_type())
    return emitError(loc) << role << " '" << info.name()
                          << "' is not a tensor (sequences, maps and optionals "
                             "are not supported)";
  const onnx::TypeProto::Tensor &tensor = type.tensor_type();
  Type element = convertElementType(context, tensor.elem_type());
  if (!element)
    return emitError(loc) << role << " '" << info.name() << "': element type "
                          << elementTypeName(tensor.elem_type())
                          << " is not supported";
  if (!tensor.has_shape())
    return emitError(loc) << role << " '" << info.name()
                          << "' has no shape (unknown rank); give one with "
                             "--input-shape";
  Signature sig;
  SmallVector<int64_t> dims;
  for (auto [i, dim] : llvm::enumerate(tensor.shape().dim())) {
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0)
        return emitError(loc) << role << " '" << info.name() << "' dim " << i
                              << " is " << dim.dim_value()
                              << ", accepted range is [0, inf)";
      dims.push_back(dim.dim_value());
      sig.dimNames.push_back("");
      continue;
    }
    dims.push_back(ShapedType::kDynamic);
    sig.dimNames.push_back(dim.has_dim_param() && !dim.dim_param().empty()
                               ? dim.dim_param()
                               : info.name() + "_d" + std::to_string(i));
  }
  sig.type = RankedTensorType::get(dims, element);
  return sig;
}

/// Kiln's limits on every tensor type a model declares or produces: at most
/// kMaxRank dims, and a static size whose byte count fits int64 (codegen and
/// the runtime compute sizes in 64 bits).
static LogicalResult checkTensorLimits(Type type, const Twine &what,
                                       Location loc) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return success();
  if (tensor.getRank() > kMaxRank)
    return emitError(loc) << what << " has rank " << tensor.getRank()
                          << ", accepted range is [0, " << kMaxRank << "]";
  Type element = tensor.getElementType();
  int64_t bytes =
      element.isIntOrFloat()
          ? static_cast<int64_t>(llvm::divideCeil(element.getIntOrFloatBitWidth(), 8))
          : 1;
  for (int64_t dim : tensor.getShape())
    if (!ShapedType::isDynamic(dim) && __builtin_mul_overflow(bytes, dim, &bytes))
      return emitError(loc) << what << " of type " << tensor
                            << " has a byte size that overflows int64";
  return success();
}

/// Applies a user's --input-shape to a declared signature.
static LogicalResult specialize(Signature &sig, StringRef name,
                                ArrayRef<int64_t> dims, Location loc) {
  if (static_cast<int64_t>(dims.size()) != sig.type.getRank())
    return emitError(loc) << "input shape for '" << name << "' has rank "
                          << dims.size() << ", but the model declares rank "
                          << sig.type.getRank() << " (" << sig.type << ")";
  SmallVector<int64_t> shape;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(sig.type.getShape(), dims))) {
    auto [declared, given] = pair;
    shape.push_back(ShapedType::isDynamic(given) ? declared : given);
    if (ShapedType::isDynamic(given))
      continue; // `?`: as the model declares it
    if (given < 0)
      return emitError(loc) << "input shape for '" << name << "' dim " << i
                            << " is " << given << ", accepted range is [0, inf)";
    if (!ShapedType::isDynamic(declared) && declared != given)
      return emitError(loc) << "input shape for '" << name << "' dim " << i
                            << " is " << given << ", but the model fixes it to "
                            << declared;
    sig.dimNames[i] = "";
  }
  sig.type = RankedTensorType::get(shape, sig.type.getElementType());
  return success();
}

/// A key of ImportOptions::inputShapes that ends in `*`: a name prefix.
static bool isShapePattern(StringRef key) { return key.ends_with("*"); }

/// The shape given for input `name`: its own entry, else the longest
/// pattern whose prefix it has (recorded in `matched`); end() if none.
static llvm::StringMap<SmallVector<int64_t>>::const_iterator
findInputShape(const ImportOptions &options, StringRef name, llvm::StringSet<> &matched) {
  auto found = options.inputShapes.find(name);
  if (found != options.inputShapes.end())
    return found;
  size_t longest = 0;
  for (auto it = options.inputShapes.begin(); it != options.inputShapes.end(); ++it) {
    StringRef prefix = it->getKey().drop_back();
    if (isShapePattern(it->getKey()) && name.starts_with(prefix) &&
        (found == options.inputShapes.end() || prefix.size() > longest)) {
      found = it;
      longest = prefix.size();
    }
  }
  if (found != options.inputShapes.end())
    matched.insert(found->getKey());
  return found;
}

static DictionaryAttr signatureAttrs(MLIRContext *context, StringRef name,
                                     RankedTensorType type,
                                     ArrayRef<std::string> dimNames) {
  Builder b(context);
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("kiln.name", b.getStringAttr(name))};
  if (!type.hasStaticShape()) {
    SmallVector<Attribute> names;
    for (auto [i, dim] : llvm::enumerate(type.getShape()))
      names.push_back(b.getStringAttr(
          !ShapedType::isDynamic(dim)
              ? ""
              : (i < dimNames.size() && !dimNames[i].empty()
                     ? dimNames[i]
                     : name.str() + "_d" + std::to_string(i))));
    attrs.push_back(b.getNamedAttr("kiln.dim_names", b.getArrayAttr(names)));
  }
  return b.getDictionaryAttr(attrs);
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

namespace {
class GraphImporter {
public:
  GraphImporter(ModelFile &file, MLIRContext &context, Location loc)
      : file(file), context(context), loc(loc),
        loader(&context, file.directory, loc) {}

  OwningOpRef<ModuleOp> run(const ImportOptions &options);

private:
  LogicalResult importInputs(const ImportOptions &options, OpBuilder &builder,
                             func::FuncOp func, GraphState &state);
  LogicalResult importInitializers(OpBuilder &builder, GraphState &state);
  LogicalResult importNode(const onnx::NodeProto &node, size_t index,
                           GraphState &state);
  LogicalResult importBody(const onnx::GraphProto &graph, ValueRange args,
                           SmallVectorImpl<Value> &results, GraphState &state);
  LogicalResult importOutputs(OpBuilder &builder, func::FuncOp func,
                              GraphState &state);
  LogicalResult nameOutputDims(StringRef name, Value value,
                               SmallVectorImpl<std::string> &dimNames);
  void bindInputDims(func::FuncOp func);

  ModelFile &file;
  MLIRContext &context;
  Location loc;
  TensorLoader loader;
  /// Symbolic dims of the values, for the import in progress.
  SymbolicShapes *shapes = nullptr;
  llvm::StringSet<> inputDimNames;
};
} // namespace

void GraphImporter::bindInputDims(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments()) {
    auto names = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "kiln.dim_names");
    SmallVector<std::string> dimNames;
    for (Attribute name : names ? names.getValue() : ArrayRef<Attribute>())
      dimNames.push_back(cast<StringAttr>(name).str());
    for (const std::string &name : dimNames)
      if (!name.empty())
        inputDimNames.insert(name);
    shapes->bindInput(arg, dimNames);
  }
}

LogicalResult GraphImporter::importInputs(const ImportOptions &options,
                                          OpBuilder &builder, func::FuncOp func,
                                          GraphState &state) {
  const onnx::GraphProto &graph = file.proto->graph();
  llvm::StringSet<> initializers, inputNames, matchedPatterns;
  for (const onnx::TensorProto &init : graph.initializer())
    initializers.insert(init.name());
  SmallVector<Type> types;
  SmallVector<Attribute> argAttrs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    inputNames.insert(input.name());
    if (initializers.contains(input.name()))
      continue;
    FailureOr<Signature> sig = convertValueInfo(input, "graph input", loc);
    if (failed(sig))
      return failure();
    auto override = findInputShape(options, input.name(), matchedPatterns);
    if (override != options.inputShapes.end() &&
        failed(specialize(*sig, input.name(), override->second, loc)))
      return failure();
    if (failed(checkTensorLimits(sig->type, "graph input '" + input.name() + "'",
                                 loc)))
      return failure();
    types.push_back(sig->type);
    argAttrs.push_back(
        signatureAttrs(&context, input.name(), sig->type, sig->dimNames));
  }
  for (const auto &entry : options.inputShapes) {
    if (isShapePattern(entry.getKey())) {
      if (!matchedPatterns.contains(entry.getKey()))
        return emitError(loc) << "input shape given for '" << entry.getKey()
                              << "', which matches no graph input of the model";
      continue;
    }
    if (!inputNames.contains(entry.getKey()) ||
        initializers.contains(entry.getKey()))
      return emitError(loc) << "input shape given for '" << entry.getKey()
                            << "', which is not a graph input of the model";
  }
  func.setType(builder.getFunctionType(types, {}));
  Block *entry = func.addEntryBlock();
  func.setAllArgAttrs(argAttrs);
  unsigned argument = 0;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!initializers.contains(input.name()))
      state.values[input.name()] = entry->getArgument(argument++);
  builder.setInsertionPointToStart(entry);
  return success();
}

LogicalResult GraphImporter::importInitializers(OpBuilder &builder,
                                                GraphState &state) {
  auto *graph = file.proto->mutable_graph();
  for (onnx::TensorProto &init : *graph->mutable_initializer()) {
    if (!state.used.contains(init.name()))
      continue; // nothing reads it; its bytes need not be checked or mapped
    FailureOr<ElementsAttr> value =
        loader.load(init, "initializer '" + init.name() + "'");
    if (failed(value) ||
        failed(checkTensorLimits(value->getType(),
                                 "initializer '" + init.name() + "'", loc)))
      return failure();
    Location at = NameLoc::get(builder.getStringAttr(init.name()), loc);
    state.values[init.name()] = kiln::ConstantOp::create(builder, at, *value);
  }
  return success();
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node,
                                        size_t index, GraphState &state) {
  int64_t opset = opsetOf(file, node);
  std::string why;
  HandlerFn handler =
      HandlerRegistry::get().lookup(node.domain(), node.op_type(), opset, why);
  std::string prefix = describeNode(node, index) +
                       ", opset " + std::to_string(opset) + "): ";
  // Every diagnostic raised while this node is handled (by the binder, the
  // handler or the dialect's type inference) gets the node as its context.
  bool reemitting = false;
  ScopedDiagnosticHandler scoped(&context, [&](Diagnostic &diag) {
    if (reemitting)
      return failure();
    reemitting = true;
    InFlightDiagnostic out = context.getDiagEngine().emit(loc, diag.getSeverity());
    out << prefix << diag.str();
    for (Diagnostic &note : diag.getNotes())
      out.attachNote() << note.str();
    out.report();
    reemitting = false;
    return success();
  });
  if (!handler)
    return emitError(loc) << "unsupported: " << why;
  if (!takesComposites(node.domain(), node.op_type()))
    for (auto [i, input] : llvm::enumerate(node.input()))
      if (Value value = input.empty() ? Value() : state.values.lookup(input);
          value && isComposite(value))
        return emitError(loc) << "input " << i << " '" << input << "' is "
                              << compositeKind(value) << ", but " << node.op_type()
                              << " takes tensors";
  std::string name = node.name().empty()
                         ? node.op_type() + "#" + std::to_string(index)
                         : node.name();
  NodeBinder binder(state, node, opset,
                    NameLoc::get(StringAttr::get(&context, name), loc));
  if (failed(handler(binder)))
    return failure();
  for (auto [i, output] : llvm::enumerate(node.output())) {
    Value value = state.values.lookup(output);
    if (binder.outputUsed(i) && !value)
      return binder.unsupported("output " + Twine(i) + " '" + output +
                                "' is used but this importer does not produce it");
    if (value && failed(checkTensorLimits(value.getType(),
                                          "output '" + output + "'", loc)))
      return failure();
  }
  return success();
}

/// A body is imported in a scope: its inputs, initializers and node outputs
/// shadow nothing once it is done (the names the enclosing graphs had are
/// restored), so the same body can be imported once per unrolled iteration.
LogicalResult GraphImporter::importBody(const onnx::GraphProto &graph,
                                        ValueRange args,
                                        SmallVectorImpl<Value> &results,
                                        GraphState &state) {
  SmallVector<std::pair<std::string, Value>> saved;
  llvm::scope_exit restore([&] {
    for (auto &[name, value] : llvm::reverse(saved)) {
      if (value)
        state.values[name] = value;
      else
        state.values.erase(name);
    }
  });
  llvm::StringSet<> defined;
  auto define = [&](const std::string &name, StringRef what) -> LogicalResult {
    if (name.empty())
      return emitError(loc) << "a body " << what << " has no name";
    if (!defined.insert(name).second)
      return emitError(loc) << "body value '" << name << "' is defined twice";
    saved.emplace_back(name, state.values.lookup(name));
    return success();
  };
  for (auto [i, input] : llvm::enumerate(graph.input())) {
    if (failed(define(input.name(), "input")))
      return failure();
    const onnx::TypeProto &type = input.type();
    bool aggregate = type.has_sequence_type() || type.has_optional_type();
    if (type.value_case() != onnx::TypeProto::VALUE_NOT_SET &&
        !type.has_tensor_type() && !aggregate)
      return emitError(loc) << "unsupported: body input '" << input.name()
                            << "' is not a tensor, sequence or optional (maps "
                               "are not supported)";
    if (aggregate != isComposite(args[i]) &&
        type.value_case() != onnx::TypeProto::VALUE_NOT_SET)
      return emitError(loc) << "body input '" << input.name() << "' is declared "
                            << (aggregate ? "a sequence or optional" : "a tensor")
                            << ", but the value passed to it is "
                            << (isComposite(args[i]) ? compositeKind(args[i]).str()
                                                     : std::string("a tensor"));
    int32_t declared = type.tensor_type().elem_type();
    Type element = getElementTypeOrSelf(args[i].getType());
    if (declared != 0 && convertElementType(&context, declared) != element)
      return emitError(loc) << "body input '" << input.name() << "' is declared "
                            << elementTypeName(declared) << ", but the value "
                            << "passed to it is " << args[i].getType();
    state.values[input.name()] = args[i];
  }
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (failed(define(init.name(), "initializer")))
      return failure();
    // Bodies are imported again per iteration: load a copy, never the bytes.
    onnx::TensorProto copy = init;
    FailureOr<ElementsAttr> value =
        loader.load(copy, "body initializer '" + init.name() + "'");
    if (failed(value) ||
        failed(checkTensorLimits(value->getType(),
                                 "body initializer '" + init.name() + "'", loc)))
      return failure();
    Location at = NameLoc::get(state.builder.getStringAttr(init.name()), loc);
    state.values[init.name()] = kiln::ConstantOp::create(state.builder, at, *value);
  }
  for (auto [i, node] : llvm::enumerate(graph.node())) {
    for (const std::string &input : node.input())
      if (!input.empty() && !state.values.lookup(input))
        return emitError(loc) << describeNode(node, i) << ") in a body: input '"
                              << input << "' is not defined before it (by the "
                              << "body, an enclosing graph or an earlier node)";
    for (const std::string &output : node.output())
      if (!output.empty() && failed(define(output, "node output")))
        return failure();
    if (failed(importNode(node, i, state)))
      return failure();
  }
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = state.values.lookup(output.name());
    if (!value)
      return emitError(loc) << "body output '" << output.name()
                            << "' is not defined";
    results.push_back(value);
  }
  return success();
}

/// An output's dynamic dims are named after the input dims they are proven
/// to equal (the exporter's own names, such as `Flatten117_dim_0`, are only
/// what its shape inference could not tell). A dim that depends on tensor
/// values is an error naming the node it comes from, unless the model names
/// it after an input dim.
LogicalResult GraphImporter::nameOutputDims(StringRef name, Value value,
                                            SmallVectorImpl<std::string> &dimNames) {
  auto type = cast<RankedTensorType>(value.getType());
  dimNames.resize(type.getRank());
  SmallVector<DimExpr> dims = shapes->dimsOf(value);
  for (auto [i, expr] : llvm::enumerate(dims)) {
    if (!type.isDynamicDim(i))
      continue;
    if (std::optional<std::string> input = shapes->inputDimName(expr)) {
      dimNames[i] = *input;
      continue;
    }
    if (inputDimNames.contains(dimNames[i]))
      continue;
    if (std::optional<std::string> formula = shapes->inputDimFormula(expr)) {
      dimNames[i] = *formula;
      continue;
    }
    if (std::optional<std::string> origin = shapes->valueDependence(expr))
      return emitError(loc) << "output '" << name << "' dim " << i
                            << " depends on tensor values (it comes from "
                            << *origin << "), not on input shapes; Kiln needs "
                            << "output shapes that follow from the input shapes";
    return emitError(loc) << "unsupported: output '" << name << "' dim " << i
                          << " is " << shapes->str(expr)
                          << "; an output's symbolic dim must be one of the "
                             "input dims";
  }
  return success();
}

LogicalResult GraphImporter::importOutputs(OpBuilder &builder, func::FuncOp func,
                                           GraphState &state) {
  SmallVector<Value> results;
  SmallVector<Type> types;
  SmallVector<Attribute> attrs;
  for (const onnx::ValueInfoProto &output : file.proto->graph().output()) {
    Value value = state.values.lookup(output.name());
    if (!value)
      return emitError(loc) << "graph output '" << output.name()
                            << "' was not produced";
    if (isComposite(value))
      return emitError(loc) << "unsupported: graph output '" << output.name()
                            << "' is " << compositeKind(value)
                            << " (a compiled model's inputs and outputs are "
                               "tensors)";
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<std::string> dimNames;
    const auto &declared = output.type().tensor_type().shape();
    if (declared.dim_size() == type.getRank())
      for (const auto &dim : declared.dim())
        dimNames.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    if (failed(nameOutputDims(output.name(), value, dimNames)))
      return failure();
    results.push_back(value);
    types.push_back(type);
    attrs.push_back(signatureAttrs(&context, output.name(), type, dimNames));
  }
  func::ReturnOp::create(builder, loc, results);
  func.setType(builder.getFunctionType(func.getArgumentTypes(), types));
  func.setAllResultAttrs(attrs);
  return success();
}

/// Checked after the initializers, whose own size errors are more precise
/// when a weight and the input it feeds share absurd dims.
static LogicalResult checkInputSizes(func::FuncOp func, Location loc) {
  for (BlockArgument arg : func.getArguments()) {
    if (!overflowsInt64Bytes(arg.getType()))
      continue;
    auto name =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "kiln.name");
    return emitError(loc) << "graph input '" << name.getValue() << "' of type "
                          << arg.getType()
                          << " holds more bytes than int64 counts";
  }
  return success();
}

OwningOpRef<ModuleOp> GraphImporter::run(const ImportOptions &options) {
  if (failed(reportUnsupported(file, loc)))
    return nullptr;
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  OpBuilder builder(&context);
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, loc, "main",
                                   builder.getFunctionType({}, {}));
  GraphState state{builder, loader, {}, {}};
  SymbolicShapes symbolic(builder);
  SymbolicShapes::ScopedActive activeShapes(symbolic);
  shapes = &symbolic;
  state.importBody = [&](const onnx::GraphProto &body, ValueRange args,
                         SmallVectorImpl<Value> &results) {
    return importBody(body, args, results, state);
  };
  const onnx::GraphProto &graph = file.proto->graph();
  for (const onnx::NodeProto &top : graph.node())
    forEachNestedNode(top, [&](const onnx::NodeProto &node) {
      for (const std::string &input : node.input())
        state.used.insert(input);
      for (const onnx::AttributeProto &attr : node.attribute())
        if (attr.has_g())
          for (const onnx::ValueInfoProto &output : attr.g().output())
            state.used.insert(output.name());
    });
  for (const onnx::ValueInfoProto &output : graph.output())
    state.used.insert(output.name());
  if (failed(importInputs(options, builder, func, state)) ||
      failed(importInitializers(builder, state)) ||
      failed(checkInputSizes(func, loc)))
    return nullptr;
  bindInputDims(func);
  for (const onnx::NodeProto *node : file.order)
    if (failed(importNode(*node, file.nodeIndex.lookup(node), state)))
      return nullptr;
  if (failed(importOutputs(builder, func, state)))
    return nullptr;
  // Sequence and optional placeholders: nothing reads them any more (users
  // come after producers, so one reverse walk frees them all).
  SmallVector<Operation *> placeholders;
  func.walk([&](UnrealizedConversionCastOp cast) { placeholders.push_back(cast); });
  for (Operation *op : llvm::reverse(placeholders))
    if (op->use_empty())
      op->erase();
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> importModel(StringRef path, MLIRContext &context,
                                  const ImportOptions &options) {
  context.loadDialect<kiln::KilnDialect, func::FuncDialect>();
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  FailureOr<ModelFile> file = readModel(path, loc);
  if (failed(file))
    return nullptr;
  return GraphImporter(*file, context, loc).run(options);
}

} // namespace kiln::onnx_import
