//===- Dtype.h - Element type names, sizes and overflow-checked byte sizes -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DTYPE_H
#define KILN_RUNTIME_DTYPE_H

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

bool isValidDtype(int32_t dtype);

/// The element bits of a sub-byte dtype (i4/u4/f4e2m1: 4, i2/u2: 2), else 0:
/// such elements take a byte whose higher bits are zero.
unsigned subByteBits(int32_t dtype);

/// Multiplies the dims and the element size, returning false on overflow of
/// size_t. Dims must already be known to be >= 0.
bool checkedByteSize(size_t elementSize, const int64_t *dims, int32_t rank,
                     size_t &bytes);

} // namespace kiln::rt

#endif // KILN_RUNTIME_DTYPE_H
