/*===- fake_cuda.c - A fake libcuda.so.1 for testing the runtime's CUDA path ===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Implements, on the host, the driver entry points the runtime resolves
 * through cuGetProcAddress (runtime/src/cuda/Driver.cpp), so that the CUDA
 * session logic (device scratch per run, weights upload, dispatch events,
 * dynamic shared memory opt-in, error messages) runs in ctest on machines
 * without a GPU. "Device memory" is host memory; a "module image" is a
 * fake_cuda_image (FakeCuda.h) listing host functions as kernels, which
 * cuLaunchKernel runs once per thread of the grid, on the calling thread,
 * before it returns (the stream is always idle afterwards). Events record
 * the host clock. Counters (fake_cuda_counters) let tests see allocations.
 * Stream capture records the launches made on the capturing stream (their
 * 8-byte parameters copied) instead of running them; cuGraphLaunch runs the
 * recorded launches.
 *===--------------------------------------------------------------------------===*/

#define _POSIX_C_SOURCE 200809L

#include "FakeCuda.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

enum {
  SUCCESS = 0,
  ERROR_INVALID_VALUE = 1,
  ERROR_OUT_OF_MEMORY = 2,
  ERROR_NOT_FOUND = 500,
  ERROR_LAUNCH_FAILED = 719,
  ERROR_CAPTURE_UNSUPPORTED = 900,
  ERROR_CAPTURE_INVALIDATED = 901
};

static fake_cuda_counters counters;

EXPORT fake_cuda_counters *fake_cuda_get_counters(void) { return &counters; }

static int fail_launch_of(const char *name) {
  const char *target = getenv("FAKE_CUDA_FAIL_LAUNCH");
  return target && strcmp(target, name) == 0;
}

static int cuInit(unsigned flags) { return flags == 0 ? SUCCESS : ERROR_INVALID_VALUE; }
static int cuDeviceGetCount(int *count) { *count = 1; return SUCCESS; }
static int cuDeviceGet(int *device, int ordinal) { *device = ordinal; return ordinal == 0 ? SUCCESS : ERROR_INVALID_VALUE; }
static int cuDeviceGetName(char *name, int length, int device) {
  (void)device;
  strncpy(name, "Fake GPU", (size_t)length);
  return SUCCESS;
}
static int cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)device;
  *value = attribute == 75 ? 9 : attribute == 76 ? 0 : 0; /* sm_90 */
  return SUCCESS;
}
static int context_token;
static int cuDevicePrimaryCtxRetain(void **context, int device) { (void)device; *context = &context_token; return SUCCESS; }
static int cuDevicePrimaryCtxRelease(int device) { (void)device; return SUCCESS; }
static int cuCtxSetCurrent(void *context) { (void)context; return SUCCESS; }
static int cuStreamCreate(void **stream, unsigned flags) {
  (void)flags;
  *stream = malloc(1); /* distinct streams: a capture records only its own */
  return *stream ? SUCCESS : ERROR_OUT_OF_MEMORY;
}
static int cuStreamDestroy(void *stream) { free(stream); return SUCCESS; }
static int cuStreamSynchronize(void *stream) {
  (void)stream;
  return getenv("FAKE_CUDA_FAIL_SYNC") ? ERROR_LAUNCH_FAILED : SUCCESS;
}

static int allocate(uint64_t *ptr, size_t bytes) {
  void *memory;
  const char *limit = getenv("FAKE_CUDA_MAX_ALLOC");
  if (limit && bytes > (size_t)strtoull(limit, NULL, 10))
    return ERROR_OUT_OF_MEMORY;
  if (posix_memalign(&memory, 256, bytes ? bytes : 1) != 0)
    return ERROR_OUT_OF_MEMORY;
  memset(memory, 0xA5, bytes); /* device memory is not zeroed */
  *ptr = (uint64_t)(uintptr_t)memory;
  __atomic_fetch_add(&counters.allocations, 1, __ATOMIC_SEQ_CST);
  __atomic_fetch_add(&counters.live, 1, __ATOMIC_SEQ_CST);
  return SUCCESS;
}
static int release(uint64_t ptr) {
  if (ptr) {
    free((void *)(uintptr_t)ptr);
    __atomic_fetch_sub(&counters.live, 1, __ATOMIC_SEQ_CST);
  }
  return SUCCESS;
}
static int cuMemAlloc(uint64_t *ptr, size_t bytes) { return allocate(ptr, bytes); }
static int cuMemFree(uint64_t ptr) { return release(ptr); }
static int capture_alloc(uint64_t *ptr, size_t bytes);
static int capturing(void *stream);
static int cuMemAllocAsync(uint64_t *ptr, size_t bytes, void *stream) {
  return capturing(stream) ? capture_alloc(ptr, bytes) : allocate(ptr, bytes);
}
static int cuMemFreeAsync(uint64_t ptr, void *stream) {
  return capturing(stream) ? SUCCESS : release(ptr); /* captured: freed with the graph */
}
static int cuMemcpyHtoD(uint64_t dst, const void *src, size_t bytes) {
  __atomic_fetch_add(&counters.uploads, 1, __ATOMIC_SEQ_CST);
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return SUCCESS;
}
static int cuMemcpyHtoDAsync(uint64_t dst, const void *src, size_t bytes, void *stream) {
  (void)stream;
  memcpy((void *)(uintptr_t)dst, src, bytes);
  return SUCCESS;
}
static int cuMemcpyDtoHAsync(void *dst, uint64_t src, size_t bytes, void *stream) {
  (void)stream;
  memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return SUCCESS;
}
static int pool_token;
static int cuDeviceGetDefaultMemPool(void **pool, int device) { (void)device; *pool = &pool_token; return SUCCESS; }
static int cuMemPoolSetAttribute(void *pool, int attribute, void *value) { (void)pool; (void)attribute; (void)value; return SUCCESS; }

static int cuModuleLoadData(void **module, const void *image) {
  const fake_cuda_image *fake = (const fake_cuda_image *)image;
  if (!fake || fake->magic != FAKE_CUDA_IMAGE_MAGIC)
    return ERROR_INVALID_VALUE;
  *module = (void *)(uintptr_t)fake;
  return SUCCESS;
}
static int cuModuleUnload(void *module) { (void)module; return SUCCESS; }
static int cuModuleGetFunction(void **function, void *module, const char *name) {
  fake_cuda_image *image = (fake_cuda_image *)module;
  int i;
  for (i = 0; i < image->num_kernels; ++i)
    if (strcmp(image->kernels[i].name, name) == 0) {
      *function = &image->kernels[i];
      return SUCCESS;
    }
  return ERROR_NOT_FOUND;
}
static int cuFuncSetAttribute(void *function, int attribute, int value) {
  fake_cuda_kernel *kernel = (fake_cuda_kernel *)function;
  if (attribute != 8 || value < 0 || value > 227 * 1024)
    return ERROR_INVALID_VALUE;
  kernel->max_dynamic_shared = value;
  return SUCCESS;
}
/* Stream capture: one at a time; a graph is the list of recorded launches. */
#define MAX_PARAMS 16
typedef struct fake_launch {
  fake_cuda_kernel *kernel;
  int64_t threads;
  uint64_t values[MAX_PARAMS];
} fake_launch;
typedef struct fake_graph {
  int count, capacity;
  fake_launch *launches;
  int allocations; /* memory allocated on the capturing stream, freed with the graph */
  void *allocated[MAX_PARAMS];
} fake_graph;
static void *capturing_stream;
static int capture_invalid;
static fake_graph *capture;

static int capturing(void *stream) {
  return stream && stream == __atomic_load_n(&capturing_stream, __ATOMIC_SEQ_CST);
}
static int capture_alloc(uint64_t *ptr, size_t bytes) {
  void *memory;
  if (capture->allocations == MAX_PARAMS)
    return ERROR_OUT_OF_MEMORY;
  memory = malloc(bytes ? bytes : 1);
  if (!memory)
    return ERROR_OUT_OF_MEMORY;
  capture->allocated[capture->allocations++] = memory;
  *ptr = (uint64_t)(uintptr_t)memory;
  return SUCCESS;
}

static int free_graph(void *graph) {
  fake_graph *g = (fake_graph *)graph;
  int a;
  if (g) {
    for (a = 0; a < g->allocations; ++a)
      free(g->allocated[a]);
    free(g->launches);
    free(g);
  }
  return SUCCESS;
}
static int cuStreamBeginCapture(void *stream, int mode) {
  (void)mode;
  if (__atomic_load_n(&capturing_stream, __ATOMIC_SEQ_CST))
    return ERROR_INVALID_VALUE;
  capture = calloc(1, sizeof(fake_graph));
  if (!capture)
    return ERROR_OUT_OF_MEMORY;
  capture_invalid = 0;
  __atomic_store_n(&capturing_stream, stream, __ATOMIC_SEQ_CST);
  return SUCCESS;
}
static int cuStreamEndCapture(void *stream, void **graph) {
  if (!capturing(stream))
    return ERROR_INVALID_VALUE;
  __atomic_store_n(&capturing_stream, NULL, __ATOMIC_SEQ_CST);
  *graph = NULL;
  if (capture_invalid) {
    free_graph(capture);
    capture = NULL;
    return ERROR_CAPTURE_INVALIDATED;
  }
  *graph = capture;
  capture = NULL;
  return SUCCESS;
}
static int record_launch(fake_cuda_kernel *kernel, int64_t threads, void **params) {
  fake_launch *launch;
  int k;
  if (kernel->num_params <= 0 || kernel->num_params > MAX_PARAMS) {
    capture_invalid = 1;
    return ERROR_CAPTURE_UNSUPPORTED;
  }
  if (capture->count == capture->capacity) {
    int capacity = capture->capacity ? 2 * capture->capacity : 8;
    fake_launch *grown = realloc(capture->launches, (size_t)capacity * sizeof(fake_launch));
    if (!grown)
      return ERROR_OUT_OF_MEMORY;
    capture->launches = grown;
    capture->capacity = capacity;
  }
  launch = &capture->launches[capture->count++];
  launch->kernel = kernel;
  launch->threads = threads;
  for (k = 0; k < kernel->num_params; ++k)
    memcpy(&launch->values[k], params[k], sizeof(uint64_t));
  __atomic_fetch_add(&counters.captured, 1, __ATOMIC_SEQ_CST);
  return SUCCESS;
}
static int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
  fake_graph *source = (fake_graph *)graph, *copy;
  (void)flags;
  copy = calloc(1, sizeof(fake_graph));
  if (!copy)
    return ERROR_OUT_OF_MEMORY;
  if (source->count) {
    copy->launches = malloc((size_t)source->count * sizeof(fake_launch));
    if (!copy->launches) {
      free(copy);
      return ERROR_OUT_OF_MEMORY;
    }
    memcpy(copy->launches, source->launches, (size_t)source->count * sizeof(fake_launch));
  }
  copy->count = copy->capacity = source->count;
  *exec = copy;
  return SUCCESS;
}
static int cuGraphLaunch(void *exec, void *stream) {
  fake_graph *graph = (fake_graph *)exec;
  int l, k;
  int64_t i;
  (void)stream;
  __atomic_fetch_add(&counters.graph_launches, 1, __ATOMIC_SEQ_CST);
  for (l = 0; l < graph->count; ++l) {
    fake_launch *launch = &graph->launches[l];
    void *params[MAX_PARAMS];
    for (k = 0; k < launch->kernel->num_params; ++k)
      params[k] = &launch->values[k];
    __atomic_fetch_add(&counters.launches, 1, __ATOMIC_SEQ_CST);
    for (i = 0; i < launch->threads; ++i)
      launch->kernel->body(i, params);
  }
  return SUCCESS;
}

static int cuGraphExecDestroy(void *exec) { return free_graph(exec); }
static int cuGraphDestroy(void *graph) { return free_graph(graph); }

static int cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shared, void *stream,
                          void **params, void **extra) {
  fake_cuda_kernel *kernel = (fake_cuda_kernel *)function;
  int64_t threads = (int64_t)gx * gy * gz * bx * by * bz, i;
  (void)extra;
  if (bx * by * bz > 1024)
    return ERROR_INVALID_VALUE;
  if (shared > 48 * 1024 && (int)shared > kernel->max_dynamic_shared)
    return ERROR_INVALID_VALUE;
  if (fail_launch_of(kernel->name))
    return ERROR_LAUNCH_FAILED;
  if (capturing(stream))
    return record_launch(kernel, threads, params);
  __atomic_fetch_add(&counters.launches, 1, __ATOMIC_SEQ_CST);
  for (i = 0; i < threads; ++i)
    kernel->body(i, params);
  return SUCCESS;
}

typedef struct fake_event {
  struct timespec at;
} fake_event;
static int cuEventCreate(void **event, unsigned flags) {
  (void)flags;
  *event = calloc(1, sizeof(fake_event));
  return *event ? SUCCESS : ERROR_OUT_OF_MEMORY;
}
static int cuEventDestroy(void *event) { free(event); return SUCCESS; }
static int cuEventRecord(void *event, void *stream) {
  (void)stream;
  clock_gettime(CLOCK_MONOTONIC, &((fake_event *)event)->at);
  return SUCCESS;
}
static int cuEventElapsedTime(float *ms, void *start, void *end) {
  const struct timespec *a = &((fake_event *)start)->at, *b = &((fake_event *)end)->at;
  *ms = (float)((double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) / 1e6);
  return SUCCESS;
}

/* Tensor maps (the GEMM template): no fake kernel uses one. */
static int cuTensorMapEncodeTiled(void *map, int data_type, unsigned rank, void *address,
                                  const uint64_t *dims, const uint64_t *strides,
                                  const unsigned *box, const unsigned *element_strides,
                                  int interleave, int swizzle, int l2, int oob) {
  (void)map, (void)data_type, (void)rank, (void)address, (void)dims, (void)strides;
  (void)box, (void)element_strides, (void)interleave, (void)swizzle, (void)l2, (void)oob;
  return ERROR_INVALID_VALUE;
}

static int cuGetErrorName(int error, const char **name) {
  switch (error) {
  case SUCCESS: *name = "CUDA_SUCCESS"; return SUCCESS;
  case ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; return SUCCESS;
  case ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return SUCCESS;
  case ERROR_NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; return SUCCESS;
  case ERROR_LAUNCH_FAILED: *name = "CUDA_ERROR_LAUNCH_FAILED"; return SUCCESS;
  case ERROR_CAPTURE_UNSUPPORTED: *name = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; return SUCCESS;
  case ERROR_CAPTURE_INVALIDATED: *name = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; return SUCCESS;
  default: return ERROR_INVALID_VALUE;
  }
}
static int cuGetErrorString(int error, const char **text) {
  switch (error) {
  case ERROR_INVALID_VALUE: *text = "invalid argument"; return SUCCESS;
  case ERROR_OUT_OF_MEMORY: *text = "out of memory"; return SUCCESS;
  case ERROR_NOT_FOUND: *text = "named symbol not found"; return SUCCESS;
  case ERROR_LAUNCH_FAILED: *text = "unspecified launch failure"; return SUCCESS;
  case ERROR_CAPTURE_UNSUPPORTED: *text = "operation not supported when stream is capturing"; return SUCCESS;
  case ERROR_CAPTURE_INVALIDATED: *text = "stream capture invalidated"; return SUCCESS;
  default: *text = "no error"; return SUCCESS;
  }
}

#define ENTRY(name) {#name, (void *)&name}
static const struct {
  const char *name;
  void *function;
} entries[] = {
    ENTRY(cuInit), ENTRY(cuDeviceGetCount), ENTRY(cuDeviceGet), ENTRY(cuDeviceGetName),
    ENTRY(cuDeviceGetAttribute), ENTRY(cuDevicePrimaryCtxRetain),
    ENTRY(cuDevicePrimaryCtxRelease), ENTRY(cuCtxSetCurrent), ENTRY(cuStreamCreate),
    ENTRY(cuStreamDestroy), ENTRY(cuStreamSynchronize), ENTRY(cuMemAlloc), ENTRY(cuMemFree),
    ENTRY(cuMemAllocAsync), ENTRY(cuMemFreeAsync), ENTRY(cuMemcpyHtoD),
    ENTRY(cuMemcpyHtoDAsync), ENTRY(cuMemcpyDtoHAsync), ENTRY(cuDeviceGetDefaultMemPool),
    ENTRY(cuMemPoolSetAttribute), ENTRY(cuModuleLoadData), ENTRY(cuModuleUnload),
    ENTRY(cuModuleGetFunction), ENTRY(cuLaunchKernel), ENTRY(cuFuncSetAttribute),
    ENTRY(cuEventCreate), ENTRY(cuEventDestroy), ENTRY(cuEventRecord),
    ENTRY(cuEventElapsedTime), ENTRY(cuTensorMapEncodeTiled), ENTRY(cuGetErrorName), ENTRY(cuGetErrorString),
    ENTRY(cuStreamBeginCapture), ENTRY(cuStreamEndCapture), ENTRY(cuGraphInstantiateWithFlags),
    ENTRY(cuGraphLaunch), ENTRY(cuGraphExecDestroy), ENTRY(cuGraphDestroy)};

EXPORT int cuGetProcAddress_v2(const char *symbol, void **function, int version,
                               uint64_t flags, int *status) {
  size_t i;
  (void)version;
  (void)flags;
  if (status)
    *status = 0;
  for (i = 0; i < sizeof(entries) / sizeof(entries[0]); ++i)
    if (strcmp(entries[i].name, symbol) == 0) {
      *function = entries[i].function;
      return SUCCESS;
    }
  *function = NULL;
  return ERROR_NOT_FOUND;
}
