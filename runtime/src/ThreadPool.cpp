//===- ThreadPool.cpp - The session thread pool behind kiln_abi_host -------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A job is a range whose indices are claimed in chunks with one atomic
// counter. It lives on the stack of the parallelFor caller, so the caller
// must not return while a worker still holds a pointer to it: workers pick
// jobs from the queue under the mutex and count themselves in `workers`, and
// the caller waits, after removing the job from the queue, until that count
// is zero. Every claimed chunk is finished by then.
//
// A model's dispatches follow each other within microseconds, and waking a
// worker that sleeps on the condition variable costs tens of microseconds:
// an idle worker first polls for the next job for a short while (`spin`)
// and sleeps only when none came; a caller waiting for the workers to leave
// its job polls the same way.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace kiln::rt {

struct ThreadPool::Job {
  int64_t end;
  int64_t chunk;
  Body body;
  void *ctx;
  std::atomic<int64_t> next;
  // Changed under ThreadPool::mutex; atomic so that the caller may poll it.
  std::atomic<int> workers{0};
};

namespace {

/// One polling step: a `pause` where x86 has it (it yields the core's
/// pipeline to its sibling and saves power), else nothing.
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

/// KILN_SPIN_US (0 turns polling off), else 100 microseconds.
std::chrono::microseconds spinBudget() {
  const char *text = std::getenv("KILN_SPIN_US");
  if (!text || !*text)
    return std::chrono::microseconds(100);
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end || value < 0)
    return std::chrono::microseconds(100);
  return std::chrono::microseconds(std::min(value, 100000L));
}

} // namespace

ThreadPool::ThreadPool(int numThreads) : spin(spinBudget()) {
  try {
    for (int i = 1; i < numThreads; ++i)
      workers.emplace_back([this] { workerLoop(); });
  } catch (...) {
    stopWorkers();
    throw;
  }
}

ThreadPool::~ThreadPool() { stopWorkers(); }

void ThreadPool::stopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    posted.fetch_add(1, std::memory_order_release);
  }
  workAvailable.notify_all();
  for (std::thread &worker : workers)
    worker.join();
  workers.clear();
}

void ThreadPool::runChunks(Job &job) {
  for (;;) {
    int64_t first = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (first >= job.end)
      return;
    int64_t last = first + std::min(job.chunk, job.end - first);
    for (int64_t i = first; i < last; ++i)
      job.body(job.ctx, i);
  }
}

void ThreadPool::workerLoop() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    if (!stopping && jobs.empty() && spin.count() > 0) {
      // Poll for the next job (without the lock) before sleeping.
      uint64_t seen = posted.load(std::memory_order_acquire);
      lock.unlock();
      auto deadline = std::chrono::steady_clock::now() + spin;
      for (int i = 0; posted.load(std::memory_order_acquire) == seen; ++i) {
        relax();
        if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline)
          break;
      }
      lock.lock();
    }
    workAvailable.wait(lock, [this] { return stopping || !jobs.empty(); });
    if (jobs.empty())
      return; // stopping, and no caller is waiting on us
    Job *job = jobs.front();
    ++job->workers;
    lock.unlock();
    runChunks(*job);
    lock.lock();
    // The job is exhausted; take it off the queue so no one else picks it.
    auto it = std::find(jobs.begin(), jobs.end(), job);
    if (it != jobs.end())
      jobs.erase(it);
    if (--job->workers == 0)
      workerLeftJob.notify_all();
  }
}

void ThreadPool::parallelFor(int64_t begin, int64_t end, Body body, void *ctx) {
  if (begin >= end)
    return;
  int64_t count = end - begin;
  if (workers.empty() || count == 1) {
    for (int64_t i = begin; i < end; ++i)
      body(ctx, i);
    return;
  }
  // A few chunks per thread balances uneven bodies without contending on
  // the counter for every index.
  int64_t chunk = std::max<int64_t>(1, count / (4 * numThreads()));
  Job job{end, chunk, body, ctx, {begin}};
  {
    std::lock_guard<std::mutex> lock(mutex);
    jobs.push_back(&job);
    posted.fetch_add(1, std::memory_order_release);
  }
  workAvailable.notify_all();
  runChunks(job);
  std::unique_lock<std::mutex> lock(mutex);
  auto it = std::find(jobs.begin(), jobs.end(), &job);
  if (it != jobs.end())
    jobs.erase(it);
  if (job.workers.load() != 0 && spin.count() > 0) {
    // The workers are finishing their last chunks: poll before sleeping.
    // (A worker touches the job no more once its decrement is done.)
    lock.unlock();
    auto deadline = std::chrono::steady_clock::now() + spin;
    for (int i = 0; job.workers.load(std::memory_order_acquire) != 0; ++i) {
      relax();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline)
        break;
    }
    if (job.workers.load(std::memory_order_acquire) == 0)
      return;
    lock.lock();
  }
  workerLeftJob.wait(lock, [&job] { return job.workers.load() == 0; });
}

} // namespace kiln::rt
