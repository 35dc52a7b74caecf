//===- Tensor.cpp - Output tensors owned by the caller of kiln_session_run -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// One malloc holds the kiln_tensor, its dims and its name, so the caller
// frees an output with one call and it does not depend on the model staying
// loaded. The data is a second, aligned block.
//
//===----------------------------------------------------------------------===//

#include "Tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace kiln::rt {
namespace {
constexpr size_t kDataAlignment = 64;
} // namespace

kiln_tensor *allocateTensor(const std::string &name, int32_t dtype, int32_t rank,
                            const int64_t *dims, size_t bytes) noexcept {
  size_t dimsBytes = sizeof(int64_t) * static_cast<size_t>(rank);
  // The header is a multiple of 8 bytes, so the dims that follow are aligned.
  static_assert(sizeof(kiln_tensor) % alignof(int64_t) == 0);
  size_t headerBytes = sizeof(kiln_tensor) + dimsBytes + name.size() + 1;
  size_t dataBytes = bytes ? bytes : 1;
  if (dataBytes > SIZE_MAX - kDataAlignment)
    return nullptr;
  // aligned_alloc wants a multiple of the alignment.
  dataBytes = (dataBytes + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
  auto *header = static_cast<char *>(std::malloc(headerBytes));
  void *data = std::aligned_alloc(kDataAlignment, dataBytes);
  if (!header || !data) {
    std::free(header);
    std::free(data);
    return nullptr;
  }
  auto *tensor = new (header) kiln_tensor;
  auto *dimsCopy = reinterpret_cast<int64_t *>(header + sizeof(kiln_tensor));
  char *nameCopy = header + sizeof(kiln_tensor) + dimsBytes;
  if (rank > 0)
    std::memcpy(dimsCopy, dims, dimsBytes);
  std::memcpy(nameCopy, name.c_str(), name.size() + 1);
  tensor->name = nameCopy;
  tensor->dtype = dtype;
  tensor->rank = rank;
  tensor->dims = dimsCopy;
  tensor->data = data;
  tensor->byte_size = bytes;
  return tensor;
}

} // namespace kiln::rt

extern "C" void kiln_tensor_destroy(kiln_tensor *tensor) {
  if (!tensor)
    return;
  std::free(tensor->data);
  std::free(tensor);
}
