//===- RunGuard.h - Run-time check failures and heap memory of one run ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The checks and memory block of kiln_abi_host (ABI v3). A RunGuard lives on
// the stack of the run: it counts the heap memory generated code asks for
// against what the session's byte limit leaves after the arena and the
// outputs, remembers the first failure, and frees whatever is still
// allocated when the run ends. A failed check or a refused allocation on the
// thread that called run, outside parallel_for bodies, does not return to
// generated code: it longjmps back to RunGuard::call. That is safe there:
// generated code is C without destructors, and the runtime's frames between
// call and the service (none but the service itself) hold no objects.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_RUNGUARD_H
#define KILN_RUNTIME_RUNGUARD_H

#include "HeapCache.h"
#include "kiln-c/abi.h"
#include "kiln-c/runtime.h"

#include <csetjmp>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kiln::rt {

class RunGuard {
public:
  /// `heapLimit`: the bytes generated code may allocate (the session's limit
  /// minus the arena and the outputs); `inUse`: those already taken, for
  /// messages.
  RunGuard(uint64_t heapLimit, uint64_t inUse, uint64_t sessionLimit);
  ~RunGuard(); // frees what is still allocated (into the cache, if any)
  RunGuard(const RunGuard &) = delete;
  RunGuard &operator=(const RunGuard &) = delete;

  /// Takes the intermediates generated code allocates (alignment up to
  /// HeapCache::kAlignment, on the thread that called run) from `cache` and
  /// gives them back to it; call before call(). `cache` outlives the guard.
  void useCache(HeapCache &cache);

  /// Fills the run_context, fail, alloc and free fields of `host`.
  void attach(kiln_abi_host &host);

  /// Calls run(buffers, dims, host). Returns its code, or kFailed after a
  /// failure that unwound the run (then failed() is true).
  static constexpr int32_t kFailed = -1;
  int32_t call(kiln_abi_run_fn run, void *const *buffers, const int64_t *dims,
               const kiln_abi_host *host);

  /// Whether a check or allocation failed; the status to return then.
  bool failed() const { return hasFailure; }
  kiln_status_code failureCode() const { return code; }
  const std::string &failureMessage() const { return message; }

  /// The bytes generated code may allocate, and those the arena and the
  /// outputs already take (for messages).
  uint64_t heapLimit() const { return limit; }
  uint64_t plannedBytes() const { return baseUse; }
  uint64_t byteLimit() const { return sessionLimit; }

  /// Bytes allocated by the service and not yet freed, and their maximum.
  uint64_t heapBytes() const { return used; }
  uint64_t peakHeapBytes() const { return peak; }

  /// Around the pool's parallelFor: failures inside bodies must not unwind
  /// (other threads still run them), and their memory is not counted.
  static void enterParallel();
  static void leaveParallel();

private:
  static void failService(void *context, const char *message, int64_t got, int64_t expected);
  static void *allocService(void *context, uint64_t bytes, uint64_t alignment);
  static void freeService(void *context, void *ptr);

  /// Records the first failure.
  void record(kiln_status_code code, std::string message);
  /// Record why `bytes` could not be had: over the limit, or not allocated
  /// (never throw).
  void refuse(uint64_t bytes);
  void cannotAllocate(uint64_t bytes);
  [[noreturn]] void unwind();
  /// On the thread that called run: anywhere, or outside parallel_for bodies.
  bool onCallingThread() const;
  bool mayUnwind() const;

  std::mutex mutex; // guards the failure (fail may come from any thread)
  // Counted allocations, only touched by the thread that called run (alloc
  // counts only there, and memory is freed on the thread that allocated it):
  // no lock. Usually few and freed in reverse order: a vector searched from
  // the back.
  struct LiveBlock {
    void *memory;
    uint64_t bytes;      // asked for (counted)
    uint64_t blockBytes; // the cache's block size; 0: from malloc
  };
  std::vector<LiveBlock> live;
  /// Gives `block` back to where it came from.
  void release(const LiveBlock &block);
  HeapCache *cache = nullptr;
  uint64_t cacheRun = 0; // this run's serial in the cache
  uint64_t limit, used = 0, peak = 0;
  uint64_t baseUse, sessionLimit;
  bool hasFailure = false;
  kiln_status_code code = KILN_STATUS_OK;
  std::string message;
  std::jmp_buf jump;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_RUNGUARD_H
