//===- Epilogue.cpp - Elementwise epilogues of matmul dispatches ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;

namespace kiln {
namespace {

/// An indexing map the kernel can read at a tile row and a vector of
/// columns: results are loops or the constant 0, the column loop `column`
/// at most once and last.
bool isTileMap(AffineMap map, unsigned column) {
  bool seenColumn = false;
  for (AffineExpr expr : map.getResults()) {
    if (seenColumn)
      return false;
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      seenColumn = dim.getPosition() == column;
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return false;
  }
  return true;
}

/// `map` names every loop exactly once, with the constant 0 only at unit
/// dims of `type`: each element of `type` is one iteration.
bool namesEveryLoopOnce(AffineMap map, ShapedType type) {
  if (map.getNumResults() != static_cast<unsigned>(type.getRank()))
    return false;
  llvm::SmallBitVector seen(map.getNumDims());
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (seen.test(dim.getPosition()))
        return false;
      seen.set(dim.getPosition());
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0 || type.getDimSize(i) != 1)
      return false;
  }
  return seen.all();
}

/// An operation the kernel can apply to whole vectors: arith/math,
/// elementwise, no regions or side effects, and no integer division (the
/// masked-off lanes hold zeros, a division by them would trap).
bool isVectorizableBodyOp(Operation &op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) || op.getNumRegions() ||
      op.getNumResults() != 1 || !isPure(&op))
    return false;
  if (isa<arith::DivSIOp, arith::DivUIOp, arith::RemSIOp, arith::RemUIOp, arith::CeilDivSIOp,
          arith::CeilDivUIOp, arith::FloorDivSIOp>(op))
    return false;
  auto scalar = [](Type t) { return t.isIntOrFloat(); };
  return llvm::all_of(op.getOperandTypes(), scalar) && llvm::all_of(op.getResultTypes(), scalar);
}

} // namespace

int64_t wrapRows(int64_t width, int64_t pitch, int64_t vectorWidth) {
  return (vectorWidth + width - 1 + pitch - 1) / pitch;
}

int64_t wrapPitch(ShapedType cType, ArrayRef<ReassociationIndices> groups, int64_t columnAlign,
                  int64_t pitch) {
  if (pitch || groups.empty() || groups.back().size() < 2 || !cType.hasRank() ||
      cType.getRank() < 2)
    return pitch;
  int64_t inner = cType.getDimSize(cType.getRank() - 1);
  if (ShapedType::isDynamic(inner) || inner % columnAlign == 0 ||
      wrapRows(inner, inner, columnAlign) > kMaxWrapRows)
    return 0;
  return inner;
}

bool isMatmulEpilogue(linalg::GenericOp generic, unsigned cIndex,
                      ArrayRef<ReassociationIndices> groups, int64_t columnAlign,
                      int64_t pitch) {
  assert(columnAlign >= 1 && "the column alignment is a positive count");
  if (generic.getNumLoops() == 0 || generic.getNumReductionLoops() != 0 ||
      generic.getNumDpsInits() != 1 || cIndex >= generic.getNumDpsInputs() ||
      !llvm::all_of(generic->getOperandTypes(), llvm::IsaPred<ShapedType>) || groups.empty())
    return false;
  auto cType = cast<ShapedType>(generic.getDpsInputs()[cIndex].getType());
  auto outType = cast<ShapedType>(generic.getDpsInits()[0].getType());
  int64_t rank = cType.getRank();
  if (groups.back().empty() || groups.back().back() + 1 != rank)
    return false;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  AffineMap cMap = maps[cIndex], outMap = maps.back();
  if (!namesEveryLoopOnce(cMap, cType) || !namesEveryLoopOnce(outMap, outType) ||
      cMap.getResults().back() != outMap.getResults().back())
    return false;
  auto column = dyn_cast<AffineDimExpr>(cMap.getResults().back());
  if (!column)
    return false;
  // Where N is split, a vector of columns spans at most two rows of it at
  // a pitch, and up to kMaxWrapRows where the rows are not a whole number
  // of vectors (wrapping rows, as if at a pitch of their own width).
  int64_t inner = cType.getDimSize(rank - 1);
  pitch = wrapPitch(cType, groups, columnAlign, pitch);
  if (pitch) {
    // At a pitch the pitch and the columns read are at least a vector;
    // wrapping rows may be narrower (up to kMaxWrapRows rows a vector).
    bool wraps = pitch == inner && !ShapedType::isDynamic(inner);
    // Rows narrower than a vector only where the output keeps C's column
    // dims innermost and in order (an image's rows, not a head split).
    size_t split = groups.back().size();
    bool inOrder = outMap.getNumResults() >= split &&
                   cMap.getResults().take_back(split) == outMap.getResults().take_back(split);
    if (groups.back().size() < 2 || (wraps && inner < columnAlign && !inOrder) ||
        (!wraps && (pitch < columnAlign || ShapedType::isDynamic(inner) ||
                    inner < columnAlign)) ||
        ShapedType::isDynamic(cType.getDimSize(rank - 2)) || cType.getDimSize(rank - 2) < 2)
      return false;
    llvm::SmallBitVector columnLoops(generic.getNumLoops());
    for (int64_t dim : groups.back())
      if (auto loop = dyn_cast<AffineDimExpr>(cMap.getResult(dim)))
        columnLoops.set(loop.getPosition());
    for (AffineMap map : maps) {
      if (map.getNumResults() && map.getResults().back() == column)
        continue;
      for (AffineExpr expr : map.getResults())
        if (auto dim = dyn_cast<AffineDimExpr>(expr); dim && columnLoops.test(dim.getPosition()))
          return false;
    }
  } else if (groups.back().size() > 1 && ShapedType::isDynamic(inner)) {
    return false;
  }
  if (!llvm::all_of(maps, [&](AffineMap map) { return isTileMap(map, column.getPosition()); }))
    return false;
  if (!generic.getRegion().front().getArguments().back().use_empty())
    return false;
  return hasVectorizableScalarBody(generic);
}

EpilogueView epilogueView(Value cInput) {
  EpilogueView view;
  Value expanded = cInput;
  // A slice of the innermost dim's first columns (same rank, zero offsets,
  // unit strides, every other size whole).
  auto pitchSlice = [&](Value source, ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                        ArrayRef<int64_t> strides) -> int64_t {
    auto type = cast<ShapedType>(source.getType());
    if (!type.hasStaticShape() || static_cast<int64_t>(sizes.size()) != type.getRank() ||
        cast<ShapedType>(cInput.getType()).getRank() != type.getRank() ||
        !llvm::all_of(offsets, [](int64_t o) { return o == 0; }) ||
        !llvm::all_of(strides, [](int64_t s) { return s == 1; }) ||
        sizes.drop_back() != type.getShape().drop_back() || sizes.back() >= type.getShape().back())
      return 0;
    return type.getShape().back();
  };
  if (auto slice = cInput.getDefiningOp<tensor::ExtractSliceOp>();
      slice && slice.getSource().getDefiningOp<tensor::ExpandShapeOp>()) {
    if (int64_t pitch = pitchSlice(slice.getSource(), slice.getStaticOffsets(),
                                   slice.getStaticSizes(), slice.getStaticStrides())) {
      view.pitch = pitch;
      expanded = slice.getSource();
    }
  } else if (auto subview = cInput.getDefiningOp<memref::SubViewOp>();
             subview && subview.getSource().getDefiningOp<memref::ExpandShapeOp>()) {
    if (int64_t pitch = pitchSlice(subview.getSource(), subview.getStaticOffsets(),
                                   subview.getStaticSizes(), subview.getStaticStrides())) {
      view.pitch = pitch;
      expanded = subview.getSource();
    }
  }
  view.expanded = expanded;
  if (auto expand = expanded.getDefiningOp<tensor::ExpandShapeOp>()) {
    llvm::append_range(view.groups, expand.getReassociationIndices());
    view.source = expand.getSrc();
    return view;
  }
  if (auto expand = expanded.getDefiningOp<memref::ExpandShapeOp>()) {
    llvm::append_range(view.groups, expand.getReassociationIndices());
    view.source = expand.getSrc();
    return view;
  }
  auto type = cast<ShapedType>(cInput.getType());
  for (int64_t i = 0; i < type.getRank(); ++i)
    view.groups.push_back({i});
  view.source = cInput;
  return view;
}

Value epilogueSource(Value cInput, SmallVectorImpl<ReassociationIndices> &groups) {
  EpilogueView view = epilogueView(cInput);
  groups.assign(view.groups.begin(), view.groups.end());
  return view.source;
}

bool hasVectorizableScalarBody(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  for (Operation &op : body) {
    if (&op != body.getTerminator() && !isVectorizableBodyOp(op))
      return false;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() != &body && !isa<arith::ConstantOp>(def))
        return false;
    }
  }
  return llvm::all_of(body.getArgumentTypes(), [](Type t) { return t.isIntOrFloat(); });
}

std::optional<unsigned> epilogueInput(linalg::GenericOp generic) {
  auto attr = generic->getAttrOfType<IntegerAttr>(kEpilogueAttr);
  if (!attr)
    return std::nullopt;
  return static_cast<unsigned>(attr.getInt());
}

AffineMap convTapsInputMap(MLIRContext *context, const ConvTapsLayout &layout) {
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  AffineExpr pixel = layout.width > 1
                         ? d(1).floorDiv(layout.width) * layout.yStep +
                               (d(1) % layout.width) * layout.xStep
                         : d(1) * (layout.width == 1 ? layout.yStep : layout.xStep);
  return AffineMap::get(5, 0, {d(2), pixel + d(3) * layout.rowStep + d(4) * layout.colStep},
                        context);
}

bool isConvTapsRowMap(AffineMap map) {
  return map.getNumDims() == 5 && map.getNumSymbols() == 0 &&
         llvm::all_of(map.getResults(), [](AffineExpr e) {
           auto dim = dyn_cast<AffineDimExpr>(e);
           return isa<AffineConstantExpr>(e) || (dim && dim.getPosition() == 2);
         });
}

namespace {

/// A conv taps contraction's operands as one image sees them: maps over the
/// loops (f, p, c, i, j) and types, with the batch of a batched form gone.
struct TapsImage {
  SmallVector<AffineMap> maps;
  SmallVector<RankedTensorType> types;
};

/// Whether `map` (over a batched conv taps generic's loops) reads only per
/// image and input channel: each result is d0, d3 or a constant.
bool isBatchedRowMap(AffineMap map) {
  return map.getNumDims() == 6 && map.getNumSymbols() == 0 &&
         llvm::all_of(map.getResults(), [](AffineExpr e) {
           auto dim = dyn_cast<AffineDimExpr>(e);
           return isa<AffineConstantExpr>(e) ||
                  (dim && (dim.getPosition() == 0 || dim.getPosition() == 3));
         });
}

/// One image of a batched conv taps generic (loops (n, f, p, c, i, j)): w
/// does not read n; x inputs and out read it first (their dim 0 is the
/// batch, which may be dynamic) and lose it; row inputs read it anywhere
/// and see it as a unit dim read at 0.
std::optional<TapsImage> batchedTapsImage(linalg::GenericOp generic) {
  MLIRContext *context = generic.getContext();
  unsigned numInputs = generic.getNumDpsInputs();
  AffineExpr batch = getAffineDimExpr(0, context);
  SmallVector<AffineExpr> shift = {getAffineConstantExpr(0, context)};
  for (unsigned k = 0; k < 5; ++k)
    shift.push_back(getAffineDimExpr(k, context));
  TapsImage image;
  for (OpOperand &operand : generic->getOpOperands()) {
    unsigned i = operand.getOperandNumber();
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    if (!type || map.getNumSymbols() || map.getNumResults() != type.getRank())
      return std::nullopt;
    SmallVector<int64_t> shape(type.getShape());
    if (i > 1 && i < numInputs && isBatchedRowMap(map)) {
      for (auto [k, expr] : llvm::enumerate(map.getResults()))
        if (expr == batch)
          shape[k] = 1;
    } else if (i != 0) {
      if (map.getNumResults() < 2 || map.getResult(0) != batch ||
          map.dropResult(0).isFunctionOfDim(0))
        return std::nullopt;
      map = map.dropResult(0);
      shape.erase(shape.begin());
    } else if (map.isFunctionOfDim(0)) {
      return std::nullopt;
    }
    image.maps.push_back(map.replaceDimsAndSymbols(shift, {}, 5, 0));
    image.types.push_back(RankedTensorType::get(shape, type.getElementType()));
  }
  return image;
}

/// The layout of a conv taps contraction whose image reads its operands
/// through `maps` with types `types` (convTapsLayout).
std::optional<ConvTapsLayout> imageTapsLayout(linalg::GenericOp generic, ArrayRef<AffineMap> maps,
                                              ArrayRef<RankedTensorType> types) {
  unsigned numInputs = generic.getNumDpsInputs();
  for (auto [i, type] : llvm::enumerate(types)) {
    // w [F, C, kh, kw], x [C, L], out [F, P]; prologue inputs (see
    // ConvTapsPrologue) like x or per channel.
    int64_t rank = i == 0 ? 4 : 2;
    if (!type.getElementType().isF32() || !type.hasStaticShape() ||
        (type.getRank() != rank && !(i > 1 && i < numInputs && isConvTapsRowMap(maps[i]))))
      return std::nullopt;
    if (i > 1 && i < numInputs && !isConvTapsRowMap(maps[i]) &&
        (maps[i] != maps[1] || type.getShape() != types[1].getShape()))
      return std::nullopt;
  }
  MLIRContext *context = generic.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, context); };
  if (maps[0] != AffineMap::get(5, 0, {d(0), d(2), d(3), d(4)}, context) ||
      maps[numInputs] != AffineMap::get(5, 0, {d(0), d(1)}, context) ||
      maps[1].getNumResults() != 2 || maps[1].getNumSymbols() != 0)
    return std::nullopt;
  // The width is the divisor of p; the steps are the map at unit points.
  ConvTapsLayout layout;
  maps[1].getResult(1).walk([&](AffineExpr expr) {
    auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
    auto divisor = binary ? dyn_cast<AffineConstantExpr>(binary.getRHS()) : nullptr;
    if (divisor && (binary.getKind() == AffineExprKind::FloorDiv ||
                    binary.getKind() == AffineExprKind::Mod))
      layout.width = divisor.getValue();
  });
  if (layout.width < 0 || layout.width == 1)
    return std::nullopt;
  auto at = [&](int64_t p, int64_t i, int64_t j) {
    return maps[1].compose(SmallVector<int64_t>{0, p, 0, i, j})[1];
  };
  layout.rowStep = at(0, 1, 0);
  layout.colStep = at(0, 0, 1);
  layout.xStep = at(1, 0, 0);
  if (layout.width)
    layout.yStep = at(layout.width, 0, 0);
  if (maps[1] != convTapsInputMap(context, layout) || layout.rowStep < 0 ||
      layout.colStep < 0 || layout.xStep < 0 || layout.yStep < 0)
    return std::nullopt;
  // Every tap of every column reads inside x (the kernel loads unchecked).
  RankedTensorType w = types[0], x = types[1];
  int64_t columns = types[numInputs].getDimSize(1);
  if (columns == 0 || w.getNumElements() == 0)
    return std::nullopt;
  int64_t last = columns - 1;
  int64_t farthest = layout.width ? (last / layout.width) * layout.yStep +
                                        std::min(last, layout.width - 1) * layout.xStep
                                  : last * layout.xStep;
  farthest += (w.getDimSize(2) - 1) * layout.rowStep + (w.getDimSize(3) - 1) * layout.colStep;
  if (w.getDimSize(1) != x.getDimSize(0) || farthest >= x.getDimSize(1))
    return std::nullopt;
  // out + w * x, or out + w * b with b computed from the prologue inputs.
  Block &body = generic.getRegion().front();
  auto add = dyn_cast_or_null<arith::AddFOp>(body.getTerminator()->getOperand(0).getDefiningOp());
  auto mul = add ? add.getRhs().getDefiningOp<arith::MulFOp>() : nullptr;
  BlockArgument wArg = body.getArgument(0), outArg = body.getArgument(numInputs);
  if (!mul || add.getLhs() != outArg || mul.getLhs() != wArg || !add->hasOneUse() ||
      !mul->hasOneUse() || !wArg.hasOneUse() || !outArg.hasOneUse())
    return std::nullopt;
  if (numInputs == 2 && body.getOperations().size() == 3 && mul.getRhs() == body.getArgument(1))
    return layout;
  if (!hasVectorizableScalarBody(generic))
    return std::nullopt;
  return layout;
}

} // namespace

std::optional<ConvTapsLayout> convTapsLayout(linalg::GenericOp generic) {
  using utils::IteratorType;
  unsigned loops = generic.getNumLoops();
  if ((loops != 5 && loops != 6) || generic.getNumDpsInputs() < 2 ||
      generic.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<IteratorType> iterators = {IteratorType::parallel, IteratorType::parallel,
                                         IteratorType::reduction, IteratorType::reduction,
                                         IteratorType::reduction};
  if (loops == 6)
    iterators.insert(iterators.begin(), IteratorType::parallel);
  if (generic.getIteratorTypesArray() != iterators)
    return std::nullopt;
  if (loops == 6) {
    std::optional<TapsImage> image = batchedTapsImage(generic);
    if (!image)
      return std::nullopt;
    return imageTapsLayout(generic, image->maps, image->types);
  }
  TapsImage image{generic.getIndexingMapsArray(), {}};
  for (Value operand : generic->getOperands()) {
    auto type = dyn_cast<ShapedType>(operand.getType());
    if (!type)
      return std::nullopt;
    image.types.push_back(RankedTensorType::get(type.getShape(), type.getElementType()));
  }
  return imageTapsLayout(generic, image.maps, image.types);
}

bool isBatchedConvTaps(linalg::GenericOp generic) {
  return generic.getNumLoops() == 6 && generic->hasAttr(kConvTapsAttr) &&
         convTapsLayout(generic).has_value();
}

bool isInsertedIntoSlice(Value value) {
  return llvm::any_of(value.getUses(), [](OpOperand &use) {
    auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
    return insert && use.get() == insert.getSource();
  });
}

namespace {
/// The operand through which the destination-style chain writing `value`
/// (through each op's tied init) starts from an empty tensor or
/// alloc_tensor, when nothing else uses the chain's intermediate values;
/// else null. The empty tensor itself may have other users (CSE merges
/// equal empty tensors): it is a shape, not a buffer.
OpOperand *denseChainStart(Value value) {
  Value root = value;
  OpOperand *start = nullptr;
  while (auto writer = root.getDefiningOp<DestinationStyleOpInterface>()) {
    auto result = cast<OpResult>(root);
    if (result.getResultNumber() >= static_cast<unsigned>(writer.getNumDpsInits()))
      return nullptr;
    start = writer.getDpsInitOperand(result.getResultNumber());
    root = start->get();
    if (!root.hasOneUse() && !root.getDefiningOp<tensor::EmptyOp>())
      return nullptr;
  }
  return start && isa_and_nonnull<tensor::EmptyOp, bufferization::AllocTensorOp>(
                      start->get().getDefiningOp())
             ? start
             : nullptr;
}
} // namespace

bool canKeepDense(Value value) {
  return !isInsertedIntoSlice(value) || denseChainStart(value);
}

bool keepDenseWhenInserted(Value value) {
  if (!isInsertedIntoSlice(value))
    return true;
  OpOperand *start = denseChainStart(value);
  if (!start)
    return false;
  auto empty = start->get().getDefiningOp<tensor::EmptyOp>();
  if (!empty)
    return true; // already an alloc_tensor
  // This chain's own buffer; the empty tensor stays for its other users.
  OpBuilder b(empty);
  start->set(bufferization::AllocTensorOp::create(b, empty.getLoc(), empty.getType(),
                                                  empty.getDynamicSizes())
                 .getResult());
  if (empty->use_empty())
    empty.erase();
  return true;
}

void joinEpilogue(linalg::LinalgOp contraction, linalg::GenericOp generic, OpOperand &cInput,
                  ArrayRef<Operation *> views) {
  generic->setAttr(kEpilogueAttr, Builder(generic).getI64IntegerAttr(cInput.getOperandNumber()));
  OpOperand &init = generic.getDpsInitsMutable()[0];
  if (!init.get().getDefiningOp<tensor::EmptyOp>() || !init.get().hasOneUse()) {
    OpBuilder b(generic);
    auto type = cast<RankedTensorType>(init.get().getType());
    init.set(tensor::EmptyOp::create(b, generic.getLoc(),
                                     tensor::getMixedSizes(b, generic.getLoc(), init.get()),
                                     type.getElementType()));
  }
  Operation *next = generic;
  for (Operation *view : llvm::reverse(views)) {
    view->moveBefore(next);
    next = view;
  }
  contraction->moveBefore(next);
  auto fill = contraction.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (fill && fill->hasOneUse())
    fill->moveBefore(contraction);
}

bool isRowAccess(AffineMap map, int64_t inner) {
  for (auto [i, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (static_cast<int64_t>(dim.getPosition()) == inner && i + 1 != map.getNumResults())
        return false;
    } else if (!isa<AffineConstantExpr>(expr)) {
      return false;
    }
  }
  return true;
}

LogicalResult verifyDispatchGroupsFused(Operation *root, bool rowGroups) {
  bool fused = true;
  root->walk([&](linalg::GenericOp generic) {
    if (generic->hasAttr(kEpilogueAttr)) {
      generic.emitError("matmul epilogue could not be fused into the matmul kernel");
      fused = false;
    } else if (rowGroups && generic->hasAttr(kRowGroupAttr)) {
      generic.emitError("row group ")
          << generic->getAttrOfType<IntegerAttr>(kRowGroupAttr).getInt()
          << " was not emitted as one row kernel";
      fused = false;
    }
  });
  return success(fused);
}

/// Whether the buffer `value` bufferizes to will have unit stride along its
/// last dim (a prediction on tensors; codegen reads the buffer's layout,
/// Target/Host's hasUnitInnerStride): only a strided `tensor.extract_slice`
/// (through reshapes) gives it another; everything else is a fresh buffer or
/// a function argument, both with identity layouts.
bool bufferizesWithUnitInnerStride(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(def)) {
      std::optional<int64_t> stride = getConstantIntValue(slice.getMixedStrides().back());
      if (!stride || *stride != 1)
        return false;
      value = slice.getSource();
    } else if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(def)) {
      value = def->getOperand(0);
    } else {
      return true;
    }
  }
  return true;
}

} // namespace kiln
