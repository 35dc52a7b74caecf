//===- Status.cpp - Status objects of the Kiln runtime C API --------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Status.h"

namespace kiln::rt {
namespace {
// Returned when allocating a status fails; never freed. The message is a
// literal, so building it cannot allocate.
kiln_status *sharedOutOfMemory() noexcept {
  static kiln_status status{KILN_STATUS_RESOURCE_EXHAUSTED, std::string()};
  return &status;
}
} // namespace

kiln_status *outOfMemoryStatus() noexcept { return sharedOutOfMemory(); }

kiln_status *makeStatus(kiln_status_code code, std::string message) noexcept {
  kiln_status *status = new (std::nothrow) kiln_status{code, std::string()};
  if (!status)
    return outOfMemoryStatus();
  status->message = std::move(message);
  return status;
}

std::string toHex(uint64_t value, int digits) {
  std::string out(static_cast<size_t>(digits), '0');
  for (int i = digits - 1; i >= 0; --i, value >>= 4)
    out[static_cast<size_t>(i)] = "0123456789ABCDEF"[value & 0xF];
  return out;
}

std::string formatDims(const int64_t *dims, int32_t rank) {
  std::string out = "[";
  for (int32_t i = 0; i < rank; ++i)
    out += cat(i ? ", " : "", dims[i]);
  return out + "]";
}

} // namespace kiln::rt

extern "C" {

kiln_status_code kiln_status_get_code(const kiln_status *status) {
  return status ? status->code : KILN_STATUS_OK;
}

const char *kiln_status_message(const kiln_status *status) {
  if (!status)
    return "OK";
  if (status == kiln::rt::outOfMemoryStatus())
    return "out of memory";
  return status->message.c_str();
}

void kiln_status_destroy(kiln_status *status) {
  if (status != kiln::rt::outOfMemoryStatus())
    delete status;
}

} // extern "C"
