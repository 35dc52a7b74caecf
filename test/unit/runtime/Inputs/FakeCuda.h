/*===- FakeCuda.h - What the fake CUDA driver and fake CUDA artifacts share -===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * A fake "module image" (what kiln_abi_cuda::get_function receives) lists
 * host functions as kernels; fake_cuda.c's cuLaunchKernel calls body(i,
 * params) for every thread i of the grid. Counters are read by the tests
 * through fake_cuda_get_counters (dlsym on the loaded libcuda.so.1).
 *===--------------------------------------------------------------------------===*/

#ifndef KILN_TEST_FAKE_CUDA_H
#define KILN_TEST_FAKE_CUDA_H

#include <stdint.h>

#define FAKE_CUDA_IMAGE_MAGIC 0x46414B45u /* "FAKE" */

typedef struct fake_cuda_kernel {
  const char *name;
  void (*body)(int64_t thread, void **params);
  int max_dynamic_shared; /* set by cuFuncSetAttribute */
  /* Its parameters, each 8 bytes (pointers): what a stream capture copies.
   * 0: the fake refuses to capture the kernel (a capture the driver does
   * not support, as a real driver may). */
  int num_params;
} fake_cuda_kernel;

typedef struct fake_cuda_image {
  uint32_t magic;
  int num_kernels;
  fake_cuda_kernel *kernels;
} fake_cuda_image;

typedef struct fake_cuda_counters {
  long allocations; /* cuMemAlloc and cuMemAllocAsync calls */
  long live;        /* allocations not freed yet */
  long uploads;     /* synchronous cuMemcpyHtoD calls (weights, constants) */
  long launches;       /* kernels run (directly or by a graph) */
  long captured;       /* launches recorded by a stream capture */
  long graph_launches; /* cuGraphLaunch calls */
} fake_cuda_counters;

#endif /* KILN_TEST_FAKE_CUDA_H */
