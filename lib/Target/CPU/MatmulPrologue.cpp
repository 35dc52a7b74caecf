//===- MatmulPrologue.cpp - B prologues of conv taps kernels --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "MatmulPrologue.h"

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <climits>

using namespace mlir;

namespace kiln {

BPrologue::BPrologue(linalg::GenericOp generic) : generic(generic) {
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Block &body = generic.getRegion().front();
  for (unsigned i = 1; i < generic.getNumDpsInputs(); ++i) {
    if (isConvTapsRowMap(maps[i])) {
      rowArgs.push_back(i);
    } else {
      xArgs.push_back(i);
      xs.push_back(generic.getDpsInputs()[i]);
    }
  }
  // yield out + w * element
  auto add = cast<arith::AddFOp>(body.getTerminator()->getOperand(0).getDefiningOp());
  auto mul = add.getRhs().getDefiningOp<arith::MulFOp>();
  element = mul.getRhs();
  product = mul;
  sum = add;
  llvm::SmallPtrSet<Value, 8> varying;
  for (unsigned i : xArgs)
    varying.insert(body.getArgument(i));
  for (Operation &op : body.without_terminator()) {
    if (&op == add || &op == mul)
      continue;
    if (llvm::any_of(op.getOperands(), [&](Value v) { return varying.contains(v); }))
      varying.insert(op.getResult(0));
    else
      perRow.insert(&op);
  }
}

void BPrologue::beginRow(OpBuilder &b, Location loc, Value channel) {
  rowValues.clear();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  Block &body = generic.getRegion().front();
  for (unsigned i : rowArgs) {
    SmallVector<Value> at;
    for (AffineExpr expr : maps[i].getResults()) {
      if (auto constant = dyn_cast<AffineConstantExpr>(expr))
        at.push_back(arith::ConstantIndexOp::create(b, loc, constant.getValue()));
      else
        at.push_back(channel);
    }
    rowValues.map(body.getArgument(i),
                  memref::LoadOp::create(b, loc, generic.getDpsInputs()[i], at).getResult());
  }
  for (Operation &op : body.without_terminator())
    if (perRow.contains(&op))
      b.clone(op, rowValues);
}

Value BPrologue::evaluate(OpBuilder &b, Location loc, ArrayRef<Value> xVectors,
                          int64_t vectorWidth) {
  Block &body = generic.getRegion().front();
  auto vectorOf = [&](Type t) { return VectorType::get({vectorWidth}, t); };
  IRMapping map;
  for (auto [arg, vector] : llvm::zip(xArgs, xVectors))
    map.map(body.getArgument(arg), vector);
  // Scalars (per row, or from outside the body) become splats.
  auto lookup = [&](Value value) -> Value {
    if (Value vector = map.lookupOrNull(value))
      return vector;
    Value scalar = rowValues.lookupOrDefault(value);
    return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()), scalar);
  };
  for (Operation &op : body.without_terminator()) {
    if (perRow.contains(&op) || &op == product || &op == sum)
      continue;
    OperationState state(loc, op.getName());
    for (Value operand : op.getOperands())
      state.addOperands(lookup(operand));
    state.addTypes(vectorOf(op.getResult(0).getType()));
    state.addAttributes(op.getAttrs());
    map.map(op.getResult(0), b.create(state)->getResult(0));
  }
  return lookup(element);
}

bool isRowWrapLayout(const ConvTapsLayout &layout, int64_t vectorWidth) {
  return layout.width >= vectorWidth && layout.xStep == 1 && layout.yStep >= layout.width;
}

RowWrap rowWrap(OpBuilder &b, Location loc, const ConvTapsLayout &layout, Value p0, Value mask,
                int64_t vectorWidth) {
  auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value width = constant(layout.width);
  Value y = arith::DivUIOp::create(b, loc, p0, width);
  Value x = arith::RemUIOp::create(b, loc, p0, width);
  RowWrap wrap;
  wrap.base = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, y, constant(layout.yStep)), x);
  wrap.nextBase = arith::AddIOp::create(b, loc, wrap.base, constant(layout.yStep - layout.width));
  // Lanes [0, width - x) are in row y.
  Value first = arith::SubIOp::create(b, loc, width, x);
  first = arith::MinSIOp::create(b, loc, first, constant(vectorWidth));
  auto maskType = VectorType::get({vectorWidth}, b.getI1Type());
  Value inFirst = vector::CreateMaskOp::create(b, loc, maskType, ValueRange{first});
  Value ones = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(maskType, true));
  wrap.firstMask = arith::AndIOp::create(b, loc, inFirst, mask);
  wrap.wraps = vector::ReductionOp::create(
      b, loc, vector::CombiningKind::OR,
      arith::AndIOp::create(b, loc, arith::XOrIOp::create(b, loc, inFirst, ones), mask));
  wrap.nextMask =
      arith::AndIOp::create(b, loc, arith::XOrIOp::create(b, loc, inFirst, ones), mask);
  return wrap;
}

Value RowWrap::load(OpBuilder &b, Location loc, Value x, Value row, Value shift,
                    VectorType type, bool wrapped) const {
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
  Value at = shift ? arith::AddIOp::create(b, loc, base, shift).getResult() : base;
  Value nextAt = shift ? arith::AddIOp::create(b, loc, nextBase, shift).getResult() : nextBase;
  Value first = vector::MaskedLoadOp::create(b, loc, type, x, ValueRange{row, at}, firstMask, zero);
  if (!wrapped)
    return first;
  return vector::MaskedLoadOp::create(b, loc, type, x, ValueRange{row, nextAt}, nextMask, first);
}

SmallVector<Value> RowWrap::loadEach(OpBuilder &b, Location loc, ValueRange xs, Value row,
                                     Value shift, VectorType type) const {
  auto branch = scf::IfOp::create(b, loc, SmallVector<Type>(xs.size(), type), wraps,
                                  /*withElseRegion=*/true);
  for (bool second : {true, false}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(second ? branch.thenBlock() : branch.elseBlock());
    SmallVector<Value> loaded;
    for (Value x : xs)
      loaded.push_back(load(b, loc, x, row, shift, type, second));
    scf::YieldOp::create(b, loc, loaded);
  }
  return SmallVector<Value>(branch.getResults());
}

Value pixelOffsets(OpBuilder &b, Location loc, const ConvTapsLayout &layout, Value p0,
                   int64_t vw) {
  auto lanesType = VectorType::get({vw}, b.getI32Type());
  auto splat = [&](int64_t v) {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(lanesType, b.getI32IntegerAttr(v)))
        .getResult();
  };
  SmallVector<int32_t> iota(vw);
  for (int64_t l = 0; l < vw; ++l)
    iota[l] = static_cast<int32_t>(l);
  Value lanes = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(lanesType, ArrayRef(iota)));
  Value first = arith::IndexCastOp::create(b, loc, b.getI32Type(), p0);
  Value firstLanes = vector::BroadcastOp::create(b, loc, lanesType, first);
  Value p = arith::AddIOp::create(b, loc, firstLanes, lanes);
  if (!layout.width)
    return arith::MulIOp::create(b, loc, p, splat(layout.xStep));
  Value y = arith::DivUIOp::create(b, loc, p, splat(layout.width));
  Value x = arith::RemUIOp::create(b, loc, p, splat(layout.width));
  Value rowOffset = arith::MulIOp::create(b, loc, y, splat(layout.yStep));
  Value columnOffset = arith::MulIOp::create(b, loc, x, splat(layout.xStep));
  return arith::AddIOp::create(b, loc, rowOffset, columnOffset);
}

int64_t tapWindowCount(const ConvTapsLayout &layout, int64_t columns, int64_t vectorWidth,
                       int64_t limit) {
  if (vectorWidth != 16 || columns <= 0)
    return 0;
  auto offset = [&](int64_t p) {
    return layout.width ? (p / layout.width) * layout.yStep + (p % layout.width) * layout.xStep
                        : p * layout.xStep;
  };
  if (offset(columns - 1) > INT32_MAX / 2)
    return 0;
  // The windows tapWindows takes: from the least offset left, the lanes
  // less than 2 vw past it.
  int64_t most = 0;
  for (int64_t p0 = 0; p0 < columns; p0 += vectorWidth) {
    SmallVector<int64_t> left;
    for (int64_t p = p0; p < std::min(p0 + vectorWidth, columns); ++p)
      left.push_back(offset(p));
    int64_t count = 0;
    while (!left.empty() && count <= limit) {
      int64_t base = *llvm::min_element(left);
      llvm::erase_if(left, [&](int64_t o) { return o - base < 2 * vectorWidth; });
      ++count;
    }
    most = std::max(most, count);
    if (most > limit)
      return 0;
  }
  return most;
}

TapWindows tapWindows(OpBuilder &b, Location loc, Value offsets, Value mask, int64_t count) {
  auto lanesType = cast<VectorType>(offsets.getType());
  int64_t vw = lanesType.getNumElements();
  auto maskType = VectorType::get({vw}, b.getI1Type());
  auto splat = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(lanesType, b.getI32IntegerAttr(v)));
  };
  auto scalar = [&](int32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  auto lanesMask = [&](Value n) -> Value {
    // n clamped to [0, vw] lanes.
    n = arith::MaxSIOp::create(b, loc, scalar(0), arith::MinSIOp::create(b, loc, n, scalar(vw)));
    Value lanes = arith::IndexCastOp::create(b, loc, b.getIndexType(), n);
    return vector::CreateMaskOp::create(b, loc, maskType, ValueRange{lanes});
  };
  Value ones = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(maskType, true));
  Value remaining = mask, firstBase = scalar(0);
  TapWindows result;
  for (int64_t w = 0; w < count; ++w) {
    Value candidates = arith::SelectOp::create(b, loc, remaining, offsets, splat(INT32_MAX));
    Value base =
        vector::ReductionOp::create(b, loc, vector::CombiningKind::MINUI, candidates);
    // No lane left: an empty window at the first one's base (in X's row).
    Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, base, scalar(INT32_MAX));
    base = arith::SelectOp::create(b, loc, none, firstBase, base);
    if (w == 0)
      firstBase = base;
    Value indices = arith::SubIOp::create(
        b, loc, offsets, vector::BroadcastOp::create(b, loc, lanesType, base));
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, indices,
                                         splat(static_cast<int32_t>(2 * vw)));
    Value lanes = arith::AndIOp::create(b, loc, remaining, inside);
    // The window's elements up to its last lane's.
    Value ends = arith::SelectOp::create(
        b, loc, lanes, arith::AddIOp::create(b, loc, indices, splat(1)), splat(0));
    Value span = vector::ReductionOp::create(b, loc, vector::CombiningKind::MAXSI, ends);
    TapWindows::Window window;
    window.base = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), base);
    window.indices = indices;
    window.lanes = lanes;
    window.lowMask = lanesMask(span);
    window.highMask = lanesMask(arith::SubIOp::create(b, loc, span, scalar(vw)));
    result.windows.push_back(window);
    remaining = arith::AndIOp::create(b, loc, remaining,
                                      arith::XOrIOp::create(b, loc, inside, ones));
  }
  return result;
}

Value TapWindows::load(OpBuilder &b, Location loc, Value x, Value row, Value shift,
                       VectorType type) const {
  Value zero = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
  Value width = arith::ConstantIndexOp::create(b, loc, type.getNumElements());
  Value result = zero;
  for (const Window &w : windows) {
    Value at = shift ? arith::AddIOp::create(b, loc, w.base, shift).getResult() : w.base;
    Value low = vector::MaskedLoadOp::create(b, loc, type, x, ValueRange{row, at}, w.lowMask, zero);
    Value high = vector::MaskedLoadOp::create(b, loc, type, x,
                                              ValueRange{row, arith::AddIOp::create(b, loc, at, width)},
                                              w.highMask, zero);
    // vpermi2ps: lane l of the window's 2 vw elements at indices[l].
    Value permuted = LLVM::CallIntrinsicOp::create(
                         b, loc, type, b.getStringAttr("llvm.x86.avx512.vpermi2var.ps.512"),
                         ValueRange{low, w.indices, high})
                         .getResult(0);
    result = arith::SelectOp::create(b, loc, w.lanes, permuted, result);
  }
  return result;
}

} // namespace kiln
