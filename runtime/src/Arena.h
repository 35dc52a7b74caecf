//===- Arena.h - A session's scratch arenas, one per concurrent run --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kilnc plans every static intermediate buffer of a model into one arena
// (offsets from buffer lifetimes, descriptor field arena_bytes). A run needs
// an arena of its own; the session keeps the arenas it made, so a run takes a
// free one and only concurrency beyond what was seen before allocates. Their
// pages stay mapped, so steady-state runs do not page-fault on scratch.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARENA_H
#define KILN_RUNTIME_ARENA_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace kiln::rt {

class ArenaPool {
public:
  explicit ArenaPool(uint64_t bytes) : bytes(bytes) {}
  ~ArenaPool();
  ArenaPool(const ArenaPool &) = delete;
  ArenaPool &operator=(const ArenaPool &) = delete;

  /// A free arena, or a new one (64-byte aligned); NULL when out of memory
  /// or when the model needs none.
  void *acquire();
  void release(void *arena);
  /// Arenas made so far (the most runs that were in flight at once).
  size_t size() const;
  uint64_t arenaBytes() const { return bytes; }

private:
  uint64_t bytes;
  mutable std::mutex mutex;
  std::vector<void *> all, available;
};

/// Holds an arena for the duration of one run.
class ArenaLease {
public:
  explicit ArenaLease(ArenaPool &pool) : pool(pool), arena(pool.acquire()) {}
  ~ArenaLease() {
    if (arena)
      pool.release(arena);
  }
  ArenaLease(const ArenaLease &) = delete;
  ArenaLease &operator=(const ArenaLease &) = delete;
  void *get() const { return arena; }

private:
  ArenaPool &pool;
  void *arena;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_ARENA_H
