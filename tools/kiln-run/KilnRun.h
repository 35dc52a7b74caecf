//===- KilnRun.h - Shared pieces of the kiln-run tool ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_KILNRUN_H
#define KILN_TOOLS_KILNRUN_KILNRUN_H

#include "kiln-c/runtime.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kilnrun {

/// Any problem that ends the tool: main prints "error: <what>" and exits 1.
struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws ToolError with the status message if `status` is an error.
inline void check(kiln_status *status) {
  if (!status)
    return;
  std::string message = kiln_status_message(status);
  kiln_status_destroy(status);
  throw ToolError(message);
}

struct TensorDeleter {
  void operator()(kiln_tensor *t) const { kiln_tensor_destroy(t); }
};
using OutputTensor = std::unique_ptr<kiln_tensor, TensorDeleter>;
using Outputs = std::vector<OutputTensor>;

/// "[2, 3, 4]"
std::string formatShape(const int64_t *dims, int32_t rank);
inline std::string formatShape(const std::vector<int64_t> &dims) {
  return formatShape(dims.data(), static_cast<int32_t>(dims.size()));
}

} // namespace kilnrun

#endif // KILN_TOOLS_KILNRUN_KILNRUN_H
