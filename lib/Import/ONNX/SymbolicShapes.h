//===- SymbolicShapes.h - Symbolic dims of the values being imported -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//
//
// Exporters compute shapes at run time: Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape, Flatten after a computed shape, Split and Slice bounds
// from Shape, Range/Expand over a symbolic size. With dynamic input dims
// those chains are not constants, but they are functions of the input dims.
// This table gives every imported value
//   - its dims as DimExprs over the model's symbolic input dims, and
//   - for a small integer tensor (a shape), its elements as DimExprs,
// so that a Reshape target whose entries are `batch`, `2`, `58`, `28`, `28`
// gives the result type `?x2x58x28x28` (the constants become static dims),
// a shape entry that is a constant folds to one, and a graph output's `?`
// dim is known to be the input's `batch`. Dims are assumed to be at least 1
// (a symbolic dim of size 0 is not an ONNX export anyone runs).
//
// Equalities come from broadcasts (`x + y` where x has `batch` and y an
// opaque dim `d`: from then on d = batch) and from Reshape/Expand targets.
// A dim no rule relates to the inputs gets an opaque symbol that remembers
// the node that made it, for the error when such a dim reaches an output.
//
// The table lives for one import; the importer installs it (ScopedActive) and
// the NodeBinder asks it after building each op.
//
//===--------------------------------------------------------------------------===//

#ifndef KILN_LIB_IMPORT_ONNX_SYMBOLICSHAPES_H
#define KILN_LIB_IMPORT_ONNX_SYMBOLICSHAPES_H

#include "DimExpr.h"

#include "kiln/Dialect/Kiln/IR/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace kiln::onnx_import {

class SymbolicShapes {
public:
  explicit SymbolicShapes(mlir::OpBuilder &builder) : builder(builder) {}

  /// The table of the import in progress (null outside one).
  static SymbolicShapes *active();
  /// Installs `shapes` as the active table for its lifetime.
  class ScopedActive {
  public:
    explicit ScopedActive(SymbolicShapes &shapes);
    ~ScopedActive();

  private:
    SymbolicShapes *previous;
  };

  /// Names the symbolic dims of a model input (its kiln.dim_names).
  void bindInput(mlir::Value input, llvm::ArrayRef<std::string> dimNames);

  /// One DimExpr per dim of a ranked tensor value.
  llvm::SmallVector<DimExpr> dimsOf(mlir::Value value);
  /// The elements of a small integer tensor (at most 16, rank 0 or 1).
  std::optional<llvm::SmallVector<DimExpr>> elementsOf(mlir::Value value);

  /// Gives `op`'s results the static dims the algebra proves constant,
  /// where the op accepts the refined type.
  void refine(mlir::Operation *op);
  /// The value of a small integer result whose elements are all constant.
  mlir::DenseElementsAttr constantValue(mlir::Value value);
  /// Drops what the table knows of `op`'s results (before erasing it).
  void forget(mlir::Operation *op);

  /// The name of a model input dim when `expr` is one, else nullopt.
  std::optional<std::string> inputDimName(const DimExpr &expr);
  /// `expr` as a formula of input dims (`p + s`, DimFormula.h) when every
  /// symbol in it is an input dim with a plain name, else nullopt.
  std::optional<std::string> inputDimFormula(const DimExpr &expr);
  /// Where a dim that is not a function of the input dims comes from
  /// (`node 'X' (Op)`), or nullopt when it is such a function.
  std::optional<std::string> valueDependence(const DimExpr &expr);
  std::string str(const DimExpr &expr);

private:
  struct Symbol {
    std::string name;
    bool input = false;    // a model input's dim
    bool positive = true;  // at least 1
    std::string origin;    // the op that made an opaque symbol
  };

  DimExpr resolve(const DimExpr &expr);
  DimExpr freshSymbol(mlir::Operation *origin, bool positive = true);
  DimExpr derivedSymbol(const std::string &key, bool positive);
  /// Records a = b (from a broadcast or a shape target).
  void unify(const DimExpr &a, const DimExpr &b);
  /// Sign of a - b when the algebra can tell: -1, 0 or 1.
  std::optional<int> compare(const DimExpr &a, const DimExpr &b);

  DimExpr floorDiv(const DimExpr &a, const DimExpr &b);
  DimExpr max(const DimExpr &a, const DimExpr &b);
  DimExpr min(const DimExpr &a, const DimExpr &b);
  std::optional<DimExpr> binary(mlir::Operation *op, const DimExpr &a,
                                const DimExpr &b);

  void computeDims(mlir::Operation *op);
  bool dimsByRule(mlir::Operation *op);
  bool dimsOfShapeTarget(mlir::Operation *op);
  bool dimsOfBroadcast(mlir::Operation *op);
  bool dimsByProbing(mlir::Operation *op);
  DimExpr decodeProbe(const std::map<int64_t, DimExpr> &candidates, int64_t v,
                      mlir::Operation *op);
  std::optional<llvm::SmallVector<DimExpr>> computeElements(mlir::Value value);
  std::optional<llvm::SmallVector<DimExpr>>
  elementsOfBroadcast(mlir::Operation *op, int64_t count);
  std::optional<llvm::SmallVector<DimExpr>> elementsOfGather(kiln::GatherOp gather);
  std::optional<llvm::SmallVector<DimExpr>> elementsOfSlice(kiln::SliceOp slice,
                                                            int64_t count);

  mlir::OpBuilder &builder;
  std::vector<Symbol> symbols;
  llvm::StringMap<unsigned> byName;
  llvm::DenseMap<unsigned, DimExpr> bound;
  llvm::DenseMap<mlir::Value, llvm::SmallVector<DimExpr>> dims;
  llvm::DenseMap<mlir::Value, std::optional<llvm::SmallVector<DimExpr>>> elements;
};

} // namespace kiln::onnx_import

#endif // KILN_LIB_IMPORT_ONNX_SYMBOLICSHAPES_H
