//===- RowGroups.cpp - Which row ops run as one row kernel ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "RowGroups.h"

#include "kiln/Dispatch/Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace kiln {
namespace {

/// The element types of a row group's operands: f32, and with `halfFloats`
/// f16 and bf16 (a target whose row kernel reads them and computes in f32).
bool isRowElement(Type type, bool halfFloats) {
  return type.isF32() || (halfFloats && (type.isF16() || type.isBF16()));
}

/// The combiner of a reduction the row kernels vectorize: max/min, or an
/// add/mul that may be reassociated, applied once to the accumulator.
bool hasRowCombiner(linalg::GenericOp generic) {
  Block &body = generic.getRegion().front();
  BlockArgument acc = body.getArguments().back();
  Operation *combiner = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 || !acc.hasOneUse() ||
      *acc.getUsers().begin() != combiner)
    return false;
  if (isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(combiner))
    return true;
  auto fmf = dyn_cast<arith::ArithFastMathInterface>(combiner);
  return isa<arith::AddFOp, arith::MulFOp>(combiner) && fmf &&
         bitEnumContainsAll(fmf.getFastMathFlagsAttr().getValue(),
                            arith::FastMathFlags::reassoc);
}

/// The rows of a generic reducing exactly its last loop (at least one outer
/// dim). Outer dims and the row length may be dynamic (a symbolic batch, a
/// softmax over a symbolic sequence): the row kernels loop over the rows and
/// each op over its own row length, in vectors with a masked tail.
std::optional<SmallVector<int64_t>> rowSeed(linalg::GenericOp generic) {
  unsigned n = generic.getNumLoops();
  if (n == 0 || generic.getNumReductionLoops() != 1 ||
      generic.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return std::nullopt;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  ranges.pop_back();
  if (ranges.empty())
    return std::nullopt; // a row kernel of one row is no parallel loop
  return ranges;
}

/// Whether `map` reads the outer loops d0..dk-1 as its first k indices, in
/// order: an op reading a value so has that value's outer sizes as its own.
bool readsOuterInOrder(AffineMap map, unsigned k) {
  if (map.getNumResults() < k)
    return false;
  for (unsigned i = 0; i < k; ++i)
    if (map.getResult(i) != getAffineDimExpr(i, map.getContext()))
      return false;
  return true;
}

/// With dynamic outer sizes, types cannot show that two ops run over the
/// same rows; reading one's result at (d0..dk-1, ...) does (an op's loop
/// sizes are its operands' sizes). Whether `op` reads a member's result or
/// a member reads `op`'s so.
bool sharesRows(linalg::GenericOp op, ArrayRef<Operation *> members, unsigned k) {
  auto readsResultOf = [&](linalg::GenericOp reader, Operation *writer) {
    return llvm::any_of(reader.getDpsInputOperands(), [&](OpOperand *input) {
      return input->get().getDefiningOp() == writer &&
             readsOuterInOrder(reader.getMatchingIndexingMap(input), k);
    });
  };
  return llvm::any_of(members, [&](Operation *member) {
    auto generic = cast<linalg::GenericOp>(member);
    return readsResultOf(op, member) || readsResultOf(generic, op);
  });
}

/// The empty tensor a DPS op's first init comes from (through fills).
Operation *initRoot(Operation *op) {
  auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(op);
  if (!dps || dps.getNumDpsInits() == 0)
    return nullptr;
  Value init = dps.getDpsInits()[0];
  while (auto fill = init.getDefiningOp<linalg::FillOp>())
    init = fill.getDpsInits()[0];
  return init.getDefiningOp<tensor::EmptyOp>();
}

/// Whether the members may share a buffer that the row kernels would see
/// written in one view and read in another: bufferization may write a
/// member's output into the buffer of a dead value from the same empty
/// tensor (a softmax's max and sum both filling one empty [rows] tensor);
/// a member reading that value through a reshape or a non-identity map
/// would then not run row by row.
bool mayAliasAcrossViews(ArrayRef<Operation *> members) {
  llvm::SmallPtrSet<Operation *, 8> written;
  for (Operation *member : members)
    if (Operation *root = initRoot(member))
      written.insert(root);
  for (Operation *member : members) {
    auto generic = cast<linalg::GenericOp>(member);
    for (OpOperand *input : generic.getDpsInputOperands()) {
      Value value = input->get();
      bool view = false;
      while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
          value.getDefiningOp())) {
        value = value.getDefiningOp()->getOperand(0);
        view = true;
      }
      Operation *root = initRoot(value.getDefiningOp());
      if (root && written.contains(root) && !llvm::is_contained(members, value.getDefiningOp()) &&
          (view || !generic.getMatchingIndexingMap(input).isIdentity()))
        return true;
    }
  }
  return false;
}

/// A generic the row kernels take into a group over rows `outer`: f32,
/// parallel over the rows; elementwise over the row or the rows, or
/// reducing the row with a vectorizable combiner; every operand addressed
/// by row (contiguous along it), its dynamic sizes read by loops (not at a
/// constant index).
bool isRowMember(linalg::GenericOp generic, ArrayRef<int64_t> outer, bool halfFloats) {
  unsigned k = outer.size(), n = generic.getNumLoops();
  if (!generic.hasPureTensorSemantics() || (n != k && n != k + 1) ||
      generic.getNumDpsInits() != 1 || generic->hasAttr(kEpilogueAttr))
    return false;
  SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
  auto iterators = generic.getIteratorTypesArray();
  if (ArrayRef<int64_t>(ranges).take_front(k) != outer)
    return false;
  for (unsigned i = 0; i < k; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return false;
  bool reduction = n == k + 1 && iterators[k] == utils::IteratorType::reduction;
  AffineMap out = generic.getIndexingMapsArray().back();
  AffineMap rowScalars = AffineMap::getMultiDimIdentityMap(n, generic.getContext());
  if (reduction ? !hasRowCombiner(generic) || out != rowScalars.dropResult(k)
                : !out.isIdentity())
    return false;
  for (OpOperand &operand : generic->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    AffineMap map = generic.getMatchingIndexingMap(&operand);
    if (!type || !isRowElement(type.getElementType(), halfFloats) || !isRowAccess(map, k) ||
        !bufferizesWithUnitInnerStride(operand.get()))
      return false;
    // Dynamic sizes only along loops (a symbolic batch or row length).
    for (auto [size, index] : llvm::zip(type.getShape(), map.getResults()))
      if (ShapedType::isDynamic(size) && !isa<AffineDimExpr>(index))
        return false;
  }
  return hasVectorizableScalarBody(generic);
}

/// Ops a row group steps over: no memory effects once bufferized (empty
/// tensors become fresh buffers, reshapes and slices views), or a fill of
/// the rows' shape (which the row kernels take in).
bool isRowTransparent(Operation *op, ArrayRef<int64_t> outer, bool halfFloats) {
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    auto type = dyn_cast<RankedTensorType>(fill->getResult(0).getType());
    return type && isRowElement(type.getElementType(), halfFloats) &&
           (type.getShape() == outer ||
            (type.getRank() == static_cast<int64_t>(outer.size()) + 1 &&
             type.getShape().drop_back() == outer));
  }
  return isa<tensor::EmptyOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             arith::ConstantOp>(op);
}

/// Whether the members read each other's results only directly: through a
/// reshape, the buffer a member writes would be accessed through a second
/// view, which the row kernels do not run row by row.
bool readsMembersDirectly(ArrayRef<Operation *> members) {
  for (Operation *member : members)
    for (Operation *user : member->getResult(0).getUsers())
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
        for (Operation *reader : user->getResult(0).getUsers())
          if (llvm::is_contained(members, reader))
            return false;
  return true;
}

/// Whether `op` runs over rows as long as `seed`'s (or over whole rows'
/// scalars, which have no length).
bool sameRowLength(linalg::GenericOp op, linalg::GenericOp seed) {
  if (op.getNumLoops() == seed.getNumLoops() - 1)
    return true;
  return op.getStaticLoopRanges().back() == seed.getStaticLoopRanges().back();
}

} // namespace

/// Marks maximal runs of adjacent row members around each row reduction.
/// A reduction's result read by an elementwise op through an expand_shape
/// that only adds unit dims, as a row scalar broadcast along the row (an
/// RMSNorm's mean of squares [b, s] read as [b, s, 1] at (d0, d1, 0)): the
/// op reads the result directly, each group of the expand read at its one
/// dim of size other than 1 (the first if all are 1), so the two can share
/// a row group. (Loops cannot be collapsed for a broadcast read, which is
/// how isReductionResultUnitExpand's pattern handles a same-shape read.)
void readRowScalarsDirectly(Block &block) {
  for (Operation &op : block) {
    auto consumer = dyn_cast<linalg::GenericOp>(&op);
    if (!consumer || consumer.getNumReductionLoops() != 0)
      continue;
    SmallVector<AffineMap> maps = consumer.getIndexingMapsArray();
    bool changed = false;
    for (OpOperand *input : consumer.getDpsInputOperands()) {
      auto expand = input->get().getDefiningOp<tensor::ExpandShapeOp>();
      auto reduction = expand ? expand.getSrc().getDefiningOp<linalg::GenericOp>() : nullptr;
      if (!reduction || reduction.getNumReductionLoops() != 1 ||
          !expand.getResultType().hasStaticShape())
        continue;
      ArrayRef<int64_t> shape = expand.getResultType().getShape();
      AffineMap map = maps[input->getOperandNumber()];
      SmallVector<AffineExpr> reads;
      bool unitOnly = true;
      for (const ReassociationIndices &group : expand.getReassociationIndices()) {
        auto wide = llvm::make_filter_range(group, [&](int64_t d) { return shape[d] != 1; });
        unitOnly &= std::distance(wide.begin(), wide.end()) <= 1;
        int64_t pick = wide.empty() ? group.front() : *wide.begin();
        reads.push_back(map.getResult(pick));
      }
      if (!unitOnly)
        continue;
      maps[input->getOperandNumber()] =
          AffineMap::get(map.getNumDims(), map.getNumSymbols(), reads, map.getContext());
      input->set(expand.getSrc());
      changed = true;
    }
    if (changed)
      consumer.setIndexingMapsAttr(Builder(consumer).getAffineMapArrayAttr(maps));
  }
}

void formRowGroups(Block &block, const RowGroupRules &rules) {
  readRowScalarsDirectly(block);
  bool halfFloats = rules.halfFloats;
  int64_t next = 0;
  llvm::SmallPtrSet<Operation *, 16> taken;
  for (Operation &op : block) {
    auto seed = dyn_cast<linalg::GenericOp>(&op);
    std::optional<SmallVector<int64_t>> outer = seed ? rowSeed(seed) : std::nullopt;
    if (!outer || taken.contains(seed) || !isRowMember(seed, *outer, halfFloats))
      continue;
    SmallVector<Operation *> members = {seed};
    bool dynamicRows = llvm::is_contained(*outer, ShapedType::kDynamic);
    auto extend = [&](bool forward) {
      for (Operation *other = forward ? seed->getNextNode() : seed->getPrevNode(); other;
           other = forward ? other->getNextNode() : other->getPrevNode()) {
        auto generic = dyn_cast<linalg::GenericOp>(other);
        if (generic && !taken.contains(other) && isRowMember(generic, *outer, halfFloats) &&
            (!rules.oneRowLength || sameRowLength(generic, seed)) &&
            (!dynamicRows || sharesRows(generic, members, outer->size()))) {
          members.push_back(other);
          if (!readsMembersDirectly(members) || mayAliasAcrossViews(members)) {
            members.pop_back();
            return;
          }
        } else if (!isRowTransparent(other, *outer, halfFloats)) {
          return;
        }
      }
    };
    extend(/*forward=*/false);
    extend(/*forward=*/true);
    if (members.size() < 2)
      continue;
    for (Operation *member : members) {
      taken.insert(member);
      member->setAttr(kRowGroupAttr, Builder(member).getI64IntegerAttr(next));
    }
    ++next;
  }
}

bool isReductionResultUnitExpand(OpOperand *operand) {
  auto expand = operand->get().getDefiningOp<tensor::ExpandShapeOp>();
  auto reduction = expand ? expand.getSrc().getDefiningOp<linalg::GenericOp>() : nullptr;
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  return reduction && consumer && expand->hasOneUse() && expand.getSrc().hasOneUse() &&
         reduction.getNumReductionLoops() == 1 && consumer.getNumReductionLoops() == 0 &&
         expand.getResultType().hasStaticShape() &&
         expand.getResultType().getNumElements() == expand.getSrcType().getNumElements() &&
         llvm::all_of(expand.getReassociationIndices(), [&](const ReassociationIndices &group) {
           return llvm::count_if(group, [&](int64_t dim) {
                    return expand.getResultType().getDimSize(dim) != 1;
                  }) <= 1;
         });
}

} // namespace kiln
