//===- MatmulTuner.cpp - One configuration per CPU matmul ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See MatmulTuner.h.
//
//===----------------------------------------------------------------------===//

#include "MatmulTuner.h"

#include "kiln/Dispatch/DispatchAttr.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::matmul_tuning {

namespace {

/// `f32[64x?|?,1]`: element type, shape and strides (not the offset, which
/// differs between views of one kernel's operands).
std::string operandText(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto type = dyn_cast<MemRefType>(value.getType());
  if (!type) {
    os << value.getType();
    return text;
  }
  os << type.getElementType() << "[";
  auto dim = [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  };
  llvm::interleave(type.getShape(), os, dim, "x");
  SmallVector<int64_t> strides;
  int64_t offset;
  if (succeeded(type.getStridesAndOffset(strides, offset))) {
    os << "|";
    llvm::interleave(strides, os, dim, ",");
  }
  os << "]";
  return text;
}

/// `(arith.addf,math.tanh;f32[64],f32[64x64|64,1])`: a generic's body ops
/// and its operands.
std::string structureText(linalg::GenericOp generic) {
  SmallVector<std::string> parts;
  for (Operation &op : generic.getBody()->without_terminator())
    parts.push_back(op.getName().getStringRef().str());
  SmallVector<std::string> operands;
  for (Value operand : generic->getOperands())
    operands.push_back(operandText(operand));
  return "(" + llvm::join(parts, ",") + ";" + llvm::join(operands, ",") + ")";
}

} // namespace

std::string matmulSignature(Value a, Value b, Value c, bool fresh,
                            linalg::GenericOp epilogue, bool constantA, bool constantB,
                            const std::optional<matmul_loops::ConvTaps> &taps,
                            VectorRegisters vectors) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (taps) {
    const ConvTapsLayout &l = taps->layout;
    os << "conv_taps kh=" << taps->kh << " kw=" << taps->kw << " layout=" << l.rowStep << ","
       << l.colStep << "," << l.width << "," << l.yStep << "," << l.xStep
       << " x=" << operandText(taps->x);
    if (taps->prologue)
      os << " prologue=" << structureText(taps->prologue);
  } else {
    os << "matmul b=" << operandText(b);
  }
  os << " a=" << operandText(a) << " c=" << operandText(c) << " constant-a=" << constantA
     << " constant-b=" << constantB << " fresh=" << fresh << " vector-width=" << vectors.width;
  if (vectors.registers != 32)
    os << " vector-registers=" << vectors.registers;
  if (epilogue)
    os << " epilogue=" << structureText(epilogue);
  return text;
}

LogicalResult MatmulTuner::parseTuned(ModuleOp module) {
  for (const std::string &entry : base.tuned) {
    auto [key, rest] = llvm::StringRef(entry).split('=');
    auto [configText, timeText] = rest.split('@');
    std::optional<MatmulConfig> config = parseMatmulConfig(configText);
    double microseconds = -1;
    if (key.empty() || !config || (!timeText.empty() && timeText.getAsDouble(microseconds)))
      return module.emitError() << "kiln-cpu-matmul: tuned entry '" << entry
                                << "': expected KEY=RxVxMxNxKxT@MICROSECONDS";
    if (!isSupported(*config, {base.vectorWidth, base.vectorRegisters}))
      return module.emitError() << "kiln-cpu-matmul: tuned entry '" << entry
                                << "': configuration " << config->str()
                                << " is not in the space " << kSpaceVersion
                                << " supports (registers or blocks)";
    tuned[key] = {*config, microseconds};
  }
  return success();
}

KilnCPUMatmulPassOptions MatmulTuner::choose(Operation *op, llvm::StringRef signature,
                                             const MatmulProblem &problem) {
  MatmulConfig fallback{base.tileRows, base.tileVectors, base.tileM,
                        base.tileN,    base.tileK,       base.parallelTasks};
  std::string key = signatureKey(signature);
  MatmulConfig config = fallback;
  llvm::StringRef source = "default";
  double microseconds = -1;
  if (auto it = tuned.find(key); it != tuned.end()) {
    config = it->second.config;
    microseconds = it->second.microseconds;
    source = "tuned";
  } else if (base.costModel) {
    config = chooseByCostModel(problem, fallback, {base.vectorWidth, base.vectorRegisters});
    source = "predicted";
  }
  // One record per (dispatch, key): a split batch or conv is one choice.
  std::optional<int64_t> id = dispatchId(op);
  std::string nodes;
  if (id)
    for (Attribute node : dispatchNodes(op))
      nodes += (nodes.empty() ? "" : ",") + cast<StringAttr>(node).str();
  if (recorded.insert((llvm::Twine(id.value_or(-1)) + " " + key).str()).second) {
    Builder b(op->getContext());
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("dispatch", b.getI64IntegerAttr(id.value_or(-1))),
        b.getNamedAttr("nodes", b.getStringAttr(nodes)),
        b.getNamedAttr("key", b.getStringAttr(key)),
        b.getNamedAttr("signature", b.getStringAttr(signature)),
        b.getNamedAttr("config", b.getStringAttr(config.str())),
        b.getNamedAttr("source", b.getStringAttr(source)),
        b.getNamedAttr("m", b.getI64IntegerAttr(problem.m)),
        b.getNamedAttr("n", b.getI64IntegerAttr(problem.n)),
        b.getNamedAttr("k", b.getI64IntegerAttr(problem.k)),
        b.getNamedAttr("constant_a", b.getBoolAttr(problem.constantA)),
        b.getNamedAttr("constant_b", b.getBoolAttr(problem.constantB))};
    if (microseconds >= 0)
      fields.push_back(b.getNamedAttr("time_us", b.getF64FloatAttr(microseconds)));
    choices.push_back(b.getDictionaryAttr(fields));
  }
  KilnCPUMatmulPassOptions options = base;
  options.tileRows = config.rows;
  options.tileVectors = config.vectors;
  options.tileM = config.m;
  options.tileN = config.n;
  options.tileK = config.k;
  options.parallelTasks = config.tasks;
  return options;
}

void MatmulTuner::record(ModuleOp module) const {
  if (!choices.empty())
    module->setAttr(kTuningAttr, ArrayAttr::get(module.getContext(), choices));
}

} // namespace kiln::matmul_tuning
