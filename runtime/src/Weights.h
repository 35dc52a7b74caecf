//===- Weights.h - Weights that are not embedded: mapped file or generated --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_WEIGHTS_H
#define KILN_RUNTIME_WEIGHTS_H

#include "Model.h"

#include <optional>
#include <string>

namespace kiln::rt {

struct WeightsProblem {
  kiln_status_code code;
  std::string reason;
};

/// For KILN_ABI_WEIGHTS_EXTERNAL, maps the weights file that lies next to
/// the artifact and checks its size and checksum; for _NONE, allocates the
/// blob and fills it with seeded pseudo-random f32 values. Sets
/// model.weights (and weightsPath). Nothing to do for embedded weights.
std::optional<WeightsProblem> loadWeights(kiln_model &model);

/// The seed of KILN_ABI_WEIGHTS_NONE's values: fixed, so that runs repeat.
inline constexpr uint64_t kGeneratedWeightsSeed = 0x4B494C4E57454947ull;

} // namespace kiln::rt

#endif // KILN_RUNTIME_WEIGHTS_H
