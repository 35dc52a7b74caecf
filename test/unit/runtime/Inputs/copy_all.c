/*===- copy_all.c - Fake artifact copying one input of every npy dtype ----===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * in_<t> -> out_<t>, each of shape [n] or (bool) [2, n]. With FAKE_BF16 the
 * model instead has a single bf16 input and output, which .npy cannot hold.
 *===--------------------------------------------------------------------------===*/

#include "FakeModel.h"

static const int64_t vec_dims[] = {-1};
static const char *const vec_names[] = {"n"};

#define VEC(name, dtype) {name, dtype, 1, vec_dims, vec_names}

#ifdef FAKE_BF16
static const kiln_abi_tensor inputs[] = {VEC("in_bf16", KILN_DTYPE_BF16)};
static const kiln_abi_tensor outputs[] = {VEC("out_bf16", KILN_DTYPE_BF16)};
static const size_t sizes[] = {2};
#else
static const int64_t mat_dims[] = {2, -1};
static const char *const mat_names[] = {NULL, "n"};
static const kiln_abi_tensor inputs[] = {
    VEC("in_f32", KILN_DTYPE_F32), VEC("in_f16", KILN_DTYPE_F16),
    VEC("in_f64", KILN_DTYPE_F64), VEC("in_i8", KILN_DTYPE_I8),
    VEC("in_u8", KILN_DTYPE_U8),   VEC("in_i16", KILN_DTYPE_I16),
    VEC("in_i32", KILN_DTYPE_I32), VEC("in_i64", KILN_DTYPE_I64),
    {"in_bool", KILN_DTYPE_BOOL, 2, mat_dims, mat_names}};
static const kiln_abi_tensor outputs[] = {
    VEC("out_f32", KILN_DTYPE_F32), VEC("out_f16", KILN_DTYPE_F16),
    VEC("out_f64", KILN_DTYPE_F64), VEC("out_i8", KILN_DTYPE_I8),
    VEC("out_u8", KILN_DTYPE_U8),   VEC("out_i16", KILN_DTYPE_I16),
    VEC("out_i32", KILN_DTYPE_I32), VEC("out_i64", KILN_DTYPE_I64),
    {"out_bool", KILN_DTYPE_BOOL, 2, mat_dims, mat_names}};
static const size_t sizes[] = {4, 2, 8, 1, 1, 2, 4, 8, 2 /* x 2 rows */};
#endif

#define COUNT (sizeof(inputs) / sizeof(inputs[0]))

static int32_t run(void *const *buffers, const int64_t *dims,
                   const kiln_abi_host *host) {
  /* Every tensor but the last has one dim, n; all share the same n. */
  size_t n = (size_t)dims[0], i;
  (void)host;
  for (i = 0; i < COUNT; ++i)
    memcpy(buffers[COUNT + i], buffers[i], n * sizes[i]);
  return 0;
}

static kiln_abi_model model = {KILN_ABI_MAGIC, KILN_ABI_VERSION, COUNT, COUNT,
                               inputs,         outputs,          run,
                               "kiln-test copy_all", 0, 0};

KILN_FAKE_ENTRY(model)
