/*===- FakeModel.h - Helpers for hand-written fake artifacts in tests ------===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * The test artifacts implement kiln-c/abi.h by hand, as kilnc's artifact
 * writer will. The checksum is computed here, independently of the runtime's
 * code, when the library is loaded. Compile definitions select a defect:
 *   FAKE_BAD_MAGIC, FAKE_BAD_VERSION, FAKE_BAD_CHECKSUM, FAKE_NULL_ENTRY,
 *   FAKE_NO_ENTRY (the entry symbol has another name). FAKE_CPU_FEATURES
 *   (a string) sets the descriptor's cpu_features.
 *===--------------------------------------------------------------------------===*/

#ifndef KILN_TEST_FAKE_MODEL_H
#define KILN_TEST_FAKE_MODEL_H

#include "kiln-c/abi.h"

#include <stddef.h>
#include <string.h>

static uint64_t fake_hash_bytes(uint64_t hash, const void *data, size_t size) {
  const unsigned char *bytes = (const unsigned char *)data;
  size_t i;
  for (i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/* The test hosts are little-endian, so memory order is the specified order. */
static uint64_t fake_hash_tensor(uint64_t hash, const kiln_abi_tensor *t) {
  hash = fake_hash_bytes(hash, t->name, strlen(t->name) + 1);
  hash = fake_hash_bytes(hash, &t->dtype, 4);
  hash = fake_hash_bytes(hash, &t->rank, 4);
  return fake_hash_bytes(hash, t->dims, 8 * (size_t)t->rank);
}

static uint64_t fake_checksum(const kiln_abi_model *m) {
  uint64_t hash = 0xcbf29ce484222325ull;
  uint32_t i;
  hash = fake_hash_bytes(hash, &m->magic, 4);
  hash = fake_hash_bytes(hash, &m->abi_version, 4);
  hash = fake_hash_bytes(hash, &m->num_inputs, 4);
  hash = fake_hash_bytes(hash, &m->num_outputs, 4);
  for (i = 0; i < m->num_inputs; ++i)
    hash = fake_hash_tensor(hash, &m->inputs[i]);
  for (i = 0; i < m->num_outputs; ++i)
    hash = fake_hash_tensor(hash, &m->outputs[i]);
  hash = fake_hash_bytes(hash, &m->weights_bytes, 8);
  hash = fake_hash_bytes(hash, &m->arena_bytes, 8);
  hash = fake_hash_bytes(hash, &m->weights_mode, 4);
  hash = fake_hash_bytes(hash, &m->num_dispatches, 4);
  if (m->weights_file)
    hash = fake_hash_bytes(hash, m->weights_file, strlen(m->weights_file) + 1);
  hash = fake_hash_bytes(hash, &m->weights_checksum, 8);
  for (i = 0; i < m->num_dispatches; ++i)
    if (m->dispatch_names[i]) /* a NULL name is a defect some tests want */
      hash = fake_hash_bytes(hash, m->dispatch_names[i], strlen(m->dispatch_names[i]) + 1);
  hash = fake_hash_bytes(hash, &m->num_weights_segments, 4);
  for (i = 0; i < m->num_weights_segments && m->weights_segments; ++i) {
    hash = fake_hash_bytes(hash, &m->weights_segments[i].offset, 8);
    hash = fake_hash_bytes(hash, &m->weights_segments[i].bytes, 8);
    hash = fake_hash_bytes(hash, &m->weights_segments[i].dtype, 4);
  }
  if (m->cpu_features)
    hash = fake_hash_bytes(hash, m->cpu_features, strlen(m->cpu_features) + 1);
  if (m->abi_version >= 6 && m->output_aliases)
    for (i = 0; i < m->num_outputs; ++i)
      hash = fake_hash_bytes(hash, &m->output_aliases[i], 4);
  return hash;
}

/* KILN_ABI_BLOB_CHECKSUM: FNV-1a 64 a little-endian word at a time. */
__attribute__((unused)) static uint64_t fake_blob_checksum(const void *data,
                                                           size_t size) {
  const unsigned char *bytes = (const unsigned char *)data;
  uint64_t hash = 0xcbf29ce484222325ull, word;
  size_t i;
  for (i = 0; i + 8 <= size; i += 8) {
    memcpy(&word, bytes + i, 8);
    hash = (hash ^ word) * 0x100000001b3ull;
  }
  for (; i < size; ++i)
    hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

#ifdef FAKE_OUTPUT_ALIASES
static const int32_t fake_output_aliases[] = {FAKE_OUTPUT_ALIASES};
#endif

/* Fills in the checksum, then applies the defect this build asks for. */
static void fake_seal(kiln_abi_model *m) {
#ifdef FAKE_OUTPUT_ALIASES
  m->output_aliases = fake_output_aliases;
#endif
#ifdef FAKE_BAD_MAGIC
  m->magic = 0x464C457Fu; /* "\x7fELF" */
#endif
#ifdef FAKE_BAD_VERSION
  m->abi_version = KILN_ABI_VERSION + 1;
#endif
#ifdef FAKE_CPU_FEATURES
  m->cpu_features = FAKE_CPU_FEATURES;
#endif
  m->checksum = fake_checksum(m);
#ifdef FAKE_BAD_CHECKSUM
  m->checksum ^= 1;
#endif
}

#ifdef FAKE_NO_ENTRY
#define FAKE_ENTRY_NAME kiln_abi_model_v0
#else
#define FAKE_ENTRY_NAME kiln_abi_model_v1
#endif

#ifdef FAKE_NULL_ENTRY
#define FAKE_RESULT(model) ((void)(model), (const kiln_abi_model *)NULL)
#else
#define FAKE_RESULT(model) (model)
#endif

/* Seals `model` when the library is loaded and exports the entry point. */
#define KILN_FAKE_ENTRY(model)                                                 \
  __attribute__((constructor)) static void fake_init(void) {                  \
    fake_seal(&(model));                                                       \
  }                                                                            \
  __attribute__((visibility("default"))) const kiln_abi_model *               \
  FAKE_ENTRY_NAME(void);                                                       \
  const kiln_abi_model *FAKE_ENTRY_NAME(void) { return FAKE_RESULT(&(model)); }

#endif /* KILN_TEST_FAKE_MODEL_H */
