//===- RunGuard.cpp - Run-time check failures and heap memory of one run --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "RunGuard.h"

#include "Status.h"

#include <cstdlib>
#include <cstring>

namespace kiln::rt {
namespace {

/// The run whose failures may unwind on this thread: set by RunGuard::call
/// on the thread that called run, cleared while that thread works on
/// parallel_for bodies.
thread_local RunGuard *unwindable = nullptr;

/// Longest message taken from an artifact.
constexpr size_t kMaxMessage = 1024;

void *alignedAlloc(uint64_t bytes, uint64_t alignment) {
  if (alignment < 64 || (alignment & (alignment - 1)))
    alignment = 64;
  if (bytes > SIZE_MAX - alignment)
    return nullptr;
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
    : limit(heapLimit), baseUse(inUse), sessionLimit(sessionLimit) {}

RunGuard::~RunGuard() {
  for (auto &[memory, bytes] : live)
    std::free(memory);
}

void RunGuard::attach(kiln_abi_host &host) {
  host.run_context = this;
  host.fail = &failService;
  host.alloc = &allocService;
  host.free = &freeService;
}

int32_t RunGuard::call(kiln_abi_run_fn run, void *const *buffers, const int64_t *dims,
                       const kiln_abi_host *host) {
  RunGuard *volatile saved = unwindable;
  if (setjmp(jump) != 0) {
    unwindable = saved;
    return kFailed;
  }
  unwindable = this;
  int32_t result = run(buffers, dims, host);
  unwindable = saved;
  std::lock_guard<std::mutex> lock(mutex);
  return hasFailure ? kFailed : result;
}

void *RunGuard::enterParallel() {
  RunGuard *saved = unwindable;
  unwindable = nullptr;
  return saved;
}

void RunGuard::leaveParallel(void *saved) { unwindable = static_cast<RunGuard *>(saved); }

bool RunGuard::mayUnwind() const { return unwindable == this; }

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
  try {
    std::unique_lock<std::mutex> lock(self->mutex);
    if (bytes > self->limit - self->used) {
      uint64_t inUse = self->baseUse + self->used;
      lock.unlock();
      self->record(KILN_STATUS_RESOURCE_EXHAUSTED,
                   cat("an intermediate buffer of ", bytes,
                       " bytes is over the session's byte limit of ", self->sessionLimit,
                       " bytes (", inUse,
                       " bytes in use by the arena, the outputs and other intermediates)"));
    } else if (!(memory = alignedAlloc(bytes, alignment))) {
      lock.unlock();
      self->record(KILN_STATUS_RESOURCE_EXHAUSTED,
                   cat("cannot allocate an intermediate buffer of ", bytes, " bytes"));
    } else {
      self->live.emplace(memory, bytes);
      self->used += bytes;
      if (self->used > self->peak)
        self->peak = self->used;
    }
  } catch (...) { // the bookkeeping itself ran out of memory
    std::free(memory);
    memory = nullptr;
    self->record(KILN_STATUS_RESOURCE_EXHAUSTED,
                 std::string()); // the message is filled in by the caller
  }
  if (!memory)
    self->unwind();
  return memory;
}

void RunGuard::freeService(void *context, void *memory) {
  if (!memory)
    return;
  auto *self = static_cast<RunGuard *>(context);
  {
    std::lock_guard<std::mutex> lock(self->mutex);
    auto it = self->live.find(memory);
    if (it != self->live.end()) {
      self->used -= it->second;
      self->live.erase(it);
    }
  }
  std::free(memory);
}

} // namespace kiln::rt
