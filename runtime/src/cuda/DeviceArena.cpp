//===- DeviceArena.cpp - A CUDA session's device scratch ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "cuda/DeviceArena.h"

#include "Status.h"

namespace kiln::rt::cuda {

DeviceArenaPool::~DeviceArenaPool() {
  for (const std::unique_ptr<DeviceScratch> &scratch : all) {
    if (scratch->arena)
      driver.memFree(scratch->arena);
    if (scratch->io)
      driver.memFree(scratch->io);
  }
}

DeviceScratch *DeviceArenaPool::acquire(std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (!available.empty()) {
    DeviceScratch *scratch = available.back();
    available.pop_back();
    return scratch;
  }
  // Room first (this may throw), so that release() cannot fail later.
  all.reserve(all.size() + 1);
  available.reserve(all.size() + 1);
  auto scratch = std::make_unique<DeviceScratch>();
  if (arenaBytes) {
    if (CUresult r = driver.memAlloc(&scratch->arena, arenaBytes); r != kSuccess) {
      error = cat("allocating the ", arenaBytes, "-byte device arena failed: ",
                  describe(driver, r));
      return nullptr;
    }
  }
  all.push_back(std::move(scratch));
  return all.back().get();
}

void DeviceArenaPool::release(DeviceScratch *scratch) {
  std::lock_guard<std::mutex> lock(mutex);
  available.push_back(scratch);
}

bool DeviceArenaPool::reserveIO(DeviceScratch &scratch, uint64_t bytes, std::string &error) {
  if (bytes <= scratch.ioBytes)
    return true;
  if (scratch.io)
    driver.memFree(scratch.io);
  scratch.io = 0;
  scratch.ioBytes = 0;
  if (CUresult r = driver.memAlloc(&scratch.io, bytes); r != kSuccess) {
    scratch.io = 0;
    error = cat("allocating ", bytes, " bytes of device memory for the inputs and outputs "
                "failed: ", describe(driver, r));
    return false;
  }
  scratch.ioBytes = bytes;
  return true;
}

size_t DeviceArenaPool::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return all.size();
}

} // namespace kiln::rt::cuda
