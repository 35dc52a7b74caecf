//===- NodeBinder.h - Operands, attributes and results of one node -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===------------------------------------------------------------------------===//
//
// Stage two of the importer: per-op handlers see one ONNX node through a
// NodeBinder, which gives them operands (optional and empty inputs, constant
// values), attributes with their spec defaults and type checks, and builds
// kiln ops without ever aborting on bad input. Handlers are registered in a
// table keyed by (op type, since-version). Handlers never see protobuf types.
//
//===------------------------------------------------------------------------===//

#ifndef KILN_LIB_IMPORT_ONNX_NODEBINDER_H
#define KILN_LIB_IMPORT_ONNX_NODEBINDER_H

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class NodeProto;
class AttributeProto;
class GraphProto;
} // namespace onnx

namespace kiln::onnx_import {

class TensorLoader;

/// What every node's handler shares: the builder and the ONNX value table.
struct GraphState {
  mlir::OpBuilder &builder;
  TensorLoader &loader;
  llvm::StringMap<mlir::Value> values;
  /// Values that some node or graph output reads (in any nested graph).
  llvm::StringSet<> used;
  /// Imports a nested graph (a control-flow op's body) inline at the
  /// builder's insertion point, its inputs bound to `args`, and returns its
  /// outputs; names of the enclosing graphs stay visible inside it. Set by
  /// the importer.
  std::function<mlir::LogicalResult(const onnx::GraphProto &, mlir::ValueRange,
                                    llvm::SmallVectorImpl<mlir::Value> &)>
      importBody;
  /// Body nodes imported so far (unrolled loops count each iteration) and the
  /// current nesting depth: both are bounded so that a hostile model cannot
  /// make the importer build without limit.
  int64_t inlinedNodes = 0;
  int64_t depth = 0;
};

class NodeBinder {
public:
  NodeBinder(GraphState &state, const onnx::NodeProto &node, int64_t opset,
             mlir::Location loc);

  mlir::OpBuilder &builder() { return state.builder; }
  mlir::MLIRContext *context() { return state.builder.getContext(); }
  mlir::Location loc() const { return location; }
  int64_t opset() const { return opsetVersion; }
  llvm::StringRef opType() const;

  //===--- Operands -------------------------------------------------------===//
  unsigned numInputs() const;
  /// True when input `i` is given (present and not the empty name).
  bool hasInput(unsigned i) const;
  /// A required tensor input; emits "input i is required" when absent and
  /// an error when it is a sequence or optional.
  mlir::FailureOr<mlir::Value> input(unsigned i);
  /// A required input that may also be a sequence or optional (see
  /// SequenceHandlers.cpp: such values are tuples built at import).
  mlir::FailureOr<mlir::Value> anyInput(unsigned i);
  /// An optional input, null when absent.
  mlir::Value optionalInput(unsigned i);
  /// Every given input, in order (variadic ops).
  llvm::SmallVector<mlir::Value> givenInputs();
  /// The integer (or float) values of input `i` when it is a constant.
  std::optional<llvm::SmallVector<int64_t>> constantInts(unsigned i);
  std::optional<llvm::SmallVector<double>> constantFloats(unsigned i);
  /// Like the above, but a non-constant input is an "unsupported" error
  /// naming `what` ("'shape'").
  mlir::FailureOr<llvm::SmallVector<int64_t>> requireConstantInts(unsigned i,
                                                                  llvm::StringRef what);
  mlir::FailureOr<llvm::SmallVector<double>> requireConstantFloats(unsigned i,
                                                                   llvm::StringRef what);
  /// A shape input whose entries are constants or `like`'s own dim at the
  /// same position (Resize `sizes` = Concat(Shape(x)[0:2], [h, w]) with a
  /// dynamic batch): the constants, and ShapedType::kDynamic where the entry
  /// is proven (symbolic shapes) to keep `like`'s dim. Anything else is the
  /// "unsupported" error of requireConstantInts.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  requireSizesKeepingDims(unsigned i, llvm::StringRef what, mlir::Value like);

  //===--- Attributes (absent: the default; wrong type: an error) ---------===//
  bool hasAttr(llvm::StringRef name) const;
  mlir::FailureOr<int64_t> intAttr(llvm::StringRef name,
                                   std::optional<int64_t> fallback);
  mlir::FailureOr<float> floatAttr(llvm::StringRef name,
                                   std::optional<float> fallback);
  mlir::FailureOr<std::string> stringAttr(llvm::StringRef name,
                                          std::optional<llvm::StringRef> fallback);
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  intsAttr(llvm::StringRef name,
           std::optional<llvm::ArrayRef<int64_t>> fallback);
  mlir::FailureOr<llvm::SmallVector<float>>
  floatsAttr(llvm::StringRef name, std::optional<llvm::ArrayRef<float>> fallback);
  /// A STRINGS attribute (required).
  mlir::FailureOr<llvm::SmallVector<std::string>> stringsAttr(llvm::StringRef name);
  /// A TENSOR attribute (Constant's value, ConstantOfShape's value).
  mlir::FailureOr<mlir::ElementsAttr> tensorAttr(llvm::StringRef name);
  /// The (inputs, outputs) counts of GRAPH attribute `name` (a
  /// control-flow body); an error when it is missing or not a graph.
  mlir::FailureOr<std::pair<unsigned, unsigned>> graphArity(llvm::StringRef name);
  /// Imports the body held by GRAPH attribute `name` inline, with `args`
  /// bound to its inputs, and returns its outputs. Each call builds the body
  /// again (loops are unrolled); the total is bounded.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> inlineGraph(llvm::StringRef name,
                                                              mlir::ValueRange args);
  /// Attribute names the node has, for "unsupported attribute" checks.
  std::vector<std::string> attrNames() const;

  /// "attribute 'name' value is v, accepted range is [lo, hi]".
  mlir::LogicalResult checkRange(llvm::StringRef what, int64_t value,
                                 int64_t lo, std::optional<int64_t> hi);
  mlir::InFlightDiagnostic emitError() { return mlir::emitError(location); }
  /// "unsupported: <why>" (a valid model Kiln cannot import).
  mlir::LogicalResult unsupported(const llvm::Twine &why);
  /// Fails (unsupported) when a shape given as a non-constant 1-D tensor of
  /// `length` entries would give a result of more dims than Kiln allows.
  mlir::LogicalResult checkComputedRank(int64_t length);
  /// Fails when `type` holds more bytes than int64 counts (every built
  /// result is checked; constants built directly call this).
  mlir::LogicalResult checkSize(mlir::Type type);

  //===--- Results --------------------------------------------------------===//
  unsigned numOutputs() const;
  /// True when output `i` is named and something reads it.
  bool outputUsed(unsigned i) const;
  mlir::LogicalResult setOutput(unsigned i, mlir::Value value);
  mlir::LogicalResult setOutputs(mlir::ValueRange values);

  //===--- Building ops ---------------------------------------------------===//
  /// Builds an op whose result types the dialect infers; inference or
  /// verification failures are diagnostics, never aborts.
  template <typename OpTy, typename... Args>
  mlir::FailureOr<OpTy> build(Args &&...args) {
    mlir::OperationState state(location, OpTy::getOperationName());
    OpTy::build(builder(), state, mlir::TypeRange{}, std::forward<Args>(args)...);
    llvm::SmallVector<mlir::Type> types;
    if (mlir::failed(OpTy::inferReturnTypes(
            context(), location, state.operands,
            state.attributes.getDictionary(context()), state.getRawProperties(),
            state.regions, types)))
      return mlir::failure();
    state.types.assign(types.begin(), types.end());
    return finish<OpTy>(state);
  }

  /// Builds an op with explicit result types (reshape, cast, range, ...).
  template <typename OpTy, typename... Args>
  mlir::FailureOr<OpTy> buildTyped(mlir::TypeRange types, Args &&...args) {
    mlir::OperationState state(location, OpTy::getOperationName());
    OpTy::build(builder(), state, types, std::forward<Args>(args)...);
    return finish<OpTy>(state);
  }

  /// Single-result shorthand that also folds (so that shape arithmetic on
  /// constants stays constant).
  template <typename OpTy, typename... Args>
  mlir::FailureOr<mlir::Value> make(Args &&...args) {
    mlir::FailureOr<OpTy> op = build<OpTy>(std::forward<Args>(args)...);
    if (mlir::failed(op))
      return mlir::failure();
    return foldResult(op->getOperation());
  }
  template <typename OpTy, typename... Args>
  mlir::FailureOr<mlir::Value> makeTyped(mlir::Type type, Args &&...args) {
    mlir::FailureOr<OpTy> op =
        buildTyped<OpTy>(mlir::TypeRange{type}, std::forward<Args>(args)...);
    if (mlir::failed(op))
      return mlir::failure();
    return foldResult(op->getOperation());
  }

  /// `kiln.constant` of `attr`.
  mlir::Value constant(mlir::ElementsAttr attr);
  /// A rank-0 constant of `elementType` holding `value`.
  mlir::Value scalar(mlir::Type elementType, double value);
  /// A 1-D i64 constant.
  mlir::Value i64Vector(llvm::ArrayRef<int64_t> values);

private:
  template <typename OpTy>
  mlir::FailureOr<OpTy> finish(mlir::OperationState &state) {
    mlir::Operation *op = builder().create(state);
    auto tooLarge = [&](mlir::Type t) { return mlir::failed(checkSize(t)); };
    if (llvm::any_of(op->getResultTypes(), tooLarge) ||
        mlir::failed(mlir::verify(op, /*verifyRecursively=*/false))) {
      op->erase();
      return mlir::failure();
    }
    return llvm::cast<OpTy>(op);
  }
  mlir::Value foldResult(mlir::Operation *op);
  const onnx::AttributeProto *findAttr(llvm::StringRef name) const;
  mlir::LogicalResult notConstant(unsigned i, llvm::StringRef what);
  mlir::LogicalResult wrongType(const onnx::AttributeProto &attr,
                                llvm::StringRef expected);

  GraphState &state;
  const onnx::NodeProto &node;
  int64_t opsetVersion;
  mlir::Location location;
};

//===----------------------------------------------------------------------===//
// Handler table
//===----------------------------------------------------------------------===//

using HandlerFn = mlir::LogicalResult (*)(NodeBinder &);

/// Handlers by (domain, op type); each entry covers opsets of its domain from
/// its since-version up to the next entry's. Besides ai.onnx (""), the
/// domains in kOtherDomains (ModelReader.h) have handlers.
class HandlerRegistry {
public:
  void add(llvm::StringRef opType, int64_t sinceVersion, HandlerFn fn,
           llvm::StringRef domain = "");
  /// The handler for `opType` at `opset`, or null with `why` set.
  HandlerFn lookup(llvm::StringRef domain, llvm::StringRef opType,
                   int64_t opset, std::string &why) const;
  /// Every op type ("domain::Op" outside ai.onnx) with its since-versions,
  /// sorted (for docs and --check).
  std::vector<std::pair<std::string, std::vector<int64_t>>> listAll() const;

  static const HandlerRegistry &get();

private:
  llvm::StringMap<std::vector<std::pair<int64_t, HandlerFn>>> handlers;
  llvm::StringSet<> domains;
};

void registerAttentionHandlers(HandlerRegistry &registry);
void registerControlFlowHandlers(HandlerRegistry &registry);
/// The parts stacked along a new dim `axis`: each gets a unit dim there,
/// then one concat (ControlFlowHandlers.cpp).
mlir::FailureOr<mlir::Value> stackParts(NodeBinder &b, llvm::ArrayRef<mlir::Value> parts,
                                        int64_t axis);
void registerRecurrentHandlers(HandlerRegistry &registry);
void registerLinearAttentionHandler(HandlerRegistry &registry);
void registerElementwiseHandlers(HandlerRegistry &registry);
void registerLossHandlers(HandlerRegistry &registry);
void registerNNHandlers(HandlerRegistry &registry);

/// Quantize/DequantizeLinear to or from the 8-bit float `narrow`, or blocked
/// (`block` > 0) to or from the integer type `narrow`, as a composition of
/// kiln ops (QuantHandlers.cpp); `zero` may be null.
mlir::LogicalResult quantizeComposed(NodeBinder &b, bool isQuantize, mlir::Value x,
                                     mlir::Value scale, mlir::Value zero, mlir::Type narrow,
                                     int64_t axis, int64_t block, bool saturate);
/// Checks the quantization scale that is input `index` of the node (named
/// `name` in the ONNX spec): a constant scale must be finite and non-zero in
/// every element, and a per-axis scale (1-D, `block` 0) of a node with an
/// `axis` must have as many elements as `x`'s static dim `axis`. Errors name
/// the input, the element and its value (QuantHandlers.cpp).
mlir::LogicalResult checkQuantizationScale(NodeBinder &b, unsigned index, llvm::StringRef name,
                                           mlir::Value x = {},
                                           std::optional<int64_t> axis = std::nullopt,
                                           int64_t block = 0);
void registerGridHandlers(HandlerRegistry &registry);
void registerIntegerHandlers(HandlerRegistry &registry);
void registerMatrixHandlers(HandlerRegistry &registry);
void registerMLHandlers(HandlerRegistry &registry);
void registerSequenceHandlers(HandlerRegistry &registry);
void registerTrainingHandlers(HandlerRegistry &registry);
/// MaxPool's Indices output (GridHandlers.cpp) for input `x` pooled into
/// `pooled` with the given window.
mlir::LogicalResult maxPoolIndices(NodeBinder &b, mlir::Value x, mlir::Value pooled,
                                   llvm::ArrayRef<int64_t> kernel,
                                   llvm::ArrayRef<int64_t> strides,
                                   llvm::ArrayRef<int64_t> dilations,
                                   llvm::ArrayRef<int64_t> pads, bool ceilMode);
void registerComposedHandlers(HandlerRegistry &registry);
/// BatchNormalization's training mode (ComposedHandlers.cpp): operands x,
/// scale, bias, input mean and variance.
mlir::LogicalResult batchNormTraining(NodeBinder &b, llvm::ArrayRef<mlir::Value> operands,
                                      float epsilon);
void registerElementwiseHandlers(HandlerRegistry &registry);
void registerLossHandlers(HandlerRegistry &registry);
void registerNNHandlers(HandlerRegistry &registry);
/// A `conv` of `x` and `weight` with the node's Conv attributes (kernel,
/// strides, dilations, pads, auto_pad, group) read and checked (NNHandlers.cpp).
mlir::FailureOr<mlir::Value> buildConv(NodeBinder &b, mlir::Value x, mlir::Value weight,
                                       mlir::Value bias);
void registerReductionHandlers(HandlerRegistry &registry);
void registerResizeHandlers(HandlerRegistry &registry);
void registerSamplingHandlers(HandlerRegistry &registry);
void registerShapeHandlers(HandlerRegistry &registry);
void registerSignalHandlers(HandlerRegistry &registry);
void registerTensorHandlers(HandlerRegistry &registry);
void registerTextHandlers(HandlerRegistry &registry);

//===----------------------------------------------------------------------===//
// Sequences and optionals (SequenceHandlers.cpp)
//===----------------------------------------------------------------------===//
//
// Kiln has no run-time sequence or optional type: the importer resolves them.
// A sequence is a list of tensor values whose length is known at import; an
// optional is empty or holds one tensor or sequence, also known at import.
// Both are carried through the value table as the result of a placeholder
// `builtin.unrealized_conversion_cast` (a tuple of the elements, marked
// kiln.composite = "sequence" | "optional"), so that control-flow bodies,
// If and Loop pass them like any value. Only the ops of takesComposites read
// them; the importer erases every placeholder once the graph is built, and a
// sequence or optional graph input or output is an error.

/// A sequence's elements, or an optional's value (none, or one tensor or
/// sequence).
struct Composite {
  bool optional = false;
  llvm::SmallVector<mlir::Value> elements;
};

/// True when `value` is a sequence or optional (not a tensor).
bool isComposite(mlir::Value value);
/// What a placeholder holds; nullopt for a tensor.
std::optional<Composite> compositeOf(mlir::Value value);
/// "a sequence" or "an optional" (for messages).
llvm::StringRef compositeKind(mlir::Value value);
/// Builds a placeholder holding `composite`.
mlir::Value makeComposite(NodeBinder &b, const Composite &composite);
/// `cond ? onTrue : onFalse` for two composites of the same structure:
/// one `select` per tensor (an If with a run-time condition).
mlir::FailureOr<mlir::Value> selectComposite(NodeBinder &b, mlir::Value cond,
                                             mlir::Value onTrue, mlir::Value onFalse);
/// Whether op `opType` of `domain` may read sequences and optionals (the
/// sequence and optional ops, Identity, If, Loop); the importer rejects them
/// as inputs of every other op.
bool takesComposites(llvm::StringRef domain, llvm::StringRef opType);

/// The integer elements of `value` when it is a small constant.
std::optional<llvm::SmallVector<int64_t>> constantIntsOf(mlir::Value value);

/// True when the static dims of `type` hold more bytes than int64 counts.
bool overflowsInt64Bytes(mlir::Type type);

/// Shape of a ranked tensor value (every kiln value is one).
inline mlir::RankedTensorType tensorType(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType());
}

} // namespace kiln::onnx_import

#endif // KILN_LIB_IMPORT_ONNX_NODEBINDER_H
