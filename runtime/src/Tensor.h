//===- Tensor.h - Output tensors owned by the caller of kiln_session_run ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TENSOR_H
#define KILN_RUNTIME_TENSOR_H

#include "kiln-c/runtime.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::rt {

/// Allocates an output tensor with its own copy of the name and dims and a
/// 64-byte aligned data block of `bytes` (at least one byte, so that data is
/// never NULL). Returns NULL when memory runs out. Free with
/// kiln_tensor_destroy.
kiln_tensor *allocateTensor(const std::string &name, int32_t dtype, int32_t rank,
                            const int64_t *dims, size_t bytes) noexcept;

} // namespace kiln::rt

#endif // KILN_RUNTIME_TENSOR_H
