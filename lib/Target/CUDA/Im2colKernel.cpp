//===- Im2colKernel.cpp - A vectorized im2col kernel for kiln-cuda-gemm ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The generic SIMT kernel of an im2col generic runs one thread per element
// with 64-bit index arithmetic (six divisions per element) and wrote about
// 210 GB/s on an H200. This kernel writes 16 bytes per thread, decomposes
// its index once in 32 bits and steps through the (c, i, j) taps of its
// vector with compares, and reads the unpadded source directly.
//
//===----------------------------------------------------------------------===//

#include "Im2colKernel.h"

#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/Host/BufferAnalysis.h"
#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln {
namespace {

constexpr int64_t kBlockThreads = 256;

bool isZeroFillOf(Operation *op, Value buffer) {
  auto fill = dyn_cast<linalg::FillOp>(op);
  if (!fill || fill.getDpsInits()[0] != buffer)
    return false;
  auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
  return value && value.getValue().isZero();
}

/// Whether `op` may write or free memory under `root`.
bool mayWrite(Operation *op, Value root) {
  if (isa<memref::AllocOp>(op) || (isMemoryEffectFree(op) && op->getNumRegions() == 0))
    return false;
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee() != kTraceBeginName && call.getCallee() != kTraceEndName;
  if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
    return rootOf(dealloc.getMemref()) == root;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    if (!linalgOp.hasPureBufferSemantics())
      return true;
    return llvm::any_of(linalgOp.getDpsInits(),
                        [&](Value init) { return rootOf(init) == root; });
  }
  return true;
}

/// One level of zero padding: `alloc` is zero-filled, then `copy` writes
/// `source` into a unit-stride subview (possibly of subviews, also
/// zero-filled, as nested pads bufferize) at `offsets`.
struct Padding {
  Operation *alloc = nullptr, *copy = nullptr;
  SmallVector<Operation *> fills, views, deallocs;
  Value source;
  SmallVector<int64_t> offsets;
};

/// The padding that made `padded` when `reader` is its only other reader and
/// nothing writes the source between the copy and `kernel`.
std::optional<Padding> paddingOf(Value padded, Operation *reader, Operation *kernel) {
  auto alloc = padded.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return std::nullopt;
  Padding p;
  p.alloc = alloc;
  bool filled = false;
  // The allocation and its subviews, with their offsets into it.
  SmallVector<std::pair<Value, SmallVector<int64_t>>> views = {
      {padded, SmallVector<int64_t>(4, 0)}};
  for (size_t v = 0; v < views.size(); ++v) {
    auto [view, at] = views[v];
    for (Operation *user : view.getUsers()) {
      if (view == padded && user == reader)
        continue;
      if (view == padded && isa<memref::DeallocOp>(user)) {
        p.deallocs.push_back(user);
      } else if (isZeroFillOf(user, view)) {
        p.fills.push_back(user);
        filled |= view == padded;
      } else if (auto subview = dyn_cast<memref::SubViewOp>(user)) {
        if (!subview.hasUnitStride() || ShapedType::isDynamicShape(subview.getStaticOffsets()) ||
            subview.getType().getRank() != 4)
          return std::nullopt;
        SmallVector<int64_t> offsets(at);
        for (auto [d, offset] : llvm::enumerate(subview.getStaticOffsets()))
          offsets[d] += offset;
        p.views.push_back(subview);
        views.push_back({subview.getResult(), offsets});
      } else if (!p.copy && isa<linalg::CopyOp, memref::CopyOp>(user) && view != padded &&
                 user->getOperand(1) == view) {
        p.copy = user;
        p.offsets = at;
      } else {
        return std::nullopt;
      }
    }
  }
  if (!filled || !p.copy)
    return std::nullopt;
  Block *block = kernel->getBlock();
  if (p.copy->getBlock() != block || reader->getBlock() != block ||
      !p.copy->isBeforeInBlock(reader))
    return std::nullopt;
  for (Operation *fill : p.fills)
    if (fill->getBlock() != block || !fill->isBeforeInBlock(p.copy))
      return std::nullopt;
  p.source = p.copy->getOperand(0);
  auto sourceType = dyn_cast<MemRefType>(p.source.getType());
  if (!sourceType || !sourceType.hasStaticShape() || sourceType.getRank() != 4)
    return std::nullopt;
  Value root = rootOf(p.source);
  for (Operation *op = p.copy->getNextNode(); op != kernel; op = op->getNextNode())
    if (!op || mayWrite(op, root))
      return std::nullopt;
  return p;
}

/// Whether `op`'s body is `yield(in)` or `yield(truncf(in))`.
bool copiesOrTruncates(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value v = yield.getOperand(0);
  if (auto trunc = v.getDefiningOp<arith::TruncFOp>()) {
    if (body.getOperations().size() != 2)
      return false;
    v = trunc.getIn();
  } else if (body.getOperations().size() != 1) {
    return false;
  }
  return v == body.getArgument(0);
}

} // namespace

bool emitIm2colKernel(IRRewriter &b, linalg::GenericOp op) {
  auto attr = op->getAttrOfType<DenseI64ArrayAttr>(kIm2colAttrName);
  if (!attr || attr.size() != 4 || !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || !copiesOrTruncates(op))
    return false;
  Value x = op.getDpsInputs()[0], col = op.getDpsInits()[0];
  auto xType = dyn_cast<MemRefType>(x.getType());
  auto colType = dyn_cast<MemRefType>(col.getType());
  if (!xType || !colType || xType.getRank() != 4 || colType.getRank() != 6 ||
      !xType.hasStaticShape() || !memref::isStaticShapeAndContiguousRowMajor(colType) ||
      !xType.getElementType().isF32())
    return false;
  Type element = colType.getElementType();
  if (!(element.isF16() || element.isBF16() || element.isF32()))
    return false;
  int64_t sh = attr[0], sw = attr[1], dh = attr[2], dw = attr[3];
  MLIRContext *context = op.getContext();
  AffineExpr dn, dy, dx, dc, di, dj;
  bindDims(context, dn, dy, dx, dc, di, dj);
  auto read = AffineMap::get(6, 0, {dn, dc, dy * sh + di * dh, dx * sw + dj * dw}, context);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != read || !maps[1].isIdentity())
    return false;
  ArrayRef<int64_t> shape = colType.getShape();
  int64_t n = shape[0], oh = shape[1], ow = shape[2], c = shape[3], kh = shape[4], kw = shape[5];
  if (xType.getDimSize(0) != n || xType.getDimSize(1) != c)
    return false;
  int64_t vector = 16 / (element.getIntOrFloatBitWidth() / 8);
  int64_t taps = kh * kw, k = c * taps, p = oh * ow;
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  if (k % vector || colType.getNumElements() > kMax || xType.getNumElements() > kMax)
    return false;
  int64_t vectors = k / vector, total = n * p * vectors;

  // Zero padding read through bounds checks: the source and its offsets.
  SmallVector<Padding, 2> pads;
  Value source = x;
  SmallVector<int64_t> offsets(4, 0);
  Operation *reader = op;
  while (std::optional<Padding> pad = paddingOf(source, reader, op)) {
    for (int64_t d = 0; d < 4; ++d)
      offsets[d] += pad->offsets[d];
    reader = pad->copy;
    source = pad->source;
    pads.push_back(std::move(*pad));
  }
  auto sourceType = cast<MemRefType>(source.getType());
  if (offsets[0] != 0 || sourceType.getDimSize(0) != n) {
    pads.clear();
    source = x;
    sourceType = xType;
    offsets.assign(4, 0);
  }

  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  Value flat = memref::CollapseShapeOp::create(
      b, loc, col, ArrayRef<ReassociationIndices>{{0, 1, 2, 3, 4, 5}});
  auto launch = gpu::LaunchOp::create(b, loc, idx(llvm::divideCeil(total, kBlockThreads)), idx(1),
                                      idx(1), idx(kBlockThreads), idx(1), idx(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Type i32 = b.getI32Type();
    auto cst = [&](int64_t v) -> Value { return arith::ConstantIntOp::create(b, loc, i32, v); };
    auto add = [&](Value l, Value r) -> Value { return arith::AddIOp::create(b, loc, l, r); };
    auto sub = [&](Value l, Value r) -> Value { return arith::SubIOp::create(b, loc, l, r); };
    auto mul = [&](Value l, int64_t r) -> Value {
      return r == 1 ? l : arith::MulIOp::create(b, loc, l, cst(r)).getResult();
    };
    auto div = [&](Value l, int64_t r) -> Value {
      return r == 1 ? l : arith::DivUIOp::create(b, loc, l, cst(r)).getResult();
    };
    auto rem = [&](Value l, int64_t r) -> Value {
      return r == 1 ? cst(0) : arith::RemUIOp::create(b, loc, l, cst(r)).getResult();
    };
    auto cmp = [&](arith::CmpIPredicate pred, Value l, Value r) -> Value {
      return arith::CmpIOp::create(b, loc, pred, l, r);
    };
    auto select = [&](Value cond, Value t, Value f) -> Value {
      return arith::SelectOp::create(b, loc, cond, t, f);
    };
    auto toIndex = [&](Value v) -> Value {
      return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
    };
    Value block = arith::IndexCastUIOp::create(b, loc, i32,
                                               gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
    Value thread = arith::IndexCastUIOp::create(
        b, loc, i32, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
    Value t = add(mul(block, kBlockThreads), thread);
    auto inside = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::ult, t, cst(total)),
                                    /*withElseRegion=*/false);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
    // Thread t: output position pos (fastest, so a warp reads along x's
    // rows), vector v of the row, image img.
    Value pos = rem(t, p), rest = div(t, p);
    Value v = rem(rest, vectors), img = div(rest, vectors);
    Value y0 = sub(mul(div(pos, ow), sh), cst(offsets[2]));
    Value x0 = sub(mul(rem(pos, ow), sw), cst(offsets[3]));
    Value k0 = mul(v, vector);
    Value ch = div(k0, taps), tap = rem(k0, taps);
    Value i = div(tap, kw), j = rem(tap, kw);
    Value imgIndex = toIndex(img);
    Value zero = arith::ConstantOp::create(b, loc, element, b.getZeroAttr(element));
    // Checks only where the source is smaller than the padded input.
    auto inRange = [&](Value at, int64_t offset, int64_t size, int64_t padded,
                       Value &clamped) -> Value {
      clamped = at;
      if (offset == 0 && size == padded)
        return {};
      clamped = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, at, cst(0)),
                                       cst(size - 1));
      return arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::sge, at, cst(0)),
                                   cmp(arith::CmpIPredicate::slt, at, cst(size)));
    };
    SmallVector<Value> values;
    for (int64_t e = 0; e < vector; ++e) {
      Value cs = sub(ch, cst(offsets[1]));
      Value y = add(y0, mul(i, dh)), xx = add(x0, mul(j, dw));
      Value cClamped, yClamped, xClamped;
      SmallVector<Value> checks;
      for (Value check :
           {inRange(cs, offsets[1], sourceType.getDimSize(1), c, cClamped),
            inRange(y, offsets[2], sourceType.getDimSize(2), xType.getDimSize(2), yClamped),
            inRange(xx, offsets[3], sourceType.getDimSize(3), xType.getDimSize(3), xClamped)})
        if (check)
          checks.push_back(check);
      Value value = memref::LoadOp::create(
          b, loc, source,
          ValueRange{imgIndex, toIndex(cClamped), toIndex(yClamped), toIndex(xClamped)});
      if (element != value.getType())
        value = arith::TruncFOp::create(b, loc, element, value);
      if (!checks.empty()) {
        Value valid = checks.front();
        for (Value check : ArrayRef<Value>(checks).drop_front())
          valid = arith::AndIOp::create(b, loc, valid, check);
        value = select(valid, value, zero);
      }
      values.push_back(value);
      if (e + 1 == vector)
        break;
      // The next tap: j, then i, then the channel.
      if (taps == 1) {
        ch = add(ch, cst(1));
        continue;
      }
      Value j1 = add(j, cst(1));
      Value wrapJ = cmp(arith::CmpIPredicate::eq, j1, cst(kw));
      j = select(wrapJ, cst(0), j1);
      Value i1 = select(wrapJ, add(i, cst(1)), i);
      Value wrapI = cmp(arith::CmpIPredicate::eq, i1, cst(kh));
      i = select(wrapI, cst(0), i1);
      ch = select(wrapI, add(ch, cst(1)), ch);
    }
    Value packed =
        vector::FromElementsOp::create(b, loc, VectorType::get({vector}, element), values);
    Value at = add(mul(add(mul(img, p), pos), k), k0);
    vector::StoreOp::create(b, loc, packed, flat, ValueRange{toIndex(at)}, false,
                            llvm::MaybeAlign(16));
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }
  b.eraseOp(op);
  for (Padding &pad : pads) {
    b.eraseOp(pad.copy);
    for (Operation *fill : pad.fills)
      b.eraseOp(fill);
    for (Operation *view : llvm::reverse(pad.views))
      b.eraseOp(view);
    for (Operation *dealloc : pad.deallocs)
      b.eraseOp(dealloc);
    b.eraseOp(pad.alloc);
  }
  return true;
}

} // namespace kiln
