//===- MatmulEpilogue.cpp - Epilogues of the CPU matmul kernel ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "MatmulEpilogue.h"

#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/CPU/CPUPolicy.h"
#include "kiln/Target/CPU/Passes.h"
#include "kiln/Target/Host/ABI.h"
#include "kiln/Target/Host/BufferAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace kiln {
namespace {

/// A memref of rank 1 or more with unit stride along its last dim (the
/// kernel stores and loads vectors).
bool isUnitStrideBuffer(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getRank() >= 1 && hasUnitInnerStride(type);
}

/// The loop of C's innermost dim in an epilogue (its vector direction).
AffineExpr columnLoop(linalg::GenericOp generic) {
  return generic.getIndexingMapsArray()[*epilogueInput(generic)].getResults().back();
}

/// The marked epilogue reading `op`'s C (through `groupCount` groups) after
/// it, of the same kiln.dispatch as `op`, with `op` moved right before it,
/// or null.
linalg::GenericOp takeMarkedEpilogue(linalg::LinalgOp op, size_t groupCount) {
  Value c = op.getDpsInits()[0];
  SmallVector<Value> operands = {rootOf(op.getDpsInputs()[0]), rootOf(op.getDpsInputs()[1]),
                                 rootOf(c)};
  SmallVector<Operation *> deallocs;
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    auto generic = dyn_cast<linalg::GenericOp>(next);
    std::optional<unsigned> cIndex = generic ? epilogueInput(generic) : std::nullopt;
    if (cIndex) {
      if (!generic.hasPureBufferSemantics() || *cIndex >= generic.getNumDpsInputs() ||
          !inSameDispatch(op, generic))
        return nullptr;
      EpilogueView view = epilogueView(generic.getDpsInputs()[*cIndex]);
      // The output must not be A's or B's buffer: the kernel writes it
      // while it still reads them.
      Value out = rootOf(generic.getDpsInits()[0]);
      if (!sameView(view.source, c) || view.groups.size() != groupCount ||
          !isMatmulEpilogue(generic, *cIndex, view.groups, kCPUEpilogueColumnAlign, view.pitch) ||
          !isUnitStrideBuffer(generic.getDpsInits()[0]) || out == operands[0] ||
          out == operands[1])
        return nullptr;
      AffineExpr column = columnLoop(generic);
      for (OpOperand *input : generic.getDpsInputOperands()) {
        AffineMap map = generic.getMatchingIndexingMap(input);
        if (map.getNumResults() && map.getResults().back() == column &&
            !isUnitStrideBuffer(input->get()))
          return nullptr;
      }
      op->moveBefore(generic);
      for (Operation *dealloc : deallocs)
        dealloc->moveAfter(generic);
      return generic;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(next)) {
      if (llvm::is_contained(operands, rootOf(dealloc.getMemref())))
        deallocs.push_back(dealloc);
      continue;
    }
    // A fill or copy of other buffers (bufferization places the zero
    // padding of the buffer the epilogue writes into, or a concat's other
    // pieces, here) runs before the matmul.
    if (commutesWith(next, {op.getOperation()}))
      continue;
    // Run-time checks stay before the matmul (they read no buffer).
    if (auto call = dyn_cast<func::CallOp>(next); call && call.getCallee() == kCheckHookName)
      continue;
    if (!isa<memref::AllocOp, memref::AllocaOp>(next) && !isPure(next))
      return nullptr;
  }
  return nullptr;
}

/// The size of dim `dim` of `value` as an index.
Value dimSize(OpBuilder &b, Location loc, Value value, int64_t dim) {
  int64_t size = cast<MemRefType>(value.getType()).getDimSize(dim);
  if (!ShapedType::isDynamic(size))
    return arith::ConstantIndexOp::create(b, loc, size);
  return memref::DimOp::create(b, loc, value, dim);
}

/// The indices of the dims `group` of `shaped` at the linear index
/// `linear` (row-major over the group).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear, Value shaped,
                               const ReassociationIndices &group) {
  SmallVector<Value> values(group.size());
  auto type = cast<MemRefType>(shaped.getType());
  Value rest = linear;
  for (size_t i = group.size(); i-- > 0;) {
    if (type.getDimSize(group[i]) == 1) {
      values[i] = arith::ConstantIndexOp::create(b, loc, 0);
    } else if (i == 0) {
      values[i] = rest;
    } else {
      Value size = dimSize(b, loc, shaped, group[i]);
      values[i] = arith::RemUIOp::create(b, loc, rest, size);
      rest = arith::DivUIOp::create(b, loc, rest, size);
    }
  }
  return values;
}

} // namespace

linalg::GenericOp takeEpilogue(linalg::MatmulOp op) { return takeMarkedEpilogue(op, 2); }

linalg::GenericOp takeBatchEpilogue(linalg::BatchMatmulOp op) {
  return takeMarkedEpilogue(op, 3);
}

linalg::GenericOp takeConvTapsEpilogue(linalg::GenericOp op) { return takeMarkedEpilogue(op, 2); }

linalg::GenericOp sliceBatchEpilogue(OpBuilder &b, Location loc, linalg::GenericOp epilogue,
                                     Value batch, Value cBatch) {
  unsigned cIndex = *epilogueInput(epilogue);
  Value cInput = epilogue.getDpsInputs()[cIndex];
  SmallVector<ReassociationIndices> groups;
  epilogueSource(cInput, groups);
  SmallVector<AffineMap> maps = epilogue.getIndexingMapsArray();
  AffineMap cMap = maps[cIndex];
  // The loops of C's batch dims get this batch's indices.
  SmallVector<Value> batchIndex = delinearize(b, loc, batch, cInput, groups[0]);
  llvm::DenseMap<unsigned, Value> fixed;
  for (auto [k, dim] : llvm::enumerate(groups[0]))
    if (auto loop = dyn_cast<AffineDimExpr>(cMap.getResult(dim)))
      fixed[loop.getPosition()] = batchIndex[k];
  SmallVector<int64_t> position(epilogue.getNumLoops(), -1);
  unsigned loops = 0;
  for (unsigned l = 0; l < epilogue.getNumLoops(); ++l)
    if (!fixed.contains(l))
      position[l] = loops++;
  auto sliceMap = [&](AffineMap map) {
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      results.push_back(!dim || fixed.contains(dim.getPosition())
                            ? b.getAffineConstantExpr(0)
                            : b.getAffineDimExpr(position[dim.getPosition()]));
    }
    return AffineMap::get(loops, 0, results, b.getContext());
  };
  // C: this batch's [M, N] expanded like the rows and columns of the
  // batched C, behind unit dims for the batch ones (all in the row group).
  auto cType = cast<MemRefType>(cInput.getType());
  SmallVector<int64_t> shape;
  SmallVector<OpFoldResult> outputShape;
  for (int64_t dim = 0; dim < cType.getRank(); ++dim) {
    bool batchDim = llvm::is_contained(groups[0], dim);
    shape.push_back(batchDim ? 1 : cType.getDimSize(dim));
    outputShape.push_back(batchDim ? OpFoldResult(b.getIndexAttr(1))
                                   : getAsOpFoldResult(dimSize(b, loc, cInput, dim)));
  }
  ReassociationIndices rows, columns(groups[2]);
  for (int64_t dim = 0; dim <= groups[1].back(); ++dim)
    rows.push_back(dim);
  Value cView = memref::ExpandShapeOp::create(b, loc, shape, cBatch,
                                              ArrayRef<ReassociationIndices>{rows, columns},
                                              outputShape);
  // The other operands: this batch's slice, unit dims kept.
  SmallVector<Value> operands;
  for (OpOperand &operand : epilogue->getOpOperands()) {
    if (operand.getOperandNumber() == cIndex) {
      operands.push_back(cView);
      continue;
    }
    AffineMap map = maps[operand.getOperandNumber()];
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [j, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      bool sliced = dim && fixed.contains(dim.getPosition());
      offsets.push_back(sliced ? OpFoldResult(fixed.lookup(dim.getPosition()))
                               : OpFoldResult(b.getIndexAttr(0)));
      sizes.push_back(sliced ? OpFoldResult(b.getIndexAttr(1))
                             : getAsOpFoldResult(dimSize(b, loc, operand.get(), j)));
      strides.push_back(b.getIndexAttr(1));
    }
    operands.push_back(
        memref::SubViewOp::create(b, loc, operand.get(), offsets, sizes, strides));
  }
  auto slice = cast<linalg::GenericOp>(b.clone(*epilogue));
  slice->setOperands(operands);
  SmallVector<AffineMap> sliceMaps = llvm::map_to_vector(maps, sliceMap);
  slice.setIndexingMapsAttr(b.getAffineMapArrayAttr(sliceMaps));
  slice.setIteratorTypesAttr(b.getArrayAttr(SmallVector<Attribute>(
      loops, linalg::IteratorTypeAttr::get(b.getContext(), utils::IteratorType::parallel))));
  return slice;
}

namespace {
using LoopValues = llvm::SmallDenseMap<unsigned, Value>;

/// The generic's loop indices from the values of C's dims in `group`.
LoopValues loopsOf(AffineMap cMap, const ReassociationIndices &group, ArrayRef<Value> values) {
  LoopValues loops;
  for (auto [k, value] : llvm::enumerate(values))
    if (auto dim = dyn_cast<AffineDimExpr>(cMap.getResult(group[k])))
      loops[dim.getPosition()] = value;
  return loops;
}

/// The indices of `map`'s operand at the loops of a tile row and column.
SmallVector<Value> indicesAt(AffineMap map, const LoopValues &rowValues,
                             const LoopValues &colValues, Value zeroIndex) {
  SmallVector<Value> at;
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      at.push_back(zeroIndex);
    else if (Value value = rowValues.lookup(dim.getPosition()))
      at.push_back(value);
    else
      at.push_back(colValues.lookup(dim.getPosition()));
  }
  return at;
}
} // namespace

/// Stores f(acc) into the epilogue's output for the tile rows x vectors at
/// (rows[r], cols[v]): the loops of the generic follow from C's row and
/// column dims (delinearized where C was expanded), each other input is
/// vector-loaded along the columns (its map ends in the column loop) or
/// loaded once and broadcast, and the generic's body is applied to whole
/// vectors. At a pitch (a conv at the padded row pitch, see EpilogueView),
/// the lanes of a vector in the next image row go through a second masked
/// load or store, and the discarded columns are masked off; so do those of
/// a vector that wraps into the next row of C's split columns where rows
/// are not a whole number of vectors (wrapPitch: pitch = width).
void applyEpilogue(OpBuilder &b, Location loc, linalg::GenericOp generic,
                   ArrayRef<Value> acc, ArrayRef<Value> rows, ArrayRef<Value> cols,
                   ArrayRef<Value> masks, int64_t vectorWidth) {
  unsigned cIndex = *epilogueInput(generic);
  Block &body = generic.getRegion().front();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  auto vectorOf = [&](Type t) { return VectorType::get({vectorWidth}, t); };
  auto zeroOf = [&](Type t) {
    return arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(vectorOf(t))));
  };
  auto constant = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v).getResult(); };
  Value cInput = generic.getDpsInputs()[cIndex];
  EpilogueView view = epilogueView(cInput);
  const SmallVector<ReassociationIndices> &groups = view.groups;
  // Rows of C not a whole number of vectors wrap like rows at a pitch.
  int64_t pitch = wrapPitch(cast<ShapedType>(cInput.getType()), groups,
                            kCPUEpilogueColumnAlign, view.pitch);
  AffineMap cMap = maps[cIndex];
  unsigned column = cast<AffineDimExpr>(cMap.getResults().back()).getPosition();
  auto loopsOf = [&](const ReassociationIndices &group, ArrayRef<Value> values) {
    return kiln::loopsOf(cMap, group, values);
  };
  SmallVector<LoopValues> rowLoops, colLoops;
  // At a pitch: per vector, the loops and lanes of each image row it spans
  // (segment 0 is colLoops' row).
  SmallVector<SmallVector<LoopValues>> segmentLoops;
  SmallVector<SmallVector<Value>> segmentMasks;
  for (Value row : rows)
    rowLoops.push_back(loopsOf(groups[0], delinearize(b, loc, row, view.expanded, groups[0])));
  auto clampLanes = [&](Value lanes) {
    return arith::MaxSIOp::create(
        b, loc, constant(0), arith::MinSIOp::create(b, loc, lanes, constant(vectorWidth)));
  };
  auto maskOf = [&](Value lanes) {
    return vector::CreateMaskOp::create(b, loc, VectorType::get({vectorWidth}, b.getI1Type()),
                                        ValueRange{clampLanes(lanes)})
        .getResult();
  };
  for (auto [v, col] : llvm::enumerate(cols)) {
    SmallVector<Value> values = delinearize(b, loc, col, view.expanded, groups[1]);
    colLoops.push_back(loopsOf(groups[1], values));
    if (!pitch)
      continue;
    // Lanes [0, ow - x0) are row y0 at x0...; lanes [k Wp - x0, k Wp - x0 +
    // ow) row y0 + k from x = 0, addressed from x0 - k Wp: k < 2 at a pitch
    // of at least a vector, up to wrapRows for narrower wrapping rows.
    auto type = cast<ShapedType>(view.expanded.getType());
    int64_t width = cast<ShapedType>(cInput.getType()).getShape().back();
    int64_t height = type.getShape()[type.getRank() - 2];
    Value x = values.back(), y = values[values.size() - 2];
    int64_t segments = wrapRows(width, pitch, vectorWidth);
    SmallVector<LoopValues> loops = {colLoops.back()};
    for (int64_t k = 1; k < segments; ++k) {
      SmallVector<Value> next(values);
      next[next.size() - 2] = arith::MinUIOp::create(
          b, loc, arith::AddIOp::create(b, loc, y, constant(k)), constant(height - 1));
      next.back() = arith::SubIOp::create(b, loc, x, constant(k * pitch));
      loops.push_back(loopsOf(groups[1], next));
    }
    SmallVector<Value> lanes = {maskOf(arith::SubIOp::create(b, loc, constant(width), x))};
    for (int64_t k = 1; k < segments; ++k) {
      Value start = arith::SubIOp::create(b, loc, constant(k * pitch), x);
      lanes.push_back(arith::XOrIOp::create(
          b, loc, maskOf(arith::AddIOp::create(b, loc, start, constant(width))), maskOf(start)));
    }
    if (!masks.empty())
      for (Value &mask : lanes)
        mask = arith::AndIOp::create(b, loc, mask, masks[v]);
    segmentLoops.push_back(std::move(loops));
    segmentMasks.push_back(std::move(lanes));
  }
  Value zeroIndex = constant(0);
  auto indicesAt = [&](AffineMap map, const LoopValues &rowValues, const LoopValues &colValues) {
    return kiln::indicesAt(map, rowValues, colValues, zeroIndex);
  };
  Value out = generic.getDpsInits()[0];
  // Tile element (r, v); `pitched`: through the two masked accesses of a
  // vector that may span two image rows.
  auto emitElement = [&](size_t r, size_t v, bool pitched) {
      IRMapping map;
      for (OpOperand *input : generic.getDpsInputOperands()) {
        unsigned i = input->getOperandNumber();
        BlockArgument arg = body.getArgument(i);
        if (i == cIndex) {
          map.map(arg, acc[r * cols.size() + v]);
          continue;
        }
        SmallVector<Value> at = indicesAt(maps[i], rowLoops[r], colLoops[v]);
        bool alongColumns = maps[i].getNumResults() &&
                            maps[i].getResults().back() == b.getAffineDimExpr(column);
        VectorType type = vectorOf(arg.getType());
        Value value;
        if (!alongColumns) {
          value = vector::BroadcastOp::create(b, loc, type,
                                              memref::LoadOp::create(b, loc, input->get(), at));
        } else if (pitched) {
          for (auto [k, loops] : llvm::enumerate(segmentLoops[v])) {
            Value lanes = segmentMasks[v][k];
            Value part = vector::MaskedLoadOp::create(b, loc, type, input->get(),
                                                      indicesAt(maps[i], rowLoops[r], loops),
                                                      lanes, zeroOf(arg.getType()));
            value = k ? arith::SelectOp::create(b, loc, lanes, part, value).getResult() : part;
          }
        } else if (masks.empty()) {
          value = vector::LoadOp::create(b, loc, type, input->get(), at);
        } else {
          value = vector::MaskedLoadOp::create(b, loc, type, input->get(), at, masks[v],
                                               zeroOf(arg.getType()));
        }
        map.map(arg, value);
      }
      // Scalars from outside the body (constants) become splats.
      auto lookup = [&](Value scalar) -> Value {
        if (Value mapped = map.lookupOrNull(scalar))
          return mapped;
        return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()), scalar);
      };
      for (Operation &op : body.without_terminator()) {
        if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
          map.map(constant.getResult(),
                  arith::ConstantOp::create(
                      b, loc, DenseElementsAttr::get(vectorOf(constant.getType()),
                                                     constant.getValue())));
          continue;
        }
        OperationState state(loc, op.getName());
        for (Value operand : op.getOperands())
          state.addOperands(lookup(operand));
        state.addTypes(vectorOf(op.getResult(0).getType()));
        state.addAttributes(op.getAttrs());
        map.map(op.getResult(0), b.create(state)->getResult(0));
      }
      Value result = lookup(body.getTerminator()->getOperand(0));
      SmallVector<Value> at = indicesAt(maps.back(), rowLoops[r], colLoops[v]);
      if (pitched) {
        for (auto [loops, lanes] : llvm::zip(segmentLoops[v], segmentMasks[v]))
          vector::MaskedStoreOp::create(b, loc, out, indicesAt(maps.back(), rowLoops[r], loops),
                                        lanes, result);
      } else if (masks.empty()) {
        vector::StoreOp::create(b, loc, result, out, at);
      } else {
        vector::MaskedStoreOp::create(b, loc, out, at, masks[v], result);
      }
  };
  for (size_t v = 0; v < cols.size(); ++v) {
    if (!pitch) {
      for (size_t r = 0; r < rows.size(); ++r)
        emitElement(r, v, false);
      continue;
    }
    // A vector inside one image row's kept columns (most of them: 48 of
    // 58 starts at 56^2) is one plain access; masked stores are slow on
    // some CPUs (about 12 cycles each on Zen 3), and a wrapping vector
    // needs two.
    int64_t width = cast<ShapedType>(cInput.getType()).getShape().back();
    Value x = delinearize(b, loc, cols[v], view.expanded, groups[1]).back();
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                         arith::AddIOp::create(b, loc, x, constant(vectorWidth)),
                                         constant(width));
    auto branch = scf::IfOp::create(b, loc, inside, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    for (size_t r = 0; r < rows.size(); ++r)
      emitElement(r, v, false);
    b.setInsertionPoint(branch.elseBlock()->getTerminator());
    for (size_t r = 0; r < rows.size(); ++r)
      emitElement(r, v, true);
  }
}

/// batch_matmul = a loop over batches of 2-D matmuls on rank-reduced views.
/// A marked epilogue becomes one per batch, sliced to it, after its matmul.
/// A zero fill of C right before it is dropped: the batches' matmuls are
/// then `fresh` (they start from zero accumulators).
void splitBatches(linalg::BatchMatmulOp op, llvm::SmallPtrSetImpl<Operation *> &fresh) {
  bool dropFill = false;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode())) {
    auto value = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto zero = value ? dyn_cast<FloatAttr>(value.getValue()) : nullptr;
    int64_t depth = op.getStaticLoopRanges()[3];
    if (fill.hasPureBufferSemantics() && zero && zero.getValue().isPosZero() &&
        sameView(fill.getDpsInits()[0], op.getDpsInits()[0]) &&
        !ShapedType::isDynamic(depth) && depth > 0) {
      fill.erase();
      dropFill = true;
    }
  }
  linalg::GenericOp epilogue = takeBatchEpilogue(op);
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value a = op.getDpsInputs()[0], bm = op.getDpsInputs()[1], c = op.getDpsInits()[0];
  Value batches = memref::DimOp::create(b, loc, a, 0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  scf::ForOp::create(b, loc, zero, batches, one, {}, [&](OpBuilder &nb, Location, Value i,
                                                         ValueRange) {
    auto view = [&](Value memref) -> Value {
      auto type = cast<MemRefType>(memref.getType());
      SmallVector<OpFoldResult> offsets = {i, nb.getIndexAttr(0), nb.getIndexAttr(0)};
      SmallVector<OpFoldResult> sizes = {nb.getIndexAttr(1)};
      for (int64_t d = 1; d < 3; ++d)
        sizes.push_back(type.isDynamicDim(d)
                            ? OpFoldResult(memref::DimOp::create(nb, loc, memref, d).getResult())
                            : OpFoldResult(nb.getIndexAttr(type.getDimSize(d))));
      SmallVector<OpFoldResult> strides(3, nb.getIndexAttr(1));
      SmallVector<int64_t> shape = {type.getDimSize(1), type.getDimSize(2)};
      auto reduced =
          memref::SubViewOp::inferRankReducedResultType(shape, type, offsets, sizes, strides);
      return memref::SubViewOp::create(nb, loc, cast<MemRefType>(reduced), memref, offsets,
                                       sizes, strides);
    };
    Value cBatch = view(c);
    auto matmul = linalg::MatmulOp::create(nb, loc, ValueRange{view(a), view(bm)},
                                           ValueRange{cBatch});
    copyDispatchAttr(op, matmul); // its sliced epilogue is of the same dispatch
    if (dropFill)
      fresh.insert(matmul);
    if (epilogue)
      sliceBatchEpilogue(nb, loc, epilogue, i, cBatch);
    scf::YieldOp::create(nb, loc);
  });
  op.erase();
  if (epilogue)
    epilogue.erase();
}

namespace {

/// A rank-keeping view of `memref` with image `image` at the dims `dims`
/// (size 1 there), all of every other dim.
Value imageView(OpBuilder &b, Location loc, Value memref, ArrayRef<unsigned> dims, Value image) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<OpFoldResult> offsets, sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool sliced = llvm::is_contained(dims, d);
    offsets.push_back(sliced ? OpFoldResult(image) : OpFoldResult(b.getIndexAttr(0)));
    sizes.push_back(sliced ? OpFoldResult(b.getIndexAttr(1))
                           : getAsOpFoldResult(dimSize(b, loc, memref, d)));
  }
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  return memref::SubViewOp::create(b, loc, memref, offsets, sizes, strides);
}

/// The results of `map` that are the loop `loop`.
SmallVector<unsigned> resultsOf(AffineMap map, unsigned loop) {
  SmallVector<unsigned> results;
  for (auto [i, expr] : llvm::enumerate(map.getResults()))
    if (auto dim = dyn_cast<AffineDimExpr>(expr); dim && dim.getPosition() == loop)
      results.push_back(i);
  return results;
}

/// The epilogue of image `image` of a batched conv's `epilogue`: C read as
/// `cImage` ([F, P], which that image's taps write) through the epilogue's
/// view of the batched C with a unit batch, every other operand sliced to
/// the image (unit dims kept). The loops and maps stay: the batch loop is
/// now of size 1, as at batch 1.
linalg::GenericOp sliceImageEpilogue(OpBuilder &b, Location loc, linalg::GenericOp epilogue,
                                     Value image, Value cImage) {
  unsigned cIndex = *epilogueInput(epilogue);
  EpilogueView view = epilogueView(epilogue.getDpsInputs()[cIndex]);
  auto expanded = cast<MemRefType>(view.expanded.getType());
  SmallVector<int64_t> shape(expanded.getShape());
  shape[0] = 1;
  // The batch group {0} joins the rows: [F, ...] -> [1, F, ...].
  SmallVector<ReassociationIndices> groups(view.groups);
  groups[1].insert(groups[1].begin(), 0);
  groups.erase(groups.begin());
  Value c = memref::ExpandShapeOp::create(b, loc, shape, cImage, groups);
  if (view.pitch) {
    auto slice = cast<MemRefType>(epilogue.getDpsInputs()[cIndex].getType());
    SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1)};
    for (int64_t size : slice.getShape().drop_front())
      sizes.push_back(b.getIndexAttr(size));
    c = memref::SubViewOp::create(b, loc, c, SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(0)),
                                  sizes, SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(1)));
  }
  auto cMap = epilogue.getMatchingIndexingMap(epilogue.getDpsInputOperand(cIndex));
  auto batch = cast<AffineDimExpr>(cMap.getResult(0)).getPosition();
  SmallVector<Value> operands;
  for (OpOperand &operand : epilogue->getOpOperands())
    operands.push_back(operand.getOperandNumber() == cIndex
                           ? c
                           : imageView(b, loc, operand.get(),
                                       resultsOf(epilogue.getMatchingIndexingMap(&operand), batch),
                                       image));
  auto slice = cast<linalg::GenericOp>(b.clone(*epilogue));
  slice->setOperands(operands);
  return slice;
}

} // namespace

void splitConvTapsBatch(linalg::GenericOp op, llvm::SmallPtrSetImpl<Operation *> &fresh) {
  Value c = op.getDpsInits()[0];
  bool dropFill = dropZeroFill(op, c);
  linalg::GenericOp epilogue = takeMarkedEpilogue(op, 3);
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *context = b.getContext();
  // Loop n -> 0 and the loops after it one down.
  SmallVector<AffineExpr> shift = {b.getAffineConstantExpr(0)};
  for (unsigned k = 0; k < 5; ++k)
    shift.push_back(b.getAffineDimExpr(k));
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value images = memref::DimOp::create(b, loc, c, 0);
  unsigned numInputs = op.getNumDpsInputs();
  auto imageLoop = scf::ForOp::create(b, loc, zero, images, one, {}, [&](OpBuilder &nb, Location,
                                                                         Value n, ValueRange) {
    SmallVector<Value> operands;
    SmallVector<AffineMap> maps;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      unsigned i = operand.getOperandNumber();
      // Row inputs read per image and channel (d0, d3, constants).
      bool row = i > 1 && i < numInputs && llvm::all_of(map.getResults(), [](AffineExpr e) {
                   auto dim = dyn_cast<AffineDimExpr>(e);
                   return isa<AffineConstantExpr>(e) ||
                          (dim && (dim.getPosition() == 0 || dim.getPosition() == 3));
                 });
      bool xLike = i != 0 && !row;
      Value value = operand.get();
      if (xLike) {
        // x [N, C, L] and out [N, F, P] lose the batch: [C, L], [F, P].
        auto type = cast<MemRefType>(value.getType());
        SmallVector<OpFoldResult> offsets = {n, nb.getIndexAttr(0), nb.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {nb.getIndexAttr(1),
                                           nb.getIndexAttr(type.getDimSize(1)),
                                           nb.getIndexAttr(type.getDimSize(2))};
        SmallVector<OpFoldResult> strides(3, nb.getIndexAttr(1));
        auto reduced = memref::SubViewOp::inferRankReducedResultType(
            type.getShape().drop_front(), type, offsets, sizes, strides);
        value = memref::SubViewOp::create(nb, loc, cast<MemRefType>(reduced), value, offsets,
                                          sizes, strides);
        map = map.dropResult(0);
      } else if (map.isFunctionOfDim(0)) {
        value = imageView(nb, loc, value, resultsOf(map, 0), n);
      }
      operands.push_back(value);
      maps.push_back(map.replaceDimsAndSymbols(shift, {}, 5, 0));
    }
    auto image = cast<linalg::GenericOp>(nb.clone(*op));
    image->setOperands(operands);
    image.setIndexingMapsAttr(nb.getAffineMapArrayAttr(maps));
    SmallVector<Attribute> iterators(op.getIteratorTypes().getValue().drop_front());
    image.setIteratorTypesAttr(ArrayAttr::get(context, iterators));
    // The images share the threads (kiln-cpu-matmul merges this loop with
    // the image's task loop): each image aims for fewer tasks.
    int64_t batch = cast<MemRefType>(c.getType()).getDimSize(0);
    image->setAttr(kImagesAttr, nb.getI64IntegerAttr(ShapedType::isDynamic(batch) ? 0 : batch));
    if (dropFill)
      fresh.insert(image);
    if (epilogue)
      sliceImageEpilogue(nb, loc, epilogue, n, operands[numInputs]);
    scf::YieldOp::create(nb, loc);
  });
  imageLoop->setAttr(kImagesAttr, b.getUnitAttr());
  op.erase();
  if (epilogue)
    epilogue.erase();
}

void mergeImageLoops(Operation *root) {
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) {
    if (loop->hasAttr(kImagesAttr))
      loops.push_back(loop);
  });
  for (scf::ForOp loop : loops) {
    loop->removeAttr(kImagesAttr);
    // The body: views of the image (no memory effects), one heavy task loop
    // whose bounds are known outside the image loop.
    scf::ParallelOp tasks;
    bool mergeable = true;
    for (Operation &op : loop.getBody()->without_terminator()) {
      auto parallel = dyn_cast<scf::ParallelOp>(op);
      if (parallel && !tasks && parallel->hasAttr(kHeavyLoopAttr) &&
          parallel.getNumLoops() == 1)
        tasks = parallel;
      else if (!isMemoryEffectFree(&op) || op.getNumRegions())
        mergeable = false;
    }
    std::optional<int64_t> count = tasks ? getConstantIntValue(tasks.getUpperBound()[0])
                                         : std::nullopt;
    if (!mergeable || !count || !isConstantIntValue(tasks.getLowerBound()[0], 0) ||
        !isConstantIntValue(tasks.getStep()[0], 1) ||
        !isConstantIntValue(loop.getLowerBound(), 0) || !isConstantIntValue(loop.getStep(), 1))
      continue;
    OpBuilder b(loop);
    Location loc = loop.getLoc();
    Value perImage = arith::ConstantIndexOp::create(b, loc, *count);
    Value total = arith::MulIOp::create(b, loc, loop.getUpperBound(), perImage);
    auto merged = scf::ParallelOp::create(
        b, loc, ValueRange{arith::ConstantIndexOp::create(b, loc, 0)}, ValueRange{total},
        ValueRange{arith::ConstantIndexOp::create(b, loc, 1)},
        [&](OpBuilder &pb, Location, ValueRange ivs) {
          IRMapping mapping;
          mapping.map(loop.getInductionVar(), arith::DivUIOp::create(pb, loc, ivs[0], perImage));
          mapping.map(tasks.getInductionVars()[0],
                      arith::RemUIOp::create(pb, loc, ivs[0], perImage));
          for (Operation &op : loop.getBody()->without_terminator())
            if (&op != tasks.getOperation())
              pb.clone(op, mapping);
          for (Operation &op : tasks.getBody()->without_terminator())
            pb.clone(op, mapping);
        });
    merged->setAttr(kHeavyLoopAttr, b.getUnitAttr());
    loop.erase();
  }
}

/// Whether `op` can stand between a zero fill and the matmul that
/// overwrites it: a dispatch's trace hook (it reads no buffer), the
/// allocation of another buffer, or an op without memory effects (views,
/// constants).
static bool transparentToFill(Operation *op) {
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee() == kTraceBeginName || call.getCallee() == kTraceEndName;
  return isa<memref::AllocOp, memref::AllocaOp>(op) || isMemoryEffectFree(op);
}

bool dropZeroFill(Operation *op, Value c) {
  Operation *prev = op->getPrevNode();
  while (prev && transparentToFill(prev))
    prev = prev->getPrevNode();
  auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
  if (!fill || !fill.hasPureBufferSemantics())
    return false;
  auto value = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>();
  // +0.0, or 0 for an integer product's C.
  Attribute attr = value ? value.getValue() : Attribute();
  bool zero = false;
  if (auto f = dyn_cast_or_null<FloatAttr>(attr))
    zero = f.getValue().isPosZero();
  else if (auto i = dyn_cast_or_null<IntegerAttr>(attr))
    zero = i.getValue().isZero();
  if (!sameView(c, fill.getDpsInits()[0]) || !zero)
    return false;
  fill.erase();
  return true;
}

bool dropZeroFill(linalg::MatmulOp op) {
  int64_t depth = op.getStaticLoopRanges()[2];
  if (depth == ShapedType::kDynamic || depth <= 0)
    return false;
  return dropZeroFill(op, op.getDpsInits()[0]);
}

} // namespace kiln
