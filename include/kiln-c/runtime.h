/*===- runtime.h - Kiln runtime C API: load compiled models and run them ----===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Plain C99. Every call that can fail returns a kiln_status pointer: NULL
 * means success, anything else is an error object the caller owns and frees
 * with kiln_status_destroy. Results come back through explicit `out_`
 * parameters, which are left untouched (or set to NULL) on failure. Every
 * create has a matching destroy; destroy functions accept NULL.
 *
 *   kiln_model *model = NULL;
 *   kiln_status *status = kiln_model_load("model.so", &model);
 *   if (status) {
 *     fprintf(stderr, "error: %s\n", kiln_status_message(status));
 *     kiln_status_destroy(status);
 *   }
 *===--------------------------------------------------------------------------===*/

#ifndef KILN_C_RUNTIME_H
#define KILN_C_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define KILN_API __attribute__((visibility("default")))
#else
#define KILN_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*===-- Status ------------------------------------------------------------===*/

typedef struct kiln_status kiln_status;

typedef enum kiln_status_code {
  KILN_STATUS_OK = 0,
  KILN_STATUS_INVALID_ARGUMENT = 1,   /* a value passed by the caller is wrong */
  KILN_STATUS_NOT_FOUND = 2,          /* a file does not exist */
  KILN_STATUS_INVALID_MODEL = 3,      /* not a (well-formed) Kiln artifact */
  KILN_STATUS_VERSION_MISMATCH = 4,   /* artifact built for another ABI */
  KILN_STATUS_RESOURCE_EXHAUSTED = 5, /* out of memory or over the byte limit */
  KILN_STATUS_UNIMPLEMENTED = 6,      /* e.g. a device this build lacks */
  KILN_STATUS_INTERNAL = 7            /* the compiled model reported failure */
} kiln_status_code;

/* KILN_STATUS_OK for NULL. */
KILN_API kiln_status_code kiln_status_get_code(const kiln_status *status);
/* A message naming the value at fault, e.g.
 * "input 'x' dim 2: got 100, expected 224". "OK" for NULL. The string lives
 * as long as the status. */
KILN_API const char *kiln_status_message(const kiln_status *status);
KILN_API void kiln_status_destroy(kiln_status *status);

/*===-- Element types -----------------------------------------------------===*/

/* Values are stable across versions: compiled models record them. */
typedef enum kiln_dtype {
  KILN_DTYPE_F32 = 1,
  KILN_DTYPE_F16 = 2,
  KILN_DTYPE_BF16 = 3,
  KILN_DTYPE_F64 = 4,
  KILN_DTYPE_I8 = 5,
  KILN_DTYPE_U8 = 6,
  KILN_DTYPE_I16 = 7,
  KILN_DTYPE_I32 = 8,
  KILN_DTYPE_I64 = 9,
  KILN_DTYPE_BOOL = 10, /* one byte per element, 0 or 1 */
  KILN_DTYPE_U16 = 11,
  KILN_DTYPE_U32 = 12,
  KILN_DTYPE_U64 = 13,
  /* ONNX's 8-bit floats: one byte per element, the bit pattern */
  KILN_DTYPE_F8E4M3FN = 14,
  KILN_DTYPE_F8E4M3FNUZ = 15,
  KILN_DTYPE_F8E5M2 = 16,
  KILN_DTYPE_F8E5M2FNUZ = 17,
  /* ONNX's INT4, UINT4, INT2, UINT2, FLOAT4E2M1 and FLOAT8E8M0: one byte per
   * element, the element's bit pattern in the low bits and the other bits
   * zero (ml_dtypes' layout: int4 -1 is 0x0F); inputs with other bits set are
   * refused */
  KILN_DTYPE_I4 = 18,
  KILN_DTYPE_U4 = 19,
  KILN_DTYPE_I2 = 20,
  KILN_DTYPE_U2 = 21,
  KILN_DTYPE_F4E2M1 = 22,
  KILN_DTYPE_F8E8M0 = 23
} kiln_dtype;

/* "f32", "f16", "bf16", "f64", "i8", "u8", "i16", "i32", "i64", "bool", "u16",
 * "u32", "u64", "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "i4", "u4",
 * "i2", "u2", "f4e2m1", "f8e8m0";
 * NULL for a value that is not a kiln_dtype. */
KILN_API const char *kiln_dtype_name(int32_t dtype);
/* Bytes per element; 0 for a value that is not a kiln_dtype. */
KILN_API size_t kiln_dtype_size(int32_t dtype);
/* Bytes of a dense tensor of `dtype` and shape dims[0..rank), with every
 * multiplication checked for overflow; dims must be >= 0. */
KILN_API kiln_status *kiln_byte_size(int32_t dtype, int32_t rank,
                                     const int64_t *dims, size_t *out_bytes);

/* Ranks above this are rejected when a model is loaded. */
#define KILN_MAX_RANK 32

/*===-- Models ------------------------------------------------------------===*/

typedef struct kiln_model kiln_model;

/* One input or output of a model. A dim of -1 is symbolic and
 * dim_names[i] names it; symbols with the same name are the same size.
 * dim_names has `rank` entries, NULL for static dims. All pointers live as
 * long as the model. */
typedef struct kiln_tensor_info {
  const char *name;
  int32_t dtype; /* kiln_dtype */
  int32_t rank;
  const int64_t *dims;
  const char *const *dim_names;
} kiln_tensor_info;

/* Where a model's weights come from (kilnc --weights=embed|external|none). */
typedef enum kiln_weights_mode {
  KILN_WEIGHTS_EMBEDDED = 0, /* inside the artifact */
  KILN_WEIGHTS_EXTERNAL = 1, /* a side file next to the artifact, memory-mapped */
  KILN_WEIGHTS_NONE = 2      /* none: filled with seeded pseudo-random values
                                at load; for benchmarking only */
} kiln_weights_mode;

typedef struct kiln_model_info {
  const char *path;       /* as given to kiln_model_load */
  const char *producer;   /* e.g. "kilnc 0.1.0"; "" when the artifact has none */
  uint64_t file_bytes;    /* size of the artifact file */
  uint64_t weights_bytes; /* bytes of the weights blob (wherever it lives) plus
                             other constants embedded in the artifact */
  uint32_t abi_version;
  size_t num_inputs;
  size_t num_outputs;
  uint64_t arena_bytes;     /* scratch one run needs (planned by kilnc) */
  int32_t weights_mode;     /* kiln_weights_mode */
  const char *weights_path; /* the external weights file; "" otherwise */
  size_t num_dispatches;    /* kernels a trace can name */
} kiln_model_info;

/* Opens a compiled artifact (a shared library made by `kilnc --emit=lib`) and
 * checks it: the file exists and is a loadable shared library, it exports the
 * Kiln entry symbol, and its descriptor has the right magic, ABI version,
 * checksum and sane counts, ranks, dims and dtypes. Errors name the file and
 * the reason. A model compiled with external weights maps its weights file
 * (the name the descriptor records, in the artifact's directory) and checks
 * its size and checksum; one compiled without weights gets seeded
 * pseudo-random ones. */
KILN_API kiln_status *kiln_model_load(const char *path, kiln_model **out_model);
/* Sessions keep their model loaded, so a model may be destroyed before them. */
KILN_API void kiln_model_destroy(kiln_model *model);

KILN_API kiln_status *kiln_model_get_info(const kiln_model *model,
                                          kiln_model_info *out_info);
KILN_API kiln_status *kiln_model_input_info(const kiln_model *model,
                                            size_t index,
                                            kiln_tensor_info *out_info);
KILN_API kiln_status *kiln_model_output_info(const kiln_model *model,
                                             size_t index,
                                             kiln_tensor_info *out_info);
/* Whether output `index` is an input's buffer updated in place (kilnc
 * --kv-cache-length, ABI v6): *out_input is that input's index, or -1. A
 * run copies the input into such an output's buffer first unless the caller
 * passes the same buffer for both, which saves the copy. */
KILN_API kiln_status *kiln_model_output_alias(const kiln_model *model,
                                              size_t index, int64_t *out_input);

/*===-- Sessions ----------------------------------------------------------===*/

typedef struct kiln_session kiln_session;

typedef enum kiln_device {
  KILN_DEVICE_CPU = 0,
  KILN_DEVICE_CUDA = 1 /* NVIDIA GPU 0 through the CUDA driver (libcuda.so.1,
                          loaded at session creation); CUDA artifacts only */
} kiln_device;

typedef struct kiln_session_options {
  int32_t device;      /* kiln_device; default KILN_DEVICE_CPU */
  int32_t num_threads; /* threads of the session's pool, including the caller
                          of kiln_session_run; 0 (default) = one per core */
  uint64_t max_bytes;  /* largest total the runtime allocates for one run
                          (its outputs plus its scratch arena); a run whose
                          shapes need more fails before allocating.
                          0 (default) = physical memory */
} kiln_session_options;

/* Fills `options` with the defaults. */
KILN_API void kiln_session_options_init(kiln_session_options *options);

/* `options` may be NULL for the defaults. Fails if the model has an output
 * whose symbolic dim is not bound by any input (output shape functions are
 * not supported yet). */
KILN_API kiln_status *kiln_session_create(kiln_model *model,
                                          const kiln_session_options *options,
                                          kiln_session **out_session);
/* No kiln_session_run may be in flight. */
KILN_API void kiln_session_destroy(kiln_session *session);

/* The options in effect, with defaults resolved (threads, byte limit). */
KILN_API kiln_status *kiln_session_get_options(const kiln_session *session,
                                               kiln_session_options *out_options);

/*===-- Tensors and running -----------------------------------------------===*/

/* A dense, row-major tensor. As an input it is a view of caller memory that
 * the runtime reads but never writes or keeps; `byte_size` must equal the
 * size implied by dtype and dims. As an output it is owned by the caller and
 * freed with kiln_tensor_destroy; its name, dims and data are then part of
 * the same allocation and outlive the session and the model. */
typedef struct kiln_tensor {
  const char *name;
  int32_t dtype; /* kiln_dtype */
  int32_t rank;
  const int64_t *dims;
  void *data; /* outputs: 64-byte aligned, never NULL */
  size_t byte_size;
} kiln_tensor;

/* Runs the model once.
 *
 * `inputs` holds `num_inputs` tensors in any order, matched to the model's
 * inputs by name. Before any data is read, everything is validated: the
 * count, that each name is expected and given once, then per input in model
 * order its dtype, rank, each static dim, each symbolic dim against the same
 * symbol in earlier inputs, the byte size (overflow-checked), and finally the
 * outputs' sizes against the session's byte limit.
 *
 * On success out_outputs[0..num_outputs) receive newly allocated tensors in
 * the model's output order (num_outputs must equal the model's output count);
 * free each with kiln_tensor_destroy. On failure they are set to NULL.
 *
 * Thread safety: several threads may call kiln_session_run on the same
 * session at once; the calls share the session's thread pool, and each
 * concurrent run gets its own scratch arena (kept by the session for later
 * runs, so steady-state runs allocate only their outputs). */
KILN_API kiln_status *kiln_session_run(kiln_session *session,
                                       const kiln_tensor *inputs,
                                       size_t num_inputs,
                                       kiln_tensor **out_outputs,
                                       size_t num_outputs);

/* Only for tensors returned by kiln_session_run. */
KILN_API void kiln_tensor_destroy(kiln_tensor *tensor);

/* CUDA sessions: milliseconds the model took on the device in this session's
 * last successful run: from its inputs being on the device to its last kernel
 * done (launches included; the copies of inputs and outputs between host and
 * device excluded). With concurrent runs, one of them. INVALID_ARGUMENT for a
 * CPU session or before a run. */
KILN_API kiln_status *kiln_session_get_device_ms(const kiln_session *session,
                                                 double *out_ms);

/*===-- Tracing -----------------------------------------------------------===*/

/* A trace collects timed events: one per run ("run") and one per dispatch
 * (kernel) of each traced run, named by the compiler's fusion stage. A trace
 * may be shared by concurrent runs. */
typedef struct kiln_trace kiln_trace;

typedef struct kiln_trace_event {
  const char *name;   /* "run" or the dispatch's name; lives with the trace */
  int32_t dispatch;   /* index of the dispatch in the model; -1 for "run" */
  uint32_t thread;    /* the OS thread id of the run */
  uint64_t begin_ns;  /* steady clock, relative to the trace's creation */
  uint64_t end_ns;
} kiln_trace_event;

KILN_API kiln_status *kiln_trace_create(kiln_trace **out_trace);
KILN_API void kiln_trace_destroy(kiln_trace *trace);

/* kiln_session_run, recording the run and its dispatches into `trace`
 * (NULL: an untraced run). */
KILN_API kiln_status *kiln_session_run_traced(kiln_session *session,
                                              const kiln_tensor *inputs,
                                              size_t num_inputs,
                                              kiln_tensor **out_outputs,
                                              size_t num_outputs,
                                              kiln_trace *trace);

/* Events so far, in the order their runs finished. */
KILN_API size_t kiln_trace_event_count(const kiln_trace *trace);
KILN_API kiln_status *kiln_trace_get_event(const kiln_trace *trace, size_t index,
                                           kiln_trace_event *out_event);
/* Writes the events as Chrome trace JSON (chrome://tracing, Perfetto). */
KILN_API kiln_status *kiln_trace_write_json(const kiln_trace *trace,
                                            const char *path);

/*===-- Decoding with a KV cache ------------------------------------------===*/

/* A decoder runs a decoder-only language model exported with a KV cache
 * token by token and owns that cache. The model must have:
 *   input  input_ids        integer [batch, sequence]
 *   input  past_key_values.<layer>.key|value   [batch, heads, past, head]
 *          (float; heads and head static)
 *   output present.<layer>.key|value           [batch, heads, past + sequence, head]
 *          (same dtype, heads and head as its past)
 *   output logits           [batch, sequence, vocabulary] (f32, f16 or bf16;
 *          vocabulary static)
 * and optionally inputs attention_mask [batch, past + sequence] (filled with
 * ones) and position_ids [batch, sequence] (past, past + 1, ...). Any other
 * input, or a past without its present, makes kiln_decoder_create fail.
 *
 * The cache lives in two buffers per past/present pair, each of max_batch x
 * heads x max_tokens x head elements: a run reads the past from one and the
 * model writes its present into the other, which becomes the next past. The
 * runtime copies no cache bytes and allocates nothing per token; the model
 * itself still writes the whole present (past ++ new) each run, because the
 * artifact ABI has no output aliased to a strided, preallocated cache. On a
 * CUDA session the two buffers are device memory, used in place by each run.
 *
 * All sequences of a batch hold the same number of tokens (no padding).
 * Every call validates its arguments before touching the cache: a call that
 * fails leaves the decoder as it was, still usable. */
typedef struct kiln_decoder kiln_decoder;

typedef struct kiln_decoder_options {
  int64_t max_tokens; /* cache capacity per sequence: prompt plus generated
                         tokens; default 1024 */
  int64_t max_batch;  /* most sequences decoded together; default 1 */
} kiln_decoder_options;

typedef struct kiln_decoder_info {
  int64_t num_layers;  /* past/present pairs divided by two (key and value) */
  int64_t num_caches;  /* past/present pairs */
  int64_t vocab_size;  /* logits' last dim; ids must be in [0, vocab_size) */
  int64_t max_tokens;
  int64_t max_batch;
  int64_t batch;       /* sequences in the cache; 0 when empty */
  int64_t length;      /* tokens per sequence in the cache */
  uint64_t cache_bytes; /* bytes the decoder allocated for its cache */
  uint64_t cache_bytes_per_token; /* bytes the model writes per cached token
                                      and sequence (every layer, key and value) */
} kiln_decoder_info;

/* Fills `options` with the defaults. */
KILN_API void kiln_decoder_options_init(kiln_decoder_options *options);

/* Recognizes the session's model as a decoder (above) and allocates the
 * cache. INVALID_MODEL naming the input or output at fault for a model
 * without a recognisable cache; INVALID_ARGUMENT for options out of range;
 * RESOURCE_EXHAUSTED if the cache does not fit. `options` may be NULL. The
 * session must outlive the decoder; runs go through its thread pool and byte
 * limit. */
KILN_API kiln_status *kiln_decoder_create(kiln_session *session,
                                          const kiln_decoder_options *options,
                                          kiln_decoder **out_decoder);
KILN_API void kiln_decoder_destroy(kiln_decoder *decoder);

/* Runs `count` tokens per sequence through the model: ids[b * count + i] is
 * token i of sequence b, b < batch. On an empty cache this is the prompt and
 * sets the batch; on a filled one it appends (chunked prefill) and `batch`
 * must equal the cache's. Errors: batch outside [1, max_batch], count < 1,
 * length + count over max_tokens, an id outside [0, vocab_size). */
KILN_API kiln_status *kiln_decoder_prefill(kiln_decoder *decoder, const int64_t *ids,
                                           int64_t batch, int64_t count);
/* One decode step: ids[b] is the next token of sequence b; the same as
 * kiln_decoder_prefill with count 1 on a filled cache. */
KILN_API kiln_status *kiln_decoder_step(kiln_decoder *decoder, const int64_t *ids,
                                        int64_t batch);
/* Empties the cache (keeps its memory) and forgets the logits. */
KILN_API kiln_status *kiln_decoder_reset(kiln_decoder *decoder);

/* The logits of the last prefill or step, [batch, count, vocabulary] as the
 * model wrote them: a view owned by the decoder, valid until its next
 * prefill, step, reset or destroy. INVALID_ARGUMENT before any run. */
KILN_API kiln_status *kiln_decoder_get_logits(const kiln_decoder *decoder,
                                              kiln_tensor *out_logits);
/* The greedy next token of each sequence: out_ids[b] = argmax over the
 * vocabulary of the last position's logits (the first index on ties, NaN
 * never chosen); `batch` must equal the cache's. */
KILN_API kiln_status *kiln_decoder_greedy_ids(const kiln_decoder *decoder,
                                              int64_t *out_ids, int64_t batch);
KILN_API kiln_status *kiln_decoder_get_info(const kiln_decoder *decoder,
                                            kiln_decoder_info *out_info);

#ifdef __cplusplus
}
#endif

#endif /* KILN_C_RUNTIME_H */
