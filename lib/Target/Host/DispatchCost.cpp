//===- DispatchCost.cpp - FLOP/byte estimates and kilnc --report=cost ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/DispatchCost.h"

#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"
#include "kiln/Target/Host/ABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln {

namespace {
/// Floating-point operations of one payload execution.
int64_t payloadFlops(Block &body) {
  int64_t flops = 0;
  for (Operation &op : body) {
    if (isa<math::FmaOp>(op))
      flops += 2;
    else if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp, arith::RemFOp,
                 arith::NegFOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
                 arith::MinNumFOp, arith::CmpFOp>(op))
      flops += 1;
    else if (op.getDialect() && isa<math::MathDialect>(op.getDialect()) &&
             llvm::any_of(op.getResultTypes(), [](Type t) { return isa<FloatType>(t); }))
      flops += 1; // exp, tanh, erf, sqrt, ...: one each, as rooflines count them
  }
  return flops;
}

/// Bytes of a statically shaped operand, -1 when dynamic.
int64_t operandBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  Type element = shaped ? shaped.getElementType() : type;
  if (!element.isIntOrFloat())
    return -1;
  int64_t bytes = llvm::divideCeil(element.getIntOrFloatBitWidth(), 8);
  if (!shaped)
    return bytes;
  if (!shaped.hasStaticShape())
    return -1;
  return bytes * shaped.getNumElements();
}
} // namespace

DispatchCost estimateDispatchCost(linalg::LinalgOp op) {
  DispatchCost cost;
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return cost;
    iterations *= range;
  }
  // Inputs that are slices of one tensor (the taps of a depthwise conv) read
  // it at most once: their bytes count up to the tensor's.
  llvm::MapVector<Value, std::pair<int64_t, int64_t>> read; // source: (slice bytes, its bytes)
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value source = input->get();
    if (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>())
      source = slice.getSource();
    int64_t b = operandBytes(input->get().getType()), whole = operandBytes(source.getType());
    if (b < 0)
      return cost;
    auto &entry = read.try_emplace(source, 0, whole < 0 ? INT64_MAX : whole).first->second;
    entry.first += b;
  }
  int64_t bytes = 0;
  for (auto &[source, sizes] : read)
    bytes += std::min(sizes.first, sizes.second);
  for (OpOperand &init : op.getDpsInitsMutable()) {
    int64_t b = operandBytes(init.get().getType());
    if (b < 0)
      return cost;
    bytes += op.payloadUsesValueFromOperand(&init) ? 2 * b : b;
  }
  cost.flops = iterations * payloadFlops(*op.getBlock());
  // A conv taps B prologue (Epilogue.h) runs once per element of B, not
  // once per output row: only w * b and the sum are per iteration.
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (generic && generic->hasAttr(kConvTapsAttr) && convTapsLayout(generic) &&
      hasConvTapsPrologue(generic) && iterations > 0)
    cost.flops = iterations * 2 + iterations / op.getStaticLoopRanges()[0] *
                                      (payloadFlops(*op.getBlock()) - 2);
  cost.bytes = bytes;
  return cost;
}

void printDispatchCostReport(ModuleOp module, llvm::raw_ostream &os, bool json) {
  auto names = module->getAttrOfType<ArrayAttr>(kDispatchNamesAttr);
  auto costs = module->getAttrOfType<DenseI64ArrayAttr>(kDispatchCostsAttr);
  size_t count = names && costs && costs.size() == 2 * static_cast<int64_t>(names.size())
                     ? names.size()
                     : 0;
  // The matmul kernels' instruction sets, where they are not f32 FMAs.
  auto isas = module->getAttrOfType<ArrayAttr>(kMatmulISAAttr);
  if (isas && isas.size() != count)
    isas = nullptr;
  auto isaOf = [&](size_t i) {
    return isas ? cast<StringAttr>(isas[i]).getValue() : llvm::StringRef();
  };
  llvm::json::Array rows;
  if (!json) {
    os << "cost report: " << count << " dispatches (FLOPs of the payload, bytes of "
       << "compulsory traffic; -1: dynamic)\n";
    if (isas)
      os << llvm::formatv("  {0,4}  {1,14}  {2,12}  {3,8}  {4,-10}  {5}\n", "id", "flops",
                          "bytes", "flop/B", "isa", "dispatch");
    else
      os << llvm::formatv("  {0,4}  {1,14}  {2,12}  {3,8}  {4}\n", "id", "flops", "bytes",
                          "flop/B", "dispatch");
  }
  for (size_t i = 0; i < count; ++i) {
    int64_t flops = costs[2 * i], bytes = costs[2 * i + 1];
    llvm::StringRef name = cast<StringAttr>(names[i]).getValue();
    if (json) {
      llvm::json::Object row{{"id", static_cast<int64_t>(i)},
                             {"name", name},
                             {"flops", flops},
                             {"bytes", bytes}};
      if (!isaOf(i).empty())
        row["isa"] = isaOf(i);
      rows.push_back(std::move(row));
      continue;
    }
    std::string intensity =
        flops >= 0 && bytes > 0 ? llvm::formatv("{0:f2}", double(flops) / double(bytes)).str()
                                : "-";
    if (isas)
      os << llvm::formatv("  {0,4}  {1,14}  {2,12}  {3,8}  {4,-10}  {5}\n", i, flops, bytes,
                          intensity, isaOf(i).empty() ? "-" : isaOf(i), name);
    else
      os << llvm::formatv("  {0,4}  {1,14}  {2,12}  {3,8}  {4}\n", i, flops, bytes, intensity,
                          name);
  }
  if (json)
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(rows))) << "\n";
}

DispatchCost estimateDispatchCost(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return estimateDispatchCost(linalgOp);
  if (auto nbits = dyn_cast<MatmulNBitsKernelOp>(op)) {
    DispatchCost cost;
    auto a = cast<ShapedType>(nbits.getA().getType());
    auto q = cast<ShapedType>(nbits.getQ().getType());
    if (!a.hasStaticShape())
      return cost;
    int64_t packedBits = q.getNumElements() * nbits.getBits(); // the kernel's weight bytes
    cost.flops = 2 * a.getNumElements() * q.getDimSize(0);
    cost.bytes = 4 * (a.getNumElements() + 2 * cast<ShapedType>(nbits.getScales().getType())
                                                   .getNumElements() +
                      a.getDimSize(0) * q.getDimSize(0)) +
                 packedBits / 8;
    return cost;
  }
  auto attention = dyn_cast<AttentionKernelOp>(op);
  if (!attention)
    return {};
  DispatchCost cost;
  auto q = cast<ShapedType>(attention.getQuery().getType());
  auto k = cast<ShapedType>(attention.getKey().getType());
  if (!q.hasStaticShape() || !k.hasStaticShape())
    return cost;
  int64_t bytes = 0;
  for (Value operand : op->getOperands()) {
    int64_t b = operandBytes(operand.getType());
    if (b < 0)
      return cost;
    bytes += b;
  }
  cost.flops = 4 * q.getNumElements() * k.getDimSize(2);
  cost.bytes = bytes;
  return cost;
}

} // namespace kiln
