//===- MatmulConstants.cpp - Weights packed for the matmul kernels --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See MatmulConstants.h.
//
//===----------------------------------------------------------------------===//

#include "MatmulConstants.h"
#include "MatmulKernel.h"

#include "kiln/Target/Host/FloatRounding.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>

using namespace mlir;

namespace kiln::matmul_kernel {

namespace {

/// A new private constant global `name` (made unique) holding `packed`, as
/// f32 or, with `bf16`, as bf16 values rounded to nearest even (what
/// vcvtneps2bf16 gives the activations at run time).
memref::GlobalOp createPackedGlobal(ModuleOp module, Location loc, std::string name,
                                    ArrayRef<float> packed, bool bf16) {
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  Type element = bf16 ? Type(b.getBF16Type()) : Type(b.getF32Type());
  auto packedType = MemRefType::get({static_cast<int64_t>(packed.size())}, element);
  auto tensorType = RankedTensorType::get(packedType.getShape(), element);
  while (SymbolTable::lookupSymbolIn(module, name))
    name += "_";
  AsmResourceBlob blob;
  if (bf16) {
    std::vector<uint16_t> halves(packed.size());
    for (size_t i = 0; i < packed.size(); ++i)
      halves[i] = roundToBF16(packed[i]);
    blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<uint16_t>(halves));
  } else {
    blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(packed);
  }
  return memref::GlobalOp::create(
      b, loc, name, b.getStringAttr("private"), packedType,
      DenseResourceElementsAttr::get(tensorType, name, std::move(blob)),
      /*constant=*/true, b.getI64IntegerAttr(64));
}

/// Where element (kk, i) of a panel goes, i the column (B) or row (A) of
/// the panel's `width`: row-major [kk][i] in f32, pairs of kk interleaved
/// [kk/2][i][kk%2] in bf16.
int64_t panelOffset(int64_t kk, int64_t i, int64_t width, bool bf16) {
  return bf16 ? (kk / 2) * 2 * width + 2 * i + kk % 2 : kk * width + i;
}

} // namespace

/// Packs a constant B at compile time into the layout packB produces at
/// run time, block after block: block (t, q) (column block t, depth block
/// q) starts at (t * numK + q) * tileN * tileK. Returns the new global's
/// name, or null when B is not a constant global.
FlatSymbolRefAttr packConstantB(Operation *op, Value bMatrix, int64_t tileN, int64_t tileK,
                                int64_t nr, bool bf16, int64_t &numK) {
  std::optional<std::vector<float>> values = constantValues(bMatrix);
  if (!values)
    return {};
  auto type = cast<MemRefType>(bMatrix.getType());
  int64_t K = type.getDimSize(0), N = type.getDimSize(1);
  int64_t numJ = llvm::divideCeil(N, tileN);
  numK = llvm::divideCeil(K, tileK);
  std::vector<float> packed(numJ * numK * tileN * tileK, 0.0f);
  for (int64_t t = 0; t < numJ; ++t)
    for (int64_t q = 0; q < numK; ++q) {
      int64_t jc = t * tileN, pc = q * tileK;
      int64_t depth = std::min(tileK, K - pc), jcEnd = std::min(jc + tileN, N);
      // bf16 panels hold whole pairs of k rows (a zero row after an odd depth).
      int64_t panelDepth = bf16 ? llvm::alignTo(depth, 2) : depth;
      int64_t block = (t * numK + q) * tileN * tileK;
      for (int64_t jr = jc, panel = 0; jr < jcEnd; jr += nr, ++panel)
        for (int64_t kk = 0; kk < depth; ++kk)
          for (int64_t j = 0; j < nr && jr + j < jcEnd; ++j)
            packed[block + panel * panelDepth * nr + panelOffset(kk, j, nr, bf16)] =
                (*values)[(pc + kk) * N + jr + j];
    }
  std::string name =
      cast<memref::GetGlobalOp>(bMatrix.getDefiningOp()).getName().str() + "_packed";
  memref::GlobalOp global =
      createPackedGlobal(op->getParentOfType<ModuleOp>(), op->getLoc(), name, packed, bf16);
  return FlatSymbolRefAttr::get(global.getSymNameAttr());
}

/// Packs a constant A (a conv's weights, `weights` a get_global of them)
/// at compile time into the panels the kernels read, depth block after
/// depth block (KC deep, the last what is left): in the block at depth pc
/// of depth d, the MR-row panel starting at row p0 is
/// Apack[pc*M + p0*d + k*MR + r] = A[p0 + r][pc + k], the leftover rows'
/// panel after the full ones the same with its height.
/// Returns the new global's name (one per weights global, kept in
/// `packedA`), or null when the weights are not a constant global.
FlatSymbolRefAttr packConstantA(Value weights, int64_t M, int64_t K, int64_t mr, int64_t kc,
                                bool bf16, llvm::StringMap<FlatSymbolRefAttr> &packedA) {
  // A 1x1 conv's A is its weights [F, C, 1, 1] collapsed.
  if (auto collapse = weights.getDefiningOp<memref::CollapseShapeOp>())
    weights = collapse.getSrc();
  auto getGlobal = weights.getDefiningOp<memref::GetGlobalOp>();
  if (!getGlobal)
    return {};
  std::string key =
      (getGlobal.getName() + "@" + Twine(mr) + "x" + Twine(kc) + (bf16 ? "bf16" : "")).str();
  if (FlatSymbolRefAttr known = packedA.lookup(key))
    return known;
  std::optional<std::vector<float>> values = constantValues(weights);
  if (!values || static_cast<int64_t>(values->size()) != M * K)
    return {};
  // The kernels of one depth block read one contiguous range of the
  // weights (panel-major over the whole depth, each kernel's 6 KB of a depth
  // block lay 6 K floats after the previous one's; the depth-block-major
  // order measured 10-20% faster on the 7x7 convs, whose weights are read
  // once per run).
  // bf16: each depth block holds whole pairs of k (kc is even, so only the
  // last one can end with a zero row).
  std::vector<float> packed(M * (bf16 ? llvm::alignTo(K, 2) : K), 0.0f);
  for (int64_t pc = 0; pc < K; pc += kc) {
    int64_t depth = std::min(kc, K - pc);
    int64_t panelDepth = bf16 ? llvm::alignTo(depth, 2) : depth;
    for (int64_t p0 = 0; p0 < M; p0 += mr) {
      int64_t rows = std::min(mr, M - p0);
      for (int64_t k = 0; k < depth; ++k)
        for (int64_t r = 0; r < rows; ++r)
          packed[pc * M + p0 * panelDepth + panelOffset(k, r, rows, bf16)] =
              (*values)[(p0 + r) * K + pc + k];
    }
  }
  memref::GlobalOp global =
      createPackedGlobal(getGlobal->getParentOfType<ModuleOp>(), getGlobal.getLoc(),
                         getGlobal.getName().str() + "_packed_a", packed, bf16);
  auto symbol = FlatSymbolRefAttr::get(global.getSymNameAttr());
  packedA[key] = symbol;
  return symbol;
}

void eraseIfUnread(memref::GetGlobalOp getGlobal) {
  if (!getGlobal->use_empty())
    return;
  auto module = getGlobal->getParentOfType<ModuleOp>();
  auto global =
      SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(getGlobal, getGlobal.getNameAttr());
  getGlobal.erase();
  if (global && SymbolTable::symbolKnownUseEmpty(global, module))
    global.erase();
}

} // namespace kiln::matmul_kernel
