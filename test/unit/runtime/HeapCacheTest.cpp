//===- HeapCacheTest.cpp - A session's intermediates kept between runs ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "HeapCache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace kiln::rt {
namespace {

/// One run of a model with symbolic dims at `scale`: three buffers live at
/// once, then a fourth of the first's size after it is freed.
std::vector<void *> runOnce(HeapCache &cache, uint64_t scale) {
  uint64_t run = cache.beginRun();
  uint64_t sizes[3] = {1000 * scale, 64 * scale, 4096 * scale}, blocks[4];
  void *memory[4];
  for (int i = 0; i < 3; ++i) {
    memory[i] = cache.take(sizes[i], &blocks[i]);
    EXPECT_NE(memory[i], nullptr);
    EXPECT_GE(blocks[i], sizes[i]);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(memory[i]) % HeapCache::kAlignment, 0u);
    std::memset(memory[i], i, sizes[i]); // the blocks are usable memory
  }
  uint64_t peak = sizes[0] + sizes[1] + sizes[2];
  cache.give(memory[0], blocks[0], run, peak);
  memory[3] = cache.take(sizes[0], &blocks[3]);
  EXPECT_EQ(memory[3], memory[0]) << "a block freed in a run serves its next request";
  for (int i = 1; i < 4; ++i)
    cache.give(memory[i], blocks[i], run, peak);
  cache.endRun(run, peak);
  return {memory[3], memory[1], memory[2]};
}

TEST(HeapCache, RunsAtTheSameSizesGetTheirBlocksBack) {
  HeapCache cache;
  std::vector<void *> first = runOnce(cache, 1);
  EXPECT_GT(cache.idleBytes(), 0u);
  std::vector<void *> second = runOnce(cache, 1);
  EXPECT_EQ(first, second);
}

TEST(HeapCache, BlocksOfOtherSizesAreLetGo) {
  HeapCache cache;
  runOnce(cache, 1);
  uint64_t small = cache.idleBytes();
  runOnce(cache, 16); // none of the small blocks fits; they go at its end
  uint64_t big = cache.idleBytes();
  EXPECT_GE(big, (1000 + 64 + 4096) * 16u);
  EXPECT_LT(big, (1000 + 64 + 4096) * 16u + small);
}

TEST(HeapCache, IdleBytesStayWithinTwiceTheLargestPeak) {
  HeapCache cache;
  uint64_t run = cache.beginRun(), peak = 0;
  // A run that frees 10 blocks of 1 MiB and up one after another: each
  // larger than the last, so none serves the next; about 1 MiB peak.
  for (int i = 0; i < 10; ++i) {
    uint64_t block = 0, bytes = (1u << 20) + 64 * i;
    void *memory = cache.take(bytes, &block);
    ASSERT_NE(memory, nullptr);
    peak = bytes;
    cache.give(memory, block, run, peak);
  }
  EXPECT_LE(cache.idleBytes(), 2 * peak);
  cache.endRun(run, peak);
  EXPECT_LE(cache.idleBytes(), 2 * peak);
  EXPECT_GE(cache.idleBytes(), peak);
}

TEST(HeapCache, RequestsMuchSmallerThanABlockGetTheirOwn) {
  HeapCache cache;
  uint64_t run = cache.beginRun(), block = 0, small = 0;
  void *big = cache.take(1 << 20, &block);
  cache.give(big, block, run, 1 << 20);
  void *other = cache.take(1000, &small);
  EXPECT_NE(other, big);
  EXPECT_EQ(small, 1024u);
  cache.give(other, small, run, 1 << 20);
  cache.endRun(run, 1 << 20);
}

TEST(HeapCache, ConcurrentRunsKeepEachOthersBlocks) {
  HeapCache cache;
  // Two runs in flight: the blocks the first gives back survive the
  // second's end (it may be the next run's size).
  uint64_t a = cache.beginRun(), b = cache.beginRun(), block = 0;
  void *memory = cache.take(4096, &block);
  cache.give(memory, block, a, 4096);
  cache.endRun(a, 4096);
  cache.endRun(b, 0);
  EXPECT_EQ(cache.idleBytes(), 4096u);
  uint64_t c = cache.beginRun(), again = 0;
  EXPECT_EQ(cache.take(4096, &again), memory);
  cache.give(memory, again, c, 4096);
  cache.endRun(c, 4096);
}

} // namespace
} // namespace kiln::rt
