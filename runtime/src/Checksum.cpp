//===- Checksum.cpp - The artifact descriptor checksum defined in kiln-c/abi.h -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Checksum.h"

#include <cstring>

namespace kiln::rt {
namespace {
class Fnv1a64 {
public:
  void byte(uint8_t b) { hash = (hash ^ b) * 0x100000001b3ull; }
  // Integers are hashed little-endian whatever the host byte order.
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i)
      byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      byte(static_cast<uint8_t>(v >> (8 * i)));
  }
  void cstring(const char *s) {
    size_t length = std::strlen(s);
    for (size_t i = 0; i <= length; ++i) // including the NUL
      byte(static_cast<uint8_t>(s[i]));
  }
  uint64_t value() const { return hash; }

private:
  uint64_t hash = 0xcbf29ce484222325ull;
};

void hashTensor(Fnv1a64 &fnv, const kiln_abi_tensor &tensor) {
  fnv.cstring(tensor.name);
  fnv.u32(static_cast<uint32_t>(tensor.dtype));
  fnv.u32(static_cast<uint32_t>(tensor.rank));
  for (int32_t i = 0; i < tensor.rank; ++i)
    fnv.u64(static_cast<uint64_t>(tensor.dims[i]));
}
} // namespace

uint64_t descriptorChecksum(const kiln_abi_model &model) {
  Fnv1a64 fnv;
  fnv.u32(model.magic);
  fnv.u32(model.abi_version);
  fnv.u32(model.num_inputs);
  fnv.u32(model.num_outputs);
  for (uint32_t i = 0; i < model.num_inputs; ++i)
    hashTensor(fnv, model.inputs[i]);
  for (uint32_t i = 0; i < model.num_outputs; ++i)
    hashTensor(fnv, model.outputs[i]);
  fnv.u64(model.weights_bytes);
  fnv.u64(model.arena_bytes);
  fnv.u32(model.weights_mode);
  fnv.u32(model.num_dispatches);
  if (model.weights_file)
    fnv.cstring(model.weights_file);
  fnv.u64(model.weights_checksum);
  for (uint32_t i = 0; i < model.num_dispatches; ++i)
    fnv.cstring(model.dispatch_names[i]);
  fnv.u32(model.num_weights_segments);
  for (uint32_t i = 0; i < model.num_weights_segments; ++i) {
    fnv.u64(model.weights_segments[i].offset);
    fnv.u64(model.weights_segments[i].bytes);
    fnv.u32(static_cast<uint32_t>(model.weights_segments[i].dtype));
  }
  return fnv.value();
}

uint64_t blobChecksum(const void *data, uint64_t size) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  uint64_t hash = 0xcbf29ce484222325ull;
  uint64_t words = size / 8;
  for (uint64_t i = 0; i < words; ++i) {
    uint64_t word;
    std::memcpy(&word, bytes + 8 * i, 8); // little-endian hosts only
    hash = (hash ^ word) * 0x100000001b3ull;
  }
  for (uint64_t i = 8 * words; i < size; ++i)
    hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

} // namespace kiln::rt
