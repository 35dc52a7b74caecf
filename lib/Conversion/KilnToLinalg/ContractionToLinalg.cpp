//===- ContractionToLinalg.cpp - kiln.matmul / kiln.gemm -> linalg --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Plain 2-D products become linalg.matmul (what codegen tiles best); batched,
// broadcast, vector and transposed forms become one contraction
// linalg.generic whose indexing maps express the batching and transposes, so
// no transpose or broadcast is ever materialized. Where the target asks for
// it (kiln::TargetPolicy::kMajorBatchedRhs), a batched product whose rhs is
// a transpose of its last two dims reads the transpose's input through the
// maps of C = A * B^T (a K-major B for the target's GEMM kernels). Gemm's alpha/beta/C become
// an elementwise epilogue that the dispatch stage fuses.
//
//===----------------------------------------------------------------------===//

#include "LoweringFailure.h"
#include "LinalgBuilders.h"
#include "kiln/Conversion/KilnToLinalg/ContractionMaps.h"
#include "kiln/Conversion/KilnToLinalg/KilnToLinalg.h"
#include "kiln/Dialect/Kiln/IR/ByteOperands.h"
#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

namespace kiln {
namespace {

using lowering::createInit;
using lowering::describeNode;
using lowering::emitDimCheck;
using lowering::scalarConstant;

/// acc + a * b in the element type.
Value multiplyAccumulate(OpBuilder &b, Location loc, Value lhs, Value rhs, Value acc) {
  if (isa<FloatType>(acc.getType()))
    return arith::AddFOp::create(b, loc, acc, arith::MulFOp::create(b, loc, lhs, rhs));
  return arith::AddIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, lhs, rhs));
}

/// A contraction generic: loops are the result dims then one reduction dim.
Value buildContraction(OpBuilder &b, Location loc, RankedTensorType result,
                       Value lhs, Value rhs, AffineMap lhsMap, AffineMap rhsMap,
                       ValueRange dynamicSizes) {
  Value zero = scalarConstant(b, loc, result.getElementType(), 0);
  Value init = createInit(b, loc, result, dynamicSizes, zero);
  unsigned loops = result.getRank() + 1;
  // The result reads the first rank loops (none for a dot product).
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < result.getRank(); ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  AffineMap outMap = AffineMap::get(loops, 0, outExprs, b.getContext());
  SmallVector<utils::IteratorType> iterators(result.getRank(),
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, result, ValueRange{lhs, rhs}, init,
             ArrayRef<AffineMap>{lhsMap, rhsMap, outMap}, iterators,
             [](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nl, multiplyAccumulate(nb, nl, args[0], args[1], args[2]));
             })
      .getResult(0);
}

/// Dynamic result dims of a matmul, read from the operand dim they come from.
SmallVector<Value> matmulDynamicSizes(OpBuilder &b, Location loc,
                                      RankedTensorType result, Value lhs, Value rhs,
                                      int64_t batchRank) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<Value> sizes;
  for (int64_t i = 0; i < result.getRank(); ++i) {
    if (!result.isDynamicDim(i))
      continue;
    if (i < batchRank) {
      // Batch dims: take the first operand that is dynamic there.
      Value size;
      for (Value operand : {lhs, rhs}) {
        auto type = cast<RankedTensorType>(operand.getType());
        int64_t operandBatch = type.getRank() - 2;
        int64_t j = i - (batchRank - operandBatch);
        if (operandBatch > 0 && j >= 0 && type.isDynamicDim(j)) {
          size = tensor::DimOp::create(b, loc, operand, j);
          break;
        }
      }
      sizes.push_back(size ? size : arith::ConstantIndexOp::create(b, loc, 1));
    } else if (i == batchRank && lhsType.getRank() >= 2) {
      sizes.push_back(tensor::DimOp::create(b, loc, lhs, lhsType.getRank() - 2));
    } else {
      sizes.push_back(tensor::DimOp::create(b, loc, rhs, rhsType.getRank() - 1));
    }
  }
  return sizes;
}

/// Run-time checks of the dims a matmul takes to be equal: the contraction
/// dims, and the batch dims that do not broadcast (static size 1).
/// A `kMajorRhs` is given as [batch..., N, K].
void checkMatmulDims(OpBuilder &b, Location loc, Value lhs, Value rhs, int64_t batchRank,
                     StringRef what, bool kMajorRhs = false) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
  std::string where = describeNode(what, loc);
  int64_t lhsK = lhsRank - 1, rhsK = rhsRank == 1 ? 0 : rhsRank - (kMajorRhs ? 1 : 2);
  if (lhsType.isDynamicDim(lhsK) || rhsType.isDynamicDim(rhsK))
    emitDimCheck(b, loc, tensor::getMixedSize(b, loc, lhs, lhsK),
                 tensor::getMixedSize(b, loc, rhs, rhsK), where + " (contraction dim)");
  int64_t lhsBatch = std::max<int64_t>(lhsRank - 2, 0);
  int64_t rhsBatch = std::max<int64_t>(rhsRank - 2, 0);
  for (int64_t i = 0; i < batchRank; ++i) {
    int64_t j = i - (batchRank - lhsBatch), k = i - (batchRank - rhsBatch);
    if (j < 0 || k < 0 || lhsType.getDimSize(j) == 1 || rhsType.getDimSize(k) == 1)
      continue;
    if (!lhsType.isDynamicDim(j) && !rhsType.isDynamicDim(k))
      continue;
    emitDimCheck(b, loc, tensor::getMixedSize(b, loc, lhs, j),
                 tensor::getMixedSize(b, loc, rhs, k),
                 where + " (batch dim " + std::to_string(i) + ")");
  }
}

/// Sizes of `value`'s dims as OpFoldResults.
SmallVector<OpFoldResult> sizesOf(OpBuilder &b, Location loc, Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

/// x[b..., M, K] @ w[K, N] is one 2-D product over the rows of all batches:
/// collapse x to [B*M, K], linalg.matmul, expand back. Returns null when the
/// operands have another form.
Value matmulOfFoldedRows(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         RankedTensorType result) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t rank = lhsType.getRank();
  if (rank < 3 || rhsType.getRank() != 2)
    return {};
  ReassociationIndices rows;
  for (int64_t i = 0; i < rank - 1; ++i)
    rows.push_back(i);
  SmallVector<ReassociationIndices> groups = {rows, {rank - 1}};
  Value flat = tensor::CollapseShapeOp::create(b, loc, lhs, groups);
  auto flatType = cast<RankedTensorType>(flat.getType());
  auto productType = RankedTensorType::get({flatType.getDimSize(0), result.getShape().back()},
                                           result.getElementType());
  SmallVector<Value> dynamicSizes;
  if (productType.isDynamicDim(0))
    dynamicSizes.push_back(tensor::DimOp::create(b, loc, flat, 0));
  if (productType.isDynamicDim(1))
    dynamicSizes.push_back(tensor::DimOp::create(b, loc, rhs, 1));
  Value zero = scalarConstant(b, loc, result.getElementType(), 0);
  Value init = createInit(b, loc, productType, dynamicSizes, zero);
  Value product =
      linalg::MatmulOp::create(b, loc, productType, ValueRange{flat, rhs}, init).getResult(0);
  SmallVector<OpFoldResult> shape = sizesOf(b, loc, lhs);
  shape.back() = tensor::getMixedSize(b, loc, rhs, 1);
  return tensor::ExpandShapeOp::create(b, loc, result, product, groups, shape);
}

/// x[b..., M, K] @ y[b..., K, N] with identical batch dims, or with
/// `kMajor` x[b..., M, K] @ y[b..., N, K]^T (y is the input of a transpose
/// that swapped its last two dims, read through the maps of C = A * B^T, so
/// the transpose is never materialized): the batch dims collapse into one
/// and linalg.batch_matmul does the rest. A dynamic batch dim (a symbolic
/// batch) must be dynamic in both: checkMatmulDims has made them equal at
/// run time, so neither broadcasts.
Value batchMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  RankedTensorType result, bool kMajor = false) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t rank = lhsType.getRank();
  if (rank < 3 || rhsType.getRank() != rank ||
      lhsType.getShape().drop_back(2) != rhsType.getShape().drop_back(2))
    return {};
  ReassociationIndices batch;
  for (int64_t i = 0; i < rank - 2; ++i)
    batch.push_back(i);
  SmallVector<ReassociationIndices> groups = {batch, {rank - 2}, {rank - 1}};
  Value x = tensor::CollapseShapeOp::create(b, loc, lhs, groups);
  Value y = tensor::CollapseShapeOp::create(b, loc, rhs, groups);
  auto xType = cast<RankedTensorType>(x.getType());
  auto productType = RankedTensorType::get(
      {xType.getDimSize(0), xType.getDimSize(1), result.getShape().back()},
      result.getElementType());
  int64_t nDim = kMajor ? 1 : 2; // of y
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < 2; ++d)
    if (productType.isDynamicDim(d))
      dynamicSizes.push_back(tensor::DimOp::create(b, loc, x, d));
  if (productType.isDynamicDim(2))
    dynamicSizes.push_back(tensor::DimOp::create(b, loc, y, nDim));
  Value zero = scalarConstant(b, loc, result.getElementType(), 0);
  Value init = createInit(b, loc, productType, dynamicSizes, zero);
  SmallVector<NamedAttribute> maps;
  if (kMajor)
    maps.push_back(b.getNamedAttr("indexing_maps",
                                  transposedBIndexingMaps(b.getContext(), true)));
  Value product =
      linalg::BatchMatmulOp::create(b, loc, productType, ValueRange{x, y}, init, maps)
          .getResult(0);
  SmallVector<OpFoldResult> shape = sizesOf(b, loc, lhs);
  shape.back() = tensor::getMixedSize(b, loc, rhs, rank - 2 + nDim - 1);
  return tensor::ExpandShapeOp::create(b, loc, result, product, groups, shape);
}

/// The input of the kiln.transpose that gives a batched float `op` its rhs
/// by swapping the last two dims, when the batch dims are the lhs's (the
/// form batchMatmul takes with kMajor); else null.
Value kMajorRhsSource(MatmulOp op, ConversionPatternRewriter &rewriter) {
  auto transpose = op.getRhs().getDefiningOp<TransposeOp>();
  auto lhsType = cast<RankedTensorType>(op.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(op.getRhs().getType());
  int64_t rank = rhsType.getRank();
  if (!transpose || rank < 3 || lhsType.getRank() != rank ||
      !isa<FloatType>(rhsType.getElementType()) ||
      lhsType.getShape().drop_back(2) != rhsType.getShape().drop_back(2))
    return {};
  SmallVector<int64_t> swapLast = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(swapLast[rank - 2], swapLast[rank - 1]);
  if (transpose.getPerm() != ArrayRef<int64_t>(swapLast))
    return {};
  // Storage types the conversion changes (narrow floats as i8) keep the
  // general lowering.
  Value source = rewriter.getRemappedValue(transpose.getInput());
  if (!source || source.getType() != transpose.getInput().getType())
    return {};
  return source;
}

/// An integer matmul's operand byte windows (kiln/Dialect/Kiln/IR/ByteOperands.h)
/// carried over to its linalg.matmul.
void copyByteWindows(MatmulOp from, linalg::MatmulOp to) {
  for (StringRef name : {kLhsBytesAttr, kRhsBytesAttr})
    if (Attribute window = from->getAttr(name))
      to->setAttr(name, window);
}

struct MatmulToLinalg final : OpConversionPattern<MatmulOp> {
  MatmulToLinalg(MLIRContext *context, bool kMajorRhs)
      : OpConversionPattern(context), kMajorRhs(kMajorRhs) {}
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    RankedTensorType result = op.getType();
    if (result.getElementType().isUnsignedInteger())
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
    int64_t batchRank = result.getRank() - (lhsVector ? 0 : 1) - (rhsVector ? 0 : 1);
    if (Value rhsT = kMajorRhs ? kMajorRhsSource(op, rewriter) : Value()) {
      checkMatmulDims(rewriter, loc, lhs, rhsT, batchRank, "matmul", /*kMajorRhs=*/true);
      rewriter.replaceOp(op, batchMatmul(rewriter, loc, lhs, rhsT, result, /*kMajor=*/true));
      return success();
    }
    checkMatmulDims(rewriter, loc, lhs, rhs, batchRank, "matmul");
    SmallVector<Value> dynamicSizes =
        matmulDynamicSizes(rewriter, loc, result, lhs, rhs, batchRank);

    if (lhsType.getRank() == 2 && rhsType.getRank() == 2) {
      Value zero = scalarConstant(rewriter, loc, result.getElementType(), 0);
      Value init = createInit(rewriter, loc, result, dynamicSizes, zero);
      auto matmul = linalg::MatmulOp::create(rewriter, loc, result, ValueRange{lhs, rhs}, init);
      copyByteWindows(op, matmul);
      rewriter.replaceOp(op, matmul.getResult(0));
      return success();
    }
    if (Value folded = matmulOfFoldedRows(rewriter, loc, lhs, rhs, result)) {
      // The rows of A are A's elements: the byte windows still hold.
      if (auto expand = folded.getDefiningOp<tensor::ExpandShapeOp>())
        if (auto matmul = expand.getSrc().getDefiningOp<linalg::MatmulOp>())
          copyByteWindows(op, matmul);
      rewriter.replaceOp(op, folded);
      return success();
    }
    if (Value batched = batchMatmul(rewriter, loc, lhs, rhs, result)) {
      rewriter.replaceOp(op, batched);
      return success();
    }

    // Loops: batch dims, m (unless lhs is a vector), n (unless rhs is), k.
    MLIRContext *context = rewriter.getContext();
    unsigned loops = result.getRank() + 1;
    AffineExpr k = getAffineDimExpr(loops - 1, context);
    auto operandMap = [&](RankedTensorType type, bool isLhs) {
      SmallVector<AffineExpr> exprs;
      int64_t operandBatch = std::max<int64_t>(type.getRank() - 2, 0);
      for (int64_t j = 0; j < operandBatch; ++j) {
        int64_t loop = j + (batchRank - operandBatch);
        bool stretched = type.getDimSize(j) == 1 && result.getDimSize(loop) != 1;
        exprs.push_back(stretched ? getAffineConstantExpr(0, context)
                                  : getAffineDimExpr(loop, context));
      }
      if (isLhs) {
        if (!lhsVector)
          exprs.push_back(getAffineDimExpr(batchRank, context));
        exprs.push_back(k);
      } else {
        exprs.push_back(k);
        if (!rhsVector)
          exprs.push_back(getAffineDimExpr(result.getRank() - 1, context));
      }
      return AffineMap::get(loops, 0, exprs, context);
    };
    rewriter.replaceOp(op, buildContraction(rewriter, loc, result, lhs, rhs,
                                            operandMap(lhsType, true),
                                            operandMap(rhsType, false),
                                            dynamicSizes));
    return success();
  }

private:
  bool kMajorRhs;
};

struct GemmToLinalg final : OpConversionPattern<GemmOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GemmOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    Type element = result.getElementType();
    if (element.isUnsignedInteger())
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    Value a = adaptor.getA(), b = adaptor.getB();
    auto aType = cast<RankedTensorType>(a.getType());
    auto bType = cast<RankedTensorType>(b.getType());
    int64_t aK = op.getTransA() ? 0 : 1, bK = op.getTransB() ? 1 : 0;
    if (aType.isDynamicDim(aK) || bType.isDynamicDim(bK))
      emitDimCheck(rewriter, loc, tensor::getMixedSize(rewriter, loc, a, aK),
                   tensor::getMixedSize(rewriter, loc, b, bK),
                   describeNode("gemm", loc) + " (contraction dim)");
    SmallVector<Value> dynamicSizes;
    if (result.isDynamicDim(0))
      dynamicSizes.push_back(
          tensor::DimOp::create(rewriter, loc, a, op.getTransA() ? 1 : 0));
    if (result.isDynamicDim(1))
      dynamicSizes.push_back(
          tensor::DimOp::create(rewriter, loc, b, op.getTransB() ? 0 : 1));

    Value product;
    if (!op.getTransA() && !op.getTransB()) {
      Value zero = scalarConstant(rewriter, loc, element, 0);
      Value init = createInit(rewriter, loc, result, dynamicSizes, zero);
      product = linalg::MatmulOp::create(rewriter, loc, result, ValueRange{a, b}, init)
                    .getResult(0);
    } else {
      MLIRContext *context = rewriter.getContext();
      AffineExpr m, n, k;
      bindDims(context, m, n, k);
      auto aMap = AffineMap::get(3, 0, op.getTransA() ? ArrayRef{k, m} : ArrayRef{m, k},
                                 context);
      auto bMap = AffineMap::get(3, 0, op.getTransB() ? ArrayRef{n, k} : ArrayRef{k, n},
                                 context);
      product = buildContraction(rewriter, loc, result, a, b, aMap, bMap, dynamicSizes);
    }

    double alpha = op.getAlpha().convertToDouble(), beta = op.getBeta().convertToDouble();
    Value c = adaptor.getC();
    bool useC = c && beta != 0.0;
    if (alpha == 1.0 && !useC) {
      rewriter.replaceOp(op, product);
      return success();
    }
    SmallVector<Value> inputs = {product};
    if (useC)
      inputs.push_back(c);
    bool isFloat = isa<FloatType>(element);
    // y = alpha * product + beta * c
    Value y = lowering::buildElementwise(
        rewriter, loc, result, inputs, [&](OpBuilder &nb, Location nl, ValueRange args) {
          auto scale = [&](Value v, double factor) -> Value {
            if (factor == 1.0)
              return v;
            Value f = scalarConstant(nb, nl, element, factor);
            return isFloat ? arith::MulFOp::create(nb, nl, v, f).getResult()
                           : arith::MulIOp::create(nb, nl, v, f).getResult();
          };
          Value acc = scale(args[0], alpha);
          if (!useC)
            return acc;
          Value bias = scale(args[1], beta);
          return isFloat ? arith::AddFOp::create(nb, nl, acc, bias).getResult()
                         : arith::AddIOp::create(nb, nl, acc, bias).getResult();
        },
        "gemm");
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

namespace {
/// einsum as one linalg.generic: the result's letters are its parallel loop
/// dims (in order), the other letters reduction dims after them; each
/// operand reads through the map of its term (a repeated letter reads a
/// diagonal); the body multiplies the operands and adds into the result,
/// which starts at zero.
struct EinsumToLinalg final : OpConversionPattern<EinsumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(EinsumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType result = op.getType();
    Type element = result.getElementType();
    if (element.isUnsignedInteger())
      return lowering::failLowering(rewriter, op, "unsigned integer tensors");
    auto [lhs, output] = op.getEquation().split("->");
    SmallVector<StringRef> terms;
    lhs.split(terms, ',');
    std::string letters = output.str();
    for (StringRef term : terms)
      for (char c : term)
        if (!StringRef(letters).contains(c))
          letters += c;
    MLIRContext *context = rewriter.getContext();
    int64_t loops = letters.size();
    auto mapOf = [&](StringRef term) {
      SmallVector<AffineExpr> exprs;
      for (char c : term)
        exprs.push_back(getAffineDimExpr(StringRef(letters).find(c), context));
      return AffineMap::get(loops, 0, exprs, context);
    };
    SmallVector<AffineMap> maps;
    for (StringRef term : terms)
      maps.push_back(mapOf(term));
    maps.push_back(mapOf(output));
    SmallVector<utils::IteratorType> iterators(output.size(), utils::IteratorType::parallel);
    iterators.append(loops - output.size(), utils::IteratorType::reduction);
    SmallVector<Value> dynamicSizes;
    for (auto [i, letter] : llvm::enumerate(output)) {
      if (!result.isDynamicDim(i))
        continue;
      for (auto [term, input] : llvm::zip(terms, adaptor.getInputs()))
        if (size_t at = term.find(letter); at != StringRef::npos) {
          dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, at));
          break;
        }
    }
    Value zero = lowering::scalarConstant(rewriter, loc, element, 0);
    Value init = lowering::createInit(rewriter, loc, result, dynamicSizes, zero);
    bool isFloat = isa<FloatType>(element);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, result, adaptor.getInputs(), init, maps, iterators,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value product;
          for (Value v : args.drop_back())
            product = !product ? v
                      : isFloat ? arith::MulFOp::create(b, l, product, v).getResult()
                                : arith::MulIOp::create(b, l, product, v).getResult();
          Value acc = args.back();
          Value sum = !product ? acc
                      : isFloat ? arith::AddFOp::create(b, l, acc, product).getResult()
                                : arith::AddIOp::create(b, l, acc, product).getResult();
          linalg::YieldOp::create(b, l, sum);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};
} // namespace

void populateContractionToLinalgPatterns(RewritePatternSet &patterns, bool kMajorRhs) {
  MLIRContext *context = patterns.getContext();
  patterns.add<MatmulToLinalg>(context, kMajorRhs);
  patterns.add<GemmToLinalg, EinsumToLinalg>(context);
}

} // namespace kiln
