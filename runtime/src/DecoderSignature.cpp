//===- DecoderSignature.cpp - Recognizes a decoder export's KV cache by name and shape ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// transformers' exports (TorchScript and dynamo) and onnxruntime's model
// builder name the cache past_key_values.<layer>.key|value and
// present.<layer>.key|value; the names pair a past with its present, the
// shapes then have to agree.
//
//===----------------------------------------------------------------------===//

#include "DecoderSignature.h"

#include "Status.h"

#include <map>
#include <set>
#include <string>
#include <utility>

namespace kiln::rt {
namespace {

constexpr const char *kPastPrefix = "past_key_values.";
constexpr const char *kPresentPrefixes[] = {"present.", "present_key_values."};

kiln_status *invalidModel(const kiln_model &model, const std::string &what) {
  return makeStatus(KILN_STATUS_INVALID_MODEL,
                    cat("model '", model.path, "' is not a decoder with a KV cache: ", what));
}

/// "<layer>.key" / "<layer>.value" after `prefix` -> {layer, "key"}.
std::optional<std::pair<int64_t, std::string>> parseCacheName(const std::string &name,
                                                              const std::string &prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  std::string rest = name.substr(prefix.size());
  size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string::npos)
    return std::nullopt;
  std::string layer = rest.substr(0, dot), kind = rest.substr(dot + 1);
  if (layer.size() > 9 || layer.find_first_not_of("0123456789") != std::string::npos ||
      (kind != "key" && kind != "value"))
    return std::nullopt;
  return std::make_pair(std::stoll(layer), kind);
}

bool isFloat(int32_t dtype) {
  return dtype == KILN_DTYPE_F32 || dtype == KILN_DTYPE_F16 || dtype == KILN_DTYPE_BF16;
}

std::string describe(const TensorDesc &desc) {
  return cat("'", desc.name, "' (", kiln_dtype_name(desc.dtype), " ",
             formatDims(desc.dims.data(), desc.rank()), ")");
}

kiln_status *checkTokenInput(const kiln_model &model, const TensorDesc &desc,
                             bool allowFloat) {
  bool integer = desc.dtype == KILN_DTYPE_I64 || desc.dtype == KILN_DTYPE_I32;
  bool other = allowFloat && (desc.dtype == KILN_DTYPE_F32 || desc.dtype == KILN_DTYPE_BOOL);
  if (desc.rank() != 2 || !(integer || other))
    return invalidModel(model, cat("input ", describe(desc), ": expected a rank-2 ",
                                   allowFloat ? "i64, i32, f32 or bool" : "i64 or i32",
                                   " tensor [batch, sequence]"));
  return nullptr;
}

/// A cache tensor [batch, heads, sequence, head] with static heads and head.
kiln_status *checkCacheShape(const kiln_model &model, const TensorDesc &desc,
                             const char *role) {
  if (desc.rank() != 4 || !isFloat(desc.dtype))
    return invalidModel(model, cat(role, " ", describe(desc),
                                   ": expected an f32, f16 or bf16 tensor of rank 4 "
                                   "[batch, heads, sequence, head]"));
  if (desc.isSymbolic(1) || desc.isSymbolic(3) || desc.dims[1] == 0 || desc.dims[3] == 0)
    return invalidModel(model, cat(role, " ", describe(desc),
                                   ": heads (dim 1) and head size (dim 3) must be static "
                                   "and non-zero"));
  return nullptr;
}

/// The optional output greedy_ids (kilnc --greedy-ids): i64 [batch, sequence].
kiln_status *findGreedyIds(const kiln_model &model, DecoderSignature &out) {
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    const TensorDesc &desc = model.outputs[i];
    if (desc.name != "greedy_ids")
      continue;
    if (desc.rank() != 2 || desc.dtype != KILN_DTYPE_I64)
      return invalidModel(model, cat("output ", describe(desc),
                                     ": expected i64 [batch, sequence] (kilnc --greedy-ids)"));
    out.greedyIds = i;
  }
  return nullptr;
}

kiln_status *findLogits(const kiln_model &model, DecoderSignature &out) {
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    const TensorDesc &desc = model.outputs[i];
    if (desc.name != "logits")
      continue;
    if (desc.rank() != 3 || !isFloat(desc.dtype) || desc.isSymbolic(2) || desc.dims[2] < 1)
      return invalidModel(model, cat("output ", describe(desc),
                                     ": expected f32, f16 or bf16 [batch, sequence, "
                                     "vocabulary] with a static vocabulary"));
    out.logits = i;
    out.vocabSize = desc.dims[2];
    return findGreedyIds(model, out);
  }
  return invalidModel(model, "it has no output 'logits'");
}

/// present.<layer>.<kind> -> output index.
std::map<std::pair<int64_t, std::string>, size_t> presentOutputs(const kiln_model &model) {
  std::map<std::pair<int64_t, std::string>, size_t> presents;
  for (size_t i = 0; i < model.outputs.size(); ++i)
    for (const char *prefix : kPresentPrefixes)
      if (auto key = parseCacheName(model.outputs[i].name, prefix))
        presents.emplace(*key, i);
  return presents;
}

kiln_status *addCachePair(const kiln_model &model, size_t input,
                          const std::pair<int64_t, std::string> &key,
                          const std::map<std::pair<int64_t, std::string>, size_t> &presents,
                          DecoderSignature &out) {
  const TensorDesc &past = model.inputs[input];
  if (kiln_status *status = checkCacheShape(model, past, "input"))
    return status;
  auto present = presents.find(key);
  if (present == presents.end())
    return invalidModel(model, cat("input '", past.name, "' has no output present.",
                                   key.first, ".", key.second));
  const TensorDesc &desc = model.outputs[present->second];
  if (kiln_status *status = checkCacheShape(model, desc, "output"))
    return status;
  if (desc.dtype != past.dtype || desc.dims[1] != past.dims[1] || desc.dims[3] != past.dims[3])
    return invalidModel(model, cat("output ", describe(desc), " does not match input ",
                                   describe(past), " in dtype, heads or head size"));
  CachePair pair;
  pair.input = input;
  pair.output = present->second;
  pair.heads = past.dims[1];
  pair.headSize = past.dims[3];
  pair.dtype = past.dtype;
  pair.elementBytes = kiln_dtype_size(past.dtype);
  if (desc.aliasedInput >= 0) {
    if (static_cast<size_t>(desc.aliasedInput) != input || past.isSymbolic(2) ||
        past.dims[2] < 1)
      return invalidModel(model, cat("output ", describe(desc), " is updated in place, but "
                                     "not in input ", describe(past),
                                     " with a static cache length (dim 2)"));
    pair.inPlace = true;
    pair.cacheLength = past.dims[2];
  }
  if (!out.caches.empty() &&
      (out.caches.front().inPlace != pair.inPlace ||
       out.caches.front().cacheLength != pair.cacheLength))
    return invalidModel(model, cat("input '", past.name, "' and input '",
                                   model.inputs[out.caches.front().input].name,
                                   "' differ in being updated in place or in cache length"));
  out.inPlaceLength = pair.cacheLength;
  out.caches.push_back(pair);
  return nullptr;
}

/// A model whose input_ids take one static token per sequence is a static
/// decode step (kilnc --decode-step): its caches are in place, and its mask,
/// position ids and caches have that batch and the caches' length.
kiln_status *findStep(const kiln_model &model, DecoderSignature &out) {
  const TensorDesc &ids = model.inputs[out.inputIds];
  if (!out.inPlaceLength || ids.isSymbolic(0) || ids.isSymbolic(1) || ids.dims[1] != 1)
    return nullptr;
  int64_t batch = ids.dims[0];
  auto isStatic = [&](const TensorDesc &desc, int64_t rows, int64_t columns) {
    return !desc.isSymbolic(0) && !desc.isSymbolic(1) && desc.dims[0] == rows &&
           desc.dims[1] == columns;
  };
  int64_t length = out.inPlaceLength;
  bool ok = batch >= 1 && length > 0 && out.attentionMask && out.positionIds &&
            isStatic(model.inputs[*out.attentionMask], batch, length) &&
            isStatic(model.inputs[*out.positionIds], batch, 1);
  for (const CachePair &pair : out.caches)
    ok = ok && !model.inputs[pair.input].isSymbolic(0) && model.inputs[pair.input].dims[0] == batch;
  if (!ok)
    return invalidModel(model, cat("input ", describe(ids), " takes one token per sequence, "
                                   "but the model is not a static decode step (kilnc "
                                   "--decode-step: position_ids [", batch, ", 1], "
                                   "attention_mask [", batch, ", L] and caches [", batch,
                                   ", heads, L, head] updated in place)"));
  out.stepBatch = batch;
  return nullptr;
}

} // namespace

kiln_status *recognizeDecoder(const kiln_model &model, DecoderSignature &out) {
  out = DecoderSignature();
  auto presents = presentOutputs(model);
  std::optional<size_t> inputIds;
  std::set<int64_t> layers;
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const TensorDesc &desc = model.inputs[i];
    kiln_status *status = nullptr;
    if (desc.name == "input_ids") {
      inputIds = i;
      status = checkTokenInput(model, desc, /*allowFloat=*/false);
    } else if (desc.name == "position_ids") {
      out.positionIds = i;
      status = checkTokenInput(model, desc, /*allowFloat=*/false);
    } else if (desc.name == "attention_mask") {
      out.attentionMask = i;
      status = checkTokenInput(model, desc, /*allowFloat=*/true);
    } else if (auto key = parseCacheName(desc.name, kPastPrefix)) {
      layers.insert(key->first);
      status = addCachePair(model, i, *key, presents, out);
    } else {
      status = invalidModel(model, cat("input '", desc.name, "' is none of input_ids, "
                                       "attention_mask, position_ids, "
                                       "past_key_values.<layer>.key|value"));
    }
    if (status)
      return status;
  }
  if (!inputIds)
    return invalidModel(model, "it has no input 'input_ids'");
  out.inputIds = *inputIds;
  if (out.caches.empty())
    return invalidModel(model, "it has no past_key_values.<layer>.key|value inputs");
  out.numLayers = static_cast<int64_t>(layers.size());
  if (kiln_status *status = findStep(model, out))
    return status;
  return findLogits(model, out);
}

} // namespace kiln::rt
