//===- ModelLoader.cpp - kiln_model_load: open and check a compiled artifact -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Loading goes from the outside in, so that each failure gets the most
// specific reason: the file, its ELF header, dlopen, the entry symbol, then
// the descriptor (magic, version, structure safe to walk, checksum, the CPU
// extensions its code needs, meaning).
//
//===----------------------------------------------------------------------===//

#include "CPUFeatures.h"
#include "Dtype.h"
#include "ElfCheck.h"
#include "Model.h"
#include "ModelLoader.h"
#include "Status.h"
#include "Weights.h"
#include "kiln-c/checksum.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <memory>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::rt {
namespace {

// Far above any real model, low enough that a corrupt count is caught
// before the runtime walks that many entries.
constexpr uint32_t kMaxTensors = 1u << 16;
constexpr uint32_t kMaxDispatches = 1u << 20;
constexpr uint32_t kMaxWeightsSegments = 1u << 10;

struct Problem {
  kiln_status_code code;
  std::string reason;
};
using MaybeProblem = std::optional<Problem>;

Problem invalid(std::string reason) {
  return {KILN_STATUS_INVALID_MODEL, std::move(reason)};
}

/// Checks that `path` is a regular file with consistent ELF shared-library
/// headers, which gives clearer messages than dlopen and keeps it from
/// crashing on truncated files.
MaybeProblem checkFile(const std::string &path, uint64_t &fileBytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT)
      return Problem{KILN_STATUS_NOT_FOUND, "file not found"};
    return Problem{KILN_STATUS_INVALID_ARGUMENT, std::strerror(error)};
  }
  struct stat info;
  std::string problem;
  bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  if (regular) {
    fileBytes = static_cast<uint64_t>(info.st_size);
    problem = checkSharedLibraryHeaders(fd, fileBytes);
  }
  ::close(fd);
  if (!regular)
    return Problem{KILN_STATUS_INVALID_ARGUMENT, "not a regular file"};
  if (!problem.empty())
    return invalid(problem);
  return std::nullopt;
}

MaybeProblem checkTensorStructure(const kiln_abi_tensor &tensor,
                                  const std::string &what) {
  if (!tensor.name)
    return invalid(cat(what, " has no name"));
  if (tensor.rank < 0 || tensor.rank > KILN_MAX_RANK)
    return invalid(cat(what, " '", tensor.name, "' has rank ", tensor.rank,
                       ", accepted range is [0, ", KILN_MAX_RANK, "]"));
  if (tensor.rank > 0 && !tensor.dims)
    return invalid(cat(what, " '", tensor.name, "' has no dims"));
  return std::nullopt;
}

/// What must hold before the checksum can be computed without crashing.
MaybeProblem checkStructure(const kiln_abi_model &abi) {
  if (abi.num_inputs > kMaxTensors || abi.num_outputs > kMaxTensors)
    return invalid(cat("implausible tensor counts (", abi.num_inputs,
                       " inputs, ", abi.num_outputs, " outputs)"));
  if ((abi.num_inputs && !abi.inputs) || (abi.num_outputs && !abi.outputs))
    return invalid("descriptor has NULL tensor arrays");
  for (uint32_t i = 0; i < abi.num_inputs; ++i)
    if (MaybeProblem p = checkTensorStructure(abi.inputs[i], cat("input ", i)))
      return p;
  for (uint32_t i = 0; i < abi.num_outputs; ++i)
    if (MaybeProblem p = checkTensorStructure(abi.outputs[i], cat("output ", i)))
      return p;
  if (abi.num_dispatches > kMaxDispatches)
    return invalid(cat("implausible dispatch count ", abi.num_dispatches));
  if (abi.num_dispatches && !abi.dispatch_names)
    return invalid("descriptor has a NULL dispatch name array");
  for (uint32_t i = 0; i < abi.num_dispatches; ++i)
    if (!abi.dispatch_names[i])
      return invalid(cat("dispatch ", i, " has no name"));
  if (abi.num_weights_segments > kMaxWeightsSegments)
    return invalid(cat("implausible weights segment count ", abi.num_weights_segments));
  if (abi.num_weights_segments && !abi.weights_segments)
    return invalid("descriptor has a NULL weights segment array");
  return std::nullopt;
}

MaybeProblem checkWeightsFields(const kiln_abi_model &abi) {
  if (abi.weights_mode > KILN_ABI_WEIGHTS_NONE)
    return invalid(cat("unknown weights mode ", abi.weights_mode,
                       ", expected 0 (embedded), 1 (external) or 2 (none)"));
  bool external = abi.weights_mode == KILN_ABI_WEIGHTS_EXTERNAL;
  if (external && (!abi.weights_file || !*abi.weights_file ||
                   std::strchr(abi.weights_file, '/')))
    return invalid("external weights need a weights file name without '/'");
  if (!external && abi.weights_file)
    return invalid(cat("weights file '", abi.weights_file,
                       "' given, but the weights are not external"));
  uint64_t end = 0;
  for (uint32_t i = 0; i < abi.num_weights_segments; ++i) {
    const kiln_abi_weights_segment &segment = abi.weights_segments[i];
    uint64_t element = segment.dtype == KILN_DTYPE_F32 ? 4 : 2;
    if (segment.dtype != KILN_DTYPE_F32 && segment.dtype != KILN_DTYPE_F16 &&
        segment.dtype != KILN_DTYPE_BF16)
      return invalid(cat("weights segment ", i, " has dtype ", segment.dtype,
                         ", expected f32, f16 or bf16"));
    if (segment.offset < end || segment.bytes > abi.weights_bytes ||
        segment.offset > abi.weights_bytes - segment.bytes || segment.offset % element ||
        segment.bytes % element)
      return invalid(cat("weights segment ", i, " (", segment.bytes, " bytes at ",
                         segment.offset, ") is not an aligned run after the previous "
                         "segment inside the ", abi.weights_bytes, " weight bytes"));
    end = segment.offset + segment.bytes;
  }
  return std::nullopt;
}

MaybeProblem checkTensorMeaning(const kiln_abi_tensor &tensor, const char *kind) {
  std::string what = cat(kind, " '", tensor.name, "'");
  if (!*tensor.name)
    return invalid(cat(kind, " has an empty name"));
  if (!isValidDtype(tensor.dtype))
    return invalid(cat(what, " has unknown dtype ", tensor.dtype));
  for (int32_t i = 0; i < tensor.rank; ++i) {
    int64_t dim = tensor.dims[i];
    if (dim < -1)
      return invalid(cat(what, " dim ", i, " is ", dim,
                         ", expected -1 (symbolic) or a size >= 0"));
    if (dim == -1 && (!tensor.dim_names || !tensor.dim_names[i] ||
                      !*tensor.dim_names[i]))
      return invalid(cat(what, " dim ", i, " is symbolic but has no name"));
  }
  return std::nullopt;
}

MaybeProblem checkTensorList(const kiln_abi_tensor *tensors, uint32_t count,
                             const char *kind) {
  std::set<std::string> seen;
  for (uint32_t i = 0; i < count; ++i) {
    if (MaybeProblem p = checkTensorMeaning(tensors[i], kind))
      return p;
    if (!seen.insert(tensors[i].name).second)
      return invalid(cat("two ", kind, "s are named '", tensors[i].name, "'"));
  }
  return std::nullopt;
}

/// ABI v6: each aliased output names a distinct input of its dtype and
/// dims (dim names too, where symbolic).
MaybeProblem checkOutputAliases(const kiln_abi_model &abi) {
  const int32_t *aliases = outputAliases(abi);
  if (!aliases)
    return std::nullopt;
  std::vector<bool> taken(abi.num_inputs);
  for (uint32_t o = 0; o < abi.num_outputs; ++o) {
    int32_t i = aliases[o];
    if (i == -1)
      continue;
    const kiln_abi_tensor &output = abi.outputs[o];
    if (i < 0 || static_cast<uint32_t>(i) >= abi.num_inputs)
      return invalid(cat("output '", output.name, "' aliases input ", i, ", but the model has ",
                         abi.num_inputs, " inputs"));
    const kiln_abi_tensor &input = abi.inputs[i];
    if (taken[i])
      return invalid(cat("input '", input.name, "' is aliased by two outputs"));
    taken[i] = true;
    bool same = input.dtype == output.dtype && input.rank == output.rank;
    for (int32_t d = 0; same && d < input.rank; ++d)
      same = input.dims[d] == output.dims[d] &&
             (input.dims[d] >= 0 || std::strcmp(input.dim_names[d], output.dim_names[d]) == 0);
    if (!same)
      return invalid(cat("output '", output.name, "' aliases input '", input.name,
                         "', but their dtypes or dims differ"));
  }
  return std::nullopt;
}

MaybeProblem checkDescriptor(const kiln_abi_model &abi) {
  if (abi.magic != KILN_ABI_MAGIC)
    return invalid(cat("bad magic 0x", toHex(abi.magic, 8), ", expected 0x",
                       toHex(KILN_ABI_MAGIC, 8), " ('KILN')"));
  if (abi.abi_version < KILN_ABI_MIN_VERSION || abi.abi_version > KILN_ABI_VERSION)
    return Problem{KILN_STATUS_VERSION_MISMATCH,
                   cat("ABI version mismatch: the artifact has version ",
                       abi.abi_version, ", this runtime supports versions ",
                       KILN_ABI_MIN_VERSION, " to ", KILN_ABI_VERSION)};
  if (MaybeProblem p = checkStructure(abi))
    return p;
  uint64_t expected = kiln_abi_descriptor_checksum(&abi);
  if (abi.checksum != expected)
    return invalid(cat("checksum mismatch: the descriptor says 0x",
                       toHex(abi.checksum, 16), ", its contents hash to 0x",
                       toHex(expected, 16), " (corrupt or edited file)"));
  if (!abi.run)
    return invalid("descriptor has no run function");
  // Before any of the artifact's code runs: code for extensions this CPU
  // lacks would die of SIGILL.
  CPUFeatureGaps gaps = findCPUFeatureGaps(abi.cpu_features);
  if (!gaps.empty())
    return Problem{KILN_STATUS_UNIMPLEMENTED, describeCPUFeatureGaps(gaps)};
  if (MaybeProblem p = checkWeightsFields(abi))
    return p;
  if (MaybeProblem p = checkTensorList(abi.inputs, abi.num_inputs, "input"))
    return p;
  if (MaybeProblem p = checkTensorList(abi.outputs, abi.num_outputs, "output"))
    return p;
  return checkOutputAliases(abi);
}

TensorDesc copyTensor(const kiln_abi_tensor &tensor) {
  TensorDesc desc;
  desc.name = tensor.name;
  desc.dtype = tensor.dtype;
  desc.dims.assign(tensor.dims, tensor.dims + tensor.rank);
  for (int32_t i = 0; i < tensor.rank; ++i)
    desc.dimNameStorage.push_back(desc.isSymbolic(i) ? tensor.dim_names[i] : "");
  // Pointers are taken only once the strings no longer move.
  for (int32_t i = 0; i < tensor.rank; ++i)
    desc.dimNames.push_back(desc.isSymbolic(i) ? desc.dimNameStorage[i].c_str()
                                               : nullptr);
  return desc;
}

void copyDescriptor(const kiln_abi_model &abi, kiln_model &model) {
  model.abi = &abi;
  model.producer = abi.producer ? abi.producer : "";
  for (uint32_t i = 0; i < abi.num_inputs; ++i) {
    model.inputs.push_back(copyTensor(abi.inputs[i]));
    model.inputIndex.emplace(model.inputs.back().name, i);
  }
  const int32_t *aliases = outputAliases(abi);
  for (uint32_t i = 0; i < abi.num_outputs; ++i) {
    model.outputs.push_back(copyTensor(abi.outputs[i]));
    model.outputs.back().aliasedInput = aliases ? aliases[i] : -1;
  }
  for (uint32_t i = 0; i < abi.num_dispatches; ++i)
    model.dispatchNames.push_back(abi.dispatch_names[i]);
}

/// dlopen and the entry symbol; on success `model.library` is set.
MaybeProblem openLibrary(kiln_model &model, const kiln_abi_model *&abi) {
  // Without a slash dlopen would search the library path instead of the
  // current directory.
  std::string dlPath =
      model.path.find('/') == std::string::npos ? "./" + model.path : model.path;
  dlerror();
  void *library = ::dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return invalid(cat("not a loadable shared library, or truncated: ",
                       why ? why : "dlopen failed"));
  }
  model.library = library;
  auto entry = reinterpret_cast<kiln_abi_entry_fn>(
      ::dlsym(library, KILN_ABI_ENTRY_SYMBOL));
  if (!entry)
    return invalid(cat("not a Kiln artifact: it does not export '",
                       KILN_ABI_ENTRY_SYMBOL, "'"));
  abi = entry();
  if (!abi)
    return invalid(cat("not a Kiln artifact: ", KILN_ABI_ENTRY_SYMBOL,
                       "() returned NULL"));
  using CudaChipFn = const char *(*)();
  if (auto chip = reinterpret_cast<CudaChipFn>(::dlsym(library, KILN_ABI_CUDA_SYMBOL))) {
    const char *name = chip();
    model.cudaChip = name && *name ? name : "unknown";
  }
  return std::nullopt;
}

kiln_status *loadModel(const char *path, kiln_model **out_model) {
  if (!out_model)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "out_model is NULL");
  *out_model = nullptr;
  if (!path || !*path)
    return makeStatus(KILN_STATUS_INVALID_ARGUMENT, "model path is empty");
  auto model = std::make_unique<kiln_model>();
  model->path = path;
  const kiln_abi_model *abi = nullptr;
  MaybeProblem problem = checkFile(model->path, model->fileBytes);
  if (!problem)
    problem = openLibrary(*model, abi);
  // The descriptor is checked before its weights are read (and again,
  // harmlessly, when adopted).
  if (!problem)
    problem = checkDescriptor(*abi);
  if (!problem) {
    model->abi = abi;
    if (std::optional<WeightsProblem> weights = loadWeights(*model))
      problem = Problem{weights->code, weights->reason};
  }
  if (problem) // the unique_ptr closes the library, if it was opened
    return makeStatus(problem->code, cat("cannot load model '", model->path,
                                         "': ", problem->reason));
  return adoptDescriptor(std::move(model), *abi, out_model);
}

} // namespace

kiln_status *adoptDescriptor(std::unique_ptr<kiln_model> model,
                             const kiln_abi_model &abi, kiln_model **out_model) {
  if (MaybeProblem problem = checkDescriptor(abi))
    return makeStatus(problem->code, cat("cannot load model '", model->path,
                                         "': ", problem->reason));
  copyDescriptor(abi, *model);
  *out_model = model.release();
  return nullptr;
}

} // namespace kiln::rt

extern "C" kiln_status *kiln_model_load(const char *path, kiln_model **out_model) {
  return kiln::rt::guard([&] { return kiln::rt::loadModel(path, out_model); });
}
