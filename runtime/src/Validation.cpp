//===- Validation.cpp - Checks a run's inputs and plans its outputs --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Checks run in a fixed order so that the first message is the most useful
// one: the count, the names, then each input in the model's order (dtype,
// rank, dims, byte size), then the outputs. Symbols are bound by the first
// input (in model order) that uses them, and later uses are compared with it.
//
//===----------------------------------------------------------------------===//

#include "Validation.h"

#include "Dtype.h"
#include "Status.h"

#include "kiln/Target/Host/DimFormula.h"

#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace kiln::rt {
namespace {

kiln_status *invalidArgument(std::string message) {
  return makeStatus(KILN_STATUS_INVALID_ARGUMENT, std::move(message));
}

std::string nameList(const std::vector<TensorDesc> &tensors) {
  std::string out;
  for (const TensorDesc &tensor : tensors)
    out += cat(out.empty() ? "" : ", ", "'", tensor.name, "'");
  return out;
}

std::string dtypeText(int32_t dtype) {
  const char *name = kiln_dtype_name(dtype);
  return name ? std::string(name) : cat(dtype, " (not a kiln_dtype)");
}

/// Where a symbol got its value, for the message when another use differs.
struct Binding {
  int64_t value;
  const std::string *input;
};

class RunPlanner {
public:
  RunPlanner(const kiln_model &model, RunPlan &plan) : model(model), plan(plan) {}

  kiln_status *matchNames(const kiln_tensor *inputs, size_t numInputs);
  kiln_status *checkInput(const TensorDesc &desc, const kiln_tensor &tensor);
  kiln_status *planOutputs(uint64_t maxBytes);

private:
  kiln_status *checkDim(const TensorDesc &desc, int32_t i, int64_t got);

  const kiln_model &model;
  RunPlan &plan;
  std::unordered_map<std::string_view, Binding> symbols;
};

kiln_status *RunPlanner::matchNames(const kiln_tensor *inputs, size_t numInputs) {
  if (numInputs != model.inputs.size())
    return invalidArgument(cat("input count: got ", numInputs, ", expected ",
                               model.inputs.size(), " (", nameList(model.inputs),
                               ")"));
  if (numInputs && !inputs)
    return invalidArgument(cat("inputs is NULL but num_inputs is ", numInputs));
  std::vector<size_t> given(numInputs, SIZE_MAX);
  plan.inputs.assign(numInputs, nullptr);
  for (size_t i = 0; i < numInputs; ++i) {
    const char *name = inputs[i].name;
    if (!name)
      return invalidArgument(cat("inputs[", i, "] has no name"));
    auto it = model.inputIndex.find(name);
    if (it == model.inputIndex.end())
      return invalidArgument(cat("unknown input '", name, "' (inputs[", i,
                                 "]); the model's inputs are ",
                                 nameList(model.inputs)));
    if (given[it->second] != SIZE_MAX)
      return invalidArgument(cat("input '", name, "' is given twice (inputs[",
                                 given[it->second], "] and inputs[", i, "])"));
    given[it->second] = i;
    plan.inputs[it->second] = &inputs[i];
  }
  return nullptr; // equal counts and no duplicates: every name is present
}

kiln_status *RunPlanner::checkDim(const TensorDesc &desc, int32_t i, int64_t got) {
  std::string where = cat("input '", desc.name, "' dim ", i);
  if (desc.isSymbolic(i))
    where += cat(" ('", desc.dimNameStorage[i], "')");
  if (got < 0)
    return invalidArgument(cat(where, ": got ", got, ", expected a size >= 0"));
  if (!desc.isSymbolic(i)) {
    if (got != desc.dims[i])
      return invalidArgument(cat(where, ": got ", got, ", expected ", desc.dims[i]));
    return nullptr;
  }
  const std::string &symbol = desc.dimNameStorage[i];
  auto [it, inserted] = symbols.emplace(symbol, Binding{got, &desc.name});
  if (!inserted && it->second.value != got)
    return invalidArgument(cat(where, ": got ", got, ", but '", symbol, "' is ",
                               it->second.value, " from input '",
                               *it->second.input, "'"));
  return nullptr;
}

kiln_status *RunPlanner::checkInput(const TensorDesc &desc, const kiln_tensor &tensor) {
  if (tensor.dtype != desc.dtype)
    return invalidArgument(cat("input '", desc.name, "' dtype: got ",
                               dtypeText(tensor.dtype), ", expected ",
                               kiln_dtype_name(desc.dtype)));
  if (tensor.rank != desc.rank())
    return invalidArgument(cat("input '", desc.name, "' rank: got ", tensor.rank,
                               ", expected ", desc.rank()));
  if (tensor.rank > 0 && !tensor.dims)
    return invalidArgument(cat("input '", desc.name, "': dims is NULL"));
  for (int32_t i = 0; i < tensor.rank; ++i)
    if (kiln_status *status = checkDim(desc, i, tensor.dims[i]))
      return status;
  std::string shape =
      cat(formatDims(tensor.dims, tensor.rank), " ", kiln_dtype_name(desc.dtype));
  size_t bytes = 0;
  if (!checkedByteSize(kiln_dtype_size(desc.dtype), tensor.dims, tensor.rank, bytes))
    return invalidArgument(
        cat("input '", desc.name, "': byte size of ", shape, " overflows 64 bits"));
  if (tensor.byte_size != bytes)
    return invalidArgument(cat("input '", desc.name, "' byte_size: got ",
                               tensor.byte_size, ", expected ", bytes, " for ",
                               shape));
  if (bytes && !tensor.data)
    return invalidArgument(cat("input '", desc.name, "': data is NULL"));
  // Sub-byte elements: the bits above the element's must be zero (compiled
  // code reads the byte as it is).
  if (unsigned bits = subByteBits(desc.dtype)) {
    auto *data = static_cast<const unsigned char *>(tensor.data);
    for (size_t i = 0; i < bytes; ++i)
      if (data[i] >> bits)
        return invalidArgument(cat("input '", desc.name, "' element ", i, " is ",
                                   static_cast<unsigned>(data[i]), ": ",
                                   kiln_dtype_name(desc.dtype), " takes the low ", bits,
                                   " bits of a byte, the others must be zero"));
  }
  plan.dims.insert(plan.dims.end(), tensor.dims, tensor.dims + tensor.rank);
  return nullptr;
}

kiln_status *RunPlanner::planOutputs(uint64_t maxBytes) {
  plan.firstOutputDim = plan.dims.size();
  // The scratch arena counts against the limit like the outputs.
  uint64_t arena = model.abi ? model.abi->arena_bytes : 0;
  if (arena > maxBytes)
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                      cat("the model's scratch arena needs ", arena,
                          " bytes, over the session's byte limit of ", maxBytes,
                          " bytes"));
  uint64_t total = arena;
  for (const TensorDesc &desc : model.outputs) {
    size_t first = plan.dims.size();
    for (int32_t i = 0; i < desc.rank(); ++i) {
      int64_t dim = desc.dims[i];
      if (desc.isSymbolic(i)) {
        auto it = symbols.find(desc.dimNameStorage[i]);
        std::optional<int64_t> value;
        if (it != symbols.end())
          value = it->second.value;
        else // a formula of input dims (checked by checkOutputsSizable)
          value = dim_formula::evaluate(desc.dimNameStorage[i],
                                        [&](std::string_view name) -> std::optional<int64_t> {
                                          auto found = symbols.find(name);
                                          if (found == symbols.end())
                                            return std::nullopt;
                                          return found->second.value;
                                        });
        if (!value)
          return makeStatus(KILN_STATUS_INTERNAL,
                            cat("output '", desc.name, "' dim ", i,
                                ": symbol '", desc.dimNameStorage[i], "' is unbound"));
        if (*value < 0)
          return invalidArgument(cat("output '", desc.name, "' dim ", i, " ('",
                                     desc.dimNameStorage[i], "') is ", *value,
                                     " for these inputs, expected a size >= 0"));
        dim = *value;
      }
      plan.dims.push_back(dim);
    }
    const int64_t *dims = plan.dims.data() + first;
    std::string shape =
        cat(formatDims(dims, desc.rank()), " ", kiln_dtype_name(desc.dtype));
    size_t bytes = 0;
    if (!checkedByteSize(kiln_dtype_size(desc.dtype), dims, desc.rank(), bytes))
      return invalidArgument(
          cat("output '", desc.name, "': byte size of ", shape, " overflows 64 bits"));
    if (bytes > maxBytes)
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                        cat("output '", desc.name, "' needs ", bytes, " bytes (",
                            shape, "), over the session's byte limit of ",
                            maxBytes, " bytes"));
    plan.outputBytes.push_back(bytes);
    // Both terms are <= maxBytes, so the sum cannot wrap.
    total += bytes;
    if (total > maxBytes)
      return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED,
                        cat("the outputs need ", total - arena, " bytes or more",
                            arena ? cat(" (", total, " with the scratch arena)") : "",
                            ", over the session's byte limit of ",
                            maxBytes, " bytes"));
  }
  return nullptr;
}

} // namespace

kiln_status *planRun(const kiln_model &model, uint64_t maxBytes,
                     const kiln_tensor *inputs, size_t numInputs,
                     size_t numOutputs, RunPlan &plan) {
  RunPlanner planner(model, plan);
  if (kiln_status *status = planner.matchNames(inputs, numInputs))
    return status;
  for (size_t i = 0; i < model.inputs.size(); ++i)
    if (kiln_status *status = planner.checkInput(model.inputs[i], *plan.inputs[i]))
      return status;
  if (numOutputs != model.outputs.size())
    return invalidArgument(cat("output count: got ", numOutputs, ", expected ",
                               model.outputs.size(), " (",
                               nameList(model.outputs), ")"));
  return planner.planOutputs(maxBytes);
}

kiln_status *checkOutputsSizable(const kiln_model &model) {
  std::unordered_set<std::string_view> bound;
  for (const TensorDesc &desc : model.inputs)
    for (int32_t i = 0; i < desc.rank(); ++i)
      if (desc.isSymbolic(i))
        bound.insert(desc.dimNameStorage[i]);
  for (const TensorDesc &desc : model.outputs)
    for (int32_t i = 0; i < desc.rank(); ++i)
      if (desc.isSymbolic(i) && !bound.count(desc.dimNameStorage[i]) &&
          !dim_formula::evaluate(desc.dimNameStorage[i],
                                 [&](std::string_view name) -> std::optional<int64_t> {
                                   if (!bound.count(name))
                                     return std::nullopt;
                                   return 1;
                                 }))
        return makeStatus(
            KILN_STATUS_UNIMPLEMENTED,
            cat("model '", model.path, "': output '", desc.name, "' dim ", i,
                " ('", desc.dimNameStorage[i],
                "') is not bound by any input; output shape functions are not "
                "supported yet"));
  return nullptr;
}

} // namespace kiln::rt
