//===- DecoderTest.cpp - kiln_decoder: cache carried across runs, every error path ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// fake_decoder's next id is (sum of every cached id + position) mod 16, read
// back from its present key, and its run fails if a cached value is not its
// position: greedy ids equal to ExpectedDecoder's show that the cache the
// decoder hands back as the next past is the model's present.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

namespace kiln::test {
namespace {

constexpr int64_t kVocab = 16;

struct DecoderDeleter {
  void operator()(kiln_decoder *decoder) const { kiln_decoder_destroy(decoder); }
};
using DecoderPtr = std::unique_ptr<kiln_decoder, DecoderDeleter>;

/// fake_decoder's arithmetic, one sequence per entry.
struct ExpectedDecoder {
  std::vector<std::vector<int64_t>> cached;

  explicit ExpectedDecoder(size_t batch) : cached(batch) {}
  void append(const std::vector<int64_t> &ids, int64_t count) {
    for (size_t b = 0; b < cached.size(); ++b)
      for (int64_t i = 0; i < count; ++i)
        cached[b].push_back(ids[b * count + i]);
  }
  std::vector<int64_t> next() const {
    std::vector<int64_t> ids;
    for (const std::vector<int64_t> &sequence : cached) {
      int64_t sum = 0;
      for (int64_t id : sequence)
        sum += id;
      ids.push_back((sum + static_cast<int64_t>(sequence.size()) - 1) % kVocab);
    }
    return ids;
  }
};

struct DecoderFixture {
  ModelPtr model;
  SessionPtr session;
  DecoderPtr decoder;

  explicit DecoderFixture(const std::string &name, int64_t maxTokens = 12,
                          int64_t maxBatch = 2) {
    model = loadModel(name);
    session = createSession(model.get());
    kiln_decoder_options options;
    kiln_decoder_options_init(&options);
    options.max_tokens = maxTokens;
    options.max_batch = maxBatch;
    kiln_decoder *raw = nullptr;
    EXPECT_EQ(messageOf(kiln_decoder_create(session.get(), &options, &raw)), "");
    decoder.reset(raw);
  }
};

std::vector<int64_t> greedy(kiln_decoder *decoder, int64_t batch) {
  std::vector<int64_t> ids(static_cast<size_t>(batch), -1);
  EXPECT_EQ(messageOf(kiln_decoder_greedy_ids(decoder, ids.data(), batch)), "");
  return ids;
}

/// Generates `steps` tokens after `prompt` and checks each against the model's arithmetic.
void expectGeneration(kiln_decoder *decoder, const std::vector<int64_t> &prompt, int64_t batch,
                      int64_t steps) {
  int64_t length = static_cast<int64_t>(prompt.size()) / batch;
  ExpectedDecoder expected(static_cast<size_t>(batch));
  ASSERT_EQ(messageOf(kiln_decoder_prefill(decoder, prompt.data(), batch, length)), "");
  expected.append(prompt, length);
  std::vector<int64_t> next = greedy(decoder, batch);
  ASSERT_EQ(next, expected.next());
  for (int64_t i = 0; i < steps; ++i) {
    ASSERT_EQ(messageOf(kiln_decoder_step(decoder, next.data(), batch)), "") << "step " << i;
    expected.append(next, 1);
    next = greedy(decoder, batch);
    ASSERT_EQ(next, expected.next()) << "step " << i;
  }
}

kiln_decoder_info infoOf(kiln_decoder *decoder) {
  kiln_decoder_info info{};
  EXPECT_EQ(messageOf(kiln_decoder_get_info(decoder, &info)), "");
  return info;
}

TEST(Decoder, GeneratesFromItsOwnCache) {
  DecoderFixture f("fake_decoder");
  kiln_decoder_info info = infoOf(f.decoder.get());
  EXPECT_EQ(info.num_layers, 1);
  EXPECT_EQ(info.num_caches, 2);
  EXPECT_EQ(info.vocab_size, kVocab);
  EXPECT_EQ(info.length, 0);
  // Two halves per cache of max_batch 2 x 2 heads x 12 tokens x 3 floats.
  EXPECT_EQ(info.cache_bytes, 2u * 2u * (2 * 2 * 12 * 3 * 4));
  EXPECT_EQ(info.cache_bytes_per_token, 2u * (2 * 3 * 4));
  expectGeneration(f.decoder.get(), {3, 1, 4, 1, 5, 9, 2, 6}, 2, 6);
  info = infoOf(f.decoder.get());
  EXPECT_EQ(info.batch, 2);
  EXPECT_EQ(info.length, 4 + 6);
}

TEST(Decoder, PicksFromTheGreedyIdsOutput) {
  // The fake's logits are all zero here: only its greedy_ids output gives
  // the rule's ids.
  DecoderFixture f("decoder_greedy_ids");
  expectGeneration(f.decoder.get(), {3, 1, 4, 1, 5, 9, 2, 6}, 2, 6);
  kiln_tensor logits{};
  ASSERT_EQ(messageOf(kiln_decoder_get_logits(f.decoder.get(), &logits)), "");
  EXPECT_EQ(std::vector<int64_t>(logits.dims, logits.dims + 3), (std::vector<int64_t>{2, 1, 16}));
}

TEST(Decoder, LogitsViewHasTheLastRunsShape) {
  DecoderFixture f("fake_decoder");
  std::vector<int64_t> prompt = {1, 2, 3};
  ASSERT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), prompt.data(), 1, 3)), "");
  kiln_tensor logits{};
  ASSERT_EQ(messageOf(kiln_decoder_get_logits(f.decoder.get(), &logits)), "");
  EXPECT_STREQ(logits.name, "logits");
  EXPECT_EQ(logits.dtype, KILN_DTYPE_F32);
  ASSERT_EQ(logits.rank, 3);
  EXPECT_EQ(std::vector<int64_t>(logits.dims, logits.dims + 3), (std::vector<int64_t>{1, 3, 16}));
  EXPECT_EQ(logits.byte_size, 3u * 16u * 4u);
  // Position 0 sees id 1 at position 0: one-hot at 1.
  EXPECT_EQ(static_cast<const float *>(logits.data)[1], 1.0f);
  std::vector<int64_t> next = greedy(f.decoder.get(), 1);
  ASSERT_EQ(messageOf(kiln_decoder_step(f.decoder.get(), next.data(), 1)), "");
  ASSERT_EQ(messageOf(kiln_decoder_get_logits(f.decoder.get(), &logits)), "");
  EXPECT_EQ(std::vector<int64_t>(logits.dims, logits.dims + 3), (std::vector<int64_t>{1, 1, 16}));
}

TEST(Decoder, ChunkedPrefillEqualsOnePrefill) {
  DecoderFixture whole("fake_decoder"), chunked("fake_decoder");
  std::vector<int64_t> prompt = {7, 8, 9, 10, 11};
  ASSERT_EQ(messageOf(kiln_decoder_prefill(whole.decoder.get(), prompt.data(), 1, 5)), "");
  ASSERT_EQ(messageOf(kiln_decoder_prefill(chunked.decoder.get(), prompt.data(), 1, 2)), "");
  ASSERT_EQ(messageOf(kiln_decoder_prefill(chunked.decoder.get(), prompt.data() + 2, 1, 3)), "");
  EXPECT_EQ(greedy(whole.decoder.get(), 1), greedy(chunked.decoder.get(), 1));
}

TEST(Decoder, ResetStartsOverWithAnotherBatch) {
  DecoderFixture f("fake_decoder");
  expectGeneration(f.decoder.get(), {5, 5, 5, 5}, 2, 3);
  ASSERT_EQ(messageOf(kiln_decoder_reset(f.decoder.get())), "");
  EXPECT_EQ(infoOf(f.decoder.get()).length, 0);
  kiln_tensor logits{};
  EXPECT_NE(messageOf(kiln_decoder_get_logits(f.decoder.get(), &logits)), "");
  expectGeneration(f.decoder.get(), {1, 2, 3, 4, 5}, 1, 7);
}

TEST(Decoder, FillsTheCacheExactly) {
  DecoderFixture f("fake_decoder", /*maxTokens=*/4, /*maxBatch=*/1);
  expectGeneration(f.decoder.get(), {1, 2}, 1, 2);
  EXPECT_EQ(infoOf(f.decoder.get()).length, 4);
}

// ---- Errors: each names the value and the limit, and the decoder stays usable.

/// The decoder still generates what the model's arithmetic says after an error.
void expectStillUsable(kiln_decoder *decoder) {
  ASSERT_EQ(messageOf(kiln_decoder_reset(decoder)), "");
  expectGeneration(decoder, {2, 7, 1, 8}, 2, 3);
}

TEST(DecoderErrors, PromptLongerThanTheCache) {
  DecoderFixture f("fake_decoder", /*maxTokens=*/6);
  std::vector<int64_t> prompt(7, 1);
  EXPECT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), prompt.data(), 1, 7)),
            "7 tokens do not fit the cache: 0 cached + 7 > max_tokens 6; reset the decoder "
            "or create it with a larger max_tokens");
  EXPECT_EQ(infoOf(f.decoder.get()).length, 0);
  expectStillUsable(f.decoder.get());
}

TEST(DecoderErrors, StepIntoAFullCacheKeepsTheCache) {
  DecoderFixture f("fake_decoder", /*maxTokens=*/3, /*maxBatch=*/1);
  std::vector<int64_t> prompt = {4, 4, 4};
  ASSERT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), prompt.data(), 1, 3)), "");
  std::vector<int64_t> before = greedy(f.decoder.get(), 1);
  kiln_status *status = kiln_decoder_step(f.decoder.get(), before.data(), 1);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(messageOf(status), "1 tokens do not fit the cache: 3 cached + 1 > max_tokens 3; "
                               "reset the decoder or create it with a larger max_tokens");
  EXPECT_EQ(infoOf(f.decoder.get()).length, 3);
  EXPECT_EQ(greedy(f.decoder.get(), 1), before); // the logits are kept too
}

TEST(DecoderErrors, IdsOutsideTheVocabulary) {
  DecoderFixture f("fake_decoder");
  std::vector<int64_t> prompt = {1, 2, 3, 16};
  kiln_status *status = kiln_decoder_prefill(f.decoder.get(), prompt.data(), 2, 2);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(messageOf(status), "input id 16 at [1, 1] is outside the vocabulary [0, 16)");
  prompt = {1, 2, 3, 4};
  ASSERT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), prompt.data(), 2, 2)), "");
  std::vector<int64_t> step = {-1, 0};
  EXPECT_EQ(messageOf(kiln_decoder_step(f.decoder.get(), step.data(), 2)),
            "input id -1 at [0, 0] is outside the vocabulary [0, 16)");
  EXPECT_EQ(infoOf(f.decoder.get()).length, 2);
  expectStillUsable(f.decoder.get());
}

TEST(DecoderErrors, BadBatchAndCount) {
  DecoderFixture f("fake_decoder");
  std::vector<int64_t> ids = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), ids.data(), 3, 2)),
            "batch is 3, accepted range is [1, 2] (max_batch)");
  EXPECT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), ids.data(), 0, 2)),
            "batch is 0, accepted range is [1, 2] (max_batch)");
  EXPECT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), ids.data(), 1, 0)),
            "count is 0, expected at least 1 token");
  EXPECT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), nullptr, 1, 2)), "ids is NULL");
  EXPECT_EQ(messageOf(kiln_decoder_step(f.decoder.get(), ids.data(), 1)),
            "the cache is empty: run kiln_decoder_prefill with the prompt before the first step");
  ASSERT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), ids.data(), 2, 2)), "");
  EXPECT_EQ(messageOf(kiln_decoder_step(f.decoder.get(), ids.data(), 1)),
            "batch is 1 but the cache holds 2 sequences; reset the decoder to change the batch");
  std::vector<int64_t> out(1);
  EXPECT_EQ(messageOf(kiln_decoder_greedy_ids(f.decoder.get(), out.data(), 1)),
            "batch is 1 but the logits hold 2 sequences");
  EXPECT_EQ(messageOf(kiln_decoder_greedy_ids(f.decoder.get(), nullptr, 2)),
            "out_ids is NULL");
  expectStillUsable(f.decoder.get());
}

TEST(DecoderErrors, NullArgumentsAndBadOptions) {
  ModelPtr model = loadModel("fake_decoder");
  SessionPtr session = createSession(model.get());
  kiln_decoder *decoder = nullptr;
  EXPECT_EQ(messageOf(kiln_decoder_create(nullptr, nullptr, &decoder)), "session is NULL");
  EXPECT_EQ(messageOf(kiln_decoder_create(session.get(), nullptr, nullptr)),
            "out_decoder is NULL");
  kiln_decoder_options options;
  kiln_decoder_options_init(&options);
  EXPECT_EQ(options.max_tokens, 1024);
  EXPECT_EQ(options.max_batch, 1);
  options.max_tokens = 0;
  EXPECT_EQ(messageOf(kiln_decoder_create(session.get(), &options, &decoder)),
            "max_tokens is 0, accepted range is [1, 2147483648]");
  options.max_tokens = 8;
  options.max_batch = -2;
  EXPECT_EQ(messageOf(kiln_decoder_create(session.get(), &options, &decoder)),
            "max_batch is -2, accepted range is [1, 2147483648]");
  EXPECT_EQ(decoder, nullptr);
  options.max_batch = int64_t(1) << 31;
  options.max_tokens = int64_t(1) << 31;
  kiln_status *status = kiln_decoder_create(session.get(), &options, &decoder);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_EQ(messageOf(status), "a cache of [2147483648, 2, 2147483648, 3] overflows size_t");
  EXPECT_EQ(messageOf(kiln_decoder_prefill(nullptr, nullptr, 1, 1)), "decoder is NULL");
  EXPECT_EQ(messageOf(kiln_decoder_step(nullptr, nullptr, 1)), "decoder is NULL");
  EXPECT_EQ(messageOf(kiln_decoder_reset(nullptr)), "decoder is NULL");
  kiln_tensor logits{};
  EXPECT_EQ(messageOf(kiln_decoder_get_logits(nullptr, &logits)), "decoder is NULL");
  EXPECT_EQ(messageOf(kiln_decoder_get_info(nullptr, nullptr)), "decoder is NULL");
  kiln_decoder_destroy(nullptr);
  DecoderFixture f("fake_decoder");
  EXPECT_EQ(messageOf(kiln_decoder_get_logits(f.decoder.get(), &logits)),
            "the decoder has no logits: run kiln_decoder_prefill or kiln_decoder_step first "
            "(a reset or a failed run forgets them)");
  EXPECT_EQ(messageOf(kiln_decoder_get_info(f.decoder.get(), nullptr)), "out_info is NULL");
}

/// kiln_decoder_create's message for model `name`.
std::string createError(const std::string &name, kiln_status_code expectedCode) {
  ModelPtr model = loadModel(name);
  SessionPtr session = createSession(model.get());
  kiln_decoder *decoder = nullptr;
  kiln_status *status = kiln_decoder_create(session.get(), nullptr, &decoder);
  EXPECT_EQ(kiln_status_get_code(status), expectedCode) << name;
  EXPECT_EQ(decoder, nullptr);
  kiln_decoder_destroy(decoder);
  std::string message = messageOf(status);
  std::string prefix = "model '" + modelPath(name) + "' is not a decoder with a KV cache: ";
  EXPECT_EQ(message.compare(0, prefix.size(), prefix), 0) << message;
  return message.size() > prefix.size() ? message.substr(prefix.size()) : message;
}

TEST(DecoderErrors, ModelsWithoutARecognisableCache) {
  EXPECT_EQ(createError("decoder_no_cache", KILN_STATUS_INVALID_MODEL),
            "it has no past_key_values.<layer>.key|value inputs");
  EXPECT_EQ(createError("decoder_no_present", KILN_STATUS_INVALID_MODEL),
            "input 'past_key_values.0.value' has no output present.0.value");
  EXPECT_EQ(createError("decoder_present_heads", KILN_STATUS_INVALID_MODEL),
            "output 'present.0.value' (f32 [-1, 4, -1, 3]) does not match input "
            "'past_key_values.0.value' (f32 [-1, 2, -1, 3]) in dtype, heads or head size");
  EXPECT_EQ(createError("decoder_extra_input", KILN_STATUS_INVALID_MODEL),
            "input 'token_type_ids' is none of input_ids, attention_mask, position_ids, "
            "past_key_values.<layer>.key|value");
  EXPECT_EQ(createError("decoder_greedy_ids_f32", KILN_STATUS_INVALID_MODEL),
            "output 'greedy_ids' (f32 [-1, -1]): expected i64 [batch, sequence] "
            "(kilnc --greedy-ids)");
  EXPECT_EQ(createError("add_one", KILN_STATUS_INVALID_MODEL),
            "input 'x' is none of input_ids, attention_mask, position_ids, "
            "past_key_values.<layer>.key|value");
}

TEST(DecoderErrors, PresentThatDoesNotGrow) {
  DecoderFixture f("decoder_present_past");
  std::vector<int64_t> prompt = {1, 2};
  kiln_status *status = kiln_decoder_prefill(f.decoder.get(), prompt.data(), 1, 2);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_INVALID_MODEL);
  EXPECT_EQ(messageOf(status), "output 'present.0.key' is [1, 2, 0, 3] for a past of 0 and 2 "
                               "new tokens; the cache expects [1, 2, 2, 3]");
}

TEST(DecoderErrors, FailedRunKeepsThePast) {
  // The model fails once past + sequence > 5.
  DecoderFixture f("decoder_fail_after");
  std::vector<int64_t> prompt = {3, 3, 3, 3};
  ASSERT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), prompt.data(), 1, 4)), "");
  std::vector<int64_t> next = greedy(f.decoder.get(), 1);
  ASSERT_EQ(messageOf(kiln_decoder_step(f.decoder.get(), next.data(), 1)), ""); // 5 tokens
  std::vector<int64_t> after5 = greedy(f.decoder.get(), 1);
  kiln_status *status = kiln_decoder_step(f.decoder.get(), after5.data(), 1);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_INTERNAL);
  EXPECT_NE(messageOf(status).find("its run function returned 5"), std::string::npos);
  EXPECT_EQ(infoOf(f.decoder.get()).length, 5);
  kiln_tensor logits{};
  EXPECT_NE(messageOf(kiln_decoder_get_logits(f.decoder.get(), &logits)), "");
  // A fresh prompt still runs through the same cache buffers.
  ASSERT_EQ(messageOf(kiln_decoder_reset(f.decoder.get())), "");
  ExpectedDecoder expected(1);
  expected.append(prompt, 4);
  ASSERT_EQ(messageOf(kiln_decoder_prefill(f.decoder.get(), prompt.data(), 1, 4)), "");
  EXPECT_EQ(greedy(f.decoder.get(), 1), expected.next());
}

} // namespace
} // namespace kiln::test
