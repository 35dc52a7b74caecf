//===- LoweringFailure.cpp - Why a kiln op could not be lowered -----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln::lowering {

namespace {
thread_local LoweringFailures *active = nullptr;

/// `node 'X'` from the location the importer gives each op, if any.
std::string nodeOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return "node '" + name.getName().str() + "' ";
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string node = nodeOf(inner); !node.empty())
        return node;
  return "";
}

/// `operand 0 dims 1, 2, 3; result dims 2, 3`: where the types are dynamic.
std::string dynamicDims(Operation *op) {
  std::string out;
  auto list = [&](Type type, const std::string &what) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || tensor.hasStaticShape())
      return;
    std::string dims;
    for (int64_t i = 0; i < tensor.getRank(); ++i)
      if (tensor.isDynamicDim(i))
        dims += (dims.empty() ? "" : ", ") + std::to_string(i);
    out += (out.empty() ? "" : "; ") + what + " dims " + dims;
  };
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    list(type, "operand " + std::to_string(i));
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    list(type, op->getNumResults() == 1 ? "result" : "result " + std::to_string(i));
  return out;
}
} // namespace

LogicalResult failLowering(RewriterBase &rewriter, Operation *op, const Twine &why) {
  if (active)
    active->reasons[op] = why.str();
  return rewriter.notifyMatchFailure(op, why);
}

LoweringFailures::LoweringFailures(MLIRContext *context) : previous(active) {
  active = this;
  handler.emplace(context, [this](Diagnostic &diag) -> LogicalResult {
    std::string message = diag.str();
    llvm::StringRef text(message);
    if (diag.getSeverity() != DiagnosticSeverity::Error ||
        !text.consume_front("failed to legalize operation '"))
      return failure();
    unlegalized.emplace_back(diag.getLocation(), text.take_until([](char c) {
      return c == '\'';
    }).str());
    return success();
  });
}

LoweringFailures::~LoweringFailures() { active = previous; }

void LoweringFailures::report(Operation *root) {
  handler.reset();
  for (const auto &entry : unlegalized) {
    Location loc = entry.first;
    const std::string &name = entry.second;
    Operation *op = nullptr;
    root->walk([&](Operation *candidate) {
      if (candidate->getLoc() == loc && candidate->getName().getStringRef() == name &&
          (!op || reasons.count(candidate)))
        op = candidate;
    });
    // Types are printed as the IR spells them (a diagnostic would quote each).
    std::string text;
    llvm::raw_string_ostream os(text);
    os << nodeOf(loc) << "(" << name << "): cannot lower to linalg";
    if (!op) {
      emitError(loc) << text << ": no pattern applies";
      continue;
    }
    os << " with operand types (";
    llvm::interleaveComma(op->getOperandTypes(), os);
    os << ") and result types (";
    llvm::interleaveComma(op->getResultTypes(), os);
    auto reason = reasons.find(op);
    os << "): unsupported: "
       << (reason != reasons.end() ? reason->second : "no pattern lowers this form");
    if (std::string dims = dynamicDims(op); !dims.empty())
      os << " (dynamic: " << dims << ")";
    emitError(loc) << text;
  }
}

} // namespace kiln::lowering
