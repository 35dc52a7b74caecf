/*===- CApiTest.c - A strict C99 client of the shared runtime library ------===*
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * Built with -std=c99 -pedantic-errors -Werror, so the public header stays
 * plain C. Usage: KilnRuntimeCApiTest path/to/add_one.so
 *===--------------------------------------------------------------------------===*/

#include "kiln-c/runtime.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void expect(int condition, const char *what) {
  if (!condition) {
    fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

/* Returns 1 if `status` is NULL; otherwise prints and frees it. */
static int ok(kiln_status *status, const char *what) {
  if (!status)
    return 1;
  fprintf(stderr, "FAILED: %s: %s\n", what, kiln_status_message(status));
  kiln_status_destroy(status);
  ++failures;
  return 0;
}

static void run_add_one(kiln_session *session) {
  float x[24];
  int64_t dims[3] = {2, 3, 4};
  kiln_tensor input;
  kiln_tensor *output = NULL;
  int i;
  for (i = 0; i < 24; ++i)
    x[i] = (float)i;
  input.name = "x";
  input.dtype = KILN_DTYPE_F32;
  input.rank = 3;
  input.dims = dims;
  input.data = x;
  input.byte_size = sizeof(x);
  if (!ok(kiln_session_run(session, &input, 1, &output, 1), "run"))
    return;
  expect(strcmp(output->name, "y") == 0, "output name");
  expect(output->byte_size == sizeof(x), "output byte size");
  for (i = 0; i < 24; ++i)
    expect(((const float *)output->data)[i] == x[i] + 1.0f, "output value");
  kiln_tensor_destroy(output);
}

static void check_error(kiln_session *session) {
  float x[24] = {0};
  int64_t dims[3] = {2, 3, 5};
  kiln_tensor input = {"x", KILN_DTYPE_F32, 3, NULL, NULL, 0};
  kiln_tensor *output = NULL;
  kiln_status *status;
  input.dims = dims;
  input.data = x;
  input.byte_size = sizeof(x);
  status = kiln_session_run(session, &input, 1, &output, 1);
  expect(kiln_status_get_code(status) == KILN_STATUS_INVALID_ARGUMENT, "code");
  expect(strcmp(kiln_status_message(status),
                "input 'x' dim 2: got 5, expected 4") == 0,
         "message");
  expect(output == NULL, "no output on failure");
  kiln_status_destroy(status);
}

int main(int argc, char **argv) {
  kiln_model *model = NULL;
  kiln_session *session = NULL;
  kiln_session_options options;
  kiln_model_info info;
  if (argc != 2) {
    fprintf(stderr, "usage: %s add_one.so\n", argv[0]);
    return 2;
  }
  if (!ok(kiln_model_load(argv[1], &model), "load"))
    return 1;
  if (ok(kiln_model_get_info(model, &info), "info"))
    expect(info.num_inputs == 1 && info.num_outputs == 1, "counts");
  kiln_session_options_init(&options);
  options.num_threads = 2;
  if (ok(kiln_session_create(model, &options, &session), "session")) {
    run_add_one(session);
    check_error(session);
    kiln_session_destroy(session);
  }
  kiln_model_destroy(model);
  if (failures == 0)
    printf("ok\n");
  return failures ? 1 : 0;
}
