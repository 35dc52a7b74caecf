//===- DimExpr.cpp - Polynomials over symbolic tensor dims ----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "DimExpr.h"

#include <algorithm>

namespace kiln::onnx_import {

static int64_t wrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
static int64_t wrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

void DimExpr::add(const Monomial &m, int64_t coefficient) {
  int64_t &c = terms[m];
  c = wrapAdd(c, coefficient);
  if (c == 0)
    terms.erase(m);
}

DimExpr DimExpr::constant(int64_t value) {
  DimExpr e;
  if (value != 0)
    e.terms[{}] = value;
  return e;
}

DimExpr DimExpr::symbol(unsigned id) {
  DimExpr e;
  e.terms[{id}] = 1;
  return e;
}

std::optional<int64_t> DimExpr::getConstant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms.begin()->first.empty())
    return terms.begin()->second;
  return std::nullopt;
}

std::optional<unsigned> DimExpr::getSymbol() const {
  if (terms.size() != 1 || terms.begin()->first.size() != 1 ||
      terms.begin()->second != 1)
    return std::nullopt;
  return terms.begin()->first.front();
}

bool DimExpr::isPositive() const {
  return !terms.empty() &&
         std::all_of(terms.begin(), terms.end(),
                     [](const auto &term) { return term.second > 0; });
}

DimExpr DimExpr::operator+(const DimExpr &other) const {
  DimExpr e = *this;
  for (const auto &[m, c] : other.terms)
    e.add(m, c);
  return e;
}

DimExpr DimExpr::operator-(const DimExpr &other) const {
  DimExpr e = *this;
  for (const auto &[m, c] : other.terms)
    e.add(m, wrapMul(c, -1));
  return e;
}

DimExpr DimExpr::operator*(const DimExpr &other) const {
  DimExpr e;
  for (const auto &[m1, c1] : terms)
    for (const auto &[m2, c2] : other.terms) {
      Monomial m;
      std::merge(m1.begin(), m1.end(), m2.begin(), m2.end(), std::back_inserter(m));
      e.add(m, wrapMul(c1, c2));
    }
  return e;
}

std::optional<DimExpr> DimExpr::divideExactly(const DimExpr &divisor) const {
  if (divisor.terms.size() != 1)
    return std::nullopt;
  const auto &[dm, dc] = *divisor.terms.begin();
  if (dc == 0)
    return std::nullopt;
  DimExpr e;
  for (const auto &[m, c] : terms) {
    if (c % dc != 0 || !std::includes(m.begin(), m.end(), dm.begin(), dm.end()))
      return std::nullopt;
    Monomial rest;
    std::set_difference(m.begin(), m.end(), dm.begin(), dm.end(),
                        std::back_inserter(rest));
    e.add(rest, c / dc);
  }
  return e;
}

int64_t DimExpr::evaluate(llvm::function_ref<int64_t(unsigned)> valueOf) const {
  int64_t sum = 0;
  for (const auto &[m, c] : terms) {
    int64_t term = c;
    for (unsigned s : m)
      term = wrapMul(term, valueOf(s));
    sum = wrapAdd(sum, term);
  }
  return sum;
}

DimExpr DimExpr::substitute(
    llvm::function_ref<std::optional<DimExpr>(unsigned)> replacement) const {
  DimExpr result;
  for (const auto &[m, c] : terms) {
    DimExpr term = constant(c);
    for (unsigned s : m) {
      std::optional<DimExpr> r = replacement(s);
      term = term * (r ? *r : symbol(s));
    }
    result = result + term;
  }
  return result;
}

std::vector<unsigned> DimExpr::symbols() const {
  std::vector<unsigned> ids;
  for (const auto &[m, c] : terms)
    ids.insert(ids.end(), m.begin(), m.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string DimExpr::str(llvm::function_ref<std::string(unsigned)> nameOf) const {
  if (terms.empty())
    return "0";
  std::string out;
  for (const auto &[m, c] : terms) {
    std::string term;
    if (m.empty() || (c != 1 && c != -1))
      term = std::to_string(c < 0 && !out.empty() ? -c : c);
    else if (c == -1 && out.empty())
      term = "-";
    for (unsigned s : m)
      term += (term.empty() || term == "-" ? "" : "*") + nameOf(s);
    if (!out.empty())
      out += c < 0 ? " - " : " + ";
    out += term;
  }
  return out;
}

} // namespace kiln::onnx_import
