//===- MatmulConstants.cpp - Weights packed for the matmul kernels --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See MatmulConstants.h.
//
//===----------------------------------------------------------------------===//

#include "MatmulConstants.h"
#include "MatmulKernel.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace kiln::matmul_kernel {

/// Packs a constant B at compile time into the layout packB produces at
/// run time, block after block: block (t, q) (column block t, depth block
/// q) starts at (t * numK + q) * tileN * tileK. Returns the new global's
/// name, or null when B is not a constant global.
FlatSymbolRefAttr packConstantB(Operation *op, Value bMatrix, int64_t tileN, int64_t tileK,
                                int64_t nr, int64_t &numK) {
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
      int64_t block = (t * numK + q) * tileN * tileK;
      for (int64_t jr = jc, panel = 0; jr < jcEnd; jr += nr, ++panel)
        for (int64_t kk = 0; kk < depth; ++kk)
          for (int64_t j = 0; j < nr && jr + j < jcEnd; ++j)
            packed[block + panel * depth * nr + kk * nr + j] = (*values)[(pc + kk) * N + jr + j];
    }
  auto module = op->getParentOfType<ModuleOp>();
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto packedType = MemRefType::get({static_cast<int64_t>(packed.size())}, b.getF32Type());
  auto tensorType = RankedTensorType::get(packedType.getShape(), b.getF32Type());
  std::string name =
      cast<memref::GetGlobalOp>(bMatrix.getDefiningOp()).getName().str() + "_packed";
  while (SymbolTable::lookupSymbolIn(module, name))
    name += "_";
  auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(packed));
  auto global = memref::GlobalOp::create(
      b, op->getLoc(), name, b.getStringAttr("private"), packedType,
      DenseResourceElementsAttr::get(tensorType, name, std::move(blob)),
      /*constant=*/true, b.getI64IntegerAttr(64));
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
                                llvm::StringMap<FlatSymbolRefAttr> &packedA) {
  // A 1x1 conv's A is its weights [F, C, 1, 1] collapsed.
  if (auto collapse = weights.getDefiningOp<memref::CollapseShapeOp>())
    weights = collapse.getSrc();
  auto getGlobal = weights.getDefiningOp<memref::GetGlobalOp>();
  if (!getGlobal)
    return {};
  std::string key = (getGlobal.getName() + "@" + Twine(mr) + "x" + Twine(kc)).str();
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
  std::vector<float> packed(M * K);
  for (int64_t pc = 0; pc < K; pc += kc) {
    int64_t depth = std::min(kc, K - pc);
    for (int64_t p0 = 0; p0 < M; p0 += mr) {
      int64_t rows = std::min(mr, M - p0);
      for (int64_t k = 0; k < depth; ++k)
        for (int64_t r = 0; r < rows; ++r)
          packed[pc * M + p0 * depth + k * rows + r] = (*values)[(p0 + r) * K + pc + k];
    }
  }
  auto module = getGlobal->getParentOfType<ModuleOp>();
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto packedType = MemRefType::get({M * K}, b.getF32Type());
  auto tensorType = RankedTensorType::get(packedType.getShape(), b.getF32Type());
  std::string name = getGlobal.getName().str() + "_packed_a";
  while (SymbolTable::lookupSymbolIn(module, name))
    name += "_";
  auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(ArrayRef<float>(packed));
  auto global = memref::GlobalOp::create(
      b, getGlobal.getLoc(), name, b.getStringAttr("private"), packedType,
      DenseResourceElementsAttr::get(tensorType, name, std::move(blob)),
      /*constant=*/true, b.getI64IntegerAttr(64));
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
