//===- StageTest.cpp - Unit tests for the ordered stage enum --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Pipelines/Pipelines.h"

#include <gtest/gtest.h>

namespace {

TEST(Stages, NamesRoundTripInPipelineOrder) {
  const char *names[] = {"import", "graph", "linalg", "dispatch", "codegen",
                         "llvm",   "ptx",   "obj",    "lib"};
  int previous = -1;
  for (const char *name : names) {
    std::optional<kiln::Stage> stage = kiln::parseStage(name);
    ASSERT_TRUE(stage.has_value()) << name;
    EXPECT_EQ(kiln::stageName(*stage), name);
    EXPECT_GT(static_cast<int>(*stage), previous) << name;
    previous = static_cast<int>(*stage);
  }
  EXPECT_EQ(kiln::stageNameList(),
            "import|graph|linalg|dispatch|codegen|llvm|ptx|obj|lib");
}

TEST(Stages, UnknownNamesAreRejected) {
  EXPECT_FALSE(kiln::parseStage("Graph").has_value());
  EXPECT_FALSE(kiln::parseStage("").has_value());
}

} // namespace
