//===- CPUFeatures.h - The x86 extensions an artifact needs ------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// An artifact compiled for AVX-512 dies with SIGILL on a CPU without it;
// the loader compares the artifact's cpu_features (ABI v5) with this CPU's
// first and refuses it with the missing extensions named.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPUFEATURES_H
#define KILN_RUNTIME_CPUFEATURES_H

#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

/// The entries of a cpu_features list this CPU lacks, and those that are
/// not in KILN_ABI_CPU_FEATURES (an artifact of a newer compiler).
struct CPUFeatureGaps {
  std::vector<std::string> missing, unknown;
  bool empty() const { return missing.empty() && unknown.empty(); }
};

/// Whether this CPU (and its OS) supports `feature`, one of
/// KILN_ABI_CPU_FEATURES; false for any other name.
bool hostHasCPUFeature(std::string_view feature);

/// Whether `feature` is one of KILN_ABI_CPU_FEATURES.
bool isKnownCPUFeature(std::string_view feature);

/// The gaps between the comma-separated `list` (NULL or "" = none) and the
/// CPU that `has` describes (hostHasCPUFeature by default; tests pass
/// another). Empty entries are ignored.
CPUFeatureGaps findCPUFeatureGaps(const char *list,
                                  bool (*has)(std::string_view) = hostHasCPUFeature);

/// "needs avx512f, avx512bw, which this CPU lacks" style text of `gaps`.
std::string describeCPUFeatureGaps(const CPUFeatureGaps &gaps);

} // namespace kiln::rt

#endif // KILN_RUNTIME_CPUFEATURES_H
