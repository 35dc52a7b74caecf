/*===- checksum.h - The checksums kiln-c/abi.h specifies ---------------------===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * KILN_ABI_CHECKSUM (of a descriptor) and KILN_ABI_BLOB_CHECKSUM (of a
 * weights file), computed in one place: the compiler's artifact writer and
 * the runtime's loader both call these functions. Header-only C99; it
 * depends only on kiln-c/abi.h. Applications do not need it.
 *===--------------------------------------------------------------------------===*/

#ifndef KILN_C_CHECKSUM_H
#define KILN_C_CHECKSUM_H

#include "kiln-c/abi.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FNV-1a 64. */
#define KILN_FNV1A64_BASIS 0xcbf29ce484222325ull
#define KILN_FNV1A64_PRIME 0x100000001b3ull

static inline uint64_t kiln_fnv1a64_byte(uint64_t hash, uint8_t byte) {
  return (hash ^ byte) * KILN_FNV1A64_PRIME;
}

/* Integers are hashed little-endian whatever the host byte order. */
static inline uint64_t kiln_fnv1a64_u32(uint64_t hash, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    hash = kiln_fnv1a64_byte(hash, (uint8_t)(value >> (8 * i)));
  return hash;
}

static inline uint64_t kiln_fnv1a64_u64(uint64_t hash, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    hash = kiln_fnv1a64_byte(hash, (uint8_t)(value >> (8 * i)));
  return hash;
}

/* A string's bytes including its terminating NUL. */
static inline uint64_t kiln_fnv1a64_cstring(uint64_t hash, const char *s) {
  size_t length = strlen(s);
  for (size_t i = 0; i <= length; ++i)
    hash = kiln_fnv1a64_byte(hash, (uint8_t)s[i]);
  return hash;
}

static inline uint64_t kiln_abi_tensor_checksum_(uint64_t hash, const kiln_abi_tensor *tensor) {
  hash = kiln_fnv1a64_cstring(hash, tensor->name);
  hash = kiln_fnv1a64_u32(hash, (uint32_t)tensor->dtype);
  hash = kiln_fnv1a64_u32(hash, (uint32_t)tensor->rank);
  for (int32_t i = 0; i < tensor->rank; ++i)
    hash = kiln_fnv1a64_u64(hash, (uint64_t)tensor->dims[i]);
  return hash;
}

/* KILN_ABI_CHECKSUM of `model` (its checksum field is not read). The caller
 * has checked that every pointer it follows is non-NULL and ranks are sane. */
static inline uint64_t kiln_abi_descriptor_checksum(const kiln_abi_model *model) {
  uint64_t hash = KILN_FNV1A64_BASIS;
  hash = kiln_fnv1a64_u32(hash, model->magic);
  hash = kiln_fnv1a64_u32(hash, model->abi_version);
  hash = kiln_fnv1a64_u32(hash, model->num_inputs);
  hash = kiln_fnv1a64_u32(hash, model->num_outputs);
  for (uint32_t i = 0; i < model->num_inputs; ++i)
    hash = kiln_abi_tensor_checksum_(hash, &model->inputs[i]);
  for (uint32_t i = 0; i < model->num_outputs; ++i)
    hash = kiln_abi_tensor_checksum_(hash, &model->outputs[i]);
  hash = kiln_fnv1a64_u64(hash, model->weights_bytes);
  hash = kiln_fnv1a64_u64(hash, model->arena_bytes);
  hash = kiln_fnv1a64_u32(hash, model->weights_mode);
  hash = kiln_fnv1a64_u32(hash, model->num_dispatches);
  if (model->weights_file)
    hash = kiln_fnv1a64_cstring(hash, model->weights_file);
  hash = kiln_fnv1a64_u64(hash, model->weights_checksum);
  for (uint32_t i = 0; i < model->num_dispatches; ++i)
    hash = kiln_fnv1a64_cstring(hash, model->dispatch_names[i]);
  hash = kiln_fnv1a64_u32(hash, model->num_weights_segments);
  for (uint32_t i = 0; i < model->num_weights_segments; ++i) {
    hash = kiln_fnv1a64_u64(hash, model->weights_segments[i].offset);
    hash = kiln_fnv1a64_u64(hash, model->weights_segments[i].bytes);
    hash = kiln_fnv1a64_u32(hash, (uint32_t)model->weights_segments[i].dtype);
  }
  if (model->cpu_features)
    hash = kiln_fnv1a64_cstring(hash, model->cpu_features);
  if (model->abi_version >= 6 && model->output_aliases)
    for (uint32_t i = 0; i < model->num_outputs; ++i)
      hash = kiln_fnv1a64_u32(hash, (uint32_t)model->output_aliases[i]);
  return hash;
}

/* KILN_ABI_BLOB_CHECKSUM of `size` bytes at `data`: FNV-1a 64 over its
 * little-endian 64-bit words, then over the tail bytes. */
static inline uint64_t kiln_abi_blob_checksum(const void *data, uint64_t size) {
  const unsigned char *bytes = (const unsigned char *)data;
  uint64_t hash = KILN_FNV1A64_BASIS;
  uint64_t words = size / 8;
  for (uint64_t i = 0; i < words; ++i) {
    uint64_t word = 0;
    for (int j = 0; j < 8; ++j)
      word |= (uint64_t)bytes[8 * i + j] << (8 * j);
    hash = (hash ^ word) * KILN_FNV1A64_PRIME;
  }
  for (uint64_t i = 8 * words; i < size; ++i)
    hash = (hash ^ bytes[i]) * KILN_FNV1A64_PRIME;
  return hash;
}

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_CHECKSUM_H */
