/*===- guarded.c - Fake artifact: the checks and memory services of ABI v3 -===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * y = x + 1 for x of f32 [n] (n symbolic), with an intermediate buffer from
 * host->alloc. x[0] selects what else the run does, as generated code may:
 *   1: a failed check on the calling thread (host->fail; must not return)
 *   2: asks host->alloc for n * 2^20 bytes (refused under a small limit)
 *   3: leaves a second buffer of 1 MiB allocated and written (the runtime
 *      frees it)
 *   4: a failed check inside a parallel_for body (fail returns there)
 *   5: allocates and frees inside parallel_for bodies (not counted)
 *   6: asks host->alloc for 2^60 bytes
 * Return codes 90+ mean a service behaved against its contract.
 *===--------------------------------------------------------------------------===*/

#include "FakeModel.h"

static const int64_t dims[] = {-1};
static const char *const dim_names[] = {"n"};
static const kiln_abi_tensor inputs[] = {{"x", KILN_DTYPE_F32, 1, dims, dim_names}};
static const kiln_abi_tensor outputs[] = {{"y", KILN_DTYPE_F32, 1, dims, dim_names}};

struct body_context {
  const kiln_abi_host *host;
};

static void fail_in_body(void *ctx, int64_t i) {
  const kiln_abi_host *host = ((struct body_context *)ctx)->host;
  if (i == 1)
    host->fail(host->run_context, "index {0} out of range [-{1}, {1}) in a body", 9, 4);
}

static void alloc_in_body(void *ctx, int64_t i) {
  const kiln_abi_host *host = ((struct body_context *)ctx)->host;
  float *scratch = (float *)host->alloc(host->run_context, 256, 64);
  if (scratch) {
    scratch[0] = (float)i;
    host->free(host->run_context, scratch);
  }
}

static int32_t run(void *const *buffers, const int64_t *dims_in,
                   const kiln_abi_host *host) {
  const float *x = (const float *)buffers[0];
  float *y = (float *)buffers[1];
  int64_t n = dims_in[0], i;
  int mode = n > 0 ? (int)x[0] : 0;
  float *scratch;
  struct body_context body;
  body.host = host;
  if (!host || !host->fail || !host->alloc || !host->free || !host->run_context)
    return 91;
  if (mode == 1) {
    host->fail(host->run_context, "dim mismatch in add 'fake' (dim 0): {0} vs {1}", n, 32);
    return 92; /* fail returned */
  }
  if (mode == 2) {
    host->alloc(host->run_context, (uint64_t)n << 20, 64);
    return 93; /* a refusal returned */
  }
  if (mode == 6) {
    host->alloc(host->run_context, (uint64_t)1 << 60, 64);
    return 93;
  }
  if (mode == 4) {
    host->parallel_for(host->context, 0, 4, fail_in_body, &body);
    for (i = 0; i < n; ++i)
      y[i] = x[i] + 1.0f;
    return 0;
  }
  if (mode == 5)
    host->parallel_for(host->context, 0, 64, alloc_in_body, &body);
  scratch = (float *)host->alloc(host->run_context, (uint64_t)n * 4, 64);
  if (!scratch || ((uintptr_t)scratch & 63))
    return 94;
  for (i = 0; i < n; ++i)
    scratch[i] = x[i] + 1.0f;
  for (i = 0; i < n; ++i)
    y[i] = scratch[i];
  host->free(host->run_context, scratch);
  if (mode == 3) { /* leaked: the runtime frees it when the run ends */
    scratch = (float *)host->alloc(host->run_context, 1 << 20, 128);
    if (!scratch || ((uintptr_t)scratch & 127))
      return 95;
    memset(scratch, 1, 1 << 20);
  }
  return 0;
}

static kiln_abi_model model = {KILN_ABI_MAGIC, KILN_ABI_VERSION, 1, 1,
                               inputs,         outputs,          run,
                               "kiln-test guarded", 0, 0};

KILN_FAKE_ENTRY(model)
