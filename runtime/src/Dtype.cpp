//===- Dtype.cpp - Element type names, sizes and overflow-checked byte sizes -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Dtype.h"

#include "Status.h"
#include "kiln-c/runtime.h"

namespace kiln::rt {
namespace {
struct DtypeEntry {
  int32_t dtype;
  const char *name;
  size_t size;
};

constexpr DtypeEntry kDtypes[] = {
    {KILN_DTYPE_F32, "f32", 4}, {KILN_DTYPE_F16, "f16", 2},
    {KILN_DTYPE_BF16, "bf16", 2}, {KILN_DTYPE_F64, "f64", 8},
    {KILN_DTYPE_I8, "i8", 1},   {KILN_DTYPE_U8, "u8", 1},
    {KILN_DTYPE_I16, "i16", 2}, {KILN_DTYPE_I32, "i32", 4},
    {KILN_DTYPE_I64, "i64", 8}, {KILN_DTYPE_BOOL, "bool", 1},
    {KILN_DTYPE_U16, "u16", 2}, {KILN_DTYPE_U32, "u32", 4},
    {KILN_DTYPE_U64, "u64", 8},
    {KILN_DTYPE_F8E4M3FN, "f8e4m3fn", 1},
    {KILN_DTYPE_F8E4M3FNUZ, "f8e4m3fnuz", 1},
    {KILN_DTYPE_F8E5M2, "f8e5m2", 1},
    {KILN_DTYPE_F8E5M2FNUZ, "f8e5m2fnuz", 1},
    {KILN_DTYPE_I4, "i4", 1},
    {KILN_DTYPE_U4, "u4", 1},
    {KILN_DTYPE_I2, "i2", 1},
    {KILN_DTYPE_U2, "u2", 1},
    {KILN_DTYPE_F4E2M1, "f4e2m1", 1},
    {KILN_DTYPE_F8E8M0, "f8e8m0", 1},
};

const DtypeEntry *findDtype(int32_t dtype) {
  for (const DtypeEntry &entry : kDtypes)
    if (entry.dtype == dtype)
      return &entry;
  return nullptr;
}
} // namespace

bool isValidDtype(int32_t dtype) { return findDtype(dtype) != nullptr; }

unsigned subByteBits(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_I4:
  case KILN_DTYPE_U4:
  case KILN_DTYPE_F4E2M1: return 4;
  case KILN_DTYPE_I2:
  case KILN_DTYPE_U2: return 2;
  default: return 0;
  }
}

bool checkedByteSize(size_t elementSize, const int64_t *dims, int32_t rank,
                     size_t &bytes) {
  size_t total = elementSize;
  // An empty tensor has no bytes, however large its other dims.
  for (int32_t i = 0; i < rank; ++i)
    if (dims[i] == 0)
      total = 0;
  for (int32_t i = 0; i < rank; ++i)
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(dims[i]), &total))
      return false;
  bytes = total;
  return true;
}

} // namespace kiln::rt

extern "C" {

const char *kiln_dtype_name(int32_t dtype) {
  const kiln::rt::DtypeEntry *entry = kiln::rt::findDtype(dtype);
  return entry ? entry->name : nullptr;
}

size_t kiln_dtype_size(int32_t dtype) {
  const kiln::rt::DtypeEntry *entry = kiln::rt::findDtype(dtype);
  return entry ? entry->size : 0;
}

kiln_status *kiln_byte_size(int32_t dtype, int32_t rank, const int64_t *dims,
                            size_t *out_bytes) {
  using namespace kiln::rt;
  return guard([&]() -> kiln_status * {
    if (!out_bytes)
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "out_bytes is NULL");
    if (!isValidDtype(dtype))
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        cat("unknown dtype ", dtype));
    if (rank < 0 || (rank > 0 && !dims))
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        cat("invalid rank ", rank, " or NULL dims"));
    for (int32_t i = 0; i < rank; ++i)
      if (dims[i] < 0)
        return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                          cat("dim ", i, ": got ", dims[i], ", expected >= 0"));
    if (!checkedByteSize(kiln_dtype_size(dtype), dims, rank, *out_bytes))
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        cat("byte size of ", formatDims(dims, rank), " ",
                            kiln_dtype_name(dtype), " overflows 64 bits"));
    return nullptr;
  });
}

} // extern "C"
