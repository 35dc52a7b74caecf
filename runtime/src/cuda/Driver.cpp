//===- Driver.cpp - Loading libcuda.so.1 and resolving its entry points ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "cuda/Driver.h"

#include "Status.h"

#include <dlfcn.h>

namespace kiln::rt::cuda {
namespace {

/// The API version the signatures in Driver.h were written against.
constexpr int kCudaVersion = 12000;

using GetProcAddressV2 = CUresult (*)(const char *, void **, int, uint64_t, int *);
using GetProcAddressV1 = CUresult (*)(const char *, void **, int, uint64_t);

struct Loaded {
  Driver driver{};
  std::string error; // empty when usable
};

template <typename Fn> bool resolve(void *library, const char *symbol, Fn &slot,
                                    std::string &error) {
  void *pfn = nullptr;
  CUresult result = 1;
  if (auto v2 = reinterpret_cast<GetProcAddressV2>(dlsym(library, "cuGetProcAddress_v2"))) {
    int status = 0;
    result = v2(symbol, &pfn, kCudaVersion, 0, &status);
  } else if (auto v1 = reinterpret_cast<GetProcAddressV1>(
                 dlsym(library, "cuGetProcAddress"))) {
    result = v1(symbol, &pfn, kCudaVersion, 0);
  } else {
    error = "the CUDA driver (libcuda.so.1) has no cuGetProcAddress; it is older "
            "than CUDA 11.3";
    return false;
  }
  if (result != kSuccess || !pfn) {
    error = cat("the CUDA driver has no entry point '", symbol, "' for CUDA ",
                kCudaVersion / 1000, ".", kCudaVersion % 1000 / 10, " (error ", result, ")");
    return false;
  }
  slot = reinterpret_cast<Fn>(pfn);
  return true;
}

Loaded load() {
  Loaded loaded;
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    loaded.error = "no CUDA driver (libcuda.so.1 not found)";
    return loaded;
  }
  Driver &d = loaded.driver;
  std::string &e = loaded.error;
  bool ok = resolve(library, "cuInit", d.init, e) &&
            resolve(library, "cuDeviceGetCount", d.deviceGetCount, e) &&
            resolve(library, "cuDeviceGet", d.deviceGet, e) &&
            resolve(library, "cuDeviceGetName", d.deviceGetName, e) &&
            resolve(library, "cuDeviceGetAttribute", d.deviceGetAttribute, e) &&
            resolve(library, "cuDevicePrimaryCtxRetain", d.primaryCtxRetain, e) &&
            resolve(library, "cuDevicePrimaryCtxRelease", d.primaryCtxRelease, e) &&
            resolve(library, "cuCtxSetCurrent", d.ctxSetCurrent, e) &&
            resolve(library, "cuStreamCreate", d.streamCreate, e) &&
            resolve(library, "cuStreamDestroy", d.streamDestroy, e) &&
            resolve(library, "cuStreamSynchronize", d.streamSynchronize, e) &&
            resolve(library, "cuMemAlloc", d.memAlloc, e) &&
            resolve(library, "cuMemFree", d.memFree, e) &&
            resolve(library, "cuMemAllocAsync", d.memAllocAsync, e) &&
            resolve(library, "cuMemFreeAsync", d.memFreeAsync, e) &&
            resolve(library, "cuMemcpyHtoD", d.memcpyHtoD, e) &&
            resolve(library, "cuMemcpyHtoDAsync", d.memcpyHtoDAsync, e) &&
            resolve(library, "cuMemcpyDtoHAsync", d.memcpyDtoHAsync, e) &&
            resolve(library, "cuDeviceGetDefaultMemPool", d.deviceGetDefaultMemPool, e) &&
            resolve(library, "cuMemPoolSetAttribute", d.memPoolSetAttribute, e) &&
            resolve(library, "cuModuleLoadData", d.moduleLoadData, e) &&
            resolve(library, "cuModuleUnload", d.moduleUnload, e) &&
            resolve(library, "cuModuleGetFunction", d.moduleGetFunction, e) &&
            resolve(library, "cuLaunchKernel", d.launchKernel, e) &&
            resolve(library, "cuFuncSetAttribute", d.funcSetAttribute, e) &&
            resolve(library, "cuEventCreate", d.eventCreate, e) &&
            resolve(library, "cuEventDestroy", d.eventDestroy, e) &&
            resolve(library, "cuEventRecord", d.eventRecord, e) &&
            resolve(library, "cuEventElapsedTime", d.eventElapsedTime, e) &&
            resolve(library, "cuTensorMapEncodeTiled", d.tensorMapEncodeTiled, e) &&
            resolve(library, "cuGetErrorName", d.getErrorName, e) &&
            resolve(library, "cuGetErrorString", d.getErrorString, e);
  if (!ok)
    return loaded;
  // Optional: without them, runs are simply not replayed as graphs.
  std::string optional;
  Driver graphs = d;
  if (resolve(library, "cuStreamBeginCapture", graphs.streamBeginCapture, optional) &&
      resolve(library, "cuStreamEndCapture", graphs.streamEndCapture, optional) &&
      resolve(library, "cuGraphInstantiateWithFlags", graphs.graphInstantiate, optional) &&
      resolve(library, "cuGraphLaunch", graphs.graphLaunch, optional) &&
      resolve(library, "cuGraphExecDestroy", graphs.graphExecDestroy, optional) &&
      resolve(library, "cuGraphDestroy", graphs.graphDestroy, optional))
    d = graphs;
  if (CUresult result = d.init(0); result != kSuccess)
    loaded.error = cat("cuInit failed: ", describe(d, result));
  // The library stays loaded for the life of the process.
  return loaded;
}

} // namespace

const Driver *loadDriver(std::string &error) {
  static const Loaded loaded = load(); // thread-safe initialization
  if (!loaded.error.empty()) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.driver;
}

std::string describe(const Driver &driver, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (driver.getErrorName(result, &name) != kSuccess || !name)
    name = "unknown CUDA error";
  if (driver.getErrorString(result, &text) != kSuccess || !text)
    text = "";
  return cat(name, " (", result, *text ? ": " : "", text, ")");
}

} // namespace kiln::rt::cuda
