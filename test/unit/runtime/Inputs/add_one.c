/*===- add_one.c - Fake artifact: y = x + 1 for x of f32 [batch, 3, 4] -----===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Rows run through host->parallel_for, and each row's elements through a
 * nested parallel_for, as generated code may do. Extra compile definitions:
 * FAKE_RUN_FAILS (run returns 7), FAKE_UNBOUND_OUTPUT (the output's first dim
 * is a symbol no input has), FAKE_BAD_DTYPE (input dtype 99, checksum valid).
 *===--------------------------------------------------------------------------===*/

#include "FakeModel.h"

#ifdef FAKE_BAD_DTYPE
#define X_DTYPE 99
#else
#define X_DTYPE KILN_DTYPE_F32
#endif

static const int64_t dims[] = {-1, 3, 4};
static const char *const x_dim_names[] = {"batch", NULL, NULL};
#ifdef FAKE_UNBOUND_OUTPUT
static const char *const y_dim_names[] = {"rows", NULL, NULL};
#else
static const char *const y_dim_names[] = {"batch", NULL, NULL};
#endif

static const kiln_abi_tensor inputs[] = {{"x", X_DTYPE, 3, dims, x_dim_names}};
static const kiln_abi_tensor outputs[] = {{"y", KILN_DTYPE_F32, 3, dims, y_dim_names}};

struct row_work {
  const float *x;
  float *y;
  const kiln_abi_host *host;
};

struct element_work {
  const float *x;
  float *y;
};

static void add_one_element(void *ctx, int64_t i) {
  struct element_work *work = (struct element_work *)ctx;
  work->y[i] = work->x[i] + 1.0f;
}

static void add_one_row(void *ctx, int64_t row) {
  struct row_work *work = (struct row_work *)ctx;
  struct element_work elements;
  elements.x = work->x + row * 12;
  elements.y = work->y + row * 12;
  work->host->parallel_for(work->host->context, 0, 12, add_one_element, &elements);
}

static int32_t run(void *const *buffers, const int64_t *dims_in,
                   const kiln_abi_host *host) {
  struct row_work work;
#ifdef FAKE_RUN_FAILS
  return 7;
#endif
  work.x = (const float *)buffers[0];
  work.y = (float *)buffers[1];
  work.host = host;
  host->parallel_for(host->context, 0, dims_in[0], add_one_row, &work);
  return 0;
}

static kiln_abi_model model = {KILN_ABI_MAGIC, KILN_ABI_VERSION, 1, 1,
                               inputs,         outputs,          run,
                               "kiln-test add_one", 48, 0};

KILN_FAKE_ENTRY(model)
