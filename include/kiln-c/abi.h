/*===- abi.h - The contract between kilnc-generated artifacts and the runtime -===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * A compiled model ("artifact") is an ELF shared library made by
 * `kilnc --emit=lib`. It exports one symbol, KILN_ABI_ENTRY_SYMBOL, a function
 * returning a pointer to a constant kiln_abi_model. Applications never include
 * this header: they use kiln-c/runtime.h. Only the runtime and the compiler's
 * artifact writer do. Plain C99, no dependencies.
 *===--------------------------------------------------------------------------===*/

#ifndef KILN_C_ABI_H
#define KILN_C_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "KILN" little-endian, and the layout version of the structs below. */
#define KILN_ABI_MAGIC 0x4E4C494Bu
#define KILN_ABI_VERSION 1u
#define KILN_ABI_ENTRY_SYMBOL "kiln_abi_model_v1"

/* Element types; values are stable across versions. */
typedef enum kiln_abi_dtype {
  KILN_ABI_F32 = 1,
  KILN_ABI_F16 = 2,
  KILN_ABI_BF16 = 3,
  KILN_ABI_F64 = 4,
  KILN_ABI_I8 = 5,
  KILN_ABI_U8 = 6,
  KILN_ABI_I16 = 7,
  KILN_ABI_I32 = 8,
  KILN_ABI_I64 = 9,
  KILN_ABI_BOOL = 10 /* one byte per element, 0 or 1 */
} kiln_abi_dtype;

/* One input or output. A dim of -1 is symbolic; dim_names[i] then names it
 * (the ONNX dim_param) and may be shared between tensors. dim_names is NULL
 * when every dim is static; otherwise entries of static dims are NULL. */
typedef struct kiln_abi_tensor {
  const char *name;
  int32_t dtype; /* kiln_abi_dtype */
  int32_t rank;
  const int64_t *dims;
  const char *const *dim_names;
} kiln_abi_tensor;

/* ---- CUDA (issue 6) --------------------------------------------------------
 * CUDA artifacts export KILN_ABI_CUDA_SYMBOL, a function returning the GPU
 * architecture their kernels were compiled for ("sm_90a"); CPU artifacts do
 * not. Their run function needs kiln_abi_host.cuda and returns
 * KILN_ABI_CUDA_NO_DEVICE without it. Buffers passed to run are device
 * pointers. The runtime records the first failure of these services (with
 * the kernel's name) and reports it after run returns; after a failure they
 * do nothing (alloc and constant return NULL, launch launches nothing). */
#define KILN_ABI_CUDA_SYMBOL "kiln_abi_cuda_v1"
#define KILN_ABI_CUDA_NO_DEVICE 3

typedef struct kiln_abi_cuda {
  void *context; /* the run's state */
  /* The kernel `name` of the embedded cubin/PTX `image` (loaded on first use). */
  void *(*get_function)(void *context, const void *image, const char *name);
  /* cuLaunchKernel on the session's stream; params as cuLaunchKernel takes them. */
  void (*launch)(void *context, void *function, int64_t grid_x, int64_t grid_y,
                 int64_t grid_z, int64_t block_x, int64_t block_y, int64_t block_z,
                 int32_t shared_bytes, void **params);
  /* Device memory for intermediates, freed in stream order. */
  void *(*alloc)(void *context, uint64_t bytes);
  void (*free)(void *context, void *device_ptr);
  /* The device copy of constant host data (weights), uploaded once per session. */
  void *(*constant)(void *context, const void *host_data, uint64_t bytes);
} kiln_abi_cuda;
/* ---- end CUDA ------------------------------------------------------------ */

/* Services the runtime offers to generated code (thread pool, scratch). */
typedef struct kiln_abi_host {
  void *context;
  /* Runs body(ctx, i) for i in [begin, end) on the session's threads and
   * returns when all are done. */
  void (*parallel_for)(void *context, int64_t begin, int64_t end,
                       void (*body)(void *ctx, int64_t i), void *ctx);
  int32_t num_threads;
  /* CUDA services; NULL in CPU sessions. (Fields are append-only.) */
  const kiln_abi_cuda *cuda;
} kiln_abi_host;

/* Runs the model. `buffers` holds num_inputs input data pointers followed by
 * num_outputs output data pointers, each dense row-major with the shapes of
 * the descriptor (symbolic dims resolved in `dims`: one int64 per dim of every
 * input then every output, in order). Returns 0 on success. The runtime has
 * validated every shape and allocated every output before the call. */
typedef int32_t (*kiln_abi_run_fn)(void *const *buffers, const int64_t *dims,
                                   const kiln_abi_host *host);

typedef struct kiln_abi_model {
  uint32_t magic;       /* KILN_ABI_MAGIC */
  uint32_t abi_version; /* KILN_ABI_VERSION */
  uint32_t num_inputs;
  uint32_t num_outputs;
  const kiln_abi_tensor *inputs;
  const kiln_abi_tensor *outputs;
  kiln_abi_run_fn run;
  const char *producer;     /* e.g. "kilnc 0.1.0" */
  uint64_t weights_bytes;   /* bytes of embedded constants */
  uint64_t checksum;        /* KILN_ABI_CHECKSUM of the descriptor, so that
                               a corrupt or hand-edited file is detected */
} kiln_abi_model;

typedef const kiln_abi_model *(*kiln_abi_entry_fn)(void);

/* The checksum is FNV-1a 64 (offset basis 0xcbf29ce484222325, prime
 * 0x100000001b3) over these bytes, in order, integers little-endian:
 *   magic, abi_version, num_inputs, num_outputs   (4 bytes each)
 *   for every input, then every output:
 *     name bytes including the terminating NUL, dtype (4), rank (4),
 *     each dim (8)
 *   weights_bytes (8)
 * Both the artifact writer and the runtime loader compute it this way. */

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_ABI_H */
