//===- Profile.cpp - kiln-run's per-dispatch profile table -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Profile.h"

#include "KilnRun.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <string>
#include <vector>

namespace kilnrun {

void printProfile(const kiln_trace *trace) {
  struct Row {
    std::string name;
    int32_t id = 0; // the dispatch's trace id (kilnc --report=cost lists the same ids)
    double totalMs = 0;
    size_t calls = 0;
  };
  std::map<int32_t, Row> rows;
  double runMs = 0, dispatchMs = 0;
  size_t runs = 0;
  for (size_t i = 0; i < kiln_trace_event_count(trace); ++i) {
    kiln_trace_event event;
    check(kiln_trace_get_event(trace, i, &event));
    double ms = static_cast<double>(event.end_ns - event.begin_ns) / 1e6;
    if (event.dispatch < 0) {
      runMs += ms;
      ++runs;
      continue;
    }
    Row &row = rows[event.dispatch];
    row.name = event.name;
    row.id = event.dispatch;
    row.totalMs += ms;
    ++row.calls;
    dispatchMs += ms;
  }
  std::vector<Row> sorted;
  for (auto &[dispatch, row] : rows)
    sorted.push_back(row);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Row &a, const Row &b) { return a.totalMs > b.totalMs; });
  auto share = [&](double ms) { return runMs > 0 ? 100.0 * ms / runMs : 0.0; };
  fmt::print("profile: {} runs, {} dispatches, {:.3f} ms per run\n", runs, sorted.size(),
             runs ? runMs / static_cast<double>(runs) : 0.0);
  fmt::print("  {:>6}  {:>10}  {:>10}  {:>6}  {:>4}  {}\n", "share", "total_ms", "mean_ms",
             "calls", "id", "dispatch");
  for (const Row &row : sorted)
    fmt::print("  {:>5.1f}%  {:>10.3f}  {:>10.4f}  {:>6}  {:>4}  {}\n", share(row.totalMs),
               row.totalMs, row.totalMs / static_cast<double>(row.calls), row.calls, row.id,
               row.name);
  double outside = std::max(0.0, runMs - dispatchMs);
  fmt::print("  {:>5.1f}%  {:>10.3f}  {:>10}  {:>6}  {:>4}  (outside dispatches: validation, "
             "output allocation, glue)\n",
             share(outside), outside, "", "", "");
}

} // namespace kilnrun
