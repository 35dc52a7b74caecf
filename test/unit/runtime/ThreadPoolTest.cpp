//===- ThreadPoolTest.cpp - parallel_for covers every index exactly once ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace kiln::rt {
namespace {

struct Counts {
  int64_t begin;
  std::vector<std::atomic<int>> hits;
  Counts(int64_t begin, int64_t end) : begin(begin), hits(end - begin) {}

  static void body(void *ctx, int64_t i) {
    auto *counts = static_cast<Counts *>(ctx);
    counts->hits[i - counts->begin].fetch_add(1, std::memory_order_relaxed);
  }
  /// The first index not hit exactly once, or -1.
  int64_t firstWrong() const {
    for (size_t i = 0; i < hits.size(); ++i)
      if (hits[i].load() != 1)
        return begin + static_cast<int64_t>(i);
    return -1;
  }
};

TEST(ThreadPool, EveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.numThreads(), threads);
    for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, 1}, {0, 2}, {5, 8},
                              {-17, 17}, {0, 1000}, {3, 100003}}) {
      Counts counts(begin, end);
      pool.parallelFor(begin, end, &Counts::body, &counts);
      EXPECT_EQ(counts.firstWrong(), -1)
          << threads << " threads, [" << begin << ", " << end << ")";
    }
  }
}

TEST(ThreadPool, EmptyAndReversedRangesDoNothing) {
  ThreadPool pool(4);
  Counts counts(0, 1);
  pool.parallelFor(0, 0, &Counts::body, &counts);
  pool.parallelFor(5, 2, &Counts::body, &counts);
  EXPECT_EQ(counts.hits[0].load(), 0);
}

struct Nested {
  ThreadPool *pool;
  std::vector<std::unique_ptr<Counts>> inner;
  static void body(void *ctx, int64_t i) {
    auto *nested = static_cast<Nested *>(ctx);
    nested->pool->parallelFor(0, 50, &Counts::body, nested->inner[i].get());
  }
};

TEST(ThreadPool, NestedParallelForCompletes) {
  ThreadPool pool(4);
  Nested nested{&pool, {}};
  for (int i = 0; i < 64; ++i)
    nested.inner.push_back(std::make_unique<Counts>(0, 50));
  pool.parallelFor(0, 64, &Nested::body, &nested);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(nested.inner[i]->firstWrong(), -1) << "outer index " << i;
}

TEST(ThreadPool, ConcurrentCallers) {
  ThreadPool pool(3);
  constexpr int kCallers = 6;
  std::vector<std::unique_ptr<Counts>> counts;
  for (int c = 0; c < kCallers; ++c)
    counts.push_back(std::make_unique<Counts>(0, 20000 + c));
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int repeat = 0; repeat < 5; ++repeat)
        pool.parallelFor(0, 20000 + c, &Counts::body, counts[c].get());
    });
  for (std::thread &caller : callers)
    caller.join();
  for (int c = 0; c < kCallers; ++c)
    for (size_t i = 0; i < counts[c]->hits.size(); ++i)
      ASSERT_EQ(counts[c]->hits[i].load(), 5) << "caller " << c << " index " << i;
}

// Many short jobs back to back, as a model's dispatches come: with the
// idle workers polling (the default), with polling off (KILN_SPIN_US=0) and
// with a budget so short that workers fall asleep between jobs, every index
// runs exactly once and the pool stops cleanly.
TEST(ThreadPool, ShortJobsBackToBackWithAndWithoutPolling) {
  for (const char *spin : {static_cast<const char *>(nullptr), "0", "1"}) {
    if (spin)
      setenv("KILN_SPIN_US", spin, 1);
    {
      ThreadPool pool(3);
      for (int job = 0; job < 2000; ++job) {
        Counts counts(0, 3 + job % 7);
        pool.parallelFor(0, 3 + job % 7, &Counts::body, &counts);
        ASSERT_EQ(counts.firstWrong(), -1) << "KILN_SPIN_US=" << (spin ? spin : "unset")
                                           << ", job " << job;
        if (job % 500 == 0) // let the workers reach their condition variable
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
    unsetenv("KILN_SPIN_US");
  }
}

} // namespace
} // namespace kiln::rt
