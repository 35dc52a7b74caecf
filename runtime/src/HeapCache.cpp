//===- HeapCache.cpp - A session's intermediate buffers kept between runs -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "HeapCache.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

namespace kiln::rt {
namespace {

/// `bytes` rounded up to the block alignment (at least one unit).
uint64_t blockSize(uint64_t bytes) {
  uint64_t units = bytes / HeapCache::kAlignment + (bytes % HeapCache::kAlignment != 0);
  return (units ? units : 1) * HeapCache::kAlignment;
}

} // namespace

HeapCache::~HeapCache() {
  for (auto &[bytes, block] : idle)
    std::free(block.memory);
}

uint64_t HeapCache::beginRun() {
  std::lock_guard<std::mutex> lock(mutex);
  ++inFlight;
  if (inFlight > maxInFlight)
    maxInFlight = inFlight;
  return nextRun++;
}

void *HeapCache::take(uint64_t bytes, uint64_t *blockBytes) {
  if (bytes > UINT64_MAX / 2 - kAlignment)
    return nullptr;
  uint64_t size = blockSize(bytes);
  {
    std::lock_guard<std::mutex> lock(mutex);
    // Best fit: the smallest idle block that holds `bytes`, if it is not
    // more than twice as big; of those, the one given back last (its lines
    // are the likeliest to be in cache: a run's fills and writes into cold
    // blocks cost MobileNetV2 7% over the static arena's reuse).
    auto it = idle.lower_bound(size);
    if (it != idle.end() && it->first <= 2 * size) {
      it = std::prev(idle.upper_bound(it->first));
      void *memory = it->second.memory;
      *blockBytes = it->first;
      idleTotal -= it->first;
      idle.erase(it);
      return memory;
    }
  }
  void *memory = nullptr;
  if (posix_memalign(&memory, kAlignment, size) != 0)
    return nullptr;
  *blockBytes = size;
  return memory;
}

void HeapCache::give(void *block, uint64_t blockBytes, uint64_t run, uint64_t runPeakBytes) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    uint64_t limit = 2 * std::max(cap, runPeakBytes);
    if (idleTotal + blockBytes <= limit) {
      try {
        idle.emplace(blockBytes, Block{block, run});
        idleTotal += blockBytes;
        return;
      } catch (...) { // no room for the bookkeeping: let the block go
      }
    }
  }
  std::free(block);
}

void HeapCache::endRun(uint64_t run, uint64_t peakLiveBytes) {
  std::lock_guard<std::mutex> lock(mutex);
  --inFlight;
  cap = std::max(cap, std::min(peakLiveBytes, UINT64_MAX / 2));
  // Blocks no run among the last maxInFlight ones gave back (sizes of the
  // past), then the smallest ones over the cap.
  for (auto it = idle.begin(); it != idle.end();) {
    if (it->second.lastRun + maxInFlight <= run || idleTotal > 2 * cap) {
      std::free(it->second.memory);
      idleTotal -= it->first;
      it = idle.erase(it);
    } else {
      ++it;
    }
  }
}

uint64_t HeapCache::idleBytes() const {
  std::lock_guard<std::mutex> lock(mutex);
  return idleTotal;
}

} // namespace kiln::rt
