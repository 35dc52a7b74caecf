//===- Status.h - Status objects and message building inside the runtime --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_STATUS_H
#define KILN_RUNTIME_STATUS_H

#include "kiln-c/runtime.h"

#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

struct kiln_status {
  kiln_status_code code;
  std::string message;
};

namespace kiln::rt {

/// Never throws: if the status itself cannot be allocated, a shared static
/// out-of-memory status comes back, which kiln_status_destroy leaves alone.
kiln_status *makeStatus(kiln_status_code code, std::string message) noexcept;
kiln_status *outOfMemoryStatus() noexcept;

inline void appendPiece(std::string &out, std::string_view text) { out += text; }
inline void appendPiece(std::string &out, const char *text) {
  out += text ? text : "(null)";
}
inline void appendPiece(std::string &out, char c) { out += c; }
template <typename T>
std::enable_if_t<std::is_integral_v<T>> appendPiece(std::string &out, T value) {
  out += std::to_string(value);
}

/// Concatenates strings and integers into a message.
template <typename... Args> std::string cat(const Args &...args) {
  std::string out;
  (appendPiece(out, args), ...);
  return out;
}

/// `value` as `digits` upper-case hex digits, without a prefix.
std::string toHex(uint64_t value, int digits);

/// "[2, 3, 4]"; "[]" for a scalar.
std::string formatDims(const int64_t *dims, int32_t rank);

/// Runs the body of a C entry point so that no C++ exception crosses the C
/// ABI: allocation failures become statuses like every other error.
template <typename Body> kiln_status *guard(Body &&body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return outOfMemoryStatus();
  } catch (const std::exception &e) {
    return makeStatus(KILN_STATUS_INTERNAL, cat("internal error: ", e.what()));
  } catch (...) {
    return makeStatus(KILN_STATUS_INTERNAL, "internal error: unknown exception");
  }
}

} // namespace kiln::rt

#endif // KILN_RUNTIME_STATUS_H
