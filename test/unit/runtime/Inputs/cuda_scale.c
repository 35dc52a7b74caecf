/*===- cuda_scale.c - Fake CUDA artifact: y = x * w + 1, for the fake driver ===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Uses kiln_abi_cuda as kilnc's CUDA artifacts do: x, y and w_out (f32 [64])
 * are device buffers; the kernels come from a fake image (FakeCuda.h).
 * Dispatch 0 ("scale /mul") stages x * w in host->arena, dispatch 1
 * ("add /add", 64 KiB of dynamic shared memory, so the runtime must opt
 * in) writes y = arena + 1 and copies w to w_out. Weights:
 *   default             embedded: w[i] = i / 2, reached through
 *                       kiln_abi_cuda::constant (the device copy)
 *   FAKE_NO_WEIGHTS     none: host->weights, the runtime's device copy of
 *                       the generated blob
 *   FAKE_MISSING_KERNEL dispatch 0 asks for a kernel the image lacks
 *   FAKE_DEVICE_ALLOC   also allocates (and frees) 1 MiB of device scratch
 *                       through kiln_abi_cuda::alloc, like a buffer of
 *                       run-time size
 *   FAKE_CHECK_FAILS    a failed run-time check (host->fail) before any launch
 *   FAKE_UNCAPTURABLE   kernels the fake driver refuses to capture into a graph
 *===--------------------------------------------------------------------------===*/

#include "FakeCuda.h"
#include "FakeModel.h"

#include <sched.h>

#define N 64

static const int64_t dims[] = {N};
static const kiln_abi_tensor inputs[] = {{"x", KILN_DTYPE_F32, 1, dims, NULL}};
static const kiln_abi_tensor outputs[] = {{"y", KILN_DTYPE_F32, 1, dims, NULL},
                                          {"w_out", KILN_DTYPE_F32, 1, dims, NULL}};
static const char *const dispatches[] = {"scale /mul", "add /add"};
static float embedded[N];

__attribute__((constructor)) static void fill_embedded(void) {
  int i;
  for (i = 0; i < N; ++i)
    embedded[i] = (float)i / 2;
}

static float *param(void **params, int k) { return *(float **)params[k]; }

/* arena[i] = x[i] * w[i] */
static void scale_kernel(int64_t i, void **params) {
  param(params, 2)[i] = param(params, 0)[i] * param(params, 1)[i];
}

/* y[i] = arena[i] + 1; w_out[i] = w[i]. Thread 0 yields first, widening the
 * window in which a run sharing this arena would overwrite it. */
static void add_kernel(int64_t i, void **params) {
  volatile int spin;
  if (i == 0) {
    sched_yield();
    for (spin = 0; spin < 20000; ++spin)
      ;
  }
  param(params, 1)[i] = param(params, 0)[i] + 1;
  param(params, 3)[i] = param(params, 2)[i];
}

#ifdef FAKE_UNCAPTURABLE
/* No parameter count: the fake driver refuses to capture these kernels. */
static fake_cuda_kernel kernels[] = {{"scale_kernel", scale_kernel, 0, 0},
                                     {"add_kernel", add_kernel, 0, 0}};
#else
static fake_cuda_kernel kernels[] = {{"scale_kernel", scale_kernel, 0, 3},
                                     {"add_kernel", add_kernel, 0, 4}};
#endif
static const fake_cuda_image image = {FAKE_CUDA_IMAGE_MAGIC, 2, kernels};

static void trace(const kiln_abi_host *host, int begin, int32_t d) {
  if (host->trace)
    (begin ? host->trace_begin : host->trace_end)(host->trace, d);
}

static int32_t run(void *const *buffers, const int64_t *dims_in, const kiln_abi_host *host) {
  const kiln_abi_cuda *cuda = host ? host->cuda : NULL;
  void *x = buffers[0], *y = buffers[1], *w_out = buffers[2], *arena, *w, *scale, *add;
  (void)dims_in;
  if (!cuda)
    return KILN_ABI_CUDA_NO_DEVICE;
  arena = host->arena;
  if (!arena)
    return 3;
#ifdef FAKE_NO_WEIGHTS
  w = (void *)(uintptr_t)host->weights;
  if (!w)
    return 4;
#else
  w = cuda->constant(cuda->context, embedded, sizeof(embedded));
#endif
#ifdef FAKE_MISSING_KERNEL
  scale = cuda->get_function(cuda->context, &image, "no_such_kernel");
#else
  scale = cuda->get_function(cuda->context, &image, "scale_kernel");
#endif
  add = cuda->get_function(cuda->context, &image, "add_kernel");
#ifdef FAKE_DEVICE_ALLOC
  {
    void *scratch = cuda->alloc(cuda->context, 1 << 20);
    if (scratch)
      cuda->free(cuda->context, scratch);
  }
#endif
#ifdef FAKE_CHECK_FAILS
  host->fail(host->run_context, "dim mismatch in add '/add' (dim 0 of operand 1): {0} vs {1}",
             65, 64);
  return 92; /* fail returned */
#endif
  {
    void *scale_params[] = {&x, &w, &arena};
    void *add_params[] = {&arena, &y, &w, &w_out};
    trace(host, 1, 0);
    cuda->launch(cuda->context, scale, 1, 1, 1, N, 1, 1, 0, scale_params);
    trace(host, 0, 0);
    trace(host, 1, 1);
    cuda->launch(cuda->context, add, 1, 1, 1, N, 1, 1, 64 * 1024, add_params);
    trace(host, 0, 1);
  }
  return 0;
}

static kiln_abi_model model = {KILN_ABI_MAGIC, KILN_ABI_VERSION, 1, 2, inputs, outputs, run,
                               "kiln-test cuda_scale",
#ifdef FAKE_NO_WEIGHTS
                               sizeof(embedded), 0, 4 * N, KILN_ABI_WEIGHTS_NONE, 2, NULL, 0,
#else
                               sizeof(embedded), 0, 4 * N, KILN_ABI_WEIGHTS_EMBEDDED, 2, NULL, 0,
#endif
                               dispatches};

__attribute__((visibility("default"))) const char *kiln_abi_cuda_v1(void) { return "sm_90a"; }

KILN_FAKE_ENTRY(model)
