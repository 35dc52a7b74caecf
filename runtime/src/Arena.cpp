//===- Arena.cpp - A session's scratch arenas, one per concurrent run ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Arena.h"

#include <cstdlib>

namespace kiln::rt {

ArenaPool::~ArenaPool() {
  for (void *arena : all)
    std::free(arena);
}

void *ArenaPool::acquire() {
  if (bytes == 0)
    return nullptr;
  if (bytes > UINT64_MAX - 63)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (!available.empty()) {
    void *arena = available.back();
    available.pop_back();
    return arena;
  }
  // Room first (this may throw), so that neither push_back below nor
  // release() can fail with an arena in hand.
  all.reserve(all.size() + 1);
  available.reserve(all.size() + 1);
  // aligned_alloc wants a multiple of the alignment. Allocating under the
  // lock is rare: only when more runs are in flight than ever before.
  void *arena = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (arena)
    all.push_back(arena);
  return arena;
}

void ArenaPool::release(void *arena) {
  std::lock_guard<std::mutex> lock(mutex);
  available.push_back(arena);
}

size_t ArenaPool::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return all.size();
}

} // namespace kiln::rt
