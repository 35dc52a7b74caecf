//===- DeviceArena.h - A CUDA session's device scratch, one per concurrent run -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The device counterpart of ArenaPool (Arena.h): kilnc plans a CUDA model's
// static intermediates into one arena (arena_bytes) exactly as for the CPU,
// and a run also needs device buffers for its inputs and outputs. A run
// leases one DeviceScratch: the planned arena plus one I/O block, grown
// (never shrunk) when a run's tensors need more. The session keeps the
// scratches it made, so steady-state runs allocate no device memory, and
// concurrent runs on one session never share one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUDA_DEVICEARENA_H
#define KILN_RUNTIME_CUDA_DEVICEARENA_H

#include "cuda/Driver.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt::cuda {

struct DeviceScratch {
  CUdeviceptr arena = 0; // arena_bytes, 256-byte aligned; 0 when the model needs none
  CUdeviceptr io = 0;    // inputs then outputs, each 256-byte aligned
  uint64_t ioBytes = 0;
};

class DeviceArenaPool {
public:
  DeviceArenaPool(const Driver &driver, uint64_t arenaBytes)
      : driver(driver), arenaBytes(arenaBytes) {}
  /// Frees every scratch; the session's context must be current and no run
  /// in flight.
  ~DeviceArenaPool();
  DeviceArenaPool(const DeviceArenaPool &) = delete;
  DeviceArenaPool &operator=(const DeviceArenaPool &) = delete;

  /// A free scratch, or a new one with its arena allocated; NULL with
  /// `error` set when the device is out of memory.
  DeviceScratch *acquire(std::string &error);
  void release(DeviceScratch *scratch);
  /// Makes `scratch.io` at least `bytes` long (the scratch is leased, so
  /// no run uses its old block).
  bool reserveIO(DeviceScratch &scratch, uint64_t bytes, std::string &error);
  /// Scratches made so far (the most runs that were in flight at once).
  size_t size() const;
  /// Bytes of each scratch's arena.
  uint64_t arenaSize() const { return arenaBytes; }

private:
  const Driver &driver;
  uint64_t arenaBytes;
  mutable std::mutex mutex;
  std::vector<std::unique_ptr<DeviceScratch>> all;
  std::vector<DeviceScratch *> available;
};

/// Holds a scratch for the duration of one run.
class DeviceScratchLease {
public:
  explicit DeviceScratchLease(DeviceArenaPool &pool, std::string &error)
      : pool(pool), scratch(pool.acquire(error)) {}
  ~DeviceScratchLease() {
    if (scratch)
      pool.release(scratch);
  }
  DeviceScratchLease(const DeviceScratchLease &) = delete;
  DeviceScratchLease &operator=(const DeviceScratchLease &) = delete;
  DeviceScratch *get() const { return scratch; }

private:
  DeviceArenaPool &pool;
  DeviceScratch *scratch;
};

} // namespace kiln::rt::cuda

#endif // KILN_RUNTIME_CUDA_DEVICEARENA_H
