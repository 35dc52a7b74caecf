/*===- masked_sum.c - Fake artifact with two inputs sharing symbolic dims --===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * ids: i64 [batch, seq], mask: bool [batch, seq] ->
 *   sum: i64 [batch] = sum over seq of ids where mask,
 *   "valid:count": i32 [batch] = number of set mask entries
 * (a name with characters that kiln-run must replace in file names).
 *===--------------------------------------------------------------------------===*/

#include "FakeModel.h"

static const int64_t in_dims[] = {-1, -1};
static const char *const in_dim_names[] = {"batch", "seq"};
static const int64_t out_dims[] = {-1};
static const char *const out_dim_names[] = {"batch"};

static const kiln_abi_tensor inputs[] = {
    {"ids", KILN_DTYPE_I64, 2, in_dims, in_dim_names},
    {"mask", KILN_DTYPE_BOOL, 2, in_dims, in_dim_names}};
static const kiln_abi_tensor outputs[] = {
    {"sum", KILN_DTYPE_I64, 1, out_dims, out_dim_names},
    {"valid:count", KILN_DTYPE_I32, 1, out_dims, out_dim_names}};

static int32_t run(void *const *buffers, const int64_t *dims,
                   const kiln_abi_host *host) {
  const int64_t *ids = (const int64_t *)buffers[0];
  const unsigned char *mask = (const unsigned char *)buffers[1];
  int64_t *sum = (int64_t *)buffers[2];
  int32_t *count = (int32_t *)buffers[3];
  /* dims: ids [batch, seq], mask [batch, seq], sum [batch], count [batch] */
  int64_t batch = dims[0], seq = dims[1], b, s;
  (void)host;
  for (b = 0; b < batch; ++b) {
    sum[b] = 0;
    count[b] = 0;
    for (s = 0; s < seq; ++s)
      if (mask[b * seq + s]) {
        sum[b] += ids[b * seq + s];
        ++count[b];
      }
  }
  return 0;
}

static kiln_abi_model model = {KILN_ABI_MAGIC, KILN_ABI_VERSION, 2, 2,
                               inputs,         outputs,          run,
                               "kiln-test masked_sum", 0, 0};

KILN_FAKE_ENTRY(model)
