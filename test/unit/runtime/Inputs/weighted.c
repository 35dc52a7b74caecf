/*===- weighted.c - Fake artifact: y = x + w, through an arena, traced ----===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * x and y are f32 [batch, 12]; w is 12 f32 weights, the first 48 bytes of
 * the weights blob. Like generated code, it stages each row in host->arena
 * (arena_bytes 48), and calls the trace hooks around its two "dispatches".
 * Compile definitions pick where the weights live:
 *   default             embedded: w[i] = i
 *   FAKE_EXTERNAL       external: file "weighted.weights", 64 bytes, byte k = k
 *                       (so w[0] is the float with bytes 00 01 02 03)
 *   FAKE_NO_WEIGHTS     none: the runtime fills the blob
 *   FAKE_HALF_WEIGHTS=D none, a 128-byte blob whose second half is a
 *                       segment of dtype D (KILN_DTYPE_F16 or _BF16): w is
 *                       its first 12 elements, widened here
 *   FAKE_BAD_WEIGHTS_MODE, FAKE_BAD_WEIGHTS_FILE, FAKE_NULL_DISPATCH_NAME,
 *   FAKE_BAD_SEGMENT_DTYPE, FAKE_BAD_SEGMENT_RANGE, FAKE_NULL_SEGMENTS
 *                       descriptor defects (checksum valid)
 * The arena is checked: a run that sees another run's data returns 9.
 *===--------------------------------------------------------------------------===*/

#include "FakeModel.h"

#include <sched.h>

static const int64_t dims[] = {-1, 12};
static const char *const dim_names[] = {"batch", NULL};
static const kiln_abi_tensor inputs[] = {{"x", KILN_DTYPE_F32, 2, dims, dim_names}};
static const kiln_abi_tensor outputs[] = {{"y", KILN_DTYPE_F32, 2, dims, dim_names}};
#ifdef FAKE_NULL_DISPATCH_NAME
static const char *const dispatches[] = {"stage /add", NULL};
#else
static const char *const dispatches[] = {"stage /add", "copy /out"};
#endif
static const float embedded[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};

#if defined(FAKE_HALF_WEIGHTS)
static const kiln_abi_weights_segment segments[] = {{0, 64, KILN_DTYPE_F32, 0},
                                                    {64, 64, FAKE_HALF_WEIGHTS, 0}};
#elif defined(FAKE_BAD_SEGMENT_DTYPE)
static const kiln_abi_weights_segment segments[] = {{0, 64, KILN_DTYPE_I8, 0}};
#elif defined(FAKE_BAD_SEGMENT_RANGE)
static const kiln_abi_weights_segment segments[] = {{0, 64, KILN_DTYPE_F32, 0},
                                                    {32, 64, KILN_DTYPE_F16, 0}};
#endif

#ifdef FAKE_HALF_WEIGHTS
/* Element i of the 16-bit segment as a float. */
static float widen(const void *blob, int i) {
  uint16_t h;
  uint32_t bits;
  float value;
  memcpy(&h, (const char *)blob + 64 + 2 * i, 2);
  if (FAKE_HALF_WEIGHTS == KILN_DTYPE_BF16) {
    bits = (uint32_t)h << 16;
  } else { /* f16; the runtime writes no subnormals, Inf or NaN */
    uint32_t exponent = (h >> 10) & 0x1f;
    bits = ((uint32_t)(h & 0x8000) << 16) |
           (exponent ? ((exponent + 112) << 23) | ((uint32_t)(h & 0x3ff) << 13) : 0);
  }
  memcpy(&value, &bits, 4);
  return value;
}
#endif

static void trace(const kiln_abi_host *host, int begin, int32_t d) {
  if (host->trace)
    (begin ? host->trace_begin : host->trace_end)(host->trace, d);
}

static int32_t run(void *const *buffers, const int64_t *dims_in,
                   const kiln_abi_host *host) {
  const float *x = (const float *)buffers[0];
  float *y = (float *)buffers[1];
  float *arena = (float *)host->arena;
  const float *w = embedded;
  int64_t row;
  int i;
  volatile int spin;
  if (!arena)
    return 3;
#if defined(FAKE_EXTERNAL) || defined(FAKE_NO_WEIGHTS)
  if (!host->weights)
    return 4;
  w = (const float *)host->weights;
#elif defined(FAKE_HALF_WEIGHTS)
  float widened[12];
  if (!host->weights)
    return 4;
  for (i = 0; i < 12; ++i)
    widened[i] = widen(host->weights, i);
  w = widened;
#endif
  for (row = 0; row < dims_in[0]; ++row) {
    trace(host, 1, 0);
    for (i = 0; i < 12; ++i)
      arena[i] = x[row * 12 + i] + w[i];
    /* Widen the window in which a run sharing this arena would write it. */
    sched_yield();
    for (spin = 0; spin < 20000; ++spin)
      ;
    trace(host, 0, 0);
    trace(host, 1, 1);
    for (i = 0; i < 12; ++i) {
      if (arena[i] != x[row * 12 + i] + w[i])
        return 9;
      y[row * 12 + i] = arena[i];
    }
    trace(host, 0, 1);
  }
  return 0;
}

static kiln_abi_model model = {KILN_ABI_MAGIC, KILN_ABI_VERSION, 1, 1, inputs, outputs, run,
                               "kiln-test weighted",
#if defined(FAKE_BAD_WEIGHTS_MODE)
                               48, 0, 48, 7, 2, NULL, 0,
#elif defined(FAKE_BAD_WEIGHTS_FILE)
                               64, 0, 48, KILN_ABI_WEIGHTS_EXTERNAL, 2, "../weighted.weights", 0,
#elif defined(FAKE_EXTERNAL)
                               64, 0, 48, KILN_ABI_WEIGHTS_EXTERNAL, 2, "weighted.weights", 0,
#elif defined(FAKE_NO_WEIGHTS)
                               64, 0, 48, KILN_ABI_WEIGHTS_NONE, 2, NULL, 0,
#elif defined(FAKE_HALF_WEIGHTS) || defined(FAKE_BAD_SEGMENT_DTYPE) ||                    \
    defined(FAKE_BAD_SEGMENT_RANGE) || defined(FAKE_NULL_SEGMENTS)
                               128, 0, 48, KILN_ABI_WEIGHTS_NONE, 2, NULL, 0,
#else
                               48, 0, 48, KILN_ABI_WEIGHTS_EMBEDDED, 2, NULL, 0,
#endif
                               dispatches,
#if defined(FAKE_NULL_SEGMENTS)
                               1, NULL
#elif defined(FAKE_HALF_WEIGHTS) || defined(FAKE_BAD_SEGMENT_RANGE)
                               2, segments
#elif defined(FAKE_BAD_SEGMENT_DTYPE)
                               1, segments
#else
                               0, NULL
#endif
};

#ifdef FAKE_EXTERNAL
/* The file the tests write: byte k = k. */
__attribute__((constructor(101))) static void fake_weights_checksum(void) {
  unsigned char bytes[64];
  int k;
  for (k = 0; k < 64; ++k)
    bytes[k] = (unsigned char)k;
  model.weights_checksum = fake_blob_checksum(bytes, 64);
}
#endif

KILN_FAKE_ENTRY(model)
