//===- Driver.h - The CUDA driver API, loaded with dlopen at first use -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The runtime links no CUDA library: one binary runs on machines without a
// GPU and says so when a CUDA session is asked for. Entry points come from
// cuGetProcAddress for the CUDA 12.0 API (the `_v2` variants where cuda.h
// maps to them), never from guessed dlsym names. The few types are declared
// here so that building the runtime needs no CUDA toolkit.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUDA_DRIVER_H
#define KILN_RUNTIME_CUDA_DRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::rt::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = uint64_t;
using CUcontext = struct CUctx_st *;
using CUstream = struct CUstream_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUmemoryPool = struct CUmemPoolHandle_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;

constexpr CUresult kSuccess = 0;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kMemPoolAttrReleaseThreshold = 4;
constexpr int kStreamCaptureModeRelaxed = 2; // CU_STREAM_CAPTURE_MODE_RELAXED
constexpr int kFuncAttrMaxDynamicSharedBytes = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr unsigned kStaticSharedLimit = 48 * 1024; // dynamic shared memory without opting in
/// CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) CUtensorMap {
  uint64_t opaque[16];
};

/// The driver functions Kiln uses, with the signatures of CUDA 12.0.
struct Driver {
  CUresult (*init)(unsigned flags);
  CUresult (*deviceGetCount)(int *count);
  CUresult (*deviceGet)(CUdevice *device, int ordinal);
  CUresult (*deviceGetName)(char *name, int length, CUdevice device);
  CUresult (*deviceGetAttribute)(int *value, int attribute, CUdevice device);
  CUresult (*primaryCtxRetain)(CUcontext *context, CUdevice device);
  CUresult (*primaryCtxRelease)(CUdevice device);
  CUresult (*ctxSetCurrent)(CUcontext context);
  CUresult (*streamCreate)(CUstream *stream, unsigned flags);
  CUresult (*streamDestroy)(CUstream stream);
  CUresult (*streamSynchronize)(CUstream stream);
  CUresult (*memAlloc)(CUdeviceptr *ptr, size_t bytes);
  CUresult (*memFree)(CUdeviceptr ptr);
  CUresult (*memAllocAsync)(CUdeviceptr *ptr, size_t bytes, CUstream stream);
  CUresult (*memFreeAsync)(CUdeviceptr ptr, CUstream stream);
  CUresult (*memcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes);
  CUresult (*memcpyHtoDAsync)(CUdeviceptr dst, const void *src, size_t bytes,
                              CUstream stream);
  CUresult (*memcpyDtoHAsync)(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
  CUresult (*deviceGetDefaultMemPool)(CUmemoryPool *pool, CUdevice device);
  CUresult (*memPoolSetAttribute)(CUmemoryPool pool, int attribute, void *value);
  CUresult (*moduleLoadData)(CUmodule *module, const void *image);
  CUresult (*moduleUnload)(CUmodule module);
  CUresult (*moduleGetFunction)(CUfunction *function, CUmodule module, const char *name);
  CUresult (*launchKernel)(CUfunction function, unsigned gridX, unsigned gridY,
                           unsigned gridZ, unsigned blockX, unsigned blockY,
                           unsigned blockZ, unsigned sharedBytes, CUstream stream,
                           void **params, void **extra);
  CUresult (*funcSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*eventCreate)(CUevent *event, unsigned flags);
  CUresult (*eventDestroy)(CUevent event);
  CUresult (*eventRecord)(CUevent event, CUstream stream);
  CUresult (*eventElapsedTime)(float *ms, CUevent start, CUevent end);
  CUresult (*tensorMapEncodeTiled)(CUtensorMap *map, int dataType, uint32_t rank,
                                   void *address, const uint64_t *globalDim,
                                   const uint64_t *globalStrides, const uint32_t *boxDim,
                                   const uint32_t *elementStrides, int interleave, int swizzle,
                                   int l2Promotion, int oobFill);
  CUresult (*getErrorName)(CUresult error, const char **name);
  CUresult (*getErrorString)(CUresult error, const char **text);
  // Graph capture and replay (CUDA 11.4): null when the driver lacks them,
  // and then runs are not replayed (GraphCache.h).
  CUresult (*streamBeginCapture)(CUstream stream, int mode) = nullptr;
  CUresult (*streamEndCapture)(CUstream stream, CUgraph *graph) = nullptr;
  CUresult (*graphInstantiate)(CUgraphExec *exec, CUgraph graph,
                               unsigned long long flags) = nullptr;
  CUresult (*graphLaunch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*graphExecDestroy)(CUgraphExec exec) = nullptr;
  CUresult (*graphDestroy)(CUgraph graph) = nullptr;
  bool hasGraphs() const { return graphDestroy != nullptr; }
};

/// The process's driver, loaded on the first call; NULL with `error` set
/// ("no CUDA driver (libcuda.so.1 not found)", a missing entry point, or
/// cuInit's failure) if it cannot be used. Thread-safe.
const Driver *loadDriver(std::string &error);

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for `result`.
std::string describe(const Driver &driver, CUresult result);

} // namespace kiln::rt::cuda

#endif // KILN_RUNTIME_CUDA_DRIVER_H
