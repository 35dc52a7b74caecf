//===- HeapCache.h - A session's intermediate buffers kept between runs ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A model with symbolic dims cannot have its intermediates planned into the
// arena: generated code asks kiln_abi_host::alloc for each one at run time.
// Handing those out from malloc and back to free on every run costs what the
// arena exists to avoid: large blocks are mmap'ed fresh and page-fault on
// first touch in every run (a MobileNetV2 at batch 8 took 2.6x the time of
// its static-shape artifact, most of it in page faults). The session keeps
// the blocks its runs freed, by size, and hands them out again: a run at the
// sizes of an earlier one takes its buffers back with their pages mapped.
//
// Bounds: a block is reused for a request of at least half its size; idle
// blocks are held up to twice the largest peak of live intermediate bytes a
// run has had (so a run's footprint stays within three times its peak, and
// near its peak when the sizes repeat); a block that none of the last runs
// in flight gave back is freed when a run ends (a run at other sizes lets
// the old blocks go).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_HEAPCACHE_H
#define KILN_RUNTIME_HEAPCACHE_H

#include <cstdint>
#include <map>
#include <mutex>

namespace kiln::rt {

class HeapCache {
public:
  /// Alignment of every block (the arena's; MLIR asks for at most this).
  static constexpr uint64_t kAlignment = 64;

  HeapCache() = default;
  ~HeapCache();
  HeapCache(const HeapCache &) = delete;
  HeapCache &operator=(const HeapCache &) = delete;

  /// A run starts: its serial number, for take/give/endRun.
  uint64_t beginRun();
  /// An idle block of at least `bytes` (and at most twice that), or a new
  /// one; null when out of memory. `*blockBytes` is the block's size, to
  /// pass back to give().
  void *take(uint64_t bytes, uint64_t *blockBytes);
  /// A block from take() that the run no longer uses: kept idle, or freed
  /// when the idle blocks already hold the cap (twice the largest peak of
  /// live bytes, this run's so far `runPeakBytes` included).
  void give(void *block, uint64_t blockBytes, uint64_t run, uint64_t runPeakBytes);
  /// The run ended with `peakLiveBytes` of intermediates live at most:
  /// raises the cap and frees the blocks recent runs did not take.
  void endRun(uint64_t run, uint64_t peakLiveBytes);

  /// Idle bytes held (for tests).
  uint64_t idleBytes() const;

private:
  struct Block {
    void *memory;
    uint64_t lastRun; // serial of the run that last gave it back
  };
  mutable std::mutex mutex;
  std::multimap<uint64_t, Block> idle; // by block size
  uint64_t idleTotal = 0, cap = 0;
  uint64_t nextRun = 0;
  uint64_t inFlight = 0, maxInFlight = 1;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_HEAPCACHE_H
