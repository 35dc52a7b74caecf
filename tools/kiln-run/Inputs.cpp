//===- Inputs.cpp - kiln-run's model inputs: .npy files or seeded random ---===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Inputs.h"

#include "Elements.h"

#include <fmt/format.h>
#include <map>
#include <optional>

namespace kilnrun {
namespace {

struct Spec {
  std::string name;
  std::string value;
};

/// Splits NAME=VALUE, checking NAME is a model input given only once.
std::map<std::string, std::string>
parseSpecs(const std::vector<std::string> &specs, const char *flag,
           const std::vector<kiln_tensor_info> &descs, const char *valueHint) {
  std::map<std::string, std::string> out;
  for (const std::string &spec : specs) {
    size_t equals = spec.find('=');
    if (equals == std::string::npos || equals == 0)
      throw ToolError(fmt::format("{} '{}': expected NAME={}", flag, spec, valueHint));
    std::string name = spec.substr(0, equals);
    bool known = false;
    std::string names;
    for (const kiln_tensor_info &desc : descs) {
      known |= name == desc.name;
      names += fmt::format("{}'{}'", names.empty() ? "" : ", ", desc.name);
    }
    if (!known)
      throw ToolError(fmt::format("{} '{}': the model has no input '{}' (its "
                                  "inputs are {})",
                                  flag, spec, name, names));
    if (!out.emplace(name, spec.substr(equals + 1)).second)
      throw ToolError(fmt::format("{}: input '{}' is given twice", flag, name));
  }
  return out;
}

std::vector<kiln_tensor_info> inputDescs(const kiln_model *model) {
  kiln_model_info info;
  check(kiln_model_get_info(model, &info));
  std::vector<kiln_tensor_info> descs(info.num_inputs);
  for (size_t i = 0; i < descs.size(); ++i)
    check(kiln_model_input_info(model, i, &descs[i]));
  return descs;
}

/// Records the value of each symbolic dim of `desc` seen in `shape`.
void bindSymbols(const kiln_tensor_info &desc, const std::vector<int64_t> &shape,
                 std::map<std::string, int64_t> &symbols) {
  if (static_cast<int32_t>(shape.size()) != desc.rank)
    return; // the run will report the rank mismatch
  for (int32_t i = 0; i < desc.rank; ++i)
    if (desc.dims[i] < 0)
      symbols.emplace(desc.dim_names[i], shape[i]);
}

/// A shape for a generated input, and notes on symbols that defaulted to 1.
std::vector<int64_t> generatedShape(const kiln_tensor_info &desc,
                                    std::map<std::string, int64_t> &symbols,
                                    std::string &notes) {
  std::vector<int64_t> shape;
  for (int32_t i = 0; i < desc.rank; ++i) {
    if (desc.dims[i] >= 0) {
      shape.push_back(desc.dims[i]);
      continue;
    }
    auto [it, inserted] = symbols.emplace(desc.dim_names[i], 1);
    if (inserted)
      notes += fmt::format("; '{}' = 1 by default", desc.dim_names[i]);
    shape.push_back(it->second);
  }
  return shape;
}

kiln::npy::Array randomArray(const kiln_tensor_info &desc,
                             std::vector<int64_t> shape, uint64_t maxBytes,
                             Random &random) {
  kiln::npy::Array array;
  std::string error;
  size_t bytes = 0;
  check(kiln_byte_size(desc.dtype, static_cast<int32_t>(shape.size()),
                       shape.data(), &bytes));
  if (bytes > maxBytes)
    throw ToolError(fmt::format("input '{}': {} {} needs {} bytes, over the "
                                "byte limit of {}",
                                desc.name, kiln_dtype_name(desc.dtype),
                                formatShape(shape), bytes, maxBytes));
  if (!kiln::npy::allocate(array, desc.dtype, std::move(shape), error))
    throw ToolError(fmt::format("input '{}': {}", desc.name, error));
  fillRandom(desc.dtype, array.data.get(),
             array.byteSize / kiln_dtype_size(desc.dtype), random);
  return array;
}

} // namespace

std::vector<int64_t> parseShape(const std::string &text) {
  std::vector<int64_t> shape;
  if (text.empty())
    return shape;
  size_t start = 0;
  for (;;) {
    size_t end = text.find('x', start);
    std::string dim = text.substr(start, end - start);
    bool digits = !dim.empty() && dim.size() <= 18 &&
                  dim.find_first_not_of("0123456789") == std::string::npos;
    if (!digits)
      throw ToolError(fmt::format("'{}' is not a size in shape '{}' (expected "
                                  "sizes joined by x, e.g. 2x3x224)",
                                  dim, text));
    shape.push_back(std::stoll(dim));
    if (end == std::string::npos)
      return shape;
    start = end + 1;
  }
}

std::vector<kiln_tensor> Inputs::views() {
  std::vector<kiln_tensor> out;
  for (size_t i = 0; i < arrays.size(); ++i)
    out.push_back({names[i].c_str(), arrays[i].dtype, arrays[i].rank(),
                   arrays[i].shape.data(), arrays[i].data.get(),
                   arrays[i].byteSize});
  return out;
}

Inputs prepareInputs(const kiln_model *model, const InputOptions &options) {
  std::vector<kiln_tensor_info> descs = inputDescs(model);
  auto files = parseSpecs(options.files, "--input", descs, "FILE.npy");
  auto shapeTexts = parseSpecs(options.shapes, "--shape", descs, "2x3x...");
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto &[name, text] : shapeTexts) {
    if (files.count(name))
      throw ToolError(fmt::format("--shape '{}': input '{}' is read from a file",
                                  name, name));
    try {
      shapes[name] = parseShape(text);
    } catch (const ToolError &e) {
      throw ToolError(fmt::format("--shape '{}={}': {}", name, text, e.what()));
    }
  }
  Inputs inputs;
  inputs.arrays.resize(descs.size());
  std::map<std::string, int64_t> symbols;
  // Files first, so that their sizes bind symbols for generated inputs.
  for (size_t i = 0; i < descs.size(); ++i) {
    inputs.names.push_back(descs[i].name);
    auto file = files.find(descs[i].name);
    auto shape = shapes.find(descs[i].name);
    if (file != files.end()) {
      std::string error;
      if (!kiln::npy::read(file->second, inputs.arrays[i], error))
        throw ToolError(fmt::format("input '{}': {}", descs[i].name, error));
      // A type without a NumPy dtype is read as its raw bits (rawBitsDtype).
      int32_t raw = rawBitsDtype(descs[i].dtype);
      if (raw && inputs.arrays[i].dtype == raw)
        inputs.arrays[i].dtype = descs[i].dtype;
      bindSymbols(descs[i], inputs.arrays[i].shape, symbols);
    } else if (shape != shapes.end()) {
      bindSymbols(descs[i], shape->second, symbols);
    }
  }
  Random random(options.seed);
  for (size_t i = 0; i < descs.size(); ++i) {
    const kiln_tensor_info &desc = descs[i];
    auto file = files.find(desc.name);
    if (file != files.end()) {
      fmt::print("input '{}': {} {} from {}\n", desc.name,
                 kiln_dtype_name(inputs.arrays[i].dtype),
                 formatShape(inputs.arrays[i].shape), file->second);
      continue;
    }
    std::string notes;
    auto given = shapes.find(desc.name);
    std::vector<int64_t> shape = given != shapes.end()
                                     ? given->second
                                     : generatedShape(desc, symbols, notes);
    inputs.arrays[i] = randomArray(desc, shape, options.maxBytes, random);
    if (!notes.empty())
      notes += ", see --shape";
    fmt::print("input '{}': {} {} random (seed {}{})\n", desc.name,
               kiln_dtype_name(desc.dtype), formatShape(shape), options.seed, notes);
  }
  return inputs;
}

} // namespace kilnrun
