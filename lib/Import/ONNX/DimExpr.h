//===- DimExpr.h - Polynomials over symbolic tensor dims --------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The algebra of symbolic dims: integer polynomials over symbols (a model
// input's dim_param such as `batch`, or an opaque dim the importer could not
// relate to the inputs). Sums, differences and products stay polynomials in a
// canonical form, so that two dims are the same exactly when their
// expressions compare equal; floor-division is exact division by a term
// that divides every term (`batch*seq*64 / (batch*64) = seq`), and what does
// not divide, like `max`/`min`, becomes a derived symbol (SymbolicShapes).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_IMPORT_ONNX_DIMEXPR_H
#define KILN_LIB_IMPORT_ONNX_DIMEXPR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::onnx_import {

class DimExpr {
public:
  /// Symbol ids, sorted, repeated for powers.
  using Monomial = std::vector<unsigned>;

  DimExpr() = default; // 0
  static DimExpr constant(int64_t value);
  static DimExpr symbol(unsigned id);

  std::optional<int64_t> getConstant() const;
  /// The symbol when the expression is exactly one symbol.
  std::optional<unsigned> getSymbol() const;
  /// Every coefficient positive (and at least one term): the value is at
  /// least 1 when each symbol is at least 1.
  bool isPositive() const;

  DimExpr operator+(const DimExpr &other) const;
  DimExpr operator-(const DimExpr &other) const;
  DimExpr operator*(const DimExpr &other) const;
  bool operator==(const DimExpr &other) const { return terms == other.terms; }
  bool operator!=(const DimExpr &other) const { return terms != other.terms; }

  /// this / divisor when the divisor is one term dividing every term of
  /// this (constants: when the division is exact); nullopt otherwise.
  std::optional<DimExpr> divideExactly(const DimExpr &divisor) const;

  /// The value with each symbol replaced (wrapping on overflow).
  int64_t evaluate(llvm::function_ref<int64_t(unsigned)> valueOf) const;
  /// Replaces symbols by expressions (nullopt keeps the symbol).
  DimExpr substitute(
      llvm::function_ref<std::optional<DimExpr>(unsigned)> replacement) const;
  /// Symbol ids that occur.
  std::vector<unsigned> symbols() const;
  std::string str(llvm::function_ref<std::string(unsigned)> nameOf) const;

private:
  void add(const Monomial &m, int64_t coefficient);
  std::map<Monomial, int64_t> terms; // no zero coefficients
};

} // namespace kiln::onnx_import

#endif // KILN_LIB_IMPORT_ONNX_DIMEXPR_H
