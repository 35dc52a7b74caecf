//===- Inputs.h - kiln-run's model inputs: .npy files or seeded random -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_INPUTS_H
#define KILN_TOOLS_KILNRUN_INPUTS_H

#include "KilnRun.h"
#include "npy/Npy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kilnrun {

struct InputOptions {
  std::vector<std::string> files;  // NAME=FILE.npy
  std::vector<std::string> shapes; // NAME=2x3x4
  uint64_t seed = 1;
  uint64_t maxBytes = 0; // generated inputs larger than this are refused
};

/// The inputs of one run, in the model's input order.
struct Inputs {
  std::vector<std::string> names;
  std::vector<kiln::npy::Array> arrays;

  std::vector<kiln_tensor> views();
};

/// Reads the --input files and generates every other input from the
/// descriptor: static dims as they are, symbolic dims from --shape, from a
/// file input with the same symbol, or 1. Prints one line per input.
/// Shapes are not checked here; kiln_session_run reports mismatches.
Inputs prepareInputs(const kiln_model *model, const InputOptions &options);

/// "2x3x4" -> {2, 3, 4}; "" is a scalar.
std::vector<int64_t> parseShape(const std::string &text);

} // namespace kilnrun

#endif // KILN_TOOLS_KILNRUN_INPUTS_H
