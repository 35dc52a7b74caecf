//===- Trace.h - Per-dispatch timing: kiln_trace and a run's recorder ------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TRACE_H
#define KILN_RUNTIME_TRACE_H

#include "kiln-c/abi.h"
#include "kiln-c/runtime.h"

#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <vector>

struct kiln_trace {
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
  mutable std::mutex mutex;
  std::vector<kiln_trace_event> events;
  std::set<std::string> names; // event names point into these nodes

  uint64_t nowNs() const {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now() - origin)
                                     .count());
  }
};

namespace kiln::rt {

/// Records one run: generated code calls the hooks on the run's thread
/// (dispatches are not nested, but a stack costs nothing and tolerates it);
/// finish() appends the events to the trace under its lock.
class RunRecorder {
public:
  RunRecorder(kiln_trace &trace, const std::vector<std::string> &dispatchNames);
  /// Sets the hooks of `host` to this recorder.
  void attach(kiln_abi_host &host);
  /// Appends the run's events (the run itself last) to the trace.
  void finish();
  /// A dispatch span timed elsewhere (CUDA events), in the trace's ns.
  void addSpan(int32_t dispatch, uint64_t beginNs, uint64_t endNs);
  uint64_t nowNs() const { return trace.nowNs(); }

private:
  static void begin(void *self, int32_t dispatch);
  static void end(void *self, int32_t dispatch);

  kiln_trace &trace;
  const std::vector<std::string> &dispatchNames;
  uint32_t thread;
  uint64_t runBegin;
  std::vector<std::pair<int32_t, uint64_t>> open;
  std::vector<kiln_trace_event> events; // names filled in by finish()
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_TRACE_H
