//===- Validation.h - Checks a run's inputs and plans its outputs ----------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_VALIDATION_H
#define KILN_RUNTIME_VALIDATION_H

#include "Model.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::rt {

/// Everything a run needs once its inputs are known to be valid.
struct RunPlan {
  std::vector<const kiln_tensor *> inputs; // in the model's input order
  std::vector<int64_t> dims;   // every input's dims, then every output's
  size_t firstOutputDim = 0;   // index in `dims` of the first output's dims
  std::vector<size_t> outputBytes;
};

/// Validates the inputs of one run against the model (count, names, dtypes,
/// ranks, static dims, symbolic-dim consistency, byte sizes) and sizes the
/// outputs, refusing them if they exceed `maxBytes`. Touches no tensor data.
kiln_status *planRun(const kiln_model &model, uint64_t maxBytes,
                     const kiln_tensor *inputs, size_t numInputs,
                     size_t numOutputs, RunPlan &plan);

/// Fails if some symbolic output dim is not bound by any input, since the
/// runtime could not size that output.
kiln_status *checkOutputsSizable(const kiln_model &model);

} // namespace kiln::rt

#endif // KILN_RUNTIME_VALIDATION_H
