//===- CPUFeaturesTest.cpp - The loader's CPU extension check -------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "CPUFeatures.h"

#include <gtest/gtest.h>

using namespace kiln::rt;

namespace {

/// An AVX2 machine without AVX-512, whatever runs the test.
bool avx2Machine(std::string_view feature) {
  return feature == "popcnt" || feature == "avx" || feature == "avx2" || feature == "fma";
}

TEST(CPUFeatures, NothingMissingOnACPUThatHasThemAll) {
  EXPECT_TRUE(findCPUFeatureGaps("popcnt,avx,avx2,fma", avx2Machine).empty());
  EXPECT_TRUE(findCPUFeatureGaps("", avx2Machine).empty());
  EXPECT_TRUE(findCPUFeatureGaps(nullptr, avx2Machine).empty());
  EXPECT_TRUE(findCPUFeatureGaps(",avx,,", avx2Machine).empty());
}

TEST(CPUFeatures, MissingExtensionsAreNamedInOrder) {
  CPUFeatureGaps gaps = findCPUFeatureGaps("avx2,avx512f,fma,avx512bw", avx2Machine);
  EXPECT_EQ(gaps.missing, (std::vector<std::string>{"avx512f", "avx512bw"}));
  EXPECT_TRUE(gaps.unknown.empty());
  EXPECT_EQ(describeCPUFeatureGaps(gaps),
            "it was compiled for CPU extensions this CPU lacks (avx512f, avx512bw); compile "
            "it again with kilnc --cpu=native on this machine, or a --cpu this machine has");
}

TEST(CPUFeatures, UnknownNamesAreNotTakenForPresent) {
  CPUFeatureGaps gaps = findCPUFeatureGaps("avx2,avx10.2,amx-bf16", avx2Machine);
  EXPECT_EQ(gaps.missing, (std::vector<std::string>{"amx-bf16"}));
  EXPECT_EQ(gaps.unknown, (std::vector<std::string>{"avx10.2"}));
  EXPECT_NE(describeCPUFeatureGaps(gaps).find("does not know (avx10.2)"), std::string::npos);
}

TEST(CPUFeatures, TheHostHasWhatItsOwnCompilerAssumed) {
  // This test binary is built for baseline x86-64: SSE2 is not in the list,
  // and every machine that runs the suite reports the list consistently.
  EXPECT_FALSE(hostHasCPUFeature("no-such-extension"));
  EXPECT_TRUE(isKnownCPUFeature("avx512f"));
  EXPECT_FALSE(isKnownCPUFeature("sse2"));
  if (hostHasCPUFeature("avx2"))
    EXPECT_TRUE(hostHasCPUFeature("avx"));
  if (hostHasCPUFeature("avx512bw"))
    EXPECT_TRUE(hostHasCPUFeature("avx512f"));
}

} // namespace
