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
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <algorithm>
#include <atomic>

namespace kiln::rt {

struct ThreadPool::Job {
  int64_t end;
  int64_t chunk;
  Body body;
  void *ctx;
  std::atomic<int64_t> next;
  int workers = 0; // guarded by ThreadPool::mutex
};

ThreadPool::ThreadPool(int numThreads) {
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
  }
  workAvailable.notify_all();
  runChunks(job);
  std::unique_lock<std::mutex> lock(mutex);
  auto it = std::find(jobs.begin(), jobs.end(), &job);
  if (it != jobs.end())
    jobs.erase(it);
  workerLeftJob.wait(lock, [&job] { return job.workers == 0; });
}

} // namespace kiln::rt
