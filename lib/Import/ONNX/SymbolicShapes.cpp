//===- SymbolicShapes.cpp - Symbolic dims of the values being imported ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Dims come from rules where an op's result shape is written in its operands'
// values (Reshape, Expand, ConstantOfShape, Range) or in broadcasting, and
// otherwise from the dialect's own type inference evaluated at a point: each
// symbol is replaced by a distinct large prime, the op's inferReturnTypes runs
// on placeholders of those static types, and a result dim that equals one of
// the operands' dims (or a product of adjacent dims, or a sum across
// operands) at that point is that dim. A dim that matches nothing gets an
// opaque symbol; a probe never proves a dim constant.
//
//===----------------------------------------------------------------------===//

#include "SymbolicShapes.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Target/Host/DimFormula.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/TypeSwitch.h"

#include <map>

using namespace mlir;

namespace kiln::onnx_import {

namespace {
constexpr int64_t kMaxElements = 16;
thread_local SymbolicShapes *activeTable = nullptr;

/// The value of symbol n while probing: far apart (2^20), so that a result
/// dim a small constant away from an operand dim (a stride-1 conv's spatial
/// dim, h + 2p - k + 1) is near that dim only.
int64_t probeValue(unsigned n) { return (static_cast<int64_t>(n) + 1) * (1 << 20) + 1; }

/// Offsets up to this far from a candidate are read as `candidate + c`.
constexpr int64_t kMaxProbeOffset = 4096;

std::string describe(Operation *op) {
  std::string where = op->getName().getStringRef().str();
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return "node '" + name.getName().str() + "' (" + where + ")";
  return where;
}

bool isSmallInteger(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() && tensor.getRank() <= 1 &&
         tensor.getNumElements() <= kMaxElements &&
         isa<IntegerType>(tensor.getElementType());
}
} // namespace

SymbolicShapes *SymbolicShapes::active() { return activeTable; }

SymbolicShapes::ScopedActive::ScopedActive(SymbolicShapes &shapes)
    : previous(activeTable) {
  activeTable = &shapes;
}
SymbolicShapes::ScopedActive::~ScopedActive() { activeTable = previous; }

//===----------------------------------------------------------------------===//
// Symbols
//===----------------------------------------------------------------------===//

void SymbolicShapes::bindInput(Value input, ArrayRef<std::string> dimNames) {
  auto type = dyn_cast<RankedTensorType>(input.getType());
  if (!type)
    return;
  SmallVector<DimExpr> exprs;
  for (auto [i, d] : llvm::enumerate(type.getShape())) {
    if (!ShapedType::isDynamic(d) || i >= dimNames.size() || dimNames[i].empty()) {
      exprs.push_back(ShapedType::isDynamic(d) ? freshSymbol(nullptr)
                                               : DimExpr::constant(d));
      continue;
    }
    auto [it, inserted] = byName.try_emplace(dimNames[i], symbols.size());
    if (inserted)
      symbols.push_back({dimNames[i], /*input=*/true, true, ""});
    exprs.push_back(DimExpr::symbol(it->second));
  }
  dims[input] = std::move(exprs);
}

DimExpr SymbolicShapes::freshSymbol(Operation *origin, bool positive) {
  std::string where = origin ? describe(origin) : "a value without a known shape";
  symbols.push_back({"d" + std::to_string(symbols.size()), false, positive, where});
  return DimExpr::symbol(symbols.size() - 1);
}

/// A symbol standing for an expression the algebra keeps opaque (max, min,
/// an inexact floor-division); the same expression gives the same symbol.
DimExpr SymbolicShapes::derivedSymbol(const std::string &key, bool positive) {
  auto [it, inserted] = byName.try_emplace(key, symbols.size());
  if (inserted)
    symbols.push_back({key, false, positive, ""});
  return DimExpr::symbol(it->second);
}

DimExpr SymbolicShapes::resolve(const DimExpr &expr) {
  return expr.substitute([&](unsigned s) -> std::optional<DimExpr> {
    auto it = bound.find(s);
    if (it == bound.end())
      return std::nullopt;
    return resolve(it->second);
  });
}

void SymbolicShapes::unify(const DimExpr &a, const DimExpr &b) {
  DimExpr ra = resolve(a), rb = resolve(b);
  if (ra == rb)
    return;
  auto bindable = [&](const DimExpr &e, const DimExpr &to) {
    std::optional<unsigned> s = e.getSymbol();
    if (!s || symbols[*s].input)
      return false;
    std::vector<unsigned> used = to.symbols();
    return !llvm::is_contained(used, *s);
  };
  if (bindable(ra, rb))
    bound[*ra.getSymbol()] = rb;
  else if (bindable(rb, ra))
    bound[*rb.getSymbol()] = ra;
  else if (ra.getSymbol() && rb.getSymbol() && symbols[*ra.getSymbol()].input &&
           symbols[*rb.getSymbol()].input)
    // Two named input dims that broadcast against each other are one size.
    bound[std::max(*ra.getSymbol(), *rb.getSymbol())] =
        DimExpr::symbol(std::min(*ra.getSymbol(), *rb.getSymbol()));
}

std::optional<int> SymbolicShapes::compare(const DimExpr &a, const DimExpr &b) {
  DimExpr d = resolve(a) - resolve(b);
  if (std::optional<int64_t> c = d.getConstant())
    return *c < 0 ? -1 : (*c > 0 ? 1 : 0);
  auto allPositive = [&](const DimExpr &e) {
    return llvm::all_of(e.symbols(), [&](unsigned s) { return symbols[s].positive; });
  };
  if (!allPositive(d))
    return std::nullopt;
  if (d.isPositive())
    return 1;
  if ((DimExpr() - d).isPositive())
    return -1;
  return std::nullopt;
}

DimExpr SymbolicShapes::floorDiv(const DimExpr &a, const DimExpr &b) {
  DimExpr ra = resolve(a), rb = resolve(b);
  std::optional<int64_t> ca = ra.getConstant(), cb = rb.getConstant();
  if (ca && cb && *cb != 0)
    return DimExpr::constant(*ca / *cb); // ONNX integer Div truncates
  if (std::optional<DimExpr> exact = ra.divideExactly(rb))
    return *exact;
  return derivedSymbol("(" + str(ra) + ") floordiv (" + str(rb) + ")", false);
}

DimExpr SymbolicShapes::max(const DimExpr &a, const DimExpr &b) {
  if (std::optional<int> c = compare(a, b))
    return *c >= 0 ? resolve(a) : resolve(b);
  DimExpr ra = resolve(a), rb = resolve(b);
  return derivedSymbol("max(" + str(ra) + ", " + str(rb) + ")",
                       ra.isPositive() || rb.isPositive());
}

DimExpr SymbolicShapes::min(const DimExpr &a, const DimExpr &b) {
  if (std::optional<int> c = compare(a, b))
    return *c <= 0 ? resolve(a) : resolve(b);
  DimExpr ra = resolve(a), rb = resolve(b);
  return derivedSymbol("min(" + str(ra) + ", " + str(rb) + ")",
                       ra.isPositive() && rb.isPositive());
}

std::string SymbolicShapes::str(const DimExpr &expr) {
  return resolve(expr).str([&](unsigned s) {
    const std::string &name = symbols[s].name;
    return name.find(' ') == std::string::npos ? name : "(" + name + ")";
  });
}

std::optional<std::string> SymbolicShapes::inputDimName(const DimExpr &expr) {
  std::optional<unsigned> s = resolve(expr).getSymbol();
  if (!s || !symbols[*s].input)
    return std::nullopt;
  return symbols[*s].name;
}

std::optional<std::string> SymbolicShapes::inputDimFormula(const DimExpr &expr) {
  DimExpr resolved = resolve(expr);
  std::vector<unsigned> used = resolved.symbols();
  if (used.empty())
    return std::nullopt;
  for (unsigned s : used)
    if (!symbols[s].input || !dim_formula::isPlainName(symbols[s].name))
      return std::nullopt;
  return resolved.str([&](unsigned s) { return symbols[s].name; });
}

std::optional<std::string> SymbolicShapes::valueDependence(const DimExpr &expr) {
  for (unsigned s : resolve(expr).symbols())
    if (!symbols[s].origin.empty())
      return symbols[s].origin;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Dims
//===----------------------------------------------------------------------===//

SmallVector<DimExpr> SymbolicShapes::dimsOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return {};
  auto it = dims.find(value);
  if (it == dims.end() && !type.hasStaticShape()) {
    if (Operation *op = value.getDefiningOp())
      computeDims(op);
    it = dims.find(value);
  }
  SmallVector<DimExpr> result;
  for (auto [i, d] : llvm::enumerate(type.getShape())) {
    if (!ShapedType::isDynamic(d))
      result.push_back(DimExpr::constant(d));
    else if (it != dims.end() && i < it->second.size())
      result.push_back(resolve(it->second[i]));
    else
      result.push_back(freshSymbol(value.getDefiningOp()));
  }
  if (it == dims.end())
    dims[value] = result;
  return result;
}

void SymbolicShapes::computeDims(Operation *op) {
  if (dimsByRule(op) || dimsByProbing(op))
    return;
  for (Value result : op->getResults())
    if (auto type = dyn_cast<RankedTensorType>(result.getType())) {
      SmallVector<DimExpr> exprs;
      for (int64_t d : type.getShape())
        exprs.push_back(ShapedType::isDynamic(d) ? freshSymbol(op)
                                                 : DimExpr::constant(d));
      dims[result] = std::move(exprs);
    }
}

/// Reshape and ConstantOfShape: the result dims are the shape's elements;
/// Expand: the broadcast of the input against them; Range: its length.
bool SymbolicShapes::dimsOfShapeTarget(Operation *op) {
  Value result = op->getResult(0);
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  if (auto range = dyn_cast<kiln::RangeOp>(op)) {
    auto start = elementsOf(range.getStart()), limit = elementsOf(range.getLimit()),
         delta = elementsOf(range.getDelta());
    if (!start || !limit || !delta || start->size() != 1 || limit->size() != 1 ||
        delta->size() != 1)
      return false;
    std::optional<int64_t> step = delta->front().getConstant();
    if (!step || *step <= 0)
      return false;
    DimExpr span = limit->front() - start->front() + DimExpr::constant(*step - 1);
    dims[result] = {max(floorDiv(span, DimExpr::constant(*step)), DimExpr())};
    return true;
  }
  Value shape;
  if (auto reshape = dyn_cast<kiln::ReshapeOp>(op))
    shape = reshape.getShape();
  else if (auto expand = dyn_cast<kiln::ExpandOp>(op))
    shape = expand.getShape();
  else if (auto fill = dyn_cast<kiln::ConstantOfShapeOp>(op))
    shape = fill.getShape();
  std::optional<SmallVector<DimExpr>> target = shape ? elementsOf(shape) : std::nullopt;
  if (!target || static_cast<int64_t>(target->size()) != rank)
    return false;
  if (!isa<kiln::ExpandOp>(op)) {
    dims[result] = *target;
    return true;
  }
  SmallVector<DimExpr> input = dimsOf(op->getOperand(0));
  SmallVector<DimExpr> out = *target;
  for (auto [i, in] : llvm::enumerate(llvm::reverse(input))) {
    DimExpr &t = out[rank - 1 - i];
    if (t.getConstant() == 1)
      t = in;
    else if (in.getConstant() != 1)
      unify(in, t);
  }
  dims[result] = out;
  return true;
}

/// Numpy broadcasting: a dim of 1 stretches; two other dims are one size.
bool SymbolicShapes::dimsOfBroadcast(Operation *op) {
  Value result = op->getResult(0);
  int64_t rank = cast<RankedTensorType>(result.getType()).getRank();
  SmallVector<std::optional<DimExpr>> out(rank);
  for (Value operand : op->getOperands()) {
    SmallVector<DimExpr> in = dimsOf(operand);
    for (auto [i, d] : llvm::enumerate(llvm::reverse(in))) {
      if (d.getConstant() == 1 || static_cast<int64_t>(i) >= rank)
        continue;
      std::optional<DimExpr> &o = out[rank - 1 - i];
      if (o)
        unify(*o, d);
      else
        o = d;
    }
  }
  SmallVector<DimExpr> exprs;
  for (std::optional<DimExpr> &o : out)
    exprs.push_back(o ? resolve(*o) : DimExpr::constant(1));
  dims[result] = exprs;
  return true;
}

bool SymbolicShapes::dimsByRule(Operation *op) {
  if (op->getNumResults() != 1 || !isa<RankedTensorType>(op->getResult(0).getType()))
    return false;
  if (isa<kiln::ReshapeOp, kiln::ExpandOp, kiln::ConstantOfShapeOp, kiln::RangeOp>(op))
    return dimsOfShapeTarget(op);
  if (isa<kiln::AddOp, kiln::SubOp, kiln::MulOp, kiln::DivOp, kiln::PowOp, kiln::MaxOp,
          kiln::MinOp, kiln::ModOp, kiln::AndOp, kiln::OrOp, kiln::XorOp, kiln::EqualOp,
          kiln::LessOp, kiln::LessEqualOp, kiln::GreaterOp, kiln::GreaterEqualOp,
          kiln::SelectOp>(op))
    return dimsOfBroadcast(op);
  if (op->getNumOperands() >= 1 &&
      (op->hasTrait<OpTrait::SameOperandsAndResultShape>() ||
       op->hasTrait<OpTrait::SameOperandsAndResultType>())) {
    dims[op->getResult(0)] = dimsOf(op->getOperand(0));
    return true;
  }
  return false;
}

/// The candidate `v` is, or is a small constant away from; else an opaque
/// symbol of `op`.
DimExpr SymbolicShapes::decodeProbe(const std::map<int64_t, DimExpr> &candidates,
                                    int64_t v, Operation *op) {
  auto above = candidates.lower_bound(v);
  std::optional<std::pair<int64_t, DimExpr>> nearest;
  if (above != candidates.end())
    nearest = *above;
  if (above != candidates.begin() &&
      (!nearest || v - std::prev(above)->first < nearest->first - v))
    nearest = *std::prev(above);
  if (!nearest || std::abs(v - nearest->first) > kMaxProbeOffset)
    return freshSymbol(op);
  return nearest->second + DimExpr::constant(v - nearest->first);
}

/// Runs the op's type inference with each symbol at its probe value and
/// reads the result dims back as operand dims (see the file comment).
bool SymbolicShapes::dimsByProbing(Operation *op) {
  auto infer = dyn_cast<InferTypeOpInterface>(op);
  if (!infer || op->getNumRegions() != 0)
    return false;
  SmallVector<SmallVector<DimExpr>> operandDims;
  for (Value operand : op->getOperands())
    operandDims.push_back(dimsOf(operand));
  auto at = [&](const DimExpr &e) {
    return e.evaluate([](unsigned s) { return probeValue(s); });
  };
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(op);
  SmallVector<Value> probes;
  SmallVector<Operation *> placeholders;
  std::map<int64_t, DimExpr> candidates;
  for (auto [operand, exprs] : llvm::zip(op->getOperands(), operandDims)) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type) {
      probes.push_back(operand);
      continue;
    }
    SmallVector<int64_t> shape;
    for (const DimExpr &e : exprs)
      shape.push_back(e.getConstant() ? *e.getConstant() : at(e));
    auto cast = UnrealizedConversionCastOp::create(
        builder, op->getLoc(), TypeRange{type.clone(shape)}, ValueRange{});
    placeholders.push_back(cast);
    probes.push_back(cast.getResult(0));
    // Candidates: a dim, a product of adjacent dims (flatten, reshape).
    for (size_t i = 0; i < exprs.size(); ++i) {
      DimExpr product = DimExpr::constant(1);
      for (size_t j = i; j < exprs.size(); ++j) {
        product = product * exprs[j];
        if (!product.getConstant())
          candidates.try_emplace(at(product), product);
      }
    }
  }
  // A sum along one axis across the operands (concat).
  for (size_t axis = 0; !operandDims.empty() && axis < operandDims[0].size(); ++axis) {
    DimExpr sum;
    bool all = true;
    for (auto &exprs : operandDims)
      all &= axis < exprs.size() && (sum = sum + exprs[axis], true);
    if (all && !sum.getConstant())
      candidates.try_emplace(at(sum), sum);
  }
  SmallVector<Type> inferred;
  LogicalResult status = failure();
  {
    ScopedDiagnosticHandler quiet(op->getContext(), [](Diagnostic &) { return success(); });
    status = infer.inferReturnTypes(op->getContext(), std::nullopt, probes,
                                    op->getAttrDictionary(), op->getPropertiesStorage(),
                                    op->getRegions(), inferred);
  }
  for (Operation *p : placeholders)
    p->erase();
  if (failed(status) || inferred.size() != op->getNumResults())
    return false;
  for (auto [result, type] : llvm::zip(op->getResults(), inferred)) {
    auto actual = dyn_cast<RankedTensorType>(result.getType());
    auto probed = dyn_cast<RankedTensorType>(type);
    if (!actual)
      continue;
    SmallVector<DimExpr> exprs;
    for (auto [i, d] : llvm::enumerate(actual.getShape())) {
      if (!ShapedType::isDynamic(d)) {
        exprs.push_back(DimExpr::constant(d));
        continue;
      }
      int64_t v = probed && probed.getRank() == actual.getRank() ? probed.getDimSize(i)
                                                                 : ShapedType::kDynamic;
      exprs.push_back(ShapedType::isDynamic(v) ? freshSymbol(op) : decodeProbe(candidates, v, op));
    }
    dims[result] = std::move(exprs);
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Elements of shape tensors
//===----------------------------------------------------------------------===//

std::optional<SmallVector<DimExpr>> SymbolicShapes::elementsOf(Value value) {
  if (!isSmallInteger(value.getType()))
    return std::nullopt;
  auto it = elements.find(value);
  if (it != elements.end())
    return it->second ? std::optional(llvm::map_to_vector(
                            *it->second, [&](const DimExpr &e) { return resolve(e); }))
                      : std::nullopt;
  std::optional<SmallVector<DimExpr>> computed = computeElements(value);
  elements[value] = computed;
  return computed;
}

std::optional<DimExpr> SymbolicShapes::binary(Operation *op, const DimExpr &a,
                                              const DimExpr &b) {
  auto truth = [&](std::optional<int> c, auto pred) -> std::optional<DimExpr> {
    if (!c)
      return std::nullopt;
    return DimExpr::constant(pred(*c) ? 1 : 0);
  };
  std::optional<int64_t> ca = a.getConstant(), cb = b.getConstant();
  return llvm::TypeSwitch<Operation *, std::optional<DimExpr>>(op)
      .Case([&](kiln::AddOp) { return a + b; })
      .Case([&](kiln::SubOp) { return a - b; })
      .Case([&](kiln::MulOp) { return a * b; })
      .Case([&](kiln::DivOp) -> std::optional<DimExpr> {
        if (cb == 0 || (ca && cb && (*ca < 0 || *cb < 0)))
          return std::nullopt; // constants are ShapeFolding's
        return floorDiv(a, b);
      })
      .Case([&](kiln::MaxOp) { return max(a, b); })
      .Case([&](kiln::MinOp) { return min(a, b); })
      .Case([&](kiln::EqualOp) { return truth(compare(a, b), [](int c) { return c == 0; }); })
      .Case([&](kiln::LessOp) { return truth(compare(a, b), [](int c) { return c < 0; }); })
      .Case([&](kiln::LessEqualOp) { return truth(compare(a, b), [](int c) { return c <= 0; }); })
      .Case([&](kiln::GreaterOp) { return truth(compare(a, b), [](int c) { return c > 0; }); })
      .Case([&](kiln::GreaterEqualOp) {
        return truth(compare(a, b), [](int c) { return c >= 0; });
      })
      .Default([](Operation *) { return std::nullopt; });
}

/// Elementwise ops over shape vectors and scalars (one element broadcasts).
std::optional<SmallVector<DimExpr>>
SymbolicShapes::elementsOfBroadcast(Operation *op, int64_t count) {
  SmallVector<SmallVector<DimExpr>> args;
  for (Value operand : op->getOperands()) {
    std::optional<SmallVector<DimExpr>> e = elementsOf(operand);
    if (!e || (e->size() != 1 && static_cast<int64_t>(e->size()) != count))
      return std::nullopt;
    args.push_back(std::move(*e));
  }
  auto arg = [&](size_t k, int64_t i) { return args[k][args[k].size() == 1 ? 0 : i]; };
  SmallVector<DimExpr> out;
  for (int64_t i = 0; i < count; ++i) {
    std::optional<DimExpr> v;
    if (isa<kiln::SelectOp>(op)) {
      std::optional<int64_t> c = arg(0, i).getConstant();
      if (c)
        v = *c ? arg(1, i) : arg(2, i);
    } else if (isa<kiln::NegOp>(op)) {
      v = DimExpr() - arg(0, i);
    } else if (args.size() == 2) {
      v = binary(op, arg(0, i), arg(1, i));
    }
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

/// Entries of a 1-D shape vector picked by constant indices.
std::optional<SmallVector<DimExpr>> SymbolicShapes::elementsOfGather(kiln::GatherOp gather) {
  std::optional<SmallVector<DimExpr>> in = elementsOf(gather.getInput());
  std::optional<SmallVector<DimExpr>> indices = elementsOf(gather.getIndices());
  if (!in || !indices || gather.getAxis() != 0 ||
      cast<RankedTensorType>(gather.getInput().getType()).getRank() != 1)
    return std::nullopt;
  SmallVector<DimExpr> out;
  int64_t length = in->size();
  for (const DimExpr &index : *indices) {
    std::optional<int64_t> i = index.getConstant();
    if (!i || *i < -length || *i >= length)
      return std::nullopt;
    out.push_back((*in)[*i < 0 ? *i + length : *i]);
  }
  return out;
}

/// A forward slice of a 1-D shape vector (its bounds are attributes).
std::optional<SmallVector<DimExpr>> SymbolicShapes::elementsOfSlice(kiln::SliceOp slice,
                                                                    int64_t count) {
  std::optional<SmallVector<DimExpr>> in = elementsOf(slice.getInput());
  if (!in || slice.getStarts().size() != 1 || slice.getSteps()[0] <= 0)
    return std::nullopt;
  int64_t size = in->size(), start = slice.getStarts()[0];
  start = std::clamp<int64_t>(start < 0 ? start + size : start, 0, size);
  SmallVector<DimExpr> out;
  for (int64_t i = 0, at = start; i < count; ++i, at += slice.getSteps()[0])
    if (at < size)
      out.push_back((*in)[at]);
  return out;
}

std::optional<SmallVector<DimExpr>> SymbolicShapes::computeElements(Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t count = type.getNumElements();
  DenseIntElementsAttr attr;
  if (matchPattern(value, m_Constant(&attr))) {
    bool zext = type.getElementType().isUnsignedInteger() || type.getElementType().isInteger(1);
    return llvm::map_to_vector(attr.getValues<APInt>(), [&](const APInt &v) {
      return DimExpr::constant(zext ? static_cast<int64_t>(v.getZExtValue())
                                    : v.getSExtValue());
    });
  }
  Operation *op = value.getDefiningOp();
  if (!op || op->getNumResults() != 1)
    return std::nullopt;
  auto sameCount = [&](std::optional<SmallVector<DimExpr>> e)
      -> std::optional<SmallVector<DimExpr>> {
    if (e && e->size() == 1 && count != 1)
      return SmallVector<DimExpr>(count, e->front());
    if (!e || static_cast<int64_t>(e->size()) != count)
      return std::nullopt;
    return e;
  };
  if (auto shape = dyn_cast<kiln::ShapeOp>(op)) {
    SmallVector<DimExpr> in = dimsOf(shape.getInput());
    int64_t rank = in.size();
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    int64_t start = clamp(shape.getStart().value_or(0));
    int64_t end = std::max(start, clamp(shape.getEnd().value_or(rank)));
    return sameCount(SmallVector<DimExpr>(in.begin() + start, in.begin() + end));
  }
  if (auto size = dyn_cast<kiln::SizeOp>(op)) {
    DimExpr product = DimExpr::constant(1);
    for (const DimExpr &d : dimsOf(size.getInput()))
      product = product * d;
    return SmallVector<DimExpr>{product};
  }
  if (auto gather = dyn_cast<kiln::GatherOp>(op))
    return sameCount(elementsOfGather(gather));
  if (auto concat = dyn_cast<kiln::ConcatOp>(op)) {
    SmallVector<DimExpr> out;
    for (Value input : concat.getInputs()) {
      std::optional<SmallVector<DimExpr>> e = elementsOf(input);
      if (!e)
        return std::nullopt;
      llvm::append_range(out, *e);
    }
    return sameCount(out);
  }
  if (auto slice = dyn_cast<kiln::SliceOp>(op))
    return sameCount(elementsOfSlice(slice, count));
  if (auto reduce = dyn_cast<kiln::ReduceOp>(op)) {
    std::optional<SmallVector<DimExpr>> in = elementsOf(reduce.getInput());
    bool product = reduce.getKind() == ReduceKind::prod;
    if (!in || count != 1 || (!product && reduce.getKind() != ReduceKind::sum))
      return std::nullopt;
    DimExpr acc = DimExpr::constant(product ? 1 : 0);
    for (const DimExpr &e : *in)
      acc = product ? acc * e : acc + e;
    return SmallVector<DimExpr>{acc};
  }
  if (auto cast = dyn_cast<kiln::CastOp>(op)) {
    if (!isa<IntegerType>(getElementTypeOrSelf(cast.getInput())))
      return std::nullopt;
    return sameCount(elementsOf(cast.getInput()));
  }
  if (isa<kiln::UnsqueezeOp, kiln::SqueezeOp, kiln::ReshapeOp, kiln::FlattenOp,
          kiln::ExpandOp>(op))
    return sameCount(elementsOf(op->getOperand(0)));
  return elementsOfBroadcast(op, count);
}

//===----------------------------------------------------------------------===//
// Using what is known
//===----------------------------------------------------------------------===//

void SymbolicShapes::refine(Operation *op) {
  SmallVector<Type> before = llvm::to_vector(op->getResultTypes());
  bool changed = false;
  for (Value result : op->getResults()) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || type.hasStaticShape())
      continue;
    SmallVector<int64_t> shape(type.getShape());
    for (auto [d, expr] : llvm::zip(shape, dimsOf(result)))
      if (std::optional<int64_t> c = expr.getConstant(); c && *c >= 0)
        d = *c;
    if (shape != type.getShape()) {
      result.setType(type.clone(shape));
      changed = true;
    }
  }
  if (!changed)
    return;
  ScopedDiagnosticHandler quiet(op->getContext(), [](Diagnostic &) { return success(); });
  if (failed(verify(op, /*verifyRecursively=*/false)))
    for (auto [result, type] : llvm::zip(op->getResults(), before))
      result.setType(type);
}

DenseElementsAttr SymbolicShapes::constantValue(Value value) {
  std::optional<SmallVector<DimExpr>> e = elementsOf(value);
  if (!e || isa_and_nonnull<kiln::ConstantOp>(value.getDefiningOp()))
    return {};
  auto type = cast<RankedTensorType>(value.getType());
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (const DimExpr &d : *e) {
    std::optional<int64_t> c = d.getConstant();
    if (!c || width == 1)
      return {};
    values.push_back(APInt(width, static_cast<uint64_t>(*c), /*isSigned=*/true,
                           /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(type, values);
}

void SymbolicShapes::forget(Operation *op) {
  for (Value result : op->getResults()) {
    dims.erase(result);
    elements.erase(result);
  }
}

} // namespace kiln::onnx_import
