/*===- abi.h - The contract between kilnc-generated artifacts and the runtime -===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * A compiled model ("artifact") is an ELF shared library made by
 * `kilnc --emit=lib`. It exports one symbol, KILN_ABI_ENTRY_SYMBOL, a function
 * returning a pointer to a constant kiln_abi_model. Applications never include
 * this header: they use kiln-c/runtime.h. Only the runtime and the compiler's
 * artifact writer do. Plain C99; it depends only on kiln-c/runtime.h.
 *===--------------------------------------------------------------------------===*/

#ifndef KILN_C_ABI_H
#define KILN_C_ABI_H

#include "kiln-c/runtime.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* "KILN" little-endian, and the layout version of the structs below. */
#define KILN_ABI_MAGIC 0x4E4C494Bu
#define KILN_ABI_VERSION 6u
/* The oldest layout this runtime still loads (v5 lacks output_aliases). */
#define KILN_ABI_MIN_VERSION 5u
#define KILN_ABI_ENTRY_SYMBOL "kiln_abi_model_v1"

/* Element types are kiln-c/runtime.h's kiln_dtype (KILN_DTYPE_F32, ...): one
 * list for the runtime, its applications and the compiler; values are stable
 * across versions. */

/* One input or output. A dim of -1 is symbolic; dim_names[i] then names it
 * (the ONNX dim_param) and may be shared between tensors. dim_names is NULL
 * when every dim is static; otherwise entries of static dims are NULL. */
typedef struct kiln_abi_tensor {
  const char *name;
  int32_t dtype; /* kiln_dtype */
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
  /* A TMA tensor map (cuTensorMapEncodeTiled) in device memory for the
   * ranked memref descriptor `memref` ({allocated, aligned, offset,
   * sizes[rank], strides[rank]}), box_dims outermost first; the enums are
   * CUtensorMap*'s. Called as MLIR's mgpuTensorMapEncodeTiledMemref. */
  void *(*tensor_map)(void *context, int64_t rank, const void *memref, int64_t dtype,
                      int64_t interleave, int64_t swizzle, int64_t l2_promotion,
                      int64_t oob_fill, const int64_t *box_dims);
} kiln_abi_cuda;
/* ---- end CUDA ------------------------------------------------------------ */

/* Services the runtime offers to generated code (thread pool, scratch,
 * run-time check failures, heap memory). */
typedef struct kiln_abi_host {
  void *context;
  /* Runs body(ctx, i) for i in [begin, end) on the session's threads and
   * returns when all are done. */
  void (*parallel_for)(void *context, int64_t begin, int64_t end,
                       void (*body)(void *ctx, int64_t i), void *ctx);
  int32_t num_threads;
  /* --- Runtime block (ABI v2): per-run memory, weights and tracing. A
   * runtime fills one kiln_abi_host per run; other blocks (CUDA) append
   * after this one. --- */
  /* Scratch for this run's intermediate buffers: arena_bytes of the
   * descriptor, 64-byte aligned, owned by the runtime and used by no other
   * run at the same time. NULL when arena_bytes is 0. */
  void *arena;
  /* The weights blob (weights_bytes, 64-byte aligned) for
   * KILN_ABI_WEIGHTS_EXTERNAL and _NONE; NULL for embedded weights. */
  const void *weights;
  /* Non-NULL only while a run is traced: generated code calls
   * trace_begin(trace, d) / trace_end(trace, d) around dispatch d (an index
   * into dispatch_names) and tests `trace` first, so that an untraced run
   * pays one predictable branch per dispatch. */
  void *trace;
  void (*trace_begin)(void *trace, int32_t dispatch);
  void (*trace_end)(void *trace, int32_t dispatch);
  /* --- CUDA block: CUDA services; NULL in CPU sessions. --- */
  const kiln_abi_cuda *cuda;
  /* --- Checks and memory block (ABI v3), per run; `run_context` is passed
   * to each of these services. --- */
  void *run_context;
  /* A run-time check of generated code failed (two dims it takes to be equal
   * differ, an index is out of range). `message` names the check; "{0}" and
   * "{1}" in it stand for `got` and `expected`. Generated code calls it only
   * on the thread that called run, outside parallel_for bodies, and there it
   * does not return: the runtime records the failure, frees what `alloc`
   * handed out and makes run return to it, and the run fails with the
   * message. (Called elsewhere it records the failure and returns; the run
   * then fails when it returns.) */
  void (*fail)(void *run_context, const char *message, int64_t got, int64_t expected);
  /* Heap memory for intermediate buffers outside the arena (sizes known only
   * at run time), `alignment` a power of two, counted against the session's
   * byte limit together with the arena and the outputs. On the thread that
   * called run, outside parallel_for bodies, a refused or failed allocation
   * does not return: the run fails as with `fail`, with a message that gives
   * the size. Elsewhere (parallel_for bodies) memory is neither counted nor
   * refused, and NULL is returned if it cannot be allocated. Memory still
   * allocated when run returns is freed by the runtime. */
  void *(*alloc)(void *run_context, uint64_t bytes, uint64_t alignment);
  void (*free)(void *run_context, void *ptr);
} kiln_abi_host;

/* Runs the model. `buffers` holds num_inputs input data pointers followed by
 * num_outputs output data pointers, each dense row-major with the shapes of
 * the descriptor (symbolic dims resolved in `dims`: one int64 per dim of every
 * input then every output, in order). Returns 0 on success. The runtime has
 * validated every shape and allocated every output before the call.
 * Other return values: 3 = the model needs an arena and host->arena is NULL,
 * 4 = the model's weights are not embedded and host->weights is NULL.
 * A failed run-time check without host->fail traps. */
typedef int32_t (*kiln_abi_run_fn)(void *const *buffers, const int64_t *dims,
                                   const kiln_abi_host *host);

/* Where the weights (constants, one blob addressed by offset) live. */
typedef enum kiln_abi_weights_mode {
  KILN_ABI_WEIGHTS_EMBEDDED = 0, /* inside the artifact */
  KILN_ABI_WEIGHTS_EXTERNAL = 1, /* in weights_file, memory-mapped at load */
  KILN_ABI_WEIGHTS_NONE = 2      /* nowhere: the runtime fills the blob with
                                    seeded pseudo-random values (benchmarks) */
} kiln_abi_weights_mode;

/* A run of the weights blob holding elements of one type (ABI v4). CUDA
 * artifacts compiled with --precision=fp16|bf16 hold 16-bit weights after
 * the f32 ones; KILN_ABI_WEIGHTS_NONE fills each run with values of its
 * type. */
typedef struct kiln_abi_weights_segment {
  uint64_t offset; /* bytes from the blob's start */
  uint64_t bytes;
  int32_t dtype;   /* kiln_dtype: KILN_DTYPE_F32, _F16 or _BF16 */
  int32_t reserved; /* 0 */
} kiln_abi_weights_segment;

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
  /* --- ABI v2 (runtime block): memory plan, weights, dispatches. --- */
  uint64_t arena_bytes;     /* scratch the run function needs in host->arena */
  uint32_t weights_mode;    /* kiln_abi_weights_mode */
  uint32_t num_dispatches;
  /* KILN_ABI_WEIGHTS_EXTERNAL: the weights file's name (no '/'), in the
   * artifact's directory; NULL otherwise. */
  const char *weights_file;
  /* KILN_ABI_WEIGHTS_EXTERNAL: KILN_ABI_BLOB_CHECKSUM of the file; else 0. */
  uint64_t weights_checksum;
  /* num_dispatches names (e.g. "matmul /fc1/Gemm"), for traces. */
  const char *const *dispatch_names;
  /* --- ABI v4: the element types of the weights blob. None: all f32.
   * Segments are in order, inside weights_bytes, and do not overlap. --- */
  uint32_t num_weights_segments;
  const kiln_abi_weights_segment *weights_segments;
  /* --- ABI v5: the x86 extensions the artifact's code may use, comma
   * separated in KILN_ABI_CPU_FEATURES' order and spelling ("avx,avx2,fma");
   * NULL or "" for baseline x86-64. The runtime refuses to load an artifact
   * that needs one this CPU lacks, or one it does not know. --- */
  const char *cpu_features;
  /* --- ABI v6: NULL, or num_outputs entries: -1, or the index of the input
   * whose buffer this output is (kilnc --kv-cache-length: a KV cache updated
   * in place). An aliased output has the input's dtype and dims; the run
   * function reads the input from the output's buffer and writes only part
   * of it, so the runtime copies the input there first unless both are the
   * same buffer. Read only when abi_version >= 6. --- */
  const int32_t *output_aliases;
} kiln_abi_model;

/* The x86 extensions an artifact can record in cpu_features: LLVM's names
 * for them, which are also GCC's __builtin_cpu_supports names. X(name) is
 * applied to each, as a string literal. */
#define KILN_ABI_CPU_FEATURES(X)                                                  \
  X("popcnt") X("sse4.2") X("avx") X("f16c") X("fma") X("bmi") X("bmi2")           \
  X("lzcnt") X("movbe") X("avx2") X("avxvnni") X("avx512f") X("avx512cd")          \
  X("avx512bw") X("avx512dq") X("avx512vl") X("avx512vnni") X("avx512bf16")        \
  X("avx512fp16") X("avx512vbmi") X("avx512ifma") X("amx-tile") X("amx-bf16")      \
  X("amx-int8")

typedef const kiln_abi_model *(*kiln_abi_entry_fn)(void);

/* The checksum is FNV-1a 64 (offset basis 0xcbf29ce484222325, prime
 * 0x100000001b3) over these bytes, in order, integers little-endian:
 *   magic, abi_version, num_inputs, num_outputs   (4 bytes each)
 *   for every input, then every output:
 *     name bytes including the terminating NUL, dtype (4), rank (4),
 *     each dim (8)
 *   weights_bytes (8)
 *   ABI v2: arena_bytes (8), weights_mode (4), num_dispatches (4),
 *     weights_file bytes including the NUL (nothing when NULL),
 *     weights_checksum (8), each dispatch name including its NUL
 *   ABI v4: num_weights_segments (4), then each segment's offset (8),
 *     bytes (8) and dtype (4)
 *   ABI v5: cpu_features bytes including the NUL (nothing when NULL)
 *   ABI v6: each output_aliases entry (4; nothing when NULL)
 * Both the artifact writer and the runtime loader compute it this way.
 *
 * KILN_ABI_BLOB_CHECKSUM (the weights file) is FNV-1a 64 taken a word at a
 * time: hash = (hash ^ w) * prime for each little-endian 64-bit word w of the
 * blob, then the same for each remaining tail byte. */

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_ABI_H */
