//===- LowerPrecision.cpp - The kiln-cuda-lower-precision pass ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kilnc --precision=fp16|bf16: matmul operands in 16-bit floats, f32
// accumulation and f32 results, so the Hopper GEMM template (wgmma) can take
// the product. Weights are converted here, at compile time.
// kilnc --precision=tf32: operands stay f32 in memory (wgmma reads them as
// tf32), but tf32 wgmma reads both operands K-major, so B (K x N) is given
// transposed: a weight now, an activation by a linalg.transpose.
//
//===----------------------------------------------------------------------===//

#include "kiln/Conversion/KilnToLinalg/Im2col.h"
#include "kiln/Conversion/KilnToLinalg/ContractionMaps.h"
#include "kiln/Dialect/Kiln/IR/ShapeUtils.h"
#include "kiln/Dispatch/DispatchAttr.h"
#include "kiln/Dispatch/Epilogue.h"
#include "kiln/Target/CUDA/Passes.h"

#include "ConstantWeights.h"
#include "TF32Rounding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/APFloat.h"

namespace kiln {
#define GEN_PASS_DEF_KILNCUDALOWERPRECISIONPASS
#include "kiln/Target/CUDA/Passes.h.inc"

namespace {

using namespace mlir;

/// An elementwise generic converting `value` to `type` (truncf or extf).
Value castTensor(OpBuilder &b, Location loc, Value value, FloatType type) {
  auto tensorType = cast<RankedTensorType>(value.getType());
  auto converted = tensorType.clone(type);
  bool narrowing = type.getWidth() < tensorType.getElementType().getIntOrFloatBitWidth();
  Value init = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, value), type);
  AffineMap identity = b.getMultiDimIdentityMap(tensorType.getRank());
  SmallVector<utils::IteratorType> parallel(tensorType.getRank(),
                                            utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{converted}, ValueRange{value}, ValueRange{init},
      ArrayRef<AffineMap>{identity, identity}, parallel,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value cast = narrowing
                         ? arith::TruncFOp::create(nested, nestedLoc, type, args[0]).getResult()
                         : arith::ExtFOp::create(nested, nestedLoc, type, args[0]).getResult();
        linalg::YieldOp::create(nested, nestedLoc, cast);
      });
  return generic.getResult(0);
}

/// Shape queries of `old` ask `replacement` (the same shape in another
/// element type), so `old` dies once nothing else reads it.
void redirectShapeQueries(Value old, Value replacement) {
  for (OpOperand &use : llvm::make_early_inc_range(old.getUses()))
    if (isa<tensor::DimOp>(use.getOwner()))
      use.set(replacement);
}

/// `value` in `type`: `rebuild` applied to the all-parallel generic on
/// tensors that computes it, through the reshapes between it and a (batch)
/// matmul. Each new op is placed right after the one it replaces, which
/// keeps a row group one run of ops and lets the old ops' shape queries
/// move to the new ones. Null where `rebuild` gives null.
Value rebuiltThroughReshapes(
    OpBuilder &b, Value value, FloatType type,
    function_ref<Value(OpBuilder &, linalg::GenericOp)> rebuild) {
  OpBuilder::InsertionGuard guard(b);
  Value result;
  if (auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>()) {
    Value source = rebuiltThroughReshapes(b, collapse.getSrc(), type, rebuild);
    if (!source)
      return {};
    b.setInsertionPointAfter(collapse);
    result = tensor::CollapseShapeOp::create(b, collapse.getLoc(),
                                             collapse.getResultType().clone(type), source,
                                             collapse.getReassociationIndices());
  } else if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>()) {
    Value source = rebuiltThroughReshapes(b, expand.getSrc(), type, rebuild);
    if (!source)
      return {};
    b.setInsertionPointAfter(expand);
    result = tensor::ExpandShapeOp::create(b, expand.getLoc(), expand.getResultType().clone(type),
                                           source, expand.getReassociationIndices(),
                                           expand.getMixedOutputShape());
  } else {
    auto generic = value.getDefiningOp<linalg::GenericOp>();
    if (!generic || !generic.hasPureTensorSemantics() || generic.getNumResults() != 1 ||
        generic.getNumLoops() != generic.getNumParallelLoops())
      return {};
    b.setInsertionPointAfter(generic);
    result = rebuild(b, generic);
    if (!result)
      return {};
  }
  redirectShapeQueries(value, result);
  return result;
}

/// A generic like `generic` whose result is `type`, its body `body` (given
/// the block arguments; it yields the `type` value), reading `inputs`
/// (default: the generic's).
linalg::GenericOp regenerate(OpBuilder &b, linalg::GenericOp generic, FloatType type,
                             function_ref<Value(OpBuilder &, Location, ValueRange)> body,
                             std::optional<ValueRange> inputs = std::nullopt) {
  Location loc = generic.getLoc();
  Value init = generic.getDpsInits()[0];
  auto resultType = cast<RankedTensorType>(init.getType()).clone(type);
  Value empty = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, init), type);
  auto regenerated = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs ? *inputs : ValueRange(generic.getDpsInputs()),
      ValueRange{empty},
      generic.getIndexingMapsArray(), generic.getIteratorTypesArray(),
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc, body(nested, nestedLoc, args));
      });
  copyDispatchAttr(generic, regenerated);
  return regenerated;
}

/// `value` rounded to `type` when it is only `type` values widened (an f16
/// KV cache read by f32 ops, kilnc --kv-cache-dtype): the generic that
/// widened them, rebuilt to move the `type` values as they are (a transpose
/// stays, the conversions go; a plain copy goes too: the reader takes its
/// source), and so are the moves (broadcasts, transposes: one input, a body
/// that yields it) between that generic and `value`; null otherwise.
Value unwidened(OpBuilder &b, Value value, FloatType type) {
  return rebuiltThroughReshapes(b, value, type, [&](OpBuilder &b, linalg::GenericOp generic) {
    Block &body = *generic.getBody();
    Value yielded = body.getTerminator()->getOperand(0);
    if (generic.getNumDpsInputs() != 1)
      return Value();
    Value source = generic.getDpsInputs()[0];
    if (yielded == body.getArgument(0)) {
      // A move of values that are themselves `type` values widened.
      source = unwidened(b, source, type);
      if (!source)
        return Value();
    } else {
      auto extend = yielded.getDefiningOp<arith::ExtFOp>();
      if (!extend || extend.getIn() != body.getArgument(0) || extend.getIn().getType() != type ||
          body.getOperations().size() != 2)
        return Value();
      auto sourceType = cast<RankedTensorType>(source.getType());
      if (generic.getResult(0).getType() == sourceType.clone(Float32Type::get(b.getContext())) &&
          llvm::all_of(generic.getIndexingMapsArray(),
                       [](AffineMap map) { return map.isIdentity(); }))
        return source;
    }
    return regenerate(
               b, generic, type,
               [](OpBuilder &, Location, ValueRange args) { return args[0]; }, ValueRange(source))
        .getResult(0);
  });
}

/// Whether every reader of `value` is a (batch) matmul, whose operands this
/// pass rounds, or, below the top of the chain, one reshape; shape queries
/// aside (rebuiltThroughReshapes moves them).
bool onlyReadByProducts(Value value, bool top) {
  int reshapes = 0;
  for (Operation *user : value.getUsers()) {
    if (isa<tensor::DimOp>(user))
      continue;
    if (top ? !isa<linalg::MatmulOp, linalg::BatchMatmulOp>(user)
            : !isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(user) || ++reshapes > 1)
      return false;
  }
  return true;
}

/// `value` (f32) rounded to `type` by the kernel that computes it: an
/// all-parallel generic of an elementwise, data-movement or row-group
/// dispatch that only products read (through reshapes), rebuilt to round its
/// result before storing it. The values are a separate rounding kernel's
/// (the f32 result rounded once), with one kernel and one pass over the
/// tensor fewer. An input that is `type` values widened by a plain copy (a
/// Llama's f16 KV cache repeated for grouped-query attention) is read narrow,
/// widened in the body (truncf(extf(x)) is x: a move stays a move). Null
/// when `value` has another form.
Value roundedByProducer(OpBuilder &b, Value value, FloatType type) {
  bool top = true;
  for (Value link = value;; top = false) {
    if (!onlyReadByProducts(link, top))
      return {};
    Operation *def = link.getDefiningOp();
    if (!isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      break;
    link = def->getOperand(0);
  }
  return rebuiltThroughReshapes(b, value, type, [&](OpBuilder &b, linalg::GenericOp generic) {
    auto dispatch = generic->getAttrOfType<DictionaryAttr>(kDispatchAttr);
    auto kind = dispatch ? dispatch.getAs<StringAttr>("kind") : nullptr;
    Block &body = *generic.getBody();
    if (!kind ||
        !llvm::is_contained({"elementwise", "data_movement", "row_group"}, kind.getValue()) ||
        !getElementTypeOrSelf(generic.getResult(0).getType()).isF32() ||
        !body.getArguments().back().use_empty())
      return Value();
    SmallVector<Value> inputs(generic.getDpsInputs());
    SmallVector<bool> narrow(inputs.size(), false);
    for (auto [input, isNarrow] : llvm::zip(inputs, narrow))
      if (Value source = unwidened(b, input, type)) {
        input = source;
        isNarrow = true;
      }
    auto rounded = [&](OpBuilder &nested, Location loc, ValueRange args) {
      IRMapping mapping;
      DenseMap<Value, Value> narrowOf;
      for (auto [i, arg] : llvm::enumerate(args)) {
        Value wide = arg;
        if (i < narrow.size() && narrow[i]) {
          wide = arith::ExtFOp::create(nested, loc, Float32Type::get(nested.getContext()), arg);
          narrowOf[wide] = arg;
        }
        mapping.map(body.getArgument(i), wide);
      }
      for (Operation &op : body.without_terminator())
        nested.clone(op, mapping);
      Value result = mapping.lookupOrDefault(body.getTerminator()->getOperand(0));
      if (Value moved = narrowOf.lookup(result))
        return moved;
      return arith::TruncFOp::create(nested, loc, type, result).getResult();
    };
    return regenerate(b, generic, type, rounded, ValueRange(inputs)).getResult(0);
  });
}

/// `value` (an f32 tensor) as `type`'s element type: a constant folded now
/// (see foldConversion for the forms it takes), an f16 cache moved as it is
/// (unwidened), the producer's own rounding (roundedByProducer), anything
/// else through an elementwise truncf.
Value convertOperand(OpBuilder &b, Location loc, Value value, FloatType type) {
  auto tensorType = cast<RankedTensorType>(value.getType());
  auto converted = tensorType.clone(type);
  DenseElementsAttr dense;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (dense) {
    const llvm::fltSemantics &semantics = type.getFloatSemantics();
    auto values = llvm::map_to_vector(dense.getValues<APFloat>(), [&](APFloat v) {
      bool lost = false;
      v.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
      return v;
    });
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(converted, values));
  }
  if (Value folded = foldConversion(b, loc, value, type))
    return folded;
  if (Value narrow = unwidened(b, value, type))
    return narrow;
  if (Value rounded = roundedByProducer(b, value, type))
    return rounded;
  return castTensor(b, loc, value, type);
}

/// Whether every operand of a (batch) matmul on tensors with default maps,
/// or a K-major B, has element type `element`.
template <typename OpTy> bool isPlainMatmulOf(OpTy op, Type element) {
  if (!op.hasPureTensorSemantics() || (op.hasUserDefinedMaps() && !hasKMajorB(op)))
    return false;
  return llvm::all_of(op->getOperands(), [&](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getElementType() == element;
  });
}

/// The f32 accumulator that replaces a 16-bit matmul's `init`: zeros when
/// `init` is a zero fill, else its values extended.
Value f32Init(OpBuilder &b, Location loc, Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
    auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : FloatAttr();
    if (value && value.getValue().isZero()) {
      Value empty = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, init),
                                            b.getF32Type());
      Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
      return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
    }
  }
  return castTensor(b, loc, init, b.getF32Type());
}

/// `value` ([batch x] K x N, f32) transposed to [batch x] N x K: a constant
/// now, its elements rounded to the nearest tf32 value (the tensor cores
/// would truncate them, TF32Rounding.h); anything else through a
/// linalg.transpose.
Value transposeOperand(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[rank - 2], shape[rank - 1]);
  auto transposed = RankedTensorType::get(shape, type.getElementType());
  DenseElementsAttr dense;
  if (auto constant = value.getDefiningOp<arith::ConstantOp>())
    dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (dense && dense.isSplat()) {
    float splat = roundToTF32(dense.getSplatValue<float>());
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(transposed, ArrayRef<float>(splat)));
  }
  if (dense) {
    int64_t rows = type.getDimSize(rank - 2), cols = type.getDimSize(rank - 1);
    int64_t matrices = type.getNumElements() / (rows * cols);
    auto values = llvm::to_vector(dense.getValues<float>());
    SmallVector<float> out(values.size());
    for (int64_t m = 0; m < matrices; ++m)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          out[(m * cols + c) * rows + r] = roundToTF32(values[(m * rows + r) * cols + c]);
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(transposed, ArrayRef<float>(out)));
  }
  if (Value folded = foldTranspose(b, loc, value, /*roundToTF32=*/true))
    return folded;
  SmallVector<int64_t> permutation = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, permutation).getResult()[0];
}

/// tf32: an f32 matmul with static shapes (a matmul's rows may be
/// symbolic) that kiln-cuda-gemm can take (K and N multiples of 4: 16-byte
/// rows for TMA and the epilogue's stores) multiplies by B^T; constant
/// operands are rounded to tf32 now.
template <typename OpTy> void lowerTF32(OpTy op, IRRewriter &rewriter) {
  if (!isPlainMatmulOf(op, rewriter.getF32Type()) ||
      !isStaticButRowsF32(op.getDpsInputs()[0], op.getDpsInputs()[1], op.getDpsInits()[0],
                          std::is_same_v<OpTy, linalg::BatchMatmulOp>))
    return;
  auto b = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  int64_t rank = b.getRank();
  if (b.getDimSize(rank - 2) % 4 || b.getDimSize(rank - 1) % 4)
    return;
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  Value lhs = op.getDpsInputs()[0];
  if (Value rounded = foldTF32Rounding(rewriter, loc, lhs))
    lhs = rounded;
  // A B already K-major is rounded like A (a constant now), not moved.
  Value rhs = op.getDpsInputs()[1];
  if (!hasKMajorB(op))
    rhs = transposeOperand(rewriter, loc, rhs);
  else if (Value rounded = foldTF32Rounding(rewriter, loc, rhs))
    rhs = rounded;
  auto product = OpTy::create(
      rewriter, loc, op->getResultTypes(), ValueRange{lhs, rhs},
      op.getDpsInits(),
      {rewriter.getNamedAttr("indexing_maps",
                             transposedBIndexingMaps(rewriter.getContext(), rank == 3))});
  copyDispatchAttr(op, product);
  rewriter.replaceOp(op, product->getResults());
}

/// A 2-D convolution (NCHW, FCHW, f32, static shapes but the batch, which
/// may be symbolic) as one product over all images with the filters shared:
/// Y[n] (F x P) = W (F x K) * col[n]^T, where col[n] (P x K) is image n's
/// im2col, K = C*KH*KW in (c, i, j) order and P = OH*OW: both operands
/// K-major, which tf32 wgmma needs and f16/bf16 wgmma takes too; a
/// batch_matmul whose A map has no batch dimension (the GEMM kernel's grid
/// runs the images). The im2col kernel converts to `type` (or rounds to
/// tf32), the filters are converted (or rounded to tf32) now.
void lowerConv(linalg::Conv2DNchwFchwOp op, FloatType type, IRRewriter &rewriter) {
  if (!op.hasPureTensorSemantics())
    return;
  Value input = op.getInputs()[0], filter = op.getInputs()[1], init = op.getOutputs()[0];
  auto x = cast<RankedTensorType>(input.getType());
  auto w = cast<RankedTensorType>(filter.getType());
  auto y = cast<RankedTensorType>(init.getType());
  Type f32 = rewriter.getF32Type();
  if (!hasStaticShapeButBatch(x) || !w.hasStaticShape() || !hasStaticShapeButBatch(y) ||
      x.getElementType() != f32 || w.getElementType() != f32 || y.getElementType() != f32)
    return;
  int64_t n = x.getDimSize(0), c = x.getDimSize(1);
  int64_t f = w.getDimSize(0), kh = w.getDimSize(2), kw = w.getDimSize(3);
  int64_t oh = y.getDimSize(2), ow = y.getDimSize(3);
  // TMA rows of 16 bytes: K a multiple of 8 (16-bit) or 4 (f32). Else (an
  // RGB image's first layer: K = 3*7*7) zero channels are added to the
  // input and the filters, up to 8 of them.
  int64_t rowElements = 128 / type.getWidth(), channels = c;
  while ((channels * kh * kw) % rowElements && channels < c + 8)
    ++channels;
  if ((channels * kh * kw) % rowElements)
    return;
  int64_t k = channels * kh * kw, p = oh * ow;
  rewriter.setInsertionPoint(op);
  // The image count: a constant, or the input's symbolic batch.
  OpFoldResult images = tensor::getMixedSize(rewriter, op.getLoc(), input, 0);
  if (channels != c) {
    Location loc = op.getLoc();
    auto zeros = [&](Value value) {
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, value);
      SmallVector<OpFoldResult> padded(sizes);
      padded[1] = rewriter.getIndexAttr(channels);
      Value empty = tensor::EmptyOp::create(rewriter, loc, padded, f32);
      Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
      Value filled = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
      SmallVector<OpFoldResult> offsets(4, rewriter.getIndexAttr(0)), unit(4, rewriter.getIndexAttr(1));
      Value inserted =
          tensor::InsertSliceOp::create(rewriter, loc, value, filled, offsets, sizes, unit);
      // A conv epilogue's output stays dense (not computed in place in
      // the slice, which its GEMM kernel could not store to).
      keepDenseWhenInserted(value);
      return inserted;
    };
    input = zeros(input);
    DenseElementsAttr dense;
    if (auto constant = filter.getDefiningOp<arith::ConstantOp>())
      dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (dense) {
      // The filters with zero channels, now.
      auto values = llvm::to_vector(dense.getValues<float>());
      SmallVector<float> padded(f * channels * kh * kw, 0.0f);
      for (int64_t o = 0; o < f; ++o)
        for (int64_t i = 0; i < c * kh * kw; ++i)
          padded[o * channels * kh * kw + i] = values[o * c * kh * kw + i];
      auto paddedType = RankedTensorType::get({f, channels, kh, kw}, f32);
      filter = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(paddedType, ArrayRef<float>(padded)));
    } else if (Value folded = foldChannelPad(rewriter, loc, filter, channels)) {
      filter = folded;
    } else {
      filter = zeros(filter);
    }
    c = channels;
  }
  auto strides = llvm::to_vector(op.getStrides().getValues<int64_t>());
  auto dilations = llvm::to_vector(op.getDilations().getValues<int64_t>());
  MLIRContext *context = rewriter.getContext();
  Location loc = op.getLoc();

  // col [n, oh, ow, c, kh, kw] = x[n, c, y*s + i*d, x*s + j*d], converted.
  SmallVector<OpFoldResult> colSizes = {images};
  for (int64_t size : {oh, ow, c, kh, kw})
    colSizes.push_back(rewriter.getIndexAttr(size));
  Value colInit = tensor::EmptyOp::create(rewriter, loc, colSizes, type);
  bool narrowing = type != f32;
  Value col = createIm2col(rewriter, loc, input, colInit, PatchLayout::PixelsOuter, strides,
                           dilations)
                  .getResult(0);
  // Names the generic for kiln-cuda-gemm's im2col kernel, which checks the
  // maps against these numbers.
  col.getDefiningOp()->setAttr(
      kIm2colAttrName,
      rewriter.getDenseI64ArrayAttr({strides[0], strides[1], dilations[0], dilations[1]}));
  col = tensor::CollapseShapeOp::create(rewriter, loc, RankedTensorType::get({n, p, k}, type),
                                        col,
                                        ArrayRef<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
  // The filters as F x K: a constant reshaped now, else a view.
  auto filtersType = RankedTensorType::get({f, k}, f32);
  Value filters;
  if (auto constant = filter.getDefiningOp<arith::ConstantOp>())
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
      filters = arith::ConstantOp::create(rewriter, loc, dense.reshape(filtersType));
  if (!filters)
    filters = tensor::CollapseShapeOp::create(rewriter, loc, filtersType, filter,
                                              ArrayRef<ReassociationIndices>{{0}, {1, 2, 3}});
  if (narrowing)
    filters = convertOperand(rewriter, loc, filters, type);
  else if (Value rounded = foldTF32Rounding(rewriter, loc, filters))
    filters = rounded;
  auto productType = RankedTensorType::get({n, f, p}, f32);
  Value productInit;
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    SmallVector<OpFoldResult> productSizes = {images, rewriter.getIndexAttr(f),
                                              rewriter.getIndexAttr(p)};
    Value empty = tensor::EmptyOp::create(rewriter, loc, productSizes, f32);
    productInit = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty).getResult(0);
  } else {
    productInit = tensor::CollapseShapeOp::create(
        rewriter, loc, productType, init, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
  }
  AffineExpr b, m, nn, kk;
  bindDims(context, b, m, nn, kk);
  auto maps = ArrayAttr::get(
      context, {AffineMapAttr::get(AffineMap::get(4, 0, {m, kk}, context)),
                AffineMapAttr::get(AffineMap::get(4, 0, {b, nn, kk}, context)),
                AffineMapAttr::get(AffineMap::get(4, 0, {b, m, nn}, context))});
  auto batched =
      linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{productType},
                                    ValueRange{filters, col}, ValueRange{productInit},
                                    {rewriter.getNamedAttr("indexing_maps", maps)});
  // The product is the conv's dispatch (with its epilogue); the im2col
  // kernel, made here, is a dispatch of its own.
  copyDispatchAttr(op, batched);
  Value product = batched.getResult(0);
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      op, y, product, ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}});
}

/// `value` converted by convertOperand, reusing an earlier conversion of the
/// same activation that dominates `user` (the Q, K and V projections of an
/// attention layer read one input: one truncf kernel, not three).
Value convertOnce(OpBuilder &b, Operation *user, Value value, FloatType type,
                  DenseMap<Value, Value> &converted, DominanceInfo &dominance) {
  auto known = converted.find(value);
  if (known != converted.end() && dominance.properlyDominates(known->second, user))
    return known->second;
  Value result = convertOperand(b, user->getLoc(), value, type);
  // Folded weights too: a weight read by several products is one blob.
  converted[value] = result;
  return result;
}

/// The elementwise consumer that can round a 16-bit model's f32 product
/// itself: the product's only user, an all-parallel linalg.generic on tensors
/// reading it as an input through the identity map. Rounding there rather
/// than in a kernel of its own lets kiln-cuda-gemm apply the consumer (bias,
/// activation) as the GEMM's epilogue. Returns the operand, or null.
OpOperand *roundingConsumer(Value product) {
  if (!product.hasOneUse())
    return nullptr;
  OpOperand &use = *product.getUses().begin();
  auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!generic || !generic.hasPureTensorSemantics() || !generic.isDpsInput(&use) ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !generic.getMatchingIndexingMap(&use).isIdentity())
    return nullptr;
  return &use;
}

/// `use` (see roundingConsumer) reads `wide` (f32) instead and rounds it to
/// `type` first thing in its body.
void roundInConsumer(OpOperand &use, Value wide, FloatType type, IRRewriter &rewriter) {
  auto generic = cast<linalg::GenericOp>(use.getOwner());
  BlockArgument arg = generic.getMatchingBlockArgument(&use);
  rewriter.modifyOpInPlace(generic, [&] {
    use.set(wide);
    arg.setType(rewriter.getF32Type());
    rewriter.setInsertionPointToStart(generic.getBody());
    auto rounded = arith::TruncFOp::create(rewriter, generic.getLoc(), type, arg);
    arg.replaceAllUsesExcept(rounded, rounded);
  });
}

/// `op`'s constant B (K x N, f32) transposed to N x K now, when N is not a
/// multiple of 8 (TMA's 16-byte rows of f16/bf16) but K is; else null.
template <typename OpTy> Value kMajorWeight(OpBuilder &b, Location loc, OpTy op) {
  if (!std::is_same_v<OpTy, linalg::MatmulOp>)
    return {};
  auto type = cast<RankedTensorType>(op.getDpsInputs()[1].getType());
  if (!type.hasStaticShape() || type.getDimSize(1) % 8 == 0 || type.getDimSize(0) % 8)
    return {};
  return foldTranspose(b, loc, op.getDpsInputs()[1]);
}

/// An f32 matmul gets `type` operands; a matmul already in `type` (a model
/// in f16 or bf16) accumulates in f32 and rounds its result to `type` once.
template <typename OpTy>
void lower(OpTy op, FloatType type, IRRewriter &rewriter, DenseMap<Value, Value> &converted,
           DominanceInfo &dominance) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  if (isPlainMatmulOf(op, rewriter.getF32Type())) {
    Value lhs = convertOnce(rewriter, op, op.getDpsInputs()[0], type, converted, dominance);
    // A weight whose rows TMA cannot read (N not a multiple of 8: a
    // vocabulary of 50257) is stored transposed, N x K, which the GEMM
    // template reads K-major whatever N is.
    Value weight = op.getDpsInputs()[1];
    bool kMajor = hasKMajorB(op);
    if (Value transposed = kMajor ? Value() : kMajorWeight(rewriter, loc, op)) {
      weight = transposed;
      kMajor = true;
    }
    Value rhs = convertOnce(rewriter, op, weight, type, converted, dominance);
    SmallVector<NamedAttribute> attrs;
    if (kMajor)
      attrs.push_back(rewriter.getNamedAttr(
          "indexing_maps", transposedBIndexingMaps(rewriter.getContext(),
                                           std::is_same_v<OpTy, linalg::BatchMatmulOp>)));
    auto narrow = OpTy::create(rewriter, loc, op->getResultTypes(), ValueRange{lhs, rhs},
                               op.getDpsInits(), attrs);
    copyDispatchAttr(op, narrow);
    rewriter.replaceOp(op, narrow->getResults());
  } else if (isPlainMatmulOf(op, type)) {
    Value init = f32Init(rewriter, loc, op.getDpsInits()[0]);
    SmallVector<NamedAttribute> attrs;
    if (hasKMajorB(op))
      attrs.push_back(rewriter.getNamedAttr("indexing_maps", op.getIndexingMaps()));
    auto wide = OpTy::create(rewriter, loc, TypeRange{init.getType()}, op.getDpsInputs(),
                             ValueRange{init}, attrs);
    copyDispatchAttr(op, wide);
    if (OpOperand *use = roundingConsumer(op->getResult(0))) {
      roundInConsumer(*use, wide->getResult(0), type, rewriter);
      rewriter.eraseOp(op);
      return;
    }
    rewriter.replaceOp(op, castTensor(rewriter, loc, wide->getResult(0), type));
  }
}

/// Erases the f32 weights (and the reshapes and transposes between them
/// and their products) that the folded conversions left unused: bufferized,
/// each would still become a global and a second copy in the weights blob.
/// So do the widening generics that unwidened() bypassed, each a kernel.
void eraseUnusedWeights(func::FuncOp function) {
  SmallVector<Operation *> dead;
  do {
    for (Operation *op : dead)
      op->erase();
    dead.clear();
    function.walk([&](Operation *op) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      bool deadTensorGeneric = generic && generic.hasPureTensorSemantics();
      if ((deadTensorGeneric || isa<arith::ConstantOp, tensor::CollapseShapeOp,
                                    tensor::ExpandShapeOp, linalg::TransposeOp,
                                    tensor::EmptyOp>(op)) &&
          op->use_empty() && isOpTriviallyDead(op))
        dead.push_back(op);
    });
  } while (!dead.empty());
}

struct KilnCUDALowerPrecisionPass final
    : impl::KilnCUDALowerPrecisionPassBase<KilnCUDALowerPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FloatType type;
    bool tf32 = precision == Precision::TF32;
    switch (precision) {
    case Precision::TF32: type = Float32Type::get(context); break;
    case Precision::FP16: type = Float16Type::get(context); break;
    case Precision::BF16: type = BFloat16Type::get(context); break;
    case Precision::FP32:
      getOperation().emitError() << "kiln-cuda-lower-precision: precision='"
                                 << precisionName(precision) << "', expected fp16, bf16 or tf32";
      return signalPassFailure();
    }
    SmallVector<Operation *> matmuls;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNchwFchwOp>(op))
        matmuls.push_back(op);
    });
    IRRewriter rewriter(context);
    DenseMap<Value, Value> converted;
    DominanceInfo dominance(getOperation());
    for (Operation *op : matmuls) {
      if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op)) {
        if (convolutions)
          lowerConv(conv, type, rewriter);
        continue;
      }
      if (!this->matmuls)
        continue;
      if (tf32) {
        if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
          lowerTF32(matmul, rewriter);
        else
          lowerTF32(cast<linalg::BatchMatmulOp>(op), rewriter);
        continue;
      }
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op))
        lower(matmul, type, rewriter, converted, dominance);
      else
        lower(cast<linalg::BatchMatmulOp>(op), type, rewriter, converted, dominance);
    }
    // Shape queries of the bypassed widenings ask their inputs instead (the
    // greedy driver then erases what nothing reads).
    RewritePatternSet shapes(context);
    memref::populateResolveRankedShapedTypeResultDimsPatterns(shapes);
    GreedyRewriteConfig onlyShapes;
    onlyShapes.enableFolding(false).enableConstantCSE(false).setRegionSimplificationLevel(
        GreedySimplifyRegionLevel::Disabled);
    (void)applyPatternsGreedily(getOperation(), std::move(shapes), onlyShapes);
    eraseUnusedWeights(getOperation());
  }
};

} // namespace
} // namespace kiln
