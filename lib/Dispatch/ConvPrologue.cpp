//===- ConvPrologue.cpp - A 1x1 conv's input computed in its B packing ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The input of a 1x1 conv is often an elementwise generic read by nothing
// else: a stride-1 depthwise conv with its bias and ReLU6 (MobileNetV2,
// computed at the padded row pitch), or a squeeze-excite channel scale
// x * sigmoid(s[c] + b[c]) (EfficientNet). Such a producer becomes the B
// prologue of the conv's `kiln.conv_taps` contraction (Epilogue.h): its
// inputs join the contraction, read like B (same index map) or per input
// channel, and its body computes B's element inside the contraction's body.
// The CPU kernel evaluates it while it packs B, so the producer's result is
// never written and the producer is no dispatch of its own.
//
//===----------------------------------------------------------------------===//

#include "ConvDispatches.h"

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kiln {
namespace {

/// The CPU kernel reads a vector of B's columns with one or two masked
/// loads per x input where the conv reads consecutive columns, or rows of
/// at least a vector with a unit column step (RowWrap in
/// lib/Target/CPU/MatmulPrologue.h); narrower rows take a gather per x
/// input and vector (nine for a 3x3 depthwise conv), which measured slower
/// than the depthwise pass the fusion saves (MobileNetV2 at 14x14 and 7x7:
/// 1.2-2x the time of the two dispatches).
constexpr int64_t kMinPrologueRowWidth = 16;

/// An elementwise producer of a conv's input x [C, L]: x is its result
/// seen through views that keep every element in place (reshapes, slices
/// of everything), with C its dim `channel` and L the product of the dims
/// after it (the dims before it are units).
struct Producer {
  linalg::GenericOp generic;
  unsigned channel;
  /// For a batched conv taps x [N, C, L]: the dim (0) that is the batch.
  std::optional<unsigned> batch;
  /// The views between the producer and x, from x back.
  SmallVector<Operation *> views;
};

bool isWholeSlice(tensor::ExtractSliceOp slice) {
  return llvm::all_of(slice.getStaticOffsets(), [](int64_t o) { return o == 0; }) &&
         llvm::all_of(slice.getStaticStrides(), [](int64_t s) { return s == 1; }) &&
         slice.getSourceType().hasStaticShape() && slice.getResultType().hasStaticShape() &&
         slice.getSourceType().getNumElements() == slice.getResultType().getNumElements();
}

/// Whether `value` is (through reshapes) a slice: not known contiguous.
bool maybeStrided(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (isa<tensor::ExtractSliceOp>(def))
      return true;
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      return false;
    value = def->getOperand(0);
  }
  return false;
}

/// Results of `map` are the dim `channel`, the batch dim `batch`, unit
/// loops (always 0: the batch of 1) or constants.
bool readsPerChannel(AffineMap map, unsigned channel, std::optional<unsigned> batch,
                     ArrayRef<int64_t> loopRanges) {
  return map.getNumSymbols() == 0 && llvm::all_of(map.getResults(), [&](AffineExpr e) {
           auto dim = dyn_cast<AffineDimExpr>(e);
           return isa<AffineConstantExpr>(e) ||
                  (dim && (dim.getPosition() == channel || dim.getPosition() == batch ||
                           loopRanges[dim.getPosition()] == 1));
         });
}

/// The producer's [N, C, ...] as x [N, C, L] of a batched conv taps: the
/// batch, then the channel.
std::optional<unsigned> batchedChannel(RankedTensorType type, RankedTensorType xType) {
  ArrayRef<int64_t> shape = type.getShape();
  if (shape.size() < 3 || shape[0] != xType.getDimSize(0) || shape[1] != xType.getDimSize(1) ||
      llvm::any_of(shape.drop_front(), ShapedType::isDynamic))
    return std::nullopt;
  int64_t rest = 1;
  for (int64_t s : shape.drop_front(2))
    rest *= s;
  return rest == xType.getDimSize(2) ? std::optional<unsigned>(1) : std::nullopt;
}

std::optional<Producer> matchProducer(Value x) {
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  bool batched = xType && xType.getRank() == 3;
  if (!xType || (xType.getRank() != 2 && !batched) ||
      llvm::any_of(xType.getShape().drop_front(batched ? 1 : 0), ShapedType::isDynamic))
    return std::nullopt;
  Producer p;
  Value v = x;
  while (Operation *def = v.getDefiningOp()) {
    auto slice = dyn_cast<tensor::ExtractSliceOp>(def);
    if (slice ? batched || !isWholeSlice(slice)
              : !isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    if (!v.hasOneUse())
      return std::nullopt;
    p.views.push_back(def);
    v = def->getOperand(0);
  }
  p.generic = v.getDefiningOp<linalg::GenericOp>();
  linalg::GenericOp g = p.generic;
  if (!g || !v.hasOneUse() || !g.hasPureTensorSemantics() || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || g.getNumReductionLoops() != 0 ||
      !g.getIndexingMapsArray().back().isIdentity() ||
      !g.getRegion().front().getArguments().back().use_empty() || g->hasAttr(kEpilogueAttr) ||
      g->hasAttr(kRowGroupAttr) || g->hasAttr(kConvTapsAttr) || !hasVectorizableScalarBody(g))
    return std::nullopt;
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.getElementType().isF32() || (!batched && !type.hasStaticShape()))
    return std::nullopt;
  // The channel dim: units before it, C, then L elements per channel.
  ArrayRef<int64_t> shape = type.getShape();
  int64_t channels = xType.getDimSize(batched ? 1 : 0), length = xType.getShape().back();
  std::optional<unsigned> channel;
  if (batched) {
    channel = batchedChannel(type, xType);
    p.batch = 0;
  }
  for (unsigned i = 0; i + 1 < shape.size() && !channel && !batched; ++i) {
    int64_t rest = 1;
    for (int64_t s : shape.drop_front(i + 1))
      rest *= s;
    if (shape[i] == channels && rest == length)
      channel = i;
    if (shape[i] != 1)
      break;
  }
  if (!channel)
    return std::nullopt;
  p.channel = *channel;
  // Every input is read like the result (a view of it becomes an x input)
  // or per channel; one at least like the result.
  bool collapses = shape.size() - p.channel > 2, full = false;
  for (OpOperand *input : g.getDpsInputOperands()) {
    AffineMap map = g.getMatchingIndexingMap(input);
    auto inputType = dyn_cast<RankedTensorType>(input->get().getType());
    if (!inputType || (!batched && !inputType.hasStaticShape()) ||
        !inputType.getElementType().isF32())
      return std::nullopt;
    if (map.isIdentity() && inputType == type) {
      // Collapsing a slice would copy it (it need not be contiguous); a
      // slice read as is must step by 1.
      auto slice = input->get().getDefiningOp<tensor::ExtractSliceOp>();
      if ((collapses && maybeStrided(input->get())) ||
          (slice && !llvm::all_of(slice.getStaticStrides(), [](int64_t s) { return s == 1; })))
        return std::nullopt;
      full = true;
    } else if (!readsPerChannel(map, p.channel, p.batch, g.getStaticLoopRanges())) {
      return std::nullopt;
    }
  }
  if (!full)
    return std::nullopt;
  return p;
}

/// `value` (the producer's shape) as [C, L]: the dims after the channel
/// collapsed, the unit dims before it sliced away; batched, as [N, C, L].
Value channelRows(OpBuilder &b, Location loc, Value value, unsigned channel, bool batched) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (rank - channel > 2) {
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i <= channel; ++i)
      groups.push_back({i});
    groups.emplace_back();
    for (int64_t i = channel + 1; i < rank; ++i)
      groups.back().push_back(i);
    value = tensor::CollapseShapeOp::create(b, loc, value, groups);
    type = cast<RankedTensorType>(value.getType());
    rank = type.getRank();
  }
  if (rank == 2 || batched)
    return value;
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t s : type.getShape())
    sizes.push_back(b.getIndexAttr(s));
  auto rows = RankedTensorType::get(type.getShape().take_back(2), type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, rows, value, offsets, sizes, strides);
}

/// The conv taps contraction of `filter` [F, C, kh, kw] over `p`'s inputs,
/// into `init` [F, P] ([N, F, P] batched), with the producer's body as B
/// prologue.
linalg::GenericOp buildPrologueTaps(OpBuilder &b, Location loc, Value filter, Producer &p,
                                    AffineMap xMap, Value init) {
  linalg::GenericOp g = p.generic;
  MLIRContext *context = b.getContext();
  // Producer loop -> contraction loop: the channel is d2 (d3 batched, the
  // batch d0); the others occur in row maps only as unit loops (0), else
  // only x inputs read them.
  unsigned first = p.batch ? 1 : 0, loops = 5 + first;
  SmallVector<AffineExpr> toTaps(g.getNumLoops(), getAffineConstantExpr(0, context));
  toTaps[p.channel] = getAffineDimExpr(2 + first, context);
  if (p.batch)
    toTaps[*p.batch] = getAffineDimExpr(0, context);
  AffineMap substitute = AffineMap::get(loops, 0, toTaps, context);
  SmallVector<Value> xs, rows;
  SmallVector<AffineMap> rowMaps;
  for (OpOperand *input : g.getDpsInputOperands()) {
    AffineMap map = g.getMatchingIndexingMap(input);
    if (map.isIdentity() && input->get().getType() == g->getResult(0).getType()) {
      xs.push_back(channelRows(b, loc, input->get(), p.channel, p.batch.has_value()));
    } else {
      rows.push_back(input->get());
      rowMaps.push_back(map.compose(substitute));
    }
  }
  SmallVector<Value> inputs = {filter};
  llvm::append_range(inputs, xs);
  llvm::append_range(inputs, rows);
  auto d = [&](unsigned i) { return getAffineDimExpr(i + first, context); };
  SmallVector<AffineMap> maps = {AffineMap::get(loops, 0, {d(0), d(2), d(3), d(4)}, context)};
  maps.append(xs.size(), xMap);
  llvm::append_range(maps, rowMaps);
  SmallVector<AffineExpr> out = {d(0), d(1)};
  if (p.batch)
    out.insert(out.begin(), getAffineDimExpr(0, context));
  maps.push_back(AffineMap::get(loops, 0, out, context));
  using utils::IteratorType;
  SmallVector<IteratorType> iterators = {IteratorType::parallel, IteratorType::parallel,
                                         IteratorType::reduction, IteratorType::reduction,
                                         IteratorType::reduction};
  if (p.batch)
    iterators.insert(iterators.begin(), IteratorType::parallel);
  auto taps = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, init, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        IRMapping mapping;
        Block &body = g.getRegion().front();
        unsigned nextX = 1, nextRow = 1 + xs.size();
        for (OpOperand *input : g.getDpsInputOperands()) {
          AffineMap map = g.getMatchingIndexingMap(input);
          bool isX = map.isIdentity() && input->get().getType() == g->getResult(0).getType();
          mapping.map(body.getArgument(input->getOperandNumber()),
                      args[isX ? nextX++ : nextRow++]);
        }
        for (Operation &op : body.without_terminator())
          nb.clone(op, mapping);
        Value element = mapping.lookupOrDefault(body.getTerminator()->getOperand(0));
        Value product = arith::MulFOp::create(nb, nl, args[0], element);
        linalg::YieldOp::create(nb, nl,
                                ValueRange{arith::AddFOp::create(nb, nl, args.back(), product)});
      });
  taps->setAttr(kConvTapsAttr, b.getUnitAttr());
  return taps;
}

/// Erases `taps`, which convTapsLayout refused, and the views of the
/// producer's inputs that buildPrologueTaps made for it (channelRows).
void discardTaps(linalg::GenericOp taps) {
  SmallVector<Value> inputs(taps.getDpsInputs());
  taps.erase();
  for (Value input : inputs) {
    Operation *def = input.getDefiningOp();
    while (isa_and_nonnull<tensor::ExtractSliceOp, tensor::CollapseShapeOp>(def) &&
           def->use_empty()) {
      Value source = def->getOperand(0);
      def->erase();
      def = source.getDefiningOp();
    }
  }
}

/// Replaces `consumer` by `taps` and erases the producer and its views.
void replaceConsumer(Operation *consumer, linalg::GenericOp taps, Producer &p) {
  taps->setLoc(FusedLoc::get(taps.getContext(), {consumer->getLoc(), p.generic.getLoc()}));
  consumer->getResult(0).replaceAllUsesWith(taps->getResult(0));
  consumer->erase();
  for (Operation *view : p.views)
    view->erase();
  p.generic.erase();
}

/// The filter [F, C, 1, 1] of a 1x1 conv matmul's A (collapsed [F, C]).
Value pointwiseFilter(linalg::MatmulOp matmul) {
  auto filter = matmul.getDpsInputs()[0].getDefiningOp<tensor::CollapseShapeOp>();
  if (!filter || filter.getSrcType().getRank() != 4 || !filter.getSrcType().hasStaticShape() ||
      filter.getReassociationIndices() != SmallVector<ReassociationIndices>{{0}, {1, 2, 3}} ||
      filter.getSrcType().getDimSize(2) != 1 || filter.getSrcType().getDimSize(3) != 1)
    return nullptr;
  return filter.getSrc();
}

} // namespace

bool fuseConvTapsPrologue(linalg::GenericOp taps) {
  std::optional<ConvTapsLayout> layout = convTapsLayout(taps);
  if (!layout || !taps.hasPureTensorSemantics() || hasConvTapsPrologue(taps))
    return false;
  // Only a 1x1 conv: a wider window would read the producer's result at
  // its padding, which the producer does not compute.
  auto wType = cast<RankedTensorType>(taps.getDpsInputs()[0].getType());
  if (wType.getDimSize(2) != 1 || wType.getDimSize(3) != 1 ||
      !(layout->isContiguous() || (layout->width >= kMinPrologueRowWidth &&
                                   layout->xStep == 1 && layout->yStep >= layout->width)))
    return false;
  std::optional<Producer> p = matchProducer(taps.getDpsInputs()[1]);
  if (!p)
    return false;
  OpBuilder b(taps);
  linalg::GenericOp fused =
      buildPrologueTaps(b, taps.getLoc(), taps.getDpsInputs()[0], *p,
                        taps.getIndexingMapsArray()[1], taps.getDpsInits()[0]);
  if (!convTapsLayout(fused)) {
    discardTaps(fused);
    return false;
  }
  replaceConsumer(taps, fused, *p);
  return true;
}

bool fuseMatmulPrologue(linalg::MatmulOp matmul) {
  Value filter = pointwiseFilter(matmul);
  if (!filter || !kernelMatmul(matmul->getResult(0)))
    return false;
  std::optional<Producer> p = matchProducer(matmul.getDpsInputs()[1]);
  if (!p)
    return false;
  // B [C, N] read as conv taps at consecutive columns.
  OpBuilder b(matmul);
  linalg::GenericOp fused =
      buildPrologueTaps(b, matmul.getLoc(), filter, *p,
                        convTapsInputMap(b.getContext(), ConvTapsLayout{}),
                        matmul.getDpsInits()[0]);
  if (!convTapsLayout(fused)) {
    discardTaps(fused);
    return false;
  }
  Operation *collapse = matmul.getDpsInputs()[0].getDefiningOp();
  replaceConsumer(matmul, fused, *p);
  if (collapse->use_empty())
    collapse->erase();
  return true;
}

} // namespace kiln
