//===- SessionRun.h - Running a validated plan into caller-chosen buffers ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln_session_run allocates a fresh tensor per output; the decoder keeps its
// KV cache in buffers it owns and lets the model write its presents there.
// Both go through runPlanned.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SESSIONRUN_H
#define KILN_RUNTIME_SESSIONRUN_H

#include "Validation.h"

#include <string>
#include <vector>

namespace kiln::rt {

const kiln_model &sessionModel(const kiln_session &session);
/// The session's byte limit of one run, resolved (never 0).
uint64_t sessionMaxBytes(const kiln_session &session);

/// Runs the model on a plan that planRun validated, writing output i into
/// outputData[i], which must hold at least plan.outputBytes[i] bytes. On a
/// CUDA session, inputs and outputs whose data pointer is in `onDevice` are
/// device memory from sessionDeviceAlloc, used in place (no copies).
kiln_status *runPlanned(kiln_session &session, const RunPlan &plan,
                        void *const *outputData, kiln_trace *trace,
                        const std::vector<const void *> &onDevice = {});

/// True for a CUDA session.
bool sessionOnDevice(const kiln_session &session);
/// Device memory of a CUDA session that outlives runs; null with `error`
/// set on failure. Freed with sessionDeviceFree while the session lives.
void *sessionDeviceAlloc(kiln_session &session, uint64_t bytes, std::string &error);
void sessionDeviceFree(kiln_session &session, void *ptr);
/// Copies `bytes` of such memory to host memory `dst`; false with `error`
/// set on failure.
bool sessionDeviceCopyToHost(const kiln_session &session, void *dst, const void *src,
                             uint64_t bytes, std::string &error);
/// Copies `bytes` from host memory to device memory from sessionDeviceAlloc.
bool sessionDeviceCopyToDevice(kiln_session &session, void *dst, const void *src,
                               uint64_t bytes, std::string &error);

} // namespace kiln::rt

#endif // KILN_RUNTIME_SESSIONRUN_H
