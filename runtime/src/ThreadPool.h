//===- ThreadPool.h - The session thread pool behind kiln_abi_host ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_THREADPOOL_H
#define KILN_RUNTIME_THREADPOOL_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::rt {

/// A fixed set of workers that execute parallelFor ranges. Several threads
/// may call parallelFor at once (concurrent session runs), and a body may
/// itself call parallelFor: the caller always works on its own range, so
/// progress never depends on a free worker.
class ThreadPool {
public:
  using Body = void (*)(void *ctx, int64_t index);

  /// `numThreads` counts the calling thread, so numThreads - 1 workers are
  /// started. Throws std::system_error if a thread cannot be started.
  explicit ThreadPool(int numThreads);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int numThreads() const { return static_cast<int>(workers.size()) + 1; }

  /// Runs body(ctx, i) for every i in [begin, end), each exactly once, and
  /// returns when all have finished.
  void parallelFor(int64_t begin, int64_t end, Body body, void *ctx);

private:
  struct Job;
  void workerLoop();
  static void runChunks(Job &job);
  void stopWorkers();

  /// How long an idle worker polls for the next job before it sleeps on
  /// the condition variable (KILN_SPIN_US, default 100 microseconds).
  std::chrono::microseconds spin;
  /// Bumped whenever a job is queued: what a polling worker watches.
  std::atomic<uint64_t> posted{0};
  std::mutex mutex;
  std::condition_variable workAvailable;
  std::condition_variable workerLeftJob;
  std::deque<Job *> jobs; // jobs that may still have unclaimed indices
  bool stopping = false;
  std::vector<std::thread> workers;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_THREADPOOL_H
