//===- FusionReport.cpp - What the dispatch stage made of a model ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/FusionReport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {
namespace {

struct Dispatch {
  std::string kind, op;
  std::vector<std::string> operands, results, nodes;
};

std::string shapeOf(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

/// Names of the source nodes behind `loc` (NameLocs inside FusedLocs).
void collectNames(Location loc, llvm::SetVector<std::string, std::vector<std::string>, std::set<std::string>> &names) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collectNames(inner, names);
  } else if (auto name = dyn_cast<NameLoc>(loc)) {
    names.insert(name.getName().str());
  } else if (auto callSite = dyn_cast<CallSiteLoc>(loc)) {
    collectNames(callSite.getCallee(), names);
  }
}

/// A generic that only yields one of its inputs moves data (a transpose or
/// broadcast written as a generic so that fusion could fold it).
bool onlyMovesData(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || generic.getNumReductionLoops() > 0)
    return false;
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 1)
    return false;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return llvm::all_of(yield.getValues(), [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &body &&
           arg.getArgNumber() < static_cast<unsigned>(generic.getNumDpsInputs());
  });
}

} // namespace

std::string dispatchKind(linalg::LinalgOp op) {
  if (isa<linalg::ConvolutionOpInterface>(op.getOperation()))
    return isa<linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(op.getOperation())
               ? "pooling"
               : "convolution";
  if (linalg::isaContractionOpInterface(op))
    return "contraction";
  if (isa<linalg::TransposeOp, linalg::CopyOp>(op.getOperation()) || onlyMovesData(op))
    return "data movement";
  if (op.getNumReductionLoops() > 0)
    return "reduction";
  return "elementwise";
}

std::vector<std::string> sourceNodeNames(Location loc) {
  llvm::SetVector<std::string, std::vector<std::string>, std::set<std::string>> names;
  collectNames(loc, names);
  return names.takeVector();
}

namespace {

std::vector<Dispatch> collect(ModuleOp module) {
  std::vector<Dispatch> dispatches;
  module.walk([&](linalg::LinalgOp op) {
    if (isa<linalg::FillOp>(op.getOperation()))
      return;
    Dispatch d;
    d.kind = dispatchKind(op);
    d.op = op->getName().getStringRef().str();
    for (Value operand : op->getOperands())
      d.operands.push_back(shapeOf(operand.getType()));
    for (Value result : op->getResults())
      d.results.push_back(shapeOf(result.getType()));
    d.nodes = sourceNodeNames(op->getLoc());
    dispatches.push_back(std::move(d));
  });
  return dispatches;
}

} // namespace

void printFusionReport(ModuleOp module, llvm::raw_ostream &os, bool json) {
  std::vector<Dispatch> dispatches = collect(module);
  if (json) {
    llvm::json::Array array;
    for (const Dispatch &d : dispatches)
      array.push_back(llvm::json::Object{
          {"kind", d.kind},
          {"op", d.op},
          {"operands", llvm::json::Array(d.operands)},
          {"results", llvm::json::Array(d.results)},
          {"nodes", llvm::json::Array(d.nodes)}});
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"dispatches", std::move(array)},
                                     {"count", static_cast<int64_t>(dispatches.size())}}))
       << "\n";
    return;
  }
  os << "fusion report: " << dispatches.size() << " dispatches\n";
  for (auto [i, d] : llvm::enumerate(dispatches)) {
    os << "  #" << i << " " << d.kind << ": " << d.op << " (";
    llvm::interleaveComma(d.operands, os);
    os << ") -> ";
    llvm::interleaveComma(d.results, os);
    if (!d.nodes.empty()) {
      os << "  nodes: ";
      llvm::interleaveComma(d.nodes, os);
    }
    os << "\n";
  }
}

} // namespace kiln
