//===- TargetPipelines.h - The targets of lib/Pipelines, one file each -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===-----------------------------------------------------------------------------===//
//
// Private to lib/Pipelines: each target's TargetInfo, defined with its
// policy, its stage 5-6 pipelines and its writer in one file.
//
//===-----------------------------------------------------------------------------===//

#ifndef KILN_LIB_PIPELINES_TARGETPIPELINES_H
#define KILN_LIB_PIPELINES_TARGETPIPELINES_H

#include "kiln/Pipelines/TargetInfo.h"

namespace kiln {

/// CPUPipelines.cpp: x86-64 host code.
const TargetInfo &cpuTargetInfo();
/// CUDAPipelines.cpp: NVIDIA kernels and their host code.
const TargetInfo &cudaTargetInfo();
/// CUDAPipelines.cpp: `--kiln-cuda-{dispatch,codegen,llvm}-pipeline`.
void registerCUDAStagePipelines();

} // namespace kiln

#endif // KILN_LIB_PIPELINES_TARGETPIPELINES_H
