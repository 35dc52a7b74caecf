/*===- run_model.c - Example: load a compiled Kiln model and run it (C99) --===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 *   run_model MODEL.so [THREADS]
 *
 * Loads the artifact, prints its inputs and outputs, feeds every input a
 * deterministic ramp (f32 inputs only; symbolic dims are taken as 1), runs it
 * once and prints each output's first values and their sum. Everything an
 * application needs is kiln-c/runtime.h and libkiln_runtime.
 *===--------------------------------------------------------------------------===*/

#include <kiln-c/runtime.h>

#include <stdio.h>
#include <stdlib.h>

/* Prints the error, frees it, returns 1; 0 for success. */
static int failed(kiln_status *status) {
  if (!status)
    return 0;
  fprintf(stderr, "error: %s\n", kiln_status_message(status));
  kiln_status_destroy(status);
  return 1;
}

static void print_shape(const int64_t *dims, int32_t rank) {
  int32_t i;
  printf("[");
  for (i = 0; i < rank; ++i)
    printf(i ? ", %lld" : "%lld", (long long)dims[i]);
  printf("]");
}

int main(int argc, char **argv) {
  kiln_model *model = NULL;
  kiln_session *session = NULL;
  kiln_session_options options;
  kiln_model_info info;
  kiln_tensor *inputs = NULL, **outputs = NULL;
  int64_t *dims = NULL;
  float **data = NULL;
  size_t i, j;
  int code = 1;

  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.so [THREADS]\n", argv[0]);
    return 2;
  }
  if (failed(kiln_model_load(argv[1], &model)) || failed(kiln_model_get_info(model, &info)))
    goto done;
  printf("model %s: %zu inputs, %zu outputs, arena %llu bytes, weights %llu bytes\n",
         info.path, info.num_inputs, info.num_outputs, (unsigned long long)info.arena_bytes,
         (unsigned long long)info.weights_bytes);
  kiln_session_options_init(&options);
  options.num_threads = argc > 2 ? atoi(argv[2]) : 0;
  if (failed(kiln_session_create(model, &options, &session)))
    goto done;

  inputs = calloc(info.num_inputs, sizeof(*inputs));
  outputs = calloc(info.num_outputs, sizeof(*outputs));
  dims = calloc(info.num_inputs * KILN_MAX_RANK, sizeof(*dims));
  data = calloc(info.num_inputs, sizeof(*data));
  if (!inputs || !outputs || !dims || !data)
    goto done;
  for (i = 0; i < info.num_inputs; ++i) {
    kiln_tensor_info in;
    size_t elements = 1;
    if (failed(kiln_model_input_info(model, i, &in)))
      goto done;
    if (in.dtype != KILN_DTYPE_F32) {
      fprintf(stderr, "error: input '%s' is %s; this example feeds f32 only\n", in.name,
              kiln_dtype_name(in.dtype));
      goto done;
    }
    for (j = 0; j < (size_t)in.rank; ++j) {
      dims[i * KILN_MAX_RANK + j] = in.dims[j] < 0 ? 1 : in.dims[j];
      elements *= (size_t)dims[i * KILN_MAX_RANK + j];
    }
    data[i] = malloc(elements * sizeof(float) + 1);
    if (!data[i])
      goto done;
    for (j = 0; j < elements; ++j)
      data[i][j] = (float)(j % 17) / 16.0f - 0.5f;
    inputs[i].name = in.name;
    inputs[i].dtype = in.dtype;
    inputs[i].rank = in.rank;
    inputs[i].dims = dims + i * KILN_MAX_RANK;
    inputs[i].data = data[i];
    inputs[i].byte_size = elements * sizeof(float);
    printf("input '%s' %s ", in.name, kiln_dtype_name(in.dtype));
    print_shape(inputs[i].dims, in.rank);
    printf("\n");
  }

  if (failed(kiln_session_run(session, inputs, info.num_inputs, outputs, info.num_outputs)))
    goto done;
  for (i = 0; i < info.num_outputs; ++i) {
    const kiln_tensor *out = outputs[i];
    size_t count = out->byte_size / kiln_dtype_size(out->dtype);
    double sum = 0;
    printf("output '%s' %s ", out->name, kiln_dtype_name(out->dtype));
    print_shape(out->dims, out->rank);
    if (out->dtype == KILN_DTYPE_F32) {
      const float *values = (const float *)out->data;
      printf(":");
      for (j = 0; j < count; ++j) {
        if (j < 8)
          printf(" %.6f", values[j]);
        sum += values[j];
      }
      printf("%s sum=%.6f", count > 8 ? " ..." : "", sum);
    }
    printf("\n");
  }
  code = 0;

done:
  if (outputs)
    for (i = 0; i < info.num_outputs; ++i)
      kiln_tensor_destroy(outputs[i]);
  if (data)
    for (i = 0; i < info.num_inputs; ++i)
      free(data[i]);
  free(data);
  free(dims);
  free(outputs);
  free(inputs);
  kiln_session_destroy(session);
  kiln_model_destroy(model);
  return code;
}
