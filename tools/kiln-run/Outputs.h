//===- Outputs.h - kiln-run's outputs: printing, .npy files, comparison ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_OUTPUTS_H
#define KILN_TOOLS_KILNRUN_OUTPUTS_H

#include "KilnRun.h"

#include <map>
#include <string>

namespace kilnrun {

/// The file name for an output: characters outside [A-Za-z0-9._-] become
/// '_', and ".npy" is appended.
std::string outputFileName(const std::string &name);

/// One line per output: name, dtype, shape and the first values.
void printOutputs(const Outputs &outputs);

/// Writes DIR/NAME.npy for every output, creating DIR if needed.
void writeOutputs(const Outputs &outputs, const std::string &dir);

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

/// Compares each output with DIR/NAME.npy, printing the max abs/rel error
/// per output. Returns how many outputs differ: a reference of another shape
/// or dtype; for floats, an element outside the tolerance (it passes if
/// |got - want| <= atol + rtol * |want|, as numpy.allclose); integers and
/// bools, any element not equal. `perOutput` overrides `tolerance` for the
/// outputs it names (naming one the model lacks is an error).
int compareOutputs(const Outputs &outputs, const std::string &dir,
                   const Tolerance &tolerance,
                   const std::map<std::string, Tolerance> &perOutput = {});

} // namespace kilnrun

#endif // KILN_TOOLS_KILNRUN_OUTPUTS_H
