//===- Device.h - A CUDA session's device: context, stream, caches, runs --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUDA_DEVICE_H
#define KILN_RUNTIME_CUDA_DEVICE_H

#include "Model.h"
#include "RunGuard.h"
#include "Trace.h"
#include "Validation.h"
#include "cuda/DeviceArena.h"
#include "cuda/DeviceTrace.h"
#include "cuda/Driver.h"
#include "cuda/GraphCache.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::rt::cuda {

/// Device 0's primary context, one stream, and what the session's runs share:
/// loaded kernel modules and functions, the device copies of the model's
/// weights and constants, the device scratch (planned arena plus I/O
/// buffers, one per concurrent run) and the trace events. Dynamic
/// allocations the plan could not place come from the device's default
/// memory pool in stream order (release threshold raised, so memory freed by
/// one run is reused by the next).
class Device {
public:
  /// Opens device 0 for `model` (compiled for model.cudaChip, e.g. "sm_90a")
  /// and uploads its weights blob when they are not embedded; fails with a
  /// clear status without a driver, without a device, when the device is
  /// older than the chip, or when the weights do not fit.
  static kiln_status *open(const kiln_model &model, std::unique_ptr<Device> &out);
  ~Device();

  /// Copies the inputs to the device, runs `model` with device buffers,
  /// copies the outputs back into `outputs` (host memory of
  /// `plan.outputBytes`), and reports the first CUDA failure. With a
  /// `recorder`, each dispatch is timed with CUDA events. `guard` runs the
  /// model (check failures) and gives the byte limit that the model's
  /// device allocations (kiln_abi_cuda::alloc) are counted against.
  /// Inputs and outputs whose data pointer is in `onDevice` are device
  /// memory already (from allocate()): they are used in place, neither copied
  /// nor given space in the run's I/O block, and the run is not captured as a
  /// CUDA graph (the pointers change between runs of the same shapes).
  kiln_status *run(const kiln_model &model, const RunPlan &plan,
                   const std::vector<void *> &outputs, const kiln_abi_host &host,
                   RunGuard &guard, RunRecorder *recorder,
                   const std::vector<const void *> &onDevice = {});

  /// Device memory that outlives runs (the decoder's KV cache); 0 with
  /// `error` set on failure. Freed with release() before the Device goes.
  CUdeviceptr allocate(uint64_t bytes, std::string &error);
  void release(CUdeviceptr ptr);
  /// Copies `bytes` of such memory to the host, after the session's runs;
  /// false with `error` set on failure.
  bool copyToHost(void *dst, CUdeviceptr src, uint64_t bytes, std::string &error);
  /// Copies `bytes` from the host to device memory, synchronously.
  bool copyToDevice(CUdeviceptr dst, const void *src, uint64_t bytes, std::string &error);

  const std::string &name() const { return deviceName; }
  /// Kernel time of the last successful run in ms; negative before one.
  double lastDeviceMs() const { return lastMs.load(); }

  // The kiln_abi_cuda services, called from generated code through RunState.
  CUfunction getFunction(const void *image, const char *name, std::string &error);
  const std::string &functionName(CUfunction function);
  CUdeviceptr constant(const void *hostData, uint64_t bytes, std::string &error);
  /// Lets `function` take `bytes` of dynamic shared memory (over 48 KiB
  /// needs opting in per function); false with `error` set on failure.
  bool reserveSharedMemory(CUfunction function, unsigned bytes, std::string &error);
  /// Device scratches made so far (the most runs in flight at once).
  size_t scratchCount() const { return arenas ? arenas->size() : 0; }
  /// The device copy of `map`, uploaded once per session (tensor maps of
  /// equal contents share it): in order on `stream` when given (a run's own
  /// stream, so no wait), else synchronously (a graph capture's).
  CUdeviceptr tensorMap(const CUtensorMap &map, CUstream stream, std::string &error);
  /// A block of `rounded` bytes that a run freed earlier (0 if none): runs'
  /// dynamic allocations on the session's stream are kept when freed, by
  /// size, and handed out again in stream order instead of a driver call
  /// each (a decoder's step makes hundreds, with sizes that repeat).
  CUdeviceptr takeCached(uint64_t rounded);
  /// Keeps `ptr` (a block of `rounded` bytes, freed by its run) for reuse.
  void keepCached(CUdeviceptr ptr, uint64_t rounded);
  /// Frees the kept blocks in order on `stream` (when the pool is out of
  /// memory, and when the session ends).
  void flushCached(CUstream stream);

  const Driver &driver;
  CUstream stream = nullptr;
  /// KILN_CUDA_SYNC=1: synchronize after every launch, so that a failing
  /// kernel is named exactly.
  bool syncEachLaunch = false;
  /// KILN_CUDA_POISON_OUTPUTS=1: outputs and the arena are filled with NaN before each run.
  bool poisonOutputs = false;

private:
  /// copyToHost and copyToDevice: one copy on the session's stream, waited for.
  bool copySync(bool toDevice, void *host, CUdeviceptr device, uint64_t bytes,
                std::string &error);
  explicit Device(const Driver &driver) : driver(driver) {}

  /// Calls the model's run function: replays its CUDA graph when an earlier
  /// run with the same scratch, dims and buffers was captured, captures this one
  /// when that is worth it, else launches its kernels one by one
  /// (`replayable` false: always the last). `runState` is the run's
  /// RunState. Returns the run function's code.
  int32_t callOrReplay(const kiln_model &model, const RunPlan &plan,
                       std::vector<void *> &buffers, kiln_abi_host &deviceHost,
                       RunGuard &guard, void *runState, const DeviceScratch &scratch,
                       bool replayable);

  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string deviceName;
  std::atomic<double> lastMs{-1};
  std::mutex mutex; // guards the caches below
  std::unordered_map<const void *, CUmodule> modules;
  std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
  std::unordered_map<CUfunction, std::string> names;
  std::unordered_map<const void *, CUdeviceptr> constants;
  std::unordered_map<CUfunction, unsigned> sharedBytes; // opted-in dynamic shared memory
  CUdeviceptr weights = 0; // external/none weights blob on the device
  std::unique_ptr<DeviceArenaPool> arenas;
  std::unique_ptr<EventPool> events;
  std::unique_ptr<GraphCache> graphs;
  std::map<std::string, CUdeviceptr> tensorMaps; // by the map's 128 bytes
  std::mutex cacheMutex; // guards the kept blocks
  std::unordered_map<uint64_t, std::vector<CUdeviceptr>> cached; // freed blocks by size
};

} // namespace kiln::rt::cuda

#endif // KILN_RUNTIME_CUDA_DEVICE_H
