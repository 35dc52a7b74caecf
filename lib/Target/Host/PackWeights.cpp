//===- PackWeights.cpp - The kiln-pack-weights pass ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// One blob of bytes instead of one LLVM constant per tensor: LLVM emits a
// byte array with a single directive, while float arrays go through its
// constant machinery element by element (most of the compile time of large
// models). The blob is also what --weights=external writes to a side file.
//
//===----------------------------------------------------------------------===//

#include "kiln/Target/Host/Passes.h"

#include "kiln-c/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

using namespace mlir;

namespace kiln {
#define GEN_PASS_DEF_KILNPACKWEIGHTSPASS
#include "kiln/Target/Host/Passes.h.inc"

namespace {

constexpr int64_t kWeightAlignment = 64;

/// The kiln_dtype of a weight of `element` type, or 0 when it does not
/// go into the blob (f16 and bf16 only with `halfFloats`).
int64_t weightDtype(Type element, bool halfFloats) {
  if (element.isF32())
    return KILN_DTYPE_F32;
  if (halfFloats && element.isF16())
    return KILN_DTYPE_F16;
  if (halfFloats && element.isBF16())
    return KILN_DTYPE_BF16;
  return 0;
}

/// The bytes of one element of a weight.
int64_t elementBytes(MemRefType type) { return type.getElementType().isF32() ? 4 : 2; }

/// The raw little-endian bytes of a constant global of a weight type, or
/// nullopt when it is not a static constant with known contents. Splats are
/// expanded into `storage`.
std::optional<ArrayRef<char>> constantBytes(memref::GlobalOp global, bool halfFloats,
                                            std::vector<char> &storage) {
  MemRefType type = global.getType();
  if (!global.getConstant() || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !weightDtype(type.getElementType(), halfFloats))
    return std::nullopt;
  auto init = global.getInitialValue();
  if (!init)
    return std::nullopt;
  size_t bytes = static_cast<size_t>(type.getNumElements() * elementBytes(type));
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(*init)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != bytes)
      return std::nullopt;
    return blob->getData();
  }
  auto dense = dyn_cast<DenseElementsAttr>(*init);
  if (!dense)
    return std::nullopt;
  if (!dense.isSplat())
    return dense.getRawData();
  ArrayRef<char> one = dense.getRawData();
  storage.resize(bytes);
  for (size_t at = 0; at < bytes; at += one.size())
    std::memcpy(storage.data() + at, one.data(), one.size());
  return ArrayRef<char>(storage);
}

struct Weight {
  memref::GlobalOp global;
  SmallVector<memref::GetGlobalOp> reads;
  int64_t offset = 0;
};

struct KilnPackWeightsPass final : impl::KilnPackWeightsPassBase<KilnPackWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry = module.lookupSymbol<func::FuncOp>(kEntryFunctionName);
    if (!entry || entry.isExternal())
      return;
    // Globals whose every use is a memref.get_global in the entry.
    llvm::MapVector<StringRef, Weight> weights;
    std::vector<char> splat;
    for (auto global : module.getOps<memref::GlobalOp>())
      if (constantBytes(global, halfFloats, splat))
        weights[global.getSymName()].global = global;
    module.walk([&](Operation *op) {
      if (auto read = dyn_cast<memref::GetGlobalOp>(op)) {
        auto it = weights.find(read.getName());
        if (it == weights.end())
          return;
        if (read->getParentOfType<func::FuncOp>() == entry)
          it->second.reads.push_back(read);
        else
          it->second.global = nullptr; // read elsewhere: leave it alone
        return;
      }
      // Any other reference to a global keeps it a global.
      op->getAttrDictionary().walk([&](SymbolRefAttr ref) {
        auto it = weights.find(ref.getRootReference().getValue());
        if (it != weights.end())
          it->second.global = nullptr;
      });
    });
    // f32 weights first, in the module's order, then f16, then bf16: one
    // segment per element type.
    int64_t total = 0;
    SmallVector<Weight *> packed;
    SmallVector<int64_t> segments;
    for (int64_t dtype : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
      int64_t begin = total;
      for (auto &[name, weight] : weights) {
        MemRefType type = weight.global ? weight.global.getType() : MemRefType();
        if (!type || weightDtype(type.getElementType(), halfFloats) != dtype)
          continue;
        weight.offset = total;
        total += llvm::alignTo(type.getNumElements() * elementBytes(type), kWeightAlignment);
        packed.push_back(&weight);
      }
      if (total != begin)
        segments.append({begin, total - begin, dtype});
    }
    if (packed.empty())
      return;

    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(total, kWeightAlignment);
    MutableArrayRef<char> data = blob.getMutableData();
    std::memset(data.data(), 0, data.size());
    for (Weight *weight : packed) {
      std::optional<ArrayRef<char>> bytes = constantBytes(weight->global, halfFloats, splat);
      std::memcpy(data.data() + weight->offset, bytes->data(), bytes->size());
    }

    // The blob is the entry's second argument, after the host.
    MLIRContext *context = &getContext();
    auto blobType = MemRefType::get({total}, IntegerType::get(context, 8));
    if (failed(entry.insertArgument(1, blobType, {}, entry.getLoc())))
      return signalPassFailure();
    Value base = entry.getArgument(1);
    for (Weight *weight : packed) {
      for (memref::GetGlobalOp read : weight->reads) {
        OpBuilder b(read);
        Value offset = arith::ConstantIndexOp::create(b, read.getLoc(), weight->offset);
        read.replaceAllUsesWith(memref::ViewOp::create(b, read.getLoc(), read.getType(),
                                                       base, offset, ValueRange{})
                                    .getResult());
        read.erase();
      }
      weight->global.erase();
    }
    module->setAttr(kWeightsBlobAttr,
                    DenseResourceElementsAttr::get(
                        RankedTensorType::get({total}, IntegerType::get(context, 8)),
                        "kiln_weights", std::move(blob)));
    if (halfFloats)
      module->setAttr(kWeightsSegmentsAttr, DenseI64ArrayAttr::get(context, segments));
  }
};

} // namespace
} // namespace kiln
