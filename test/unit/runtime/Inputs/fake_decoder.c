/*===- fake_decoder.c - Fake decoder with a KV cache, for kiln_decoder tests ===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * One layer, 2 kv heads, head size 3, vocabulary 16:
 *   input_ids i64 [batch, sequence], attention_mask i64 [batch, total],
 *   position_ids i64 [batch, sequence],
 *   past_key_values.0.key|value f32 [batch, 2, past, 3]
 * -> logits f32 [batch, sequence, 16],
 *   present.0.key|value f32 [batch, 2, past + sequence, 3].
 * present = past ++ new, where the new key of token t (id i, position p)
 * holds i in every element and its value holds p. logits[b, s] is one-hot at
 * (sum of the ids in present.key of sequence b up to position s + p) mod 16,
 * so greedy ids depend on every cached token: a cache carried wrongly between
 * runs changes them. The run fails (returns 5) if the mask is not all ones,
 * a position is not past + s, a cached value is not its position, or total
 * != past + sequence.
 *
 * Variants: FAKE_NO_CACHE (no past/present), FAKE_NO_PRESENT (the present of
 * the value is missing), FAKE_PRESENT_HEADS (present.0.value has 4 heads),
 * FAKE_PRESENT_PAST (present dims [batch, 2, past, 3]: a cache that does
 * not grow), FAKE_FAIL_AFTER=N (the run fails once past + sequence > N),
 * FAKE_EXTRA_INPUT (an input a decoder cannot feed), FAKE_GREEDY_IDS (one more
 * output, greedy_ids i64 [batch, sequence] holding each position's one-hot
 * index, as kilnc --greedy-ids adds it, while the logits are all zero: a
 * decoder that scanned them would pick 0), FAKE_GREEDY_IDS_F32 (greedy_ids
 * declared f32).
 *===--------------------------------------------------------------------------===*/

#include "FakeModel.h"

#define HEADS 2
#define HEAD 3
#define VOCAB 16
/* Some variants leave the cache shapes unused. */
#define MAYBE_UNUSED __attribute__((unused))

static const int64_t ids_dims[] = {-1, -1};
static const char *const ids_names[] = {"batch", "sequence"};
static const int64_t mask_dims[] = {-1, -1};
static const char *const mask_names[] = {"batch", "total"};
MAYBE_UNUSED static const int64_t past_dims[] = {-1, HEADS, -1, HEAD};
MAYBE_UNUSED static const char *const past_names[] = {"batch", NULL, "past", NULL};
static const int64_t logits_dims[] = {-1, -1, VOCAB};
static const char *const logits_names[] = {"batch", "sequence", NULL};
MAYBE_UNUSED static const int64_t present_dims[] = {-1, HEADS, -1, HEAD};
#ifdef FAKE_PRESENT_PAST
MAYBE_UNUSED static const char *const present_names[] = {"batch", NULL, "past", NULL};
#else
MAYBE_UNUSED static const char *const present_names[] = {"batch", NULL, "past + sequence", NULL};
#endif
#ifdef FAKE_PRESENT_HEADS
static const int64_t value_dims[] = {-1, 4, -1, HEAD};
#else
#define value_dims present_dims
#endif

static const kiln_abi_tensor inputs[] = {
    {"input_ids", KILN_DTYPE_I64, 2, ids_dims, ids_names},
    {"attention_mask", KILN_DTYPE_I64, 2, mask_dims, mask_names},
    {"position_ids", KILN_DTYPE_I64, 2, ids_dims, ids_names},
#ifdef FAKE_EXTRA_INPUT
    {"token_type_ids", KILN_DTYPE_I64, 2, ids_dims, ids_names},
#endif
#ifndef FAKE_NO_CACHE
    {"past_key_values.0.key", KILN_DTYPE_F32, 4, past_dims, past_names},
    {"past_key_values.0.value", KILN_DTYPE_F32, 4, past_dims, past_names},
#endif
};
static const kiln_abi_tensor outputs[] = {
    {"logits", KILN_DTYPE_F32, 3, logits_dims, logits_names},
#ifndef FAKE_NO_CACHE
    {"present.0.key", KILN_DTYPE_F32, 4, present_dims, present_names},
#ifndef FAKE_NO_PRESENT
    {"present.0.value", KILN_DTYPE_F32, 4, value_dims, present_names},
#endif
#endif
#if defined(FAKE_GREEDY_IDS)
    {"greedy_ids", KILN_DTYPE_I64, 2, ids_dims, ids_names},
#elif defined(FAKE_GREEDY_IDS_F32)
    {"greedy_ids", KILN_DTYPE_F32, 2, ids_dims, ids_names},
#endif
};
#define NUM_INPUTS (sizeof(inputs) / sizeof(inputs[0]))
#define NUM_OUTPUTS (sizeof(outputs) / sizeof(outputs[0]))

static int32_t run(void *const *buffers, const int64_t *dims,
                   const kiln_abi_host *host) {
#if defined(FAKE_NO_CACHE) || defined(FAKE_NO_PRESENT) || defined(FAKE_PRESENT_HEADS) ||  \
    defined(FAKE_EXTRA_INPUT) || defined(FAKE_GREEDY_IDS_F32)
  (void)buffers, (void)dims, (void)host;
  return 5; /* never recognized as a decoder, never run by one */
#else
  const int64_t *ids = (const int64_t *)buffers[0];
  const int64_t *mask = (const int64_t *)buffers[1];
  const int64_t *positions = (const int64_t *)buffers[2];
  const float *pastKey = (const float *)buffers[3], *pastValue = (const float *)buffers[4];
  float *logits = (float *)buffers[5];
  float *key = (float *)buffers[6], *value = (float *)buffers[7];
  /* dims: ids [b, s], mask [b, total], positions [b, s], past x2 [b, 2, past, 3],
   * logits [b, s, 16], present x2 [b, 2, T, 3] */
  int64_t batch = dims[0], seq = dims[1], total = dims[3], past = dims[8];
  int64_t presentTotal = dims[3 * 2 + 4 * 2 + 3 + 2];
  int64_t b, h, t, d, s, v;
  (void)host;
#ifdef FAKE_FAIL_AFTER
  if (past + seq > FAKE_FAIL_AFTER)
    return 5;
#endif
  if (total != past + seq || presentTotal != total)
    return 5;
  for (b = 0; b < batch; ++b)
    for (t = 0; t < total; ++t)
      if (mask[b * total + t] != 1)
        return 5;
  for (b = 0; b < batch; ++b)
    for (h = 0; h < HEADS; ++h)
      for (t = 0; t < total; ++t)
        for (d = 0; d < HEAD; ++d) {
          size_t out = (size_t)(((b * HEADS + h) * total + t) * HEAD + d);
          if (t < past) {
            size_t in = (size_t)(((b * HEADS + h) * past + t) * HEAD + d);
            if (pastValue[in] != (float)t)
              return 5;
            key[out] = pastKey[in];
            value[out] = pastValue[in];
          } else {
            if (positions[b * seq + (t - past)] != t)
              return 5;
            key[out] = (float)ids[b * seq + (t - past)];
            value[out] = (float)t;
          }
        }
  for (b = 0; b < batch; ++b)
    for (s = 0; s < seq; ++s) {
      int64_t sum = 0, position = past + s, hot;
      for (t = 0; t <= position; ++t)
        sum += (int64_t)key[((b * HEADS + 1) * total + t) * HEAD + 2];
      hot = (sum + position) % VOCAB;
#ifdef FAKE_GREEDY_IDS
      ((int64_t *)buffers[8])[b * seq + s] = hot;
      for (v = 0; v < VOCAB; ++v)
        logits[(b * seq + s) * VOCAB + v] = 0.0f;
#else
      for (v = 0; v < VOCAB; ++v)
        logits[(b * seq + s) * VOCAB + v] = v == hot ? 1.0f : (float)v * 0.01f;
#endif
    }
  return 0;
#endif
}

static kiln_abi_model model = {KILN_ABI_MAGIC, KILN_ABI_VERSION, NUM_INPUTS, NUM_OUTPUTS,
                               inputs,         outputs,          run,
                               "kiln-test fake_decoder", 0, 0};

KILN_FAKE_ENTRY(model)
