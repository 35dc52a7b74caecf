//===- Model.cpp - Model lifetime and descriptor queries ------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Model.h"

#include "Status.h"

#include <cstdlib>
#include <dlfcn.h>
#include <sys/mman.h>

kiln_model::~kiln_model() {
  if (weights && weightsMapped)
    ::munmap(weights, abi->weights_bytes);
  else
    std::free(weights);
  if (library)
    ::dlclose(library);
}

void kiln_model::release() {
  if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    delete this;
}

namespace kiln::rt {

kiln_tensor_info TensorDesc::info() const {
  kiln_tensor_info info;
  info.name = name.c_str();
  info.dtype = dtype;
  info.rank = rank();
  info.dims = dims.data();
  info.dim_names = dimNames.data();
  return info;
}

namespace {
kiln_status *tensorInfo(const kiln_model *model, size_t index,
                        kiln_tensor_info *out_info, bool input) {
  const char *kind = input ? "input" : "output";
  if (!model || !out_info)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      cat(!model ? "model" : "out_info", " is NULL"));
  const std::vector<TensorDesc> &list = input ? model->inputs : model->outputs;
  if (index >= list.size())
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                      cat(kind, " index ", index, " is out of range, the model has ",
                          list.size(), " ", kind, "s"));
  *out_info = list[index].info();
  return nullptr;
}
} // namespace
} // namespace kiln::rt

extern "C" {

void kiln_model_destroy(kiln_model *model) {
  if (model)
    model->release();
}

kiln_status *kiln_model_get_info(const kiln_model *model,
                                 kiln_model_info *out_info) {
  using namespace kiln::rt;
  if (!model || !out_info)
    return guard([&] {
      return makeStatus(KILN_STATUS_INVALID_ARGUMENT,
                        cat(!model ? "model" : "out_info", " is NULL"));
    });
  out_info->path = model->path.c_str();
  out_info->producer = model->producer.c_str();
  out_info->file_bytes = model->fileBytes;
  out_info->weights_bytes = model->abi->weights_bytes;
  out_info->abi_version = model->abi->abi_version;
  out_info->num_inputs = model->inputs.size();
  out_info->num_outputs = model->outputs.size();
  out_info->arena_bytes = model->abi->arena_bytes;
  out_info->weights_mode = static_cast<int32_t>(model->abi->weights_mode);
  out_info->weights_path = model->weightsPath.c_str();
  out_info->num_dispatches = model->dispatchNames.size();
  return nullptr;
}

kiln_status *kiln_model_input_info(const kiln_model *model, size_t index,
                                   kiln_tensor_info *out_info) {
  return kiln::rt::guard(
      [&] { return kiln::rt::tensorInfo(model, index, out_info, true); });
}

kiln_status *kiln_model_output_info(const kiln_model *model, size_t index,
                                    kiln_tensor_info *out_info) {
  return kiln::rt::guard(
      [&] { return kiln::rt::tensorInfo(model, index, out_info, false); });
}

kiln_status *kiln_model_output_alias(const kiln_model *model, size_t index,
                                     int64_t *out_input) {
  return kiln::rt::guard([&]() -> kiln_status * {
    if (!out_input)
      return kiln::rt::makeStatus(KILN_STATUS_INVALID_ARGUMENT, "out_input is NULL");
    kiln_tensor_info info;
    if (kiln_status *status = kiln::rt::tensorInfo(model, index, &info, false))
      return status;
    *out_input = model->outputs[index].aliasedInput;
    return nullptr;
  });
}

} // extern "C"
