//===- MLHandlers.cpp - ai.onnx.ml Binarizer, ArrayFeatureExtractor, trees ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The numeric ops of the ai.onnx.ml domain (opsets 1-5), as compositions of
// kiln ops. TreeEnsemble (opset 5) is unrolled at import: every root-to-leaf
// path becomes one boolean column (the AND of its node tests), the columns a
// 0/1 matrix [N, paths], and SUM/AVERAGE a matmul with the constant
// [paths, n_targets] matrix of leaf weights; MIN/MAX select and reduce per
// target. Each tree reaches exactly one path per row, as in the spec. String
// ops (LabelEncoder on strings, ...) stay unsupported: Kiln has no strings.
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cmath>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

constexpr StringLiteral kML = "ai.onnx.ml";

/// Binarizer: X > threshold ? 1 : 0, in X's type.
LogicalResult binarizer(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<float> threshold = b.floatAttr("threshold", 0.0f);
  if (failed(x) || failed(threshold))
    return failure();
  Type element = tensorType(*x).getElementType();
  if (element.isInteger(1))
    return b.emitError() << "input 0 must be numeric, got " << x->getType();
  FailureOr<Value> above = b.make<kiln::GreaterOp>(*x, b.scalar(element, *threshold));
  if (failed(above))
    return failure();
  FailureOr<Value> y =
      b.make<kiln::SelectOp>(*above, b.scalar(element, 1), b.scalar(element, 0));
  return failed(y) ? failure() : b.setOutput(0, *y);
}

/// ArrayFeatureExtractor: X[..., Y] along the last axis with Y's elements
/// (flattened); a 1-D X gives [1, len(Y)].
LogicalResult arrayFeatureExtractor(NodeBinder &b) {
  FailureOr<Value> x = b.input(0), indices = b.input(1);
  if (failed(x) || failed(indices))
    return failure();
  RankedTensorType xType = tensorType(*x), iType = tensorType(*indices);
  if (!iType.getElementType().isInteger(64))
    return b.emitError() << "input 1 (Y) must be int64, got " << indices->getType();
  if (xType.getRank() == 0)
    return b.emitError() << "input 0 (X) must have rank >= 1, got " << x->getType();
  Value flat = *indices;
  if (iType.getRank() != 1) {
    if (!iType.hasStaticShape())
      return b.unsupported("input 1 (Y) of rank other than 1 with dynamic dims");
    FailureOr<Value> reshaped = b.makeTyped<kiln::ReshapeOp>(
        RankedTensorType::get({iType.getNumElements()}, iType.getElementType()),
        *indices, Value());
    if (failed(reshaped))
      return failure();
    flat = *reshaped;
  }
  FailureOr<Value> out = b.make<kiln::GatherOp>(
      *x, flat, static_cast<uint64_t>(xType.getRank() - 1));
  if (failed(out))
    return failure();
  if (xType.getRank() == 1) {
    out = b.make<kiln::UnsqueezeOp>(*out, ArrayRef<int64_t>{0});
    if (failed(out))
      return failure();
  }
  return b.setOutput(0, *out);
}

//===----------------------------------------------------------------------===//
// TreeEnsemble
//===----------------------------------------------------------------------===//

/// The elements of a small dense attribute tensor as doubles.
FailureOr<SmallVector<double>> attrValues(NodeBinder &b, StringRef name,
                                          bool required) {
  if (!b.hasAttr(name)) {
    if (required)
      return b.emitError() << "attribute '" << name << "' is required";
    return SmallVector<double>();
  }
  FailureOr<ElementsAttr> attr = b.tensorAttr(name);
  if (failed(attr))
    return failure();
  SmallVector<double> values;
  if (auto floats = dyn_cast<DenseFPElementsAttr>(*attr)) {
    for (const APFloat &v : floats.getValues<APFloat>())
      values.push_back(v.convertToDouble());
  } else if (auto ints = dyn_cast<DenseIntElementsAttr>(*attr)) {
    for (const APInt &v : ints.getValues<APInt>())
      values.push_back(static_cast<double>(v.getZExtValue()));
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(*attr)) {
    // Larger tensors are blobs of raw little-endian elements.
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    Type element = resource.getElementType();
    if (!blob || !(element.isF32() || element.isF64() || element.isInteger(8) ||
                   element.isInteger(32) || element.isInteger(64)))
      return b.unsupported("attribute '" + name + "' of " +
                           Twine(attr->getNumElements()) + " elements of a type " +
                           "the importer does not read here");
    ArrayRef<char> data = blob->getData();
    int64_t count = attr->getNumElements();
    for (int64_t i = 0; i < count; ++i) {
      if (element.isF32())
        values.push_back(reinterpret_cast<const float *>(data.data())[i]);
      else if (element.isF64())
        values.push_back(reinterpret_cast<const double *>(data.data())[i]);
      else if (element.isInteger(8))
        values.push_back(static_cast<uint8_t>(data[i]));
      else if (element.isInteger(32))
        values.push_back(reinterpret_cast<const int32_t *>(data.data())[i]);
      else
        values.push_back(static_cast<double>(reinterpret_cast<const int64_t *>(data.data())[i]));
    }
  } else {
    return b.unsupported("attribute '" + name + "' is not a dense tensor");
  }
  return values;
}

enum class Mode { leq, lt, gte, gt, eq, neq, member };
enum class Aggregate { average, sum, min, max };

struct Tree {
  SmallVector<int64_t> featureIds, modes, trueIds, falseIds, trueLeafs, falseLeafs,
      missingTrue, leafTargets, roots;
  SmallVector<double> splits, leafWeights;
  SmallVector<SmallVector<double>> members; // per node (BRANCH_MEMBER only)
  int64_t targets = 0;
};

/// Imports one TreeEnsemble: reads and checks every attribute first.
class TreeImporter {
public:
  TreeImporter(NodeBinder &b, Value x) : b(b), x(x) {}

  LogicalResult run();

private:
  LogicalResult read();
  FailureOr<Value> column(int64_t feature);
  FailureOr<Value> test(int64_t node);
  LogicalResult walk(int64_t node, Value reached, SmallVectorImpl<bool> &onPath,
                     int64_t depth);
  Value conj(Value reached, Value cond);

  NodeBinder &b;
  Value x;
  Type element;
  Tree t;
  Aggregate aggregate = Aggregate::sum;
  /// Per path end: its indicator [N, 1] (i1) and leaf index.
  SmallVector<std::pair<Value, int64_t>> paths;
  DenseMap<int64_t, Value> columns;
};

LogicalResult TreeImporter::read() {
  auto ints = [&](StringRef name, SmallVectorImpl<int64_t> &out, bool required) {
    if (!required && !b.hasAttr(name))
      return success();
    FailureOr<SmallVector<int64_t>> v = b.intsAttr(name, std::nullopt);
    if (failed(v))
      return failure();
    out.assign(v->begin(), v->end());
    return success();
  };
  FailureOr<int64_t> aggregateFn = b.intAttr("aggregate_function", 1);
  FailureOr<int64_t> post = b.intAttr("post_transform", 0);
  FailureOr<int64_t> targets = b.intAttr("n_targets", std::nullopt);
  if (failed(aggregateFn) || failed(post) || failed(targets) ||
      failed(b.checkRange("attribute 'aggregate_function'", *aggregateFn, 0, 3)) ||
      failed(b.checkRange("attribute 'post_transform'", *post, 0, 4)) ||
      failed(b.checkRange("attribute 'n_targets'", *targets, 1, 1 << 16)))
    return failure();
  if (*post != 0)
    return b.unsupported("post_transform other than NONE (0)");
  aggregate = static_cast<Aggregate>(*aggregateFn);
  t.targets = *targets;
  if (failed(ints("nodes_featureids", t.featureIds, true)) ||
      failed(ints("nodes_truenodeids", t.trueIds, true)) ||
      failed(ints("nodes_falsenodeids", t.falseIds, true)) ||
      failed(ints("nodes_trueleafs", t.trueLeafs, true)) ||
      failed(ints("nodes_falseleafs", t.falseLeafs, true)) ||
      failed(ints("nodes_missing_value_tracks_true", t.missingTrue, false)) ||
      failed(ints("leaf_targetids", t.leafTargets, true)) ||
      failed(ints("tree_roots", t.roots, true)))
    return failure();
  FailureOr<SmallVector<double>> modes = attrValues(b, "nodes_modes", true);
  if (failed(modes))
    return failure();
  FailureOr<SmallVector<double>> splits = attrValues(b, "nodes_splits", true);
  if (failed(splits))
    return failure();
  FailureOr<SmallVector<double>> weights = attrValues(b, "leaf_weights", true);
  if (failed(weights))
    return failure();
  FailureOr<SmallVector<double>> members = attrValues(b, "membership_values", false);
  if (failed(members))
    return failure();
  for (double m : *modes)
    t.modes.push_back(static_cast<int64_t>(m));
  t.splits = *splits;
  t.leafWeights = *weights;
  size_t nodes = t.modes.size();
  constexpr size_t kMaxNodes = 100000;
  if (nodes == 0 || nodes > kMaxNodes)
    return b.emitError() << "has " << nodes << " nodes, accepted range is [1, "
                         << kMaxNodes << "]";
  auto sameLength = [&](StringRef name, size_t size, size_t want) -> LogicalResult {
    if (size == want)
      return success();
    return b.emitError() << "attribute '" << name << "' has " << size
                         << " entries, expected " << want;
  };
  if (failed(sameLength("nodes_featureids", t.featureIds.size(), nodes)) ||
      failed(sameLength("nodes_splits", t.splits.size(), nodes)) ||
      failed(sameLength("nodes_truenodeids", t.trueIds.size(), nodes)) ||
      failed(sameLength("nodes_falsenodeids", t.falseIds.size(), nodes)) ||
      failed(sameLength("nodes_trueleafs", t.trueLeafs.size(), nodes)) ||
      failed(sameLength("nodes_falseleafs", t.falseLeafs.size(), nodes)) ||
      (!t.missingTrue.empty() &&
       failed(sameLength("nodes_missing_value_tracks_true", t.missingTrue.size(), nodes))) ||
      failed(sameLength("leaf_weights", t.leafWeights.size(), t.leafTargets.size())))
    return failure();
  int64_t features = tensorType(x).getDimSize(1);
  for (size_t i = 0; i < nodes; ++i) {
    if (t.modes[i] < 0 || t.modes[i] > 6)
      return b.emitError() << "node " << i << " has mode " << t.modes[i]
                           << ", accepted range is [0, 6]";
    if (t.featureIds[i] < 0 ||
        (!ShapedType::isDynamic(features) && t.featureIds[i] >= features))
      return b.emitError() << "node " << i << " reads feature " << t.featureIds[i]
                           << " of X " << x.getType();
    for (auto [ids, leafs, what] :
         {std::tuple(&t.trueIds, &t.trueLeafs, "true"),
          std::tuple(&t.falseIds, &t.falseLeafs, "false")}) {
      int64_t id = (*ids)[i];
      size_t bound = (*leafs)[i] ? t.leafWeights.size() : nodes;
      if (id < 0 || static_cast<size_t>(id) >= bound)
        return b.emitError() << "node " << i << "'s " << what << " branch is "
                             << ((*leafs)[i] ? "leaf " : "node ") << id
                             << ", accepted range is [0, " << bound << ")";
    }
  }
  for (int64_t target : t.leafTargets)
    if (failed(b.checkRange("a leaf_targetids entry", target, 0, t.targets - 1)))
      return failure();
  for (int64_t root : t.roots)
    if (root < 0 || static_cast<size_t>(root) >= nodes)
      return b.emitError() << "tree root " << root << ", accepted range is [0, "
                           << nodes << ")";
  if (t.roots.empty())
    return b.emitError() << "attribute 'tree_roots' is empty";
  // Member sets, NaN-delimited, in the order of the BRANCH_MEMBER nodes.
  t.members.resize(nodes);
  size_t next = 0;
  for (size_t i = 0; i < nodes; ++i) {
    if (t.modes[i] != static_cast<int64_t>(Mode::member))
      continue;
    while (next < members->size() && !std::isnan((*members)[next]))
      t.members[i].push_back((*members)[next++]);
    if (next == members->size())
      return b.emitError() << "attribute 'membership_values' has fewer NaN-delimited "
                              "sets than there are BRANCH_MEMBER nodes";
    ++next;
  }
  return success();
}

/// X[:, feature] as [N, 1], built once per feature.
FailureOr<Value> TreeImporter::column(int64_t feature) {
  if (Value known = columns.lookup(feature))
    return known;
  FailureOr<Value> slice = b.make<kiln::SliceOp>(
      x, ArrayRef<int64_t>{feature}, ArrayRef<int64_t>{feature + 1},
      ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1});
  if (failed(slice))
    return failure();
  columns[feature] = *slice;
  return *slice;
}

/// Node `node`'s test on its feature, [N, 1] i1 (NaN follows
/// nodes_missing_value_tracks_true).
FailureOr<Value> TreeImporter::test(int64_t node) {
  FailureOr<Value> v = column(t.featureIds[node]);
  if (failed(v))
    return failure();
  auto mode = static_cast<Mode>(t.modes[node]);
  Value split = b.scalar(element, t.splits[node]);
  FailureOr<Value> cond = failure();
  switch (mode) {
  case Mode::leq: cond = b.make<kiln::LessEqualOp>(*v, split); break;
  case Mode::lt: cond = b.make<kiln::LessOp>(*v, split); break;
  case Mode::gte: cond = b.make<kiln::GreaterEqualOp>(*v, split); break;
  case Mode::gt: cond = b.make<kiln::GreaterOp>(*v, split); break;
  case Mode::eq: cond = b.make<kiln::EqualOp>(*v, split); break;
  case Mode::neq: {
    FailureOr<Value> eq = b.make<kiln::EqualOp>(*v, split);
    cond = failed(eq) ? eq : b.make<kiln::NotOp>(*eq);
    break;
  }
  case Mode::member: {
    if (t.members[node].empty()) {
      // x in {} is false: x != x is false except for NaN, handled below.
      FailureOr<Value> self = b.make<kiln::EqualOp>(*v, *v);
      cond = failed(self) ? self : b.make<kiln::NotOp>(*self);
      break;
    }
    Value any;
    for (double member : t.members[node]) {
      FailureOr<Value> eq = b.make<kiln::EqualOp>(*v, b.scalar(element, member));
      if (failed(eq))
        return failure();
      FailureOr<Value> joined = any ? b.make<kiln::OrOp>(any, *eq) : eq;
      if (failed(joined))
        return failure();
      any = *joined;
    }
    cond = any;
    break;
  }
  }
  if (failed(cond))
    return failure();
  if (t.missingTrue.empty() || t.missingTrue[node] == 0)
    return cond;
  FailureOr<Value> self = b.make<kiln::EqualOp>(*v, *v);
  if (failed(self))
    return failure();
  FailureOr<Value> nan = b.make<kiln::NotOp>(*self);
  return failed(nan) ? nan : b.make<kiln::OrOp>(*cond, *nan);
}

Value TreeImporter::conj(Value reached, Value cond) {
  if (!reached)
    return cond;
  FailureOr<Value> both = b.make<kiln::AndOp>(reached, cond);
  return succeeded(both) ? *both : Value();
}

/// Records every path from `node`, reached where `reached` holds (null:
/// everywhere). `onPath` rejects a node that leads back to itself.
LogicalResult TreeImporter::walk(int64_t node, Value reached,
                                 SmallVectorImpl<bool> &onPath, int64_t depth) {
  if (onPath[node])
    return b.emitError() << "node " << node << " is reached again from itself";
  constexpr int64_t kMaxDepth = 512;
  if (depth > kMaxDepth)
    return b.emitError() << "has a tree deeper than " << kMaxDepth << " nodes";
  constexpr size_t kMaxPaths = 100000;
  if (paths.size() > kMaxPaths)
    return b.emitError() << "has more than " << kMaxPaths << " root-to-leaf paths";
  onPath[node] = true;
  FailureOr<Value> cond = test(node);
  if (failed(cond))
    return failure();
  FailureOr<Value> negated = b.make<kiln::NotOp>(*cond);
  if (failed(negated))
    return failure();
  for (auto [branch, id, isLeaf] :
       {std::tuple(*cond, t.trueIds[node], t.trueLeafs[node]),
        std::tuple(*negated, t.falseIds[node], t.falseLeafs[node])}) {
    Value here = conj(reached, branch);
    if (!here)
      return failure();
    if (isLeaf)
      paths.emplace_back(here, id);
    else if (failed(walk(id, here, onPath, depth + 1)))
      return failure();
  }
  onPath[node] = false;
  return success();
}

LogicalResult TreeImporter::run() {
  RankedTensorType xType = tensorType(x);
  element = xType.getElementType();
  if (xType.getRank() != 2 || !isa<FloatType>(element))
    return b.emitError() << "input 0 (X) must be a float [N, F] tensor, got "
                         << x.getType();
  if (failed(read()))
    return failure();
  for (int64_t root : t.roots) {
    SmallVector<bool> onPath(t.modes.size(), false);
    if (failed(walk(root, Value(), onPath, 0)))
      return failure();
  }
  int64_t trees = t.roots.size();
  int64_t count = paths.size();
  FailureOr<Value> out;
  if (aggregate == Aggregate::sum || aggregate == Aggregate::average) {
    // [N, paths] of 0/1 times [paths, targets] of leaf weights.
    SmallVector<Value> indicators;
    Value one = b.scalar(element, 1), zero = b.scalar(element, 0);
    for (auto &[reached, leaf] : paths) {
      FailureOr<Value> v = b.make<kiln::SelectOp>(reached, one, zero);
      if (failed(v))
        return failure();
      indicators.push_back(*v);
    }
    FailureOr<Value> matrix = b.make<kiln::ConcatOp>(indicators, static_cast<uint64_t>(1));
    if (failed(matrix))
      return failure();
    double scale = aggregate == Aggregate::average ? 1.0 / trees : 1.0;
    SmallVector<double> weights(count * t.targets, 0.0);
    for (auto [i, path] : llvm::enumerate(paths))
      weights[i * t.targets + t.leafTargets[path.second]] =
          t.leafWeights[path.second] * scale;
    auto weightType = RankedTensorType::get({count, t.targets}, element);
    SmallVector<APFloat> values;
    for (double w : weights) {
      APFloat v(w);
      bool lost;
      v.convert(cast<FloatType>(element).getFloatSemantics(),
                APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    Value weightMatrix = b.constant(DenseFPElementsAttr::get(weightType, values));
    out = b.make<kiln::MatmulOp>(*matrix, weightMatrix);
  } else {
    // Per target: min/max over the paths leading to it, else the extreme.
    bool isMin = aggregate == Aggregate::min;
    const llvm::fltSemantics &sem = cast<FloatType>(element).getFloatSemantics();
    double extreme = APFloat::getLargest(sem, /*Negative=*/!isMin).convertToDouble();
    Value init = b.scalar(element, extreme);
    SmallVector<Value> perTarget;
    for (int64_t target = 0; target < t.targets; ++target) {
      FailureOr<Value> acc = b.make<kiln::SelectOp>(paths.front().first, init, init);
      if (failed(acc))
        return failure();
      for (auto &[reached, leaf] : paths) {
        if (t.leafTargets[leaf] != target)
          continue;
        FailureOr<Value> v = b.make<kiln::SelectOp>(
            reached, b.scalar(element, t.leafWeights[leaf]), init);
        if (failed(v))
          return failure();
        acc = isMin ? b.make<kiln::MinOp>(*acc, *v) : b.make<kiln::MaxOp>(*acc, *v);
        if (failed(acc))
          return failure();
      }
      perTarget.push_back(*acc);
    }
    out = b.make<kiln::ConcatOp>(perTarget, static_cast<uint64_t>(1));
  }
  return failed(out) ? failure() : b.setOutput(0, *out);
}

LogicalResult treeEnsemble(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  if (failed(x))
    return failure();
  return TreeImporter(b, *x).run();
}

} // namespace

void registerMLHandlers(HandlerRegistry &r) {
  r.add("ArrayFeatureExtractor", 1, arrayFeatureExtractor, kML);
  r.add("Binarizer", 1, binarizer, kML);
  r.add("TreeEnsemble", 5, treeEnsemble, kML);
}

} // namespace kiln::onnx_import
