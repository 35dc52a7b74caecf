//===- GraphCache.h - A CUDA model's runs replayed as graphs ----*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// A run of a CUDA artifact is host code that launches one kernel per
// dispatch: tens to hundreds of cuLaunchKernel calls, each a few
// microseconds of CPU, which is the whole run time of a small model. A run
// whose kernels and arguments repeat -- the same device buffers (the
// session's scratch block and its inputs and outputs) and the same dims --
// is captured once into a CUDA graph (on the second run with those buffers
// and dims) and then replayed with one cuGraphLaunch.
//
// What is captured: the model's host function run on a capture stream of
// its own (concurrent runs on the session's stream stay out of it), once the
// session has completed a run (kernel modules loaded, constants and tensor
// maps uploaded). A run that allocates device memory, fails, or whose
// capture the driver refuses is run again normally, and its model is not
// captured again. Keys: the scratch block, the dims, the buffers' addresses;
// at most kMaxGraphs per session. A decoder's runs are replayed too when
// their dims repeat (a static decode step, kilnc --decode-step); its runs
// with a symbolic past change dims and allocate, so the first capture
// attempt fails and turns capture off for the session. Off with KILN_CUDA_GRAPHS=0, and for runs that are traced,
// synchronized per launch or poisoned (those need the launches themselves).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUDA_GRAPHCACHE_H
#define KILN_RUNTIME_CUDA_GRAPHCACHE_H

#include "cuda/Driver.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

namespace kiln::rt::cuda {

class GraphCache {
public:
  static constexpr size_t kMaxGraphs = 16;
  /// Keys remembered as run once (a capture starts on a key's second run).
  static constexpr size_t kMaxSeen = 64;

  /// What a replay depends on: the run's device scratch block (arena and
  /// I/O buffers), its dims, and every buffer the run function is handed
  /// (those in the scratch block, and device memory a decoder owns and binds
  /// in place: its KV cache and logits).
  struct Key {
    CUdeviceptr arena = 0, io = 0;
    std::vector<int64_t> dims;
    std::vector<CUdeviceptr> buffers;
    bool operator<(const Key &other) const {
      return std::tie(arena, io, dims, buffers) <
             std::tie(other.arena, other.io, other.dims, other.buffers);
    }
  };

  /// `enabled`: the driver has graphs and KILN_CUDA_GRAPHS is not "0".
  GraphCache(const Driver &driver, bool enabled) : driver(driver), enabled(enabled) {}
  ~GraphCache();
  GraphCache(const GraphCache &) = delete;
  GraphCache &operator=(const GraphCache &) = delete;

  /// The replayable graph of an earlier run with `key`, or null.
  CUgraphExec find(const Key &key);

  /// Starts capturing a run with `key` when that is worth it (see the file
  /// comment): the stream to run it on, or null to run normally. Only one
  /// capture at a time; a non-null result must be ended with endCapture.
  CUstream beginCapture(const Key &key);

  /// Ends the capture begun by beginCapture. With `usable` (the run neither
  /// failed nor allocated), instantiates and keeps the graph: returns it to
  /// launch. Otherwise, or if the driver refuses, returns null, the model is
  /// not captured again, and the caller runs it normally.
  CUgraphExec endCapture(const Key &key, bool usable);

  /// A run of this session completed (captures start after the first).
  void noteRunCompleted() { completedRuns.fetch_add(1); }

private:
  const Driver &driver;
  const bool enabled;
  std::atomic<bool> capturable{true};
  std::atomic<uint64_t> completedRuns{0};
  std::mutex mutex; // guards graphs and the capture stream
  std::map<Key, CUgraphExec> graphs;
  std::set<Key> seen;
  std::mutex capturing; // held from beginCapture to endCapture
  CUstream captureStream = nullptr;
};

} // namespace kiln::rt::cuda

#endif // KILN_RUNTIME_CUDA_GRAPHCACHE_H
