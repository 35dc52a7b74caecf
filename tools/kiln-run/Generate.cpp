//===- Generate.cpp - kiln-run --generate: greedy decoding through kiln_decoder ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Time to first token covers the prefill run and the argmax of its last
// logits; the decode phase is every later step (one token per sequence
// each), so its tokens/s counts batch x (N - 1) tokens.
//
//===----------------------------------------------------------------------===//

#include "Generate.h"

#include "npy/Npy.h"

#include <chrono>
#include <fmt/format.h>
#include <random>
#include <vector>

namespace kilnrun {
namespace {

struct DecoderHandle {
  kiln_decoder *decoder = nullptr;
  ~DecoderHandle() { kiln_decoder_destroy(decoder); }
};

/// Ids [batch, length] of an integer .npy file (a 1-D file is one sequence).
std::vector<int64_t> readIds(const std::string &path, const char *what, int64_t &batch,
                             int64_t &length) {
  kiln::npy::Array array;
  std::string error;
  if (!kiln::npy::read(path, array, error))
    throw ToolError(fmt::format("{} '{}': {}", what, path, error));
  if ((array.rank() != 1 && array.rank() != 2) ||
      (array.dtype != KILN_DTYPE_I64 && array.dtype != KILN_DTYPE_I32))
    throw ToolError(fmt::format("{} '{}' is {} {}; expected i64 or i32 ids [batch, length]",
                                what, path, kiln_dtype_name(array.dtype),
                                formatShape(array.shape)));
  batch = array.rank() == 2 ? array.shape[0] : 1;
  length = array.shape.back();
  std::vector<int64_t> ids(static_cast<size_t>(batch * length));
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = array.dtype == KILN_DTYPE_I64
                 ? reinterpret_cast<const int64_t *>(array.data.get())[i]
                 : reinterpret_cast<const int32_t *>(array.data.get())[i];
  return ids;
}

std::vector<int64_t> randomPrompt(const GenerateOptions &options, int64_t vocab) {
  if (options.batch < 1 || options.promptLength < 1)
    throw ToolError(fmt::format("--batch {} and --prompt-length {}: both must be >= 1",
                                options.batch, options.promptLength));
  std::mt19937_64 random(options.seed);
  std::uniform_int_distribution<int64_t> id(0, vocab - 1);
  std::vector<int64_t> ids(static_cast<size_t>(options.batch * options.promptLength));
  for (int64_t &value : ids)
    value = id(random);
  return ids;
}

/// Prompt then generated ids, per sequence: [batch, prompt + tokens].
std::vector<int64_t> joinIds(const std::vector<int64_t> &prompt,
                             const std::vector<std::vector<int64_t>> &generated,
                             int64_t batch, int64_t promptLength) {
  std::vector<int64_t> all;
  for (int64_t b = 0; b < batch; ++b) {
    all.insert(all.end(), prompt.begin() + b * promptLength,
               prompt.begin() + (b + 1) * promptLength);
    for (const std::vector<int64_t> &step : generated)
      all.push_back(step[static_cast<size_t>(b)]);
  }
  return all;
}

void compareIds(const std::vector<int64_t> &ids, int64_t batch, int64_t width,
                int64_t promptLength, const std::string &path) {
  int64_t refBatch = 0, refWidth = 0;
  std::vector<int64_t> reference = readIds(path, "--compare", refBatch, refWidth);
  if (refBatch != batch || refWidth < width)
    throw ToolError(fmt::format("--compare '{}' holds [{}, {}] ids; expected [{}, >= {}] "
                                "(prompt {} + generated {})",
                                path, refBatch, refWidth, batch, width, promptLength,
                                width - promptLength));
  int64_t differing = 0, first = -1, firstSequence = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < width; ++i)
      if (ids[b * width + i] != reference[b * refWidth + i]) {
        ++differing;
        if (first < 0 || i < first) {
          first = i;
          firstSequence = b;
        }
      }
  if (differing)
    throw ToolError(fmt::format("{} of {} ids differ from '{}'; first at sequence {} position "
                                "{}: got {}, expected {}",
                                differing, batch * width, path, firstSequence, first,
                                ids[firstSequence * width + first],
                                reference[firstSequence * refWidth + first]));
  fmt::print("compare: {} x {} ids (prompt {} + generated {}) equal to '{}'\n", batch,
             width, promptLength, width - promptLength, path);
}

} // namespace

void generate(kiln_session *session, const GenerateOptions &options) {
  int64_t batch = options.batch, promptLength = options.promptLength;
  std::vector<int64_t> prompt;
  if (!options.promptFile.empty())
    prompt = readIds(options.promptFile, "--prompt-ids", batch, promptLength);
  kiln_decoder_options decoderOptions;
  kiln_decoder_options_init(&decoderOptions);
  decoderOptions.max_batch = batch;
  decoderOptions.max_tokens =
      options.maxTokens ? options.maxTokens : promptLength + options.tokens;
  DecoderHandle decoder;
  check(kiln_decoder_create(session, &decoderOptions, &decoder.decoder));
  kiln_decoder_info info;
  check(kiln_decoder_get_info(decoder.decoder, &info));
  if (options.promptFile.empty())
    prompt = randomPrompt(options, info.vocab_size);
  fmt::print("decoder: {} layers ({} caches), vocabulary {}, cache {} tokens x {} sequences "
             "({} bytes, {} bytes per token and sequence)\n",
             info.num_layers, info.num_caches, info.vocab_size, info.max_tokens,
             info.max_batch, info.cache_bytes, info.cache_bytes_per_token);
  fmt::print("prompt: {} x {} ids{}\n", batch, promptLength,
             options.promptFile.empty() ? fmt::format(" random (seed {})", options.seed)
                                        : fmt::format(" from {}", options.promptFile));

  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<int64_t>> generated;
  std::vector<int64_t> next(static_cast<size_t>(batch));
  auto start = Clock::now();
  check(kiln_decoder_prefill(decoder.decoder, prompt.data(), batch, promptLength));
  check(kiln_decoder_greedy_ids(decoder.decoder, next.data(), batch));
  generated.push_back(next);
  auto firstToken = Clock::now();
  for (int64_t t = 1; t < options.tokens; ++t) {
    check(kiln_decoder_step(decoder.decoder, next.data(), batch));
    check(kiln_decoder_greedy_ids(decoder.decoder, next.data(), batch));
    generated.push_back(next);
  }
  auto end = Clock::now();
  std::chrono::duration<double, std::milli> ttft = firstToken - start, decode = end - firstToken;
  fmt::print("time to first token: {:.3f} ms (prefill of {} x {} tokens)\n", ttft.count(),
             batch, promptLength);
  int64_t steps = options.tokens - 1;
  if (steps > 0)
    fmt::print("decode: {} steps in {:.3f} ms, {:.3f} ms per step, {:.1f} tokens/s "
               "({} sequences)\n",
               steps, decode.count(), decode.count() / steps,
               1000.0 * steps * batch / decode.count(), batch);
  int64_t width = promptLength + options.tokens;
  std::vector<int64_t> ids = joinIds(prompt, generated, batch, promptLength);
  for (int64_t b = 0; b < batch; ++b) {
    std::string line;
    for (int64_t i = promptLength; i < width; ++i)
      line += fmt::format("{}{}", i > promptLength ? " " : "", ids[b * width + i]);
    fmt::print("generated[{}]: {}\n", b, line);
  }
  if (!options.compareFile.empty())
    compareIds(ids, batch, width, promptLength, options.compareFile);
}

} // namespace kilnrun
