//===- DimFormula.h - Output dims as formulas of input dims -----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A symbolic output dim is named after an input dim (`batch`), or, when it is
// a polynomial of input dims (a KV cache's `past + seq`), by a formula:
//
//   formula := ['-'] term ((' + ' | ' - ') term)*
//   term    := factor ('*' factor)*
//   factor  := an integer | an input dim's name (no spaces, '*', '+' or '-')
//
// (the importer's DimExpr printing). The compiler checks that every name in
// an output's formula is an input dim; the runtime evaluates it to size the
// output. Header-only and std-only: the runtime includes it too.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGET_HOST_DIMFORMULA_H
#define KILN_TARGET_HOST_DIMFORMULA_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::dim_formula {

/// True when `name` may appear as a factor of a formula.
inline bool isPlainName(std::string_view name) {
  if (name.empty())
    return false;
  bool digits = true;
  for (char c : name) {
    if (c == ' ' || c == '*' || c == '+' || c == '-' || c == '(' || c == ')')
      return false;
    digits &= c >= '0' && c <= '9';
  }
  return !digits;
}

/// The value of `text` with each name replaced by `lookup(name)` (an
/// std::optional<int64_t>); nullopt when `text` is not a formula, a name is
/// unbound, or the arithmetic overflows.
template <typename Lookup>
std::optional<int64_t> evaluate(std::string_view text, Lookup &&lookup) {
  if (text.empty())
    return std::nullopt;
  int64_t total = 0;
  int64_t sign = 1;
  if (text.front() == '-') {
    sign = -1;
    text.remove_prefix(1);
  }
  while (true) {
    size_t plus = text.find(" + "), minus = text.find(" - ");
    size_t end = plus < minus ? plus : minus;
    std::string_view term = text.substr(0, end);
    if (term.empty())
      return std::nullopt;
    int64_t product = 1;
    while (true) {
      size_t star = term.find('*');
      std::string_view factor = term.substr(0, star);
      int64_t value = 0;
      if (!factor.empty() && factor.find_first_not_of("0123456789") == std::string_view::npos) {
        for (char c : factor)
          if (__builtin_mul_overflow(value, 10, &value) ||
              __builtin_add_overflow(value, c - '0', &value))
            return std::nullopt;
      } else if (isPlainName(factor)) {
        std::optional<int64_t> bound = lookup(factor);
        if (!bound)
          return std::nullopt;
        value = *bound;
      } else {
        return std::nullopt;
      }
      if (__builtin_mul_overflow(product, value, &product))
        return std::nullopt;
      if (star == std::string_view::npos)
        break;
      term.remove_prefix(star + 1);
    }
    if (__builtin_mul_overflow(product, sign, &product) ||
        __builtin_add_overflow(total, product, &total))
      return std::nullopt;
    if (end == std::string_view::npos)
      break;
    sign = end == plus ? 1 : -1;
    text.remove_prefix(end + 3);
  }
  return total;
}

} // namespace kiln::dim_formula

#endif // KILN_TARGET_HOST_DIMFORMULA_H
