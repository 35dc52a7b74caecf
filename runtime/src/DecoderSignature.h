//===- DecoderSignature.h - Which inputs and outputs of a model form its KV cache ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DECODERSIGNATURE_H
#define KILN_RUNTIME_DECODERSIGNATURE_H

#include "Model.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace kiln::rt {

/// One past_key_values input and the present output the model writes for it.
struct CachePair {
  size_t input = 0;  // index of past_key_values.<layer>.<key|value>
  size_t output = 0; // index of present.<layer>.<key|value>
  int64_t heads = 0;
  int64_t headSize = 0;
  int32_t dtype = 0;
  size_t elementBytes = 0;
  /// The present is the past's buffer updated in place (kilnc
  /// --kv-cache-length, ABI v6 output_aliases): one fixed-length buffer
  /// [batch, heads, cacheLength, head] instead of two.
  bool inPlace = false;
  int64_t cacheLength = 0;
};

/// Where a decoder's inputs and outputs are, decided once when the decoder
/// is created and read on every run.
struct DecoderSignature {
  size_t inputIds = 0;
  std::optional<size_t> attentionMask;
  std::optional<size_t> positionIds;
  size_t logits = 0;
  int64_t vocabSize = 0;
  /// The output kilnc --greedy-ids adds: i64 [batch, sequence], the ArgMax
  /// of the logits; the decoder picks greedy ids from it.
  std::optional<size_t> greedyIds;
  std::vector<CachePair> caches; // in the model's input order
  /// Every pair in place (all or none), each cacheLength rows long; 0 for
  /// a model whose presents are new buffers.
  int64_t inPlaceLength = 0;
  /// A static decode step (kilnc --decode-step): input_ids and position_ids
  /// [stepBatch, 1], attention_mask [stepBatch, inPlaceLength], every cache
  /// [stepBatch, heads, inPlaceLength, head]; each run takes one token per
  /// sequence and the mask says which cache rows are filled. 0 otherwise.
  int64_t stepBatch = 0;
  int64_t numLayers = 0;
};

/// Recognizes `model` as a decoder with a KV cache (the contract in
/// kiln-c/runtime.h, kiln_decoder): INVALID_MODEL naming the input or output
/// at fault and what was expected.
kiln_status *recognizeDecoder(const kiln_model &model, DecoderSignature &out);

} // namespace kiln::rt

#endif // KILN_RUNTIME_DECODERSIGNATURE_H
