//===- Arrays.cpp - NumPy/DLPack arrays as kiln_tensor views and back -----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Arrays.h"

namespace nb = nanobind;
using nb::dlpack::dtype_code;

namespace kiln::python {

/// The DLPack dtype NumPy can hold for `dtype`: itself, or for types NumPy
/// lacks an unsigned integer of the same width.
static nb::dlpack::dtype dlpackDtype(int32_t dtype) {
  auto make = [](dtype_code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  switch (dtype) {
  case KILN_DTYPE_F32: return make(dtype_code::Float, 32);
  case KILN_DTYPE_F16: return make(dtype_code::Float, 16);
  case KILN_DTYPE_F64: return make(dtype_code::Float, 64);
  case KILN_DTYPE_I8: return make(dtype_code::Int, 8);
  case KILN_DTYPE_I16: return make(dtype_code::Int, 16);
  case KILN_DTYPE_I32: return make(dtype_code::Int, 32);
  case KILN_DTYPE_I64: return make(dtype_code::Int, 64);
  case KILN_DTYPE_U8: return make(dtype_code::UInt, 8);
  case KILN_DTYPE_U16: return make(dtype_code::UInt, 16);
  case KILN_DTYPE_U32: return make(dtype_code::UInt, 32);
  case KILN_DTYPE_U64: return make(dtype_code::UInt, 64);
  case KILN_DTYPE_BOOL: return make(dtype_code::Bool, 8);
  default: return make(dtype_code::UInt, static_cast<int>(8 * kiln_dtype_size(dtype)));
  }
}

/// Whether NumPy has no dtype of its own for `dtype`.
static bool isBitPatternDtype(int32_t dtype) {
  return dtype == KILN_DTYPE_BF16 || dtype >= KILN_DTYPE_F8E4M3FN;
}

int32_t kilnDtypeOf(const InputArray &array, int32_t expected) {
  nb::dlpack::dtype dtype = array.dtype();
  if (dtype.lanes != 1)
    return 0;
  auto code = static_cast<dtype_code>(dtype.code);
  if (code == dtype_code::UInt && isBitPatternDtype(expected) &&
      dtype.bits == 8 * kiln_dtype_size(expected))
    return expected;
  if (code == dtype_code::Bfloat && dtype.bits == 16)
    return KILN_DTYPE_BF16;
  for (int32_t kiln = KILN_DTYPE_F32; kiln <= KILN_DTYPE_U64; ++kiln)
    if (kiln != KILN_DTYPE_BF16 && dlpackDtype(kiln) == dtype)
      return kiln;
  return 0;
}

nb::object toNumPy(kiln_tensor *tensor) {
  nb::capsule owner(tensor, [](void *p) noexcept {
    kiln_tensor_destroy(static_cast<kiln_tensor *>(p));
  });
  size_t shape[KILN_MAX_RANK];
  for (int32_t i = 0; i < tensor->rank; ++i)
    shape[i] = static_cast<size_t>(tensor->dims[i]);
  nb::ndarray<nb::numpy> array(tensor->data, static_cast<size_t>(tensor->rank), shape, owner,
                               nullptr, dlpackDtype(tensor->dtype));
  return array.cast();
}

} // namespace kiln::python
