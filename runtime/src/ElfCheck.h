//===- ElfCheck.h - Checks an artifact's ELF headers before dlopen ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ELFCHECK_H
#define KILN_RUNTIME_ELFCHECK_H

#include <cstdint>
#include <string>

namespace kiln::rt {

/// Why the open file `fd` of `fileBytes` bytes cannot be a shared library
/// for this host, or "" when its headers are consistent. dlopen maps
/// segments without checking that the file holds them, so a truncated
/// artifact would otherwise crash the process with SIGBUS.
std::string checkSharedLibraryHeaders(int fd, uint64_t fileBytes);

} // namespace kiln::rt

#endif // KILN_RUNTIME_ELFCHECK_H
