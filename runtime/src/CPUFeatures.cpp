//===- CPUFeatures.cpp - The x86 extensions an artifact needs -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "CPUFeatures.h"

#include "kiln-c/abi.h"

namespace kiln::rt {

bool hostHasCPUFeature(std::string_view feature) {
  // __builtin_cpu_supports takes string literals only: one test per name of
  // the list. libgcc's answer includes the OS's support (XSAVE state) for
  // the AVX and AVX-512 registers.
  __builtin_cpu_init();
#define KILN_TEST_FEATURE(name)                                                \
  if (feature == name)                                                         \
    return __builtin_cpu_supports(name);
  KILN_ABI_CPU_FEATURES(KILN_TEST_FEATURE)
#undef KILN_TEST_FEATURE
  return false;
}

bool isKnownCPUFeature(std::string_view feature) {
#define KILN_IS_FEATURE(name)                                                  \
  if (feature == name)                                                         \
    return true;
  KILN_ABI_CPU_FEATURES(KILN_IS_FEATURE)
#undef KILN_IS_FEATURE
  return false;
}

CPUFeatureGaps findCPUFeatureGaps(const char *list, bool (*has)(std::string_view)) {
  CPUFeatureGaps gaps;
  if (!list)
    return gaps;
  std::string_view rest(list);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view feature = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (feature.empty())
      continue;
    if (!isKnownCPUFeature(feature))
      gaps.unknown.emplace_back(feature);
    else if (!has(feature))
      gaps.missing.emplace_back(feature);
  }
  return gaps;
}

namespace {
std::string join(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}
} // namespace

std::string describeCPUFeatureGaps(const CPUFeatureGaps &gaps) {
  std::string text;
  if (!gaps.missing.empty())
    text = "it was compiled for CPU extensions this CPU lacks (" + join(gaps.missing) +
           "); compile it again with kilnc --cpu=native on this machine, or a --cpu "
           "this machine has";
  if (!gaps.unknown.empty())
    text += std::string(text.empty() ? "" : "; ") + "it needs CPU extensions this runtime " +
            "does not know (" + join(gaps.unknown) + "): use the runtime of the kilnc that " +
            "compiled it";
  return text;
}

} // namespace kiln::rt
