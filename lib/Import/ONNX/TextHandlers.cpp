//===- TextHandlers.cpp - ONNX text featurization ops ---------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// TfIdfVectorizer on integer tokens, as a composition against its constant
// n-gram pool. The reference walks a trie of the pool from every start
// position and skip distance; the same counts come from comparing shifted
// slices of the input with the pool: for n-grams of length n and skip
// distance d, element k of every window is the slice starting at k d, an
// `equal` against the k-th tokens of all pool n-grams of that length (one
// broadcast compare), the n compares `and`ed and summed over the windows.
// A constant one-hot matrix adds each n-gram's count into its output column.
// Unigrams count at distance 1 only (the reference counts them once).
//
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

#include <map>

using namespace mlir;

namespace kiln::onnx_import {
namespace {

/// The pool's n-grams of one length with their output columns.
struct GramSet {
  SmallVector<SmallVector<int64_t>> grams;
  SmallVector<int64_t> columns;
};

/// Reads the pool as the reference builds its trie: n-grams of each length
/// in [minLength, maxLength] get consecutive ids (other lengths use up ids
/// too); a repeated n-gram keeps the later id. Id i counts into column
/// ngram_indexes[i - 1].
FailureOr<std::map<int64_t, GramSet>> readPool(NodeBinder &b, ArrayRef<int64_t> pool,
                                               ArrayRef<int64_t> counts,
                                               ArrayRef<int64_t> indexes,
                                               int64_t minLength, int64_t maxLength) {
  auto total = static_cast<int64_t>(pool.size());
  std::map<SmallVector<int64_t>, int64_t> ids;
  int64_t nextId = 1;
  for (auto [i, start] : llvm::enumerate(counts))
    if (start < (i == 0 ? 0 : counts[i - 1]) || start > total)
      return b.emitError() << "attribute 'ngram_counts' value " << start << " at position "
                           << i << " is not a non-decreasing offset into the pool of "
                           << total << " items";
  for (auto [i, start] : llvm::enumerate(counts)) {
    int64_t end = i + 1 < counts.size() ? counts[i + 1] : total;
    auto length = static_cast<int64_t>(i + 1);
    int64_t grams = (end - start) / length;
    if (length < minLength || length > maxLength) {
      nextId += grams;
      continue;
    }
    for (int64_t g = 0; g < grams; ++g) {
      const int64_t *first = pool.data() + start + g * length;
      ids[SmallVector<int64_t>(first, first + length)] = nextId++;
    }
  }
  std::map<int64_t, GramSet> sets;
  for (const auto &[gram, id] : ids) {
    if (id - 1 >= static_cast<int64_t>(indexes.size()))
      return b.emitError() << "attribute 'ngram_indexes' has " << indexes.size()
                           << " entries, the pool has n-gram number " << id;
    GramSet &set = sets[static_cast<int64_t>(gram.size())];
    set.grams.push_back(gram);
    set.columns.push_back(indexes[id - 1]);
  }
  return sets;
}

/// [B, G] counts of the n-grams of one length in the token rows `x` ([B, C]
/// i64), over the given skip distances.
FailureOr<Value> countGrams(NodeBinder &b, Value x, const GramSet &set, int64_t maxDistance) {
  RankedTensorType type = tensorType(x);
  int64_t rows = type.getDimSize(0), width = type.getDimSize(1);
  auto length = static_cast<int64_t>(set.grams.front().size());
  auto numGrams = static_cast<int64_t>(set.grams.size());
  Type f32 = b.builder().getF32Type();
  Value total;
  for (int64_t d = 1; d <= (length == 1 ? 1 : maxDistance); ++d) {
    int64_t windows = width - (length - 1) * d;
    if (windows <= 0)
      break;
    Value all;
    for (int64_t k = 0; k < length; ++k) {
      FailureOr<Value> part = b.make<kiln::SliceOp>(
          x, ArrayRef<int64_t>{k * d}, ArrayRef<int64_t>{k * d + windows},
          ArrayRef<int64_t>{1}, ArrayRef<int64_t>{1});
      if (failed(part))
        return failure();
      FailureOr<Value> column = b.make<kiln::UnsqueezeOp>(*part, ArrayRef<int64_t>{1});
      if (failed(column))
        return failure();
      SmallVector<int64_t> tokens;
      for (const SmallVector<int64_t> &gram : set.grams)
        tokens.push_back(gram[k]);
      Value pool = b.constant(DenseIntElementsAttr::get(
          RankedTensorType::get({1, numGrams, 1}, b.builder().getI64Type()), tokens));
      FailureOr<Value> hit = b.make<kiln::EqualOp>(*column, pool);
      if (failed(hit))
        return failure();
      if (all) {
        hit = b.make<kiln::AndOp>(all, *hit);
        if (failed(hit))
          return failure();
      }
      all = *hit;
    }
    FailureOr<Value> ones = b.makeTyped<kiln::CastOp>(
        RankedTensorType::get({rows, numGrams, windows}, f32), all);
    if (failed(ones))
      return failure();
    FailureOr<Value> count =
        b.make<kiln::ReduceOp>(*ones, ReduceKind::sum, ArrayRef<int64_t>{2}, false);
    if (failed(count))
      return failure();
    if (total) {
      count = b.make<kiln::AddOp>(total, *count);
      if (failed(count))
        return failure();
    }
    total = *count;
  }
  if (!total)
    return b.constant(DenseElementsAttr::get(RankedTensorType::get({rows, numGrams}, f32),
                                             APFloat(0.0f)));
  return total;
}

LogicalResult tfIdfVectorizer(NodeBinder &b) {
  FailureOr<Value> x = b.input(0);
  FailureOr<int64_t> maxLength = b.intAttr("max_gram_length", std::nullopt);
  FailureOr<int64_t> minLength = b.intAttr("min_gram_length", std::nullopt);
  FailureOr<int64_t> maxSkip = b.intAttr("max_skip_count", std::nullopt);
  FailureOr<std::string> mode = b.stringAttr("mode", std::nullopt);
  FailureOr<SmallVector<int64_t>> counts = b.intsAttr("ngram_counts", std::nullopt);
  FailureOr<SmallVector<int64_t>> indexes = b.intsAttr("ngram_indexes", std::nullopt);
  FailureOr<SmallVector<int64_t>> pool = b.intsAttr("pool_int64s", ArrayRef<int64_t>());
  FailureOr<SmallVector<float>> weights = b.floatsAttr("weights", ArrayRef<float>());
  if (failed(x) || failed(maxLength) || failed(minLength) || failed(maxSkip) ||
      failed(mode) || failed(counts) || failed(indexes) || failed(pool) || failed(weights) ||
      failed(b.checkRange("attribute 'min_gram_length'", *minLength, 1, {})) ||
      failed(b.checkRange("attribute 'max_gram_length'", *maxLength, *minLength, {})) ||
      failed(b.checkRange("attribute 'max_skip_count'", *maxSkip, 0, {})))
    return failure();
  if (*mode != "TF" && *mode != "IDF" && *mode != "TFIDF")
    return b.emitError() << "attribute 'mode' value is '" << *mode
                         << "', accepted values are TF, IDF, TFIDF";
  if (b.hasAttr("pool_strings"))
    return b.unsupported("pool_strings (string tensors)");
  if (pool->empty())
    return b.emitError() << "attribute 'pool_int64s' is required and must not be empty";
  if (indexes->empty() || llvm::any_of(*indexes, [](int64_t i) { return i < 0; }))
    return b.emitError() << "attribute 'ngram_indexes' must be non-empty and hold "
                            "indices >= 0";
  int64_t columns = *llvm::max_element(*indexes) + 1;
  if (!weights->empty() && static_cast<int64_t>(weights->size()) < columns)
    return b.emitError() << "attribute 'weights' has " << weights->size()
                         << " values, expected one per output column (" << columns << ")";
  RankedTensorType type = tensorType(*x);
  Type element = type.getElementType();
  if (!element.isSignlessInteger(32) && !element.isSignlessInteger(64)) {
    std::string name;
    llvm::raw_string_ostream(name) << element;
    return b.unsupported("tokens of type " + name + " (int32 and int64 only)");
  }
  if (type.getRank() != 1 && type.getRank() != 2)
    return b.emitError() << "input 0 has rank " << type.getRank() << ", expected 1 or 2";
  if (!type.hasStaticShape())
    return b.unsupported("a dynamic input shape");
  FailureOr<std::map<int64_t, GramSet>> sets =
      readPool(b, *pool, *counts, *indexes, *minLength, *maxLength);
  if (failed(sets))
    return failure();

  // Tokens as [B, C] i64.
  int64_t rows = type.getRank() == 2 ? type.getDimSize(0) : 1;
  auto i64 = RankedTensorType::get({rows, type.getShape().back()}, b.builder().getI64Type());
  Value tokens = *x;
  if (!element.isSignlessInteger(64)) {
    FailureOr<Value> wide = b.makeTyped<kiln::CastOp>(type.clone(i64.getElementType()), tokens);
    if (failed(wide))
      return failure();
    tokens = *wide;
  }
  if (type.getRank() == 1) {
    FailureOr<Value> matrix = b.makeTyped<kiln::ReshapeOp>(i64, tokens, b.i64Vector(i64.getShape()));
    if (failed(matrix))
      return failure();
    tokens = *matrix;
  }

  Type f32 = b.builder().getF32Type();
  auto outType = RankedTensorType::get({rows, columns}, f32);
  Value frequencies;
  for (const auto &[length, set] : *sets) {
    FailureOr<Value> count = countGrams(b, tokens, set, *maxSkip + 1);
    if (failed(count))
      return failure();
    // [G, columns] one-hot: each n-gram's count into its column.
    auto numGrams = static_cast<int64_t>(set.grams.size());
    SmallVector<float> scatter(numGrams * columns, 0.0f);
    for (auto [g, column] : llvm::enumerate(set.columns))
      scatter[g * columns + column] = 1.0f;
    Value matrix = b.constant(DenseElementsAttr::get(
        RankedTensorType::get({numGrams, columns}, f32), ArrayRef<float>(scatter)));
    FailureOr<Value> placed = b.make<kiln::MatmulOp>(*count, matrix);
    if (succeeded(placed) && frequencies)
      placed = b.make<kiln::AddOp>(frequencies, *placed);
    if (failed(placed))
      return failure();
    frequencies = *placed;
  }
  if (!frequencies)
    frequencies = b.constant(DenseElementsAttr::get(outType, APFloat(0.0f)));

  Value out = frequencies;
  if (*mode != "TF") {
    SmallVector<float> w(weights->begin(), weights->end());
    w.resize(columns, 1.0f);
    if (weights->empty())
      w.assign(columns, 1.0f);
    Value weightRow = b.constant(
        DenseElementsAttr::get(RankedTensorType::get({1, columns}, f32), ArrayRef<float>(w)));
    FailureOr<Value> weighted;
    if (*mode == "IDF") {
      FailureOr<Value> seen = b.make<kiln::GreaterOp>(frequencies, b.scalar(f32, 0));
      weighted = failed(seen) ? seen
                              : b.make<kiln::SelectOp>(*seen, weightRow, b.scalar(f32, 0));
    } else {
      weighted = b.make<kiln::MulOp>(frequencies, weightRow);
    }
    if (failed(weighted))
      return failure();
    out = *weighted;
  }
  if (type.getRank() == 1) {
    FailureOr<Value> vector = b.makeTyped<kiln::ReshapeOp>(
        RankedTensorType::get({columns}, f32), out, b.i64Vector({columns}));
    if (failed(vector))
      return failure();
    out = *vector;
  }
  return b.setOutput(0, out);
}

} // namespace

void registerTextHandlers(HandlerRegistry &r) {
  r.add("TfIdfVectorizer", 9, tfIdfVectorizer);
}

} // namespace kiln::onnx_import
