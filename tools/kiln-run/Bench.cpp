//===- Bench.cpp - kiln-run's --bench timing loop and latency statistics ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <numeric>

namespace kilnrun {

LatencyStats summarize(std::vector<double> samples) {
  LatencyStats stats;
  if (samples.empty())
    return stats;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  stats.min = samples.front();
  stats.max = samples.back();
  stats.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  stats.p90 = samples[std::max<size_t>(rank, 1) - 1];
  stats.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  return stats;
}

void bench(const std::function<void()> &runOnce, int iterations,
           const std::function<double()> &deviceMs) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> samples, deviceSamples;
  Clock::time_point begin = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    Clock::time_point start = Clock::now();
    runOnce();
    samples.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (deviceMs)
      deviceSamples.push_back(deviceMs());
  }
  double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  LatencyStats stats = summarize(samples);
  fmt::print("bench: {} runs, mean {:.3f} ms, throughput {:.1f} runs/s\n", iterations,
             stats.mean, seconds > 0 ? iterations / seconds : 0.0);
  if (deviceMs) {
    LatencyStats device = summarize(deviceSamples);
    fmt::print("device_ms min={:.4f} median={:.4f} p90={:.4f} max={:.4f}\n", device.min,
               device.median, device.p90, device.max);
  }
  fmt::print("latency_ms min={:.3f} median={:.3f} p90={:.3f} max={:.3f}\n", stats.min,
             stats.median, stats.p90, stats.max);
}

} // namespace kilnrun
