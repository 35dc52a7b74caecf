//===- RunGuard.cpp - Run-time check failures and heap memory of one run --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "RunGuard.h"

#include "Status.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace kiln::rt {
namespace {

/// The run this thread called (RunGuard::call), and how deep it is in
/// parallel_for bodies: failures unwind and allocations are counted only at
/// depth 0 of the calling thread.
thread_local RunGuard *current = nullptr;
thread_local int parallelDepth = 0;

/// Longest message taken from an artifact.
constexpr size_t kMaxMessage = 1024;

void *alignedAlloc(uint64_t bytes, uint64_t alignment) {
  if (bytes > SIZE_MAX - 4096)
    return nullptr;
  if (alignment <= alignof(std::max_align_t))
    return std::malloc(bytes ? bytes : 1); // MLIR's generic alloc aligns itself
  if (alignment & (alignment - 1))
    alignment = 64;
  void *memory = nullptr;
  if (posix_memalign(&memory, alignment, bytes ? bytes : 1) != 0)
    return nullptr;
  return memory;
}

/// `message` with "{0}" and "{1}" replaced by `got` and `expected`.
std::string format(const char *message, int64_t got, int64_t expected) {
  std::string text = message ? std::string(message, strnlen(message, kMaxMessage))
                             : std::string("run-time check failed ({0} vs {1})");
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{' && i + 2 < text.size() && text[i + 2] == '}' &&
        (text[i + 1] == '0' || text[i + 1] == '1')) {
      out += std::to_string(text[i + 1] == '0' ? got : expected);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

} // namespace

RunGuard::RunGuard(uint64_t heapLimit, uint64_t inUse, uint64_t sessionLimit)
    : limit(heapLimit), baseUse(inUse), sessionLimit(sessionLimit) {
  live.reserve(16);
}

RunGuard::~RunGuard() {
  for (const LiveBlock &block : live)
    release(block);
  if (cache)
    cache->endRun(cacheRun, peak);
}

void RunGuard::useCache(HeapCache &heapCache) {
  cache = &heapCache;
  cacheRun = cache->beginRun();
}

void RunGuard::release(const LiveBlock &block) {
  if (block.blockBytes)
    cache->give(block.memory, block.blockBytes, cacheRun, peak);
  else
    std::free(block.memory);
}

void RunGuard::attach(kiln_abi_host &host) {
  host.run_context = this;
  host.fail = &failService;
  host.alloc = &allocService;
  host.free = &freeService;
}

int32_t RunGuard::call(kiln_abi_run_fn run, void *const *buffers, const int64_t *dims,
                       const kiln_abi_host *host) {
  RunGuard *volatile savedRun = current;
  volatile int savedDepth = parallelDepth;
  if (setjmp(jump) != 0) {
    current = savedRun;
    parallelDepth = savedDepth;
    return kFailed;
  }
  current = this;
  parallelDepth = 0;
  int32_t result = run(buffers, dims, host);
  current = savedRun;
  parallelDepth = savedDepth;
  std::lock_guard<std::mutex> lock(mutex);
  return hasFailure ? kFailed : result;
}

void RunGuard::enterParallel() { ++parallelDepth; }

void RunGuard::leaveParallel() { --parallelDepth; }

bool RunGuard::onCallingThread() const { return current == this; }

bool RunGuard::mayUnwind() const { return current == this && parallelDepth == 0; }

void RunGuard::unwind() { std::longjmp(jump, 1); }

void RunGuard::record(kiln_status_code failureCode, std::string failureMessage) {
  std::lock_guard<std::mutex> lock(mutex);
  if (hasFailure)
    return;
  hasFailure = true;
  code = failureCode;
  message = std::move(failureMessage);
}

// The services hold no object with a destructor when they unwind: the work
// that needs them happens in a nested scope or function first.
void RunGuard::failService(void *context, const char *message, int64_t got,
                           int64_t expected) {
  auto *self = static_cast<RunGuard *>(context);
  try {
    self->record(KILN_STATUS_INVALID_ARGUMENT, format(message, got, expected));
  } catch (...) {
    self->record(KILN_STATUS_INVALID_ARGUMENT, std::string());
  }
  if (self->mayUnwind())
    self->unwind();
}

void *RunGuard::allocService(void *context, uint64_t bytes, uint64_t alignment) {
  auto *self = static_cast<RunGuard *>(context);
  if (!self->mayUnwind())
    return alignedAlloc(bytes, alignment); // a parallel_for body: not counted
  void *memory = nullptr;
  uint64_t blockBytes = 0;
  bool cached = self->cache && alignment <= HeapCache::kAlignment;
  if (bytes > self->limit - self->used) {
    self->refuse(bytes);
  } else if (!(memory = cached ? self->cache->take(bytes, &blockBytes)
                               : alignedAlloc(bytes, alignment))) {
    self->cannotAllocate(bytes);
  } else {
    LiveBlock block{memory, bytes, blockBytes};
    try {
      self->live.push_back(block);
      self->used += bytes;
      if (self->used > self->peak)
        self->peak = self->used;
    } catch (...) { // the bookkeeping itself ran out of memory
      self->release(block);
      memory = nullptr;
      self->cannotAllocate(bytes);
    }
  }
  if (!memory)
    self->unwind();
  return memory;
}

void RunGuard::refuse(uint64_t bytes) {
  try {
    record(KILN_STATUS_RESOURCE_EXHAUSTED,
           cat("an intermediate buffer of ", bytes, " bytes is over the session's byte limit of ",
               sessionLimit, " bytes (", baseUse + used,
               " bytes in use by the arena, the outputs and other intermediates)"));
  } catch (...) {
    record(KILN_STATUS_RESOURCE_EXHAUSTED, std::string());
  }
}

void RunGuard::cannotAllocate(uint64_t bytes) {
  try {
    record(KILN_STATUS_RESOURCE_EXHAUSTED,
           cat("cannot allocate an intermediate buffer of ", bytes, " bytes"));
  } catch (...) {
    record(KILN_STATUS_RESOURCE_EXHAUSTED, std::string());
  }
}

void RunGuard::freeService(void *context, void *memory) {
  if (!memory)
    return;
  auto *self = static_cast<RunGuard *>(context);
  if (self->onCallingThread())
    for (size_t i = self->live.size(); i-- > 0;)
      if (self->live[i].memory == memory) {
        LiveBlock block = self->live[i];
        self->used -= block.bytes;
        self->live[i] = self->live.back();
        self->live.pop_back();
        self->release(block);
        return;
      }
  std::free(memory);
}

} // namespace kiln::rt
