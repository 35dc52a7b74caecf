//===- SplitF32.cpp - The kiln-cuda-split-f32 pass (3xTF32) ---------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kilnc --precision=fp32 on sm_90a: f32 products on tf32 tensor cores with
// error compensation (CUTLASS's 3xTF32). Each f32 operand x splits into
// big = x rounded to tf32 (10 mantissa bits) and small = x - big (exact in
// f32) rounded to tf32, so the tensor cores read both exactly; then
//   A * B ~= As * Bb + Ab * Bs + Ab * Bb
// (the dropped As * Bs is below 2^-22 of |A| |B|), accumulated in f32. The
// three products are one tf32 product over a K three times as long:
// A' = [As | Ab | Ab] (M x 3K) times B' = [Bb ; Bs ; Bb] (3K x N), the small
// terms first so they are summed before the large ones. Weights are split
// now, activations by an elementwise generic; B' is given K-major (C = A *
// B'^T), as tf32 wgmma reads it.
//
//===----------------------------------------------------------------------===//

#include "TF32Rounding.h"
#include "kiln/Conversion/KilnToLinalg/ContractionMaps.h"
#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"
#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <cstring>

namespace kiln {
#define GEN_PASS_DEF_KILNCUDASPLITF32PASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// The two tf32 halves of `x`: big, then small (zero where big is x, so an
/// infinity's small half is 0, not inf - inf; its products with the other
/// operand's zero small half are still NaN: inf * 0).
std::pair<float, float> splitValue(float x) {
  float big = roundToTF32(x);
  return {big, big == x ? 0.0f : roundToTF32(x - big)};
}

/// The elements of an f32 constant: dense, or a resource blob (the ONNX
/// importer's weights); none for anything else.
std::optional<SmallVector<float>> constantValues(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
    return llvm::to_vector(dense.getValues<float>());
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  AsmResourceBlob *blob = resource ? resource.getRawHandle().getBlob() : nullptr;
  int64_t count = cast<RankedTensorType>(value.getType()).getNumElements();
  if (!blob || blob->getData().size() != static_cast<size_t>(count) * sizeof(float))
    return std::nullopt;
  SmallVector<float> values(count);
  std::memcpy(values.data(), blob->getData().data(), blob->getData().size());
  return values;
}

/// `value` with dimension `axis` three times as long: parts 0, 1 and 2 along
/// it are x's big half, except part `smallPart`, which is x's small half.
/// Computed now for a constant, else by a generic writing [..., 3, D, ...]
/// that is then collapsed.
Value splitOperand(OpBuilder &b, Location loc, Value value, int64_t axis, int64_t smallPart) {
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  SmallVector<int64_t> split(shape.take_front(axis));
  split.push_back(3);
  split.append(shape.begin() + axis, shape.end());
  SmallVector<int64_t> tripled(shape);
  tripled[axis] *= 3;
  auto resultType = RankedTensorType::get(tripled, b.getF32Type());

  if (std::optional<SmallVector<float>> values = constantValues(value)) {
    // outer x [3 x D x inner] in row-major order.
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i)
      outer *= shape[i];
    for (int64_t i = axis; i < rank; ++i)
      inner *= shape[i];
    SmallVector<float> out(3 * values->size());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto [big, small] = splitValue((*values)[o * inner + i]);
        for (int64_t part = 0; part < 3; ++part)
          out[(o * 3 + part) * inner + i] = part == smallPart ? small : big;
      }
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(resultType, ArrayRef<float>(out)));
  }

  MLIRContext *context = b.getContext();
  SmallVector<AffineExpr> read;
  for (int64_t i = 0; i <= rank; ++i)
    if (i != axis)
      read.push_back(getAffineDimExpr(i, context));
  auto splitType = RankedTensorType::get(split, b.getF32Type());
  // [..., 3, D, ...]: the sizes of `value` (a conv input's batch may be
  // symbolic) with the parts inserted at `axis`.
  SmallVector<OpFoldResult> splitSizes = tensor::getMixedSizes(b, loc, value);
  splitSizes.insert(splitSizes.begin() + axis, OpFoldResult(b.getIndexAttr(3)));
  Value init = tensor::EmptyOp::create(b, loc, splitSizes, b.getF32Type());
  Value parts =
      linalg::GenericOp::create(
          b, loc, TypeRange{splitType}, ValueRange{value}, ValueRange{init},
          ArrayRef<AffineMap>{AffineMap::get(rank + 1, 0, read, context),
                              b.getMultiDimIdentityMap(rank + 1)},
          SmallVector<utils::IteratorType>(rank + 1, utils::IteratorType::parallel),
          [&](OpBuilder &nested, Location l, ValueRange args) {
            Value x = args[0];
            Value big = emitRoundToTF32(nested, l, x);
            Value zero = arith::ConstantOp::create(nested, l, nested.getF32FloatAttr(0));
            Value exact = arith::CmpFOp::create(nested, l, arith::CmpFPredicate::OEQ, x, big);
            Value rest = arith::SubFOp::create(nested, l, x, big);
            Value small = emitRoundToTF32(
                nested, l, arith::SelectOp::create(nested, l, exact, zero, rest));
            Value part = linalg::IndexOp::create(nested, l, axis);
            Value wanted = arith::ConstantIndexOp::create(nested, l, smallPart);
            Value isSmall =
                arith::CmpIOp::create(nested, l, arith::CmpIPredicate::eq, part, wanted);
            linalg::YieldOp::create(nested, l,
                                    ValueRange{arith::SelectOp::create(nested, l, isSmall,
                                                                       small, big)});
          })
          .getResult(0);
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis)
      groups.push_back({i});
    else if (i == axis)
      groups.push_back({i, i + 1});
    else
      groups.push_back({i + 1});
  }
  return tensor::CollapseShapeOp::create(b, loc, resultType, parts, groups);
}

/// `value` ([batch x] R x C, f32) as [batch x] C x R: a constant now, else a
/// linalg.transpose (which kiln-cuda-gemm turns into a tiled kernel when it
/// writes a product's B).
Value transposeLastTwo(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> permutation = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[rank - 2], shape[rank - 1]);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (std::optional<SmallVector<float>> values = constantValues(value)) {
    int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
    SmallVector<float> out(values->size());
    for (int64_t base = 0; base < static_cast<int64_t>(values->size()); base += rows * cols)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          out[base + c * rows + r] = (*values)[base + r * cols + c];
    // The untransposed copy (a split made just now) goes.
    if (value.use_empty())
      value.getDefiningOp()->erase();
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(resultType, ArrayRef<float>(out)));
  }
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, permutation).getResult()[0];
}

/// What a value became for its products: A' (role 0), B'^T (1), a
/// convolution's x' (2) or W' (3), a K-major B' (4). An activation read by several products
/// (an attention layer's Q, K and V projections) is split once.
struct SplitCache {
  DenseMap<std::pair<Value, int>, Value> splits;
  DominanceInfo &dominance;

  Value get(Value value, int role, Operation *user, function_ref<Value()> make) {
    auto known = splits.find({value, role});
    if (known != splits.end() && dominance.properlyDominates(known->second, user))
      return known->second;
    Value result = make();
    if (!result.getDefiningOp<arith::ConstantOp>())
      splits[{value, role}] = result;
    return result;
  }
};

/// A (batch) matmul with default maps or a K-major B on static f32 tensors
/// (a matmul's rows may be symbolic), K and N multiples of 4 (16-byte rows
/// for the template's TMA and stores), becomes C = A' * B'^T.
template <typename OpTy> void splitMatmul(OpTy op, IRRewriter &rewriter, SplitCache &cache) {
  bool kMajor = hasKMajorB(op);
  if (!op.hasPureTensorSemantics() || (op.hasUserDefinedMaps() && !kMajor) ||
      !isStaticButRowsF32(op.getDpsInputs()[0], op.getDpsInputs()[1], op.getDpsInits()[0],
                          std::is_same_v<OpTy, linalg::BatchMatmulOp>))
    return;
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  auto b = cast<RankedTensorType>(rhs.getType());
  int64_t rank = b.getRank();
  if (b.getDimSize(rank - 2) % 4 || b.getDimSize(rank - 1) % 4)
    return;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  // A' = [As | Ab | Ab] along K (A's last axis), B' = [Bb ; Bs ; Bb] along
  // K (B's rows), then transposed: at run time by the tiled transpose
  // kernel, which kiln-cuda-gemm makes of a transpose writing a B. A
  // K-major B is split along its last axis, K, and needs no transpose.
  Value a = cache.get(lhs, 0, op, [&] { return splitOperand(rewriter, loc, lhs, rank - 1, 0); });
  Value bt = cache.get(rhs, kMajor ? 4 : 1, op, [&] {
    if (kMajor)
      return splitOperand(rewriter, loc, rhs, rank - 1, 1);
    return transposeLastTwo(rewriter, loc, splitOperand(rewriter, loc, rhs, rank - 2, 1));
  });
  // (m, n, k): A'[m, k], B'^T[n, k], C[m, n].
  ArrayAttr maps = transposedBIndexingMaps(rewriter.getContext(), rank == 3);
  auto product =
      OpTy::create(rewriter, loc, op->getResultTypes(), ValueRange{a, bt}, op.getDpsInits(),
                   {rewriter.getNamedAttr("indexing_maps", maps)});
  copyDispatchAttr(op, product);
  rewriter.replaceOp(op, product->getResults());
}

/// Whether `value` is a zero constant.
bool isZero(Value value) {
  auto constant = value.getDefiningOp<arith::ConstantOp>();
  auto attr = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
  return attr && attr.getValue().isZero();
}

/// A convolution's input split along C (part 1 small). An input padded by
/// an insert_slice into zeros (kiln's spatial padding) is split before the
/// padding and padded again, since zero splits into zeros: the im2col
/// kernel then reads the unpadded split input, as it reads an unsplit one.
Value splitConvInput(OpBuilder &b, Location loc, Value input) {
  auto insert = input.getDefiningOp<tensor::InsertSliceOp>();
  auto fill = insert ? insert.getDest().getDefiningOp<linalg::FillOp>() : linalg::FillOp();
  if (!fill || !isZero(fill.getInputs()[0]) || !insert.hasUnitStride() ||
      !isStaticButBatchF32(insert.getSource()) || insert.getSourceType().getRank() != 4 ||
      !isConstantIntValue(insert.getMixedOffsets()[1], 0) ||
      insert.getSourceType().getDimSize(1) != insert.getResultType().getDimSize(1))
    return splitOperand(b, loc, input, 1, 1);
  Value source = splitOperand(b, loc, insert.getSource(), 1, 1);
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, insert.getDest());
  shape[1] = b.getIndexAttr(3 * insert.getResultType().getDimSize(1));
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  Value zeros = linalg::FillOp::create(b, loc, fill.getInputs()[0], empty).getResult(0);
  SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
  sizes[1] = b.getIndexAttr(3 * insert.getSourceType().getDimSize(1));
  return tensor::InsertSliceOp::create(b, loc, source, zeros, insert.getMixedOffsets(), sizes,
                                       insert.getMixedStrides());
}

/// A 2-D convolution (NCHW, FCHW, f32, static but for a batch that may be
/// symbolic) as one with three times the channels: x' = [xb ; xs ; xb] and
/// W' = [Ws | Wb | Wb] along C, so its im2col product
/// (kiln-cuda-lower-precision, which takes the same shapes) is the split
/// one, K in (c, i, j) order putting the small terms first.
void splitConv(linalg::Conv2DNchwFchwOp op, IRRewriter &rewriter, SplitCache &cache) {
  if (!op.hasPureTensorSemantics() || !isStaticF32(op.getInputs()[1]) ||
      !isStaticButBatchF32(op.getInputs()[0]) || !isStaticButBatchF32(op.getOutputs()[0]))
    return;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value input = op.getInputs()[0], filter = op.getInputs()[1];
  Value x = cache.get(input, 2, op, [&] { return splitConvInput(rewriter, loc, input); });
  Value w = cache.get(filter, 3, op, [&] { return splitOperand(rewriter, loc, filter, 1, 0); });
  auto conv = linalg::Conv2DNchwFchwOp::create(rewriter, loc, op->getResultTypes(),
                                               ValueRange{x, w}, op.getOutputs(),
                                               op.getStrides(), op.getDilations());
  copyDispatchAttr(op, conv);
  rewriter.replaceOp(op, conv->getResults());
}

/// Erases the ops that computed `values` (the replaced products' operands:
/// an unsplit weight, the padded input) when nothing reads them any more,
/// and then their operands' producers likewise.
void eraseDeadProducers(ArrayRef<Value> values, IRRewriter &rewriter) {
  SmallVector<Operation *> worklist;
  auto push = [&](Value value) {
    if (Operation *op = value.getDefiningOp())
      worklist.push_back(op);
  };
  llvm::for_each(values, push);
  // An op may be listed twice before it dies: each is erased once.
  llvm::SmallPtrSet<Operation *, 16> erased;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (erased.contains(op) || !isOpTriviallyDead(op))
      continue;
    llvm::for_each(op->getOperands(), push);
    erased.insert(op);
    rewriter.eraseOp(op);
  }
}

struct KilnCUDASplitF32Pass final : impl::KilnCUDASplitF32PassBase<KilnCUDASplitF32Pass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> products;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(op))
        products.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(getOperation());
    SplitCache cache{{}, dominance};
    // Program order: a product's operands are never a later product's
    // (replaced) results.
    SmallVector<Value> operands;
    for (Operation *op : products) {
      operands.append(op->operand_begin(), op->operand_end());
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
        splitMatmul(matmul, rewriter, cache);
      else if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op))
        splitMatmul(batch, rewriter, cache);
      else if (convolutions)
        splitConv(cast<linalg::Conv2DNchwFchwOp>(op), rewriter, cache);
    }
    eraseDeadProducers(operands, rewriter);
  }
};

} // namespace
} // namespace kiln
