//===- ConstantWeights.cpp - Weights rewritten at compile time ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "ConstantWeights.h"
#include "TF32Rounding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace kiln {

namespace {

/// A constant tensor of `type` whose row-major elements are `elements`, as
/// a dense_resource blob (64-byte aligned, as kiln-pack-weights places it).
template <typename T>
Value blobConstant(OpBuilder &b, Location loc, RankedTensorType type, ArrayRef<T> elements) {
  ArrayRef<char> bytes(reinterpret_cast<const char *>(elements.data()),
                       elements.size() * sizeof(T));
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64);
  auto attr = DenseResourceElementsAttr::get(type, "kiln_weight", std::move(blob));
  return arith::ConstantOp::create(b, loc, attr);
}

/// `elements` (row-major, `shape`) with its dimensions permuted: result
/// dimension i is source dimension permutation[i].
std::vector<float> permute(ArrayRef<float> elements, ArrayRef<int64_t> shape,
                           ArrayRef<int64_t> permutation) {
  int64_t rank = shape.size();
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  SmallVector<int64_t> outShape, outStrides; // source stride of each result dim
  for (int64_t d : permutation) {
    outShape.push_back(shape[d]);
    outStrides.push_back(strides[d]);
  }
  std::vector<float> out(elements.size());
  SmallVector<int64_t> index(rank, 0);
  int64_t source = 0;
  for (float &element : out) {
    element = elements[source];
    // Next result index (row-major), keeping `source` in step.
    for (int64_t d = rank - 1; d >= 0; --d) {
      source += outStrides[d];
      if (++index[d] < outShape[d])
        break;
      source -= outStrides[d] * outShape[d];
      index[d] = 0;
    }
  }
  return out;
}

} // namespace

std::optional<std::vector<float>> foldableF32Elements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32())
    return std::nullopt;
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue())) {
      auto values = dense.getValues<float>();
      return std::vector<float>(values.begin(), values.end());
    }
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue())) {
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      size_t count = type.getNumElements();
      if (!blob || blob->getData().size() != count * sizeof(float))
        return std::nullopt;
      std::vector<float> elements(count);
      std::memcpy(elements.data(), blob->getData().data(), count * sizeof(float));
      return elements;
    }
    return std::nullopt;
  }
  // Reshapes of a row-major tensor keep its elements in order.
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
    return foldableF32Elements(op->getOperand(0));
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op)) {
    if (!transpose.hasPureTensorSemantics())
      return std::nullopt;
    Value input = transpose.getInput();
    std::optional<std::vector<float>> elements = foldableF32Elements(input);
    if (!elements)
      return std::nullopt;
    return permute(*elements, cast<RankedTensorType>(input.getType()).getShape(),
                   transpose.getPermutation());
  }
  return std::nullopt;
}

Value foldConversion(OpBuilder &b, Location loc, Value value, FloatType type) {
  if (!type.isF16() && !type.isBF16())
    return {};
  std::optional<std::vector<float>> elements = foldableF32Elements(value);
  if (!elements)
    return {};
  std::vector<uint16_t> converted(elements->size());
  uint16_t (*round)(float) = type.isF16() ? roundToF16 : roundToBF16;
  for (size_t i = 0; i < elements->size(); ++i)
    converted[i] = round((*elements)[i]);
  auto tensorType = cast<RankedTensorType>(value.getType()).clone(type);
  return blobConstant(b, loc, tensorType, ArrayRef<uint16_t>(converted));
}

Value foldTranspose(OpBuilder &b, Location loc, Value value, bool roundToTF32) {
  std::optional<std::vector<float>> elements = foldableF32Elements(value);
  if (!elements)
    return {};
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  if (rank < 2)
    return {};
  SmallVector<int64_t> permutation = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  SmallVector<int64_t> shape(type.getShape());
  std::swap(shape[rank - 2], shape[rank - 1]);
  std::vector<float> transposed = permute(*elements, type.getShape(), permutation);
  if (roundToTF32)
    for (float &element : transposed)
      element = kiln::roundToTF32(element);
  return blobConstant(b, loc, type.clone(shape), ArrayRef<float>(transposed));
}

Value foldTF32Rounding(OpBuilder &b, Location loc, Value value) {
  std::optional<std::vector<float>> elements = foldableF32Elements(value);
  if (!elements)
    return {};
  for (float &element : *elements)
    element = roundToTF32(element);
  return blobConstant(b, loc, cast<RankedTensorType>(value.getType()),
                      ArrayRef<float>(*elements));
}

Value foldChannelPad(OpBuilder &b, Location loc, Value value, int64_t channels) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != 4 || channels < type.getDimSize(1))
    return {};
  std::optional<std::vector<float>> elements = foldableF32Elements(value);
  if (!elements)
    return {};
  int64_t filters = type.getDimSize(0);
  int64_t window = type.getDimSize(2) * type.getDimSize(3);
  int64_t from = type.getDimSize(1) * window, to = channels * window;
  std::vector<float> padded(filters * to, 0.0f);
  for (int64_t f = 0; f < filters; ++f)
    std::copy_n(elements->begin() + f * from, from, padded.begin() + f * to);
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = channels;
  return blobConstant(b, loc, type.clone(shape), ArrayRef<float>(padded));
}

} // namespace kiln
