//===- GraphCache.cpp - A CUDA model's runs replayed as graphs ------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "cuda/GraphCache.h"

namespace kiln::rt::cuda {

GraphCache::~GraphCache() {
  for (auto &[key, exec] : graphs)
    driver.graphExecDestroy(exec);
  if (captureStream)
    driver.streamDestroy(captureStream);
}

CUgraphExec GraphCache::find(const Key &key) {
  if (!enabled)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = graphs.find(key);
  return it == graphs.end() ? nullptr : it->second;
}

CUstream GraphCache::beginCapture(const Key &key) {
  if (!enabled || !capturable.load())
    return nullptr;
  {
    // Only a key seen before is worth a capture: runs whose dims change
    // every time (a decoder over a growing past) are never captured.
    std::lock_guard<std::mutex> lock(mutex);
    if (!seen.count(key)) {
      if (seen.size() < kMaxSeen)
        seen.insert(key);
      return nullptr;
    }
  }
  if (completedRuns.load() == 0)
    return nullptr;
  if (!capturing.try_lock())
    return nullptr; // another run is capturing: this one runs normally
  {
    std::lock_guard<std::mutex> lock(mutex);
    bool full = graphs.size() >= kMaxGraphs || graphs.count(key);
    if (!full && !captureStream &&
        driver.streamCreate(&captureStream, /*CU_STREAM_NON_BLOCKING*/ 1) != kSuccess)
      captureStream = nullptr;
    if (full || !captureStream) {
      capturing.unlock();
      return nullptr;
    }
  }
  if (driver.streamBeginCapture(captureStream, kStreamCaptureModeRelaxed) != kSuccess) {
    capturable.store(false);
    capturing.unlock();
    return nullptr;
  }
  return captureStream;
}

CUgraphExec GraphCache::endCapture(const Key &key, bool usable) {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  if (driver.streamEndCapture(captureStream, &graph) == kSuccess && usable &&
      driver.graphInstantiate(&exec, graph, 0) != kSuccess)
    exec = nullptr;
  if (graph)
    driver.graphDestroy(graph);
  if (exec) {
    std::lock_guard<std::mutex> lock(mutex);
    graphs.emplace(key, exec);
  } else {
    capturable.store(false);
  }
  capturing.unlock();
  return exec;
}

} // namespace kiln::rt::cuda
