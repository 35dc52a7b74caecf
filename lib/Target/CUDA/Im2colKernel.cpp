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
#include "TF32Rounding.h"

#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"
#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/Host/BufferAnalysis.h"
#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
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
  // The padded buffer's image count; every view must cover all images (a
  // symbolic batch: the same size value as the allocation).
  auto allocType = cast<MemRefType>(padded.getType());
  OpFoldResult images = allocType.isDynamicDim(0)
                            ? OpFoldResult(alloc.getDynamicSizes().front())
                            : OpFoldResult(IntegerAttr::get(IndexType::get(alloc.getContext()),
                                                            allocType.getDimSize(0)));
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
            subview.getType().getRank() != 4 ||
            !isEqualConstantIntOrValue(subview.getMixedSizes()[0], images))
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
  if (!sourceType || sourceType.getRank() != 4 || !hasStaticShapeButBatch(sourceType))
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

/// An im2col generic the kernel takes: x [N, C, H, W] f32 read at (n, c,
/// y*sh + i*dh, x*sw + j*dw), col [N, OH, OW, C, KH, KW] dense,
/// f16/bf16/f32, static but for N (which may be symbolic: the grid's
/// second dimension), K = C*KH*KW a multiple of the 16-byte vector, one
/// image's indices within 32 bits.
struct Im2col {
  Value x, col;
  MemRefType xType, colType;
  Type element;
  int64_t sh, sw, dh, dw;
  int64_t oh, ow, c, kh, kw;
  /// Elements per 16-byte vector; kh*kw, C*kh*kw, oh*ow.
  int64_t vector, taps, k, p;
  /// Threads per image: one per vector of its col.
  int64_t perImage() const { return p * (k / vector); }
};

std::optional<Im2col> matchIm2col(linalg::GenericOp op) {
  auto attr = op->getAttrOfType<DenseI64ArrayAttr>(kIm2colAttrName);
  if (!attr || attr.size() != 4 || !op.hasPureBufferSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || !copiesOrTruncates(op))
    return std::nullopt;
  Im2col m;
  m.x = op.getDpsInputs()[0];
  m.col = op.getDpsInits()[0];
  m.xType = dyn_cast<MemRefType>(m.x.getType());
  m.colType = dyn_cast<MemRefType>(m.col.getType());
  if (!m.xType || !m.colType || m.xType.getRank() != 4 || m.colType.getRank() != 6 ||
      !hasStaticShapeButBatch(m.xType) || !hasStaticShapeButBatch(m.colType) ||
      !m.colType.getLayout().isIdentity() || !m.xType.getElementType().isF32())
    return std::nullopt;
  m.element = m.colType.getElementType();
  if (!(m.element.isF16() || m.element.isBF16() || m.element.isF32()))
    return std::nullopt;
  m.sh = attr[0], m.sw = attr[1], m.dh = attr[2], m.dw = attr[3];
  MLIRContext *context = op.getContext();
  AffineExpr dn, dy, dx, dc, di, dj;
  bindDims(context, dn, dy, dx, dc, di, dj);
  auto read =
      AffineMap::get(6, 0, {dn, dc, dy * m.sh + di * m.dh, dx * m.sw + dj * m.dw}, context);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[0] != read || !maps[1].isIdentity())
    return std::nullopt;
  ArrayRef<int64_t> shape = m.colType.getShape();
  m.oh = shape[1], m.ow = shape[2], m.c = shape[3], m.kh = shape[4], m.kw = shape[5];
  if (m.xType.getDimSize(0) != shape[0] || m.xType.getDimSize(1) != m.c)
    return std::nullopt;
  m.vector = 16 / (m.element.getIntOrFloatBitWidth() / 8);
  m.taps = m.kh * m.kw, m.k = m.c * m.taps, m.p = m.oh * m.ow;
  // One image's col and x offsets in 32 bits (the image's own offset is
  // added in 64).
  constexpr int64_t kMax = (int64_t{1} << 31) - 1;
  int64_t xImage = m.c * m.xType.getDimSize(2) * m.xType.getDimSize(3);
  if (m.k % m.vector || m.p * m.k > kMax || xImage > kMax)
    return std::nullopt;
  return m;
}

/// Where the kernel reads x from: the unpadded source of a zero-padded x
/// (the pads it replaces, outermost last) at `offsets`, or x itself.
struct Im2colSource {
  Value source;
  MemRefType type;
  SmallVector<int64_t> offsets = SmallVector<int64_t>(4, 0);
  SmallVector<Padding, 2> pads;
};

Im2colSource findSource(linalg::GenericOp op, const Im2col &m) {
  Im2colSource s;
  s.source = m.x;
  Operation *reader = op;
  while (std::optional<Padding> pad = paddingOf(s.source, reader, op)) {
    for (int64_t d = 0; d < 4; ++d)
      s.offsets[d] += pad->offsets[d];
    reader = pad->copy;
    s.source = pad->source;
    s.pads.push_back(std::move(*pad));
  }
  s.type = cast<MemRefType>(s.source.getType());
  if (s.offsets[0] != 0 || s.type.getDimSize(0) != m.colType.getDimSize(0)) {
    s.pads.clear();
    s.source = m.x;
    s.type = m.xType;
    s.offsets.assign(4, 0);
  }
  return s;
}

/// The kernel's body: 32-bit index arithmetic in the launch.
class Im2colEmitter {
public:
  Im2colEmitter(IRRewriter &b, Location loc, const Im2col &m, const Im2colSource &s)
      : b(b), loc(loc), m(m), s(s), i32(b.getI32Type()) {}

  /// One thread per vector of col: block y is the image, thread t of it
  /// its position and vector, the vector's elements read tap after tap,
  /// one 16-byte store.
  void emitThread(Value flat) {
    Value block = arith::IndexCastUIOp::create(b, loc, i32,
                                               gpu::BlockIdOp::create(b, loc, gpu::Dimension::x));
    Value thread = arith::IndexCastUIOp::create(
        b, loc, i32, gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
    Value img = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
    Value t = add(mul(block, kBlockThreads), thread);
    auto inside = scf::IfOp::create(b, loc,
                                    cmp(arith::CmpIPredicate::ult, t, cst(m.perImage())),
                                    /*withElseRegion=*/false);
    b.setInsertionPointToStart(&inside.getThenRegion().front());
    // Thread t: output position pos (fastest, so a warp reads along x's
    // rows), vector v of the row.
    Value pos = rem(t, m.p), v = div(t, m.p);
    Value y0 = sub(mul(div(pos, m.ow), m.sh), cst(s.offsets[2]));
    Value x0 = sub(mul(rem(pos, m.ow), m.sw), cst(s.offsets[3]));
    Value k0 = mul(v, m.vector);
    SmallVector<Value> values = loadVector(img, y0, x0, k0);
    Value packed =
        vector::FromElementsOp::create(b, loc, VectorType::get({m.vector}, m.element), values);
    Value inImage = toIndex(add(mul(pos, m.k), k0));
    Value imageStart = arith::MulIOp::create(
        b, loc, img, arith::ConstantIndexOp::create(b, loc, m.p * m.k));
    Value at = arith::AddIOp::create(b, loc, imageStart, inImage);
    vector::StoreOp::create(b, loc, packed, flat, ValueRange{at}, false, llvm::MaybeAlign(16));
  }

private:
  Value cst(int64_t v) { return arith::ConstantIntOp::create(b, loc, i32, v); }
  Value add(Value l, Value r) { return arith::AddIOp::create(b, loc, l, r); }
  Value sub(Value l, Value r) { return arith::SubIOp::create(b, loc, l, r); }
  Value mul(Value l, int64_t r) {
    return r == 1 ? l : arith::MulIOp::create(b, loc, l, cst(r)).getResult();
  }
  Value div(Value l, int64_t r) {
    return r == 1 ? l : arith::DivUIOp::create(b, loc, l, cst(r)).getResult();
  }
  Value rem(Value l, int64_t r) {
    return r == 1 ? cst(0) : arith::RemUIOp::create(b, loc, l, cst(r)).getResult();
  }
  Value cmp(arith::CmpIPredicate pred, Value l, Value r) {
    return arith::CmpIOp::create(b, loc, pred, l, r);
  }
  Value select(Value cond, Value t, Value f) { return arith::SelectOp::create(b, loc, cond, t, f); }
  Value toIndex(Value v) { return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v); }

  /// Whether `at` lies in the source (offset `offset`, size `size`, padded
  /// size `padded`), and in `clamped` an index inside it; no check (null)
  /// where the source is the padded input's size.
  Value inRange(Value at, int64_t offset, int64_t size, int64_t padded, Value &clamped) {
    clamped = at;
    if (offset == 0 && size == padded)
      return {};
    clamped = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, at, cst(0)),
                                     cst(size - 1));
    return arith::AndIOp::create(b, loc, cmp(arith::CmpIPredicate::sge, at, cst(0)),
                                 cmp(arith::CmpIPredicate::slt, at, cst(size)));
  }

  /// The vector of col starting at K index `k0` for the output position at
  /// (`y0`, `x0`) of image `imgIndex`: its (c, i, j) taps stepped with
  /// compares, zero outside the source.
  SmallVector<Value> loadVector(Value imgIndex, Value y0, Value x0, Value k0) {
    Value ch = div(k0, m.taps), tap = rem(k0, m.taps);
    Value i = div(tap, m.kw), j = rem(tap, m.kw);
    Value zero = arith::ConstantOp::create(b, loc, m.element, b.getZeroAttr(m.element));
    SmallVector<Value> values;
    for (int64_t e = 0; e < m.vector; ++e) {
      Value cs = sub(ch, cst(s.offsets[1]));
      Value y = add(y0, mul(i, m.dh)), xx = add(x0, mul(j, m.dw));
      Value cClamped, yClamped, xClamped;
      SmallVector<Value> checks;
      for (Value check :
           {inRange(cs, s.offsets[1], s.type.getDimSize(1), m.c, cClamped),
            inRange(y, s.offsets[2], s.type.getDimSize(2), m.xType.getDimSize(2), yClamped),
            inRange(xx, s.offsets[3], s.type.getDimSize(3), m.xType.getDimSize(3), xClamped)})
        if (check)
          checks.push_back(check);
      Value value = memref::LoadOp::create(
          b, loc, s.source,
          ValueRange{imgIndex, toIndex(cClamped), toIndex(yClamped), toIndex(xClamped)});
      // f32 col is read by tf32 wgmma, which would truncate: round it to
      // nearest here (TF32Rounding.h).
      value = m.element == value.getType() ? emitRoundToTF32(b, loc, value)
                                           : arith::TruncFOp::create(b, loc, m.element, value);
      if (!checks.empty()) {
        Value valid = checks.front();
        for (Value check : ArrayRef<Value>(checks).drop_front())
          valid = arith::AndIOp::create(b, loc, valid, check);
        value = select(valid, value, zero);
      }
      values.push_back(value);
      if (e + 1 == m.vector)
        break;
      // The next tap: j, then i, then the channel.
      if (m.taps == 1) {
        ch = add(ch, cst(1));
        continue;
      }
      Value j1 = add(j, cst(1));
      Value wrapJ = cmp(arith::CmpIPredicate::eq, j1, cst(m.kw));
      j = select(wrapJ, cst(0), j1);
      Value i1 = select(wrapJ, add(i, cst(1)), i);
      Value wrapI = cmp(arith::CmpIPredicate::eq, i1, cst(m.kh));
      i = select(wrapI, cst(0), i1);
      ch = select(wrapI, add(ch, cst(1)), ch);
    }
    return values;
  }

  IRRewriter &b;
  Location loc;
  const Im2col &m;
  const Im2colSource &s;
  Type i32;
};

/// Erases the padding the kernel reads through (copy, fills, views,
/// deallocations, the padded buffer).
void erasePads(ArrayRef<Padding> pads, IRRewriter &b) {
  for (const Padding &pad : pads) {
    b.eraseOp(pad.copy);
    for (Operation *fill : pad.fills)
      b.eraseOp(fill);
    for (Operation *view : llvm::reverse(pad.views))
      b.eraseOp(view);
    for (Operation *dealloc : pad.deallocs)
      b.eraseOp(dealloc);
    b.eraseOp(pad.alloc);
  }
}

} // namespace

bool emitIm2colKernel(IRRewriter &b, linalg::GenericOp op) {
  std::optional<Im2col> m = matchIm2col(op);
  if (!m)
    return false;
  Im2colSource source = findSource(op, *m);
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  auto idx = [&](int64_t v) -> Value { return arith::ConstantIndexOp::create(b, loc, v); };
  Value flat = memref::CollapseShapeOp::create(
      b, loc, m->col, ArrayRef<ReassociationIndices>{{0, 1, 2, 3, 4, 5}});
  // Grid: (an image's vectors / 256, images); a symbolic batch is read
  // from col at run time.
  Value images = m->colType.isDynamicDim(0)
                     ? memref::DimOp::create(b, loc, m->col, 0).getResult()
                     : idx(m->colType.getDimSize(0));
  auto launch =
      gpu::LaunchOp::create(b, loc, idx(llvm::divideCeil(m->perImage(), kBlockThreads)), images,
                            idx(1), idx(kBlockThreads), idx(1), idx(1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&launch.getBody().front());
    Im2colEmitter(b, loc, *m, source).emitThread(flat);
    b.setInsertionPointToEnd(&launch.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }
  b.eraseOp(op);
  erasePads(source.pads, b);
  return true;
}

} // namespace kiln
