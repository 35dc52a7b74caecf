//===- Npy.h - Reading and writing NumPy .npy files (internal C++ API) -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Little-endian, C-order arrays of the runtime's dtypes except bf16, which
// NumPy has no type for. Header versions 1.0, 2.0 and 3.0 are read; writing
// produces exactly the bytes numpy.save would (version 1.0 unless the header
// needs 2.0). Errors are returned as messages; nothing throws except
// std::bad_alloc.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_NPY_NPY_H
#define KILN_NPY_NPY_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace kiln::npy {

struct FreeDeleter {
  void operator()(uint8_t *p) const noexcept { std::free(p); }
};

/// A dense row-major array with 64-byte aligned data.
struct Array {
  int32_t dtype = 0; // kiln_dtype
  std::vector<int64_t> shape;
  std::unique_ptr<uint8_t, FreeDeleter> data;
  size_t byteSize = 0;

  int32_t rank() const { return static_cast<int32_t>(shape.size()); }
};

/// Gives `array` uninitialized storage for `dtype` and `shape`. Fails with a
/// message on a bad dtype, a negative dim, overflow or out of memory.
bool allocate(Array &array, int32_t dtype, std::vector<int64_t> shape,
              std::string &error);

/// The NumPy descr for a dtype ("<f4", "|b1"); NULL if .npy cannot hold it.
const char *descrOf(int32_t dtype);

/// Decodes a whole .npy file held in memory.
bool decode(const uint8_t *bytes, size_t size, Array &out, std::string &error);
/// Encodes an array as numpy.save would.
bool encode(int32_t dtype, const std::vector<int64_t> &shape, const void *data,
            size_t byteSize, std::string &out, std::string &error);

/// File versions; errors start with the path.
bool read(const std::string &path, Array &out, std::string &error);
bool write(const std::string &path, int32_t dtype,
           const std::vector<int64_t> &shape, const void *data, size_t byteSize,
           std::string &error);

} // namespace kiln::npy

#endif // KILN_NPY_NPY_H
