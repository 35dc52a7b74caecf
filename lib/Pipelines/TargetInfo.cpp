//===- TargetInfo.cpp - The TargetInfo of each --target -------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Each target's policy, pipelines and writer are defined in one file:
// CPUPipelines.cpp and CUDAPipelines.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/Pipelines/TargetInfo.h"
#include "TargetPipelines.h"

namespace kiln {

void registerTargetPipelines() { registerCUDAStagePipelines(); }

const TargetInfo &getTargetInfo(Target target) {
  switch (target) {
  case Target::CPU: return cpuTargetInfo();
  case Target::CUDA: return cudaTargetInfo();
  }
  llvm_unreachable("unknown target");
}

} // namespace kiln
