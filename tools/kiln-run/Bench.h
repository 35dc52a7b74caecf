//===- Bench.h - kiln-run's --bench timing loop and latency statistics -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_BENCH_H
#define KILN_TOOLS_KILNRUN_BENCH_H

#include "KilnRun.h"

#include <functional>
#include <vector>

namespace kilnrun {

struct LatencyStats {
  double min = 0, median = 0, p90 = 0, max = 0, mean = 0;
};

/// Order statistics of `samples` (milliseconds); p90 is the nearest rank.
LatencyStats summarize(std::vector<double> samples);

/// Runs `runOnce` `iterations` times, timing each, and prints the
/// throughput and the final `latency_ms ...` line. `deviceMs`, if given,
/// returns the device time of the run just done: its statistics are printed
/// as `device_ms ...` before the latency line.
void bench(const std::function<void()> &runOnce, int iterations,
           const std::function<double()> &deviceMs = {});

} // namespace kilnrun

#endif // KILN_TOOLS_KILNRUN_BENCH_H
