//===- Checksum.h - The artifact descriptor checksum defined in kiln-c/abi.h -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CHECKSUM_H
#define KILN_RUNTIME_CHECKSUM_H

#include "kiln-c/abi.h"

#include <cstdint>

namespace kiln::rt {

/// FNV-1a 64 over the descriptor fields, as abi.h specifies. The caller has
/// checked that every pointer it follows is non-NULL and ranks are sane.
uint64_t descriptorChecksum(const kiln_abi_model &model);

/// KILN_ABI_BLOB_CHECKSUM of abi.h: word-wise FNV-1a 64 of a weights blob.
uint64_t blobChecksum(const void *data, uint64_t size);

} // namespace kiln::rt

#endif // KILN_RUNTIME_CHECKSUM_H
