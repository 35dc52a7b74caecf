//===- FusionReport.cpp - What the dispatch stage made of a model ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/FusionReport.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <set>
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {
namespace {

/// One linalg op of a dispatch: its name, operand and result types.
struct Member {
  std::string op;
  std::vector<std::string> operands, results;
};

/// A kernel: its root op, the ops fused into it (a matmul's epilogue), and
/// the model nodes it covers.
struct Dispatch {
  std::string kind;
  /// How a conv taps root reads its input (convDetail), else empty.
  std::string conv;
  Member root;
  std::vector<Member> fused;
  std::vector<std::string> nodes;
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
  if (op->hasAttr(kConvTapsAttr))
    return "convolution";
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

/// A conv taps contraction in words: its window and depth, and how the
/// kernel's B packing reads the input: shifted rows at the padded row
/// pitch (stride 1 on wide rows), or gathered through the conv's index map
/// (an implicit GEMM: the output width, the input steps per output row and
/// column).
std::string convDetail(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  std::optional<ConvTapsLayout> layout =
      generic && generic->hasAttr(kConvTapsAttr) ? convTapsLayout(generic) : std::nullopt;
  if (!layout)
    return "";
  ArrayRef<int64_t> w = cast<ShapedType>(generic.getDpsInputs()[0].getType()).getShape();
  std::string text = llvm::formatv("{0}x{1} conv taps, K = {2}, ", w[2], w[3],
                                   w[1] * w[2] * w[3]);
  // A B prologue: B computed while packing, from inputs read like B and
  // per input channel (the producer the dispatch stage folded in).
  std::string source = "input";
  if (hasConvTapsPrologue(generic)) {
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    unsigned rows = llvm::count_if(ArrayRef(maps).slice(1, generic.getNumDpsInputs() - 1),
                                   isConvTapsRowMap);
    text += llvm::formatv("B prologue in the packing ({0} input(s) read like B, {1} per "
                          "channel), ",
                          generic.getNumDpsInputs() - 1 - rows, rows)
                .str();
    source = "prologue input";
  }
  if (layout->isContiguous())
    return text + "B from shifted " + source + " rows";
  // kiln-cpu-matmul's RowWrap (lib/Target/CPU/MatmulPrologue.h).
  if (layout->width >= 16 && layout->xStep == 1 && layout->yStep >= layout->width)
    return text + llvm::formatv("B from {0} rows of width {1} at row step {2} (masked loads)",
                                source, layout->width, layout->yStep)
                      .str();
  if (!layout->width)
    return text + llvm::formatv("B gathered (column step {0})", layout->xStep).str();
  return text + llvm::formatv("B gathered (output width {0}, row step {1}, column step {2})",
                              layout->width, layout->yStep, layout->xStep)
                    .str();
}

Member describe(Operation *op) {
  Member m;
  m.op = op->getName().getStringRef().str();
  for (Value operand : op->getOperands())
    m.operands.push_back(shapeOf(operand.getType()));
  for (Value result : op->getResults())
    m.results.push_back(shapeOf(result.getType()));
  return m;
}

/// The report's name of a kiln.dispatch kind.
std::string reportKind(StringRef kind) {
  if (kind == "row_group")
    return "row kernel";
  if (kind == "data_movement")
    return "data movement";
  return kind.str();
}

/// One dispatch per kiln.dispatch region: its first kernel op is the root,
/// the others are fused into it. A kernel op outside every region (IR that
/// kiln-form-dispatch-regions did not run on) is a dispatch of its own.
std::vector<Dispatch> collect(ModuleOp module) {
  std::vector<Dispatch> dispatches;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (auto region = dyn_cast<DispatchOp>(op)) {
      Dispatch d;
      d.kind = reportKind(region.getKind());
      for (Attribute node : region.getNodes())
        d.nodes.push_back(cast<StringAttr>(node).str());
      for (Operation &inner : region.getBody().front()) {
        if (!isDispatchKernelOp(&inner))
          continue;
        if (d.root.op.empty()) {
          d.root = describe(&inner);
          d.conv = convDetail(&inner);
        } else {
          d.fused.push_back(describe(&inner));
        }
      }
      dispatches.push_back(std::move(d));
      return WalkResult::skip();
    }
    if (!isDispatchKernelOp(op))
      return WalkResult::advance();
    Dispatch d;
    d.kind = isa<AttentionKernelOp>(op)     ? "attention"
             : isa<MatmulNBitsKernelOp>(op) ? "matmul_nbits"
                                            : dispatchKind(cast<linalg::LinalgOp>(op));
    d.conv = convDetail(op);
    d.root = describe(op);
    d.nodes = sourceNodeNames(op->getLoc());
    dispatches.push_back(std::move(d));
    return WalkResult::skip();
  });
  return dispatches;
}

llvm::json::Object toJSON(const Member &m) {
  return llvm::json::Object{{"op", m.op},
                            {"operands", llvm::json::Array(m.operands)},
                            {"results", llvm::json::Array(m.results)}};
}

void printMember(const Member &m, llvm::raw_ostream &os) {
  os << m.op << " (";
  llvm::interleaveComma(m.operands, os);
  os << ") -> ";
  llvm::interleaveComma(m.results, os);
}

} // namespace

void printFusionReport(ModuleOp module, llvm::raw_ostream &os, bool json) {
  std::vector<Dispatch> dispatches = collect(module);
  if (json) {
    llvm::json::Array array;
    for (const Dispatch &d : dispatches) {
      llvm::json::Object object = toJSON(d.root);
      object["kind"] = d.kind;
      if (!d.conv.empty())
        object["conv"] = d.conv;
      llvm::json::Array fused;
      for (const Member &m : d.fused)
        fused.push_back(toJSON(m));
      object["fused"] = std::move(fused);
      object["nodes"] = llvm::json::Array(d.nodes);
      array.push_back(std::move(object));
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"dispatches", std::move(array)},
                                     {"count", static_cast<int64_t>(dispatches.size())}}))
       << "\n";
    return;
  }
  os << "fusion report: " << dispatches.size() << " dispatches\n";
  for (auto [i, d] : llvm::enumerate(dispatches)) {
    os << "  #" << i << " " << d.kind;
    if (!d.conv.empty())
      os << " (" << d.conv << ")";
    os << ": ";
    printMember(d.root, os);
    for (const Member &m : d.fused) {
      os << (d.kind == "row kernel" ? " + " : " + epilogue ");
      printMember(m, os);
    }
    if (!d.nodes.empty()) {
      os << "  nodes: ";
      llvm::interleaveComma(d.nodes, os);
    }
    os << "\n";
  }
}

} // namespace kiln
