//===- Outputs.cpp - kiln-run's outputs: printing, .npy files, comparison --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "Outputs.h"

#include "Elements.h"
#include "npy/Npy.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace kilnrun {
namespace {

constexpr size_t kPrintedValues = 8;

size_t elementCount(const kiln_tensor &tensor) {
  size_t size = kiln_dtype_size(tensor.dtype);
  return size ? tensor.byte_size / size : 0;
}

std::string referencePath(const std::string &dir, const std::string &name) {
  return (std::filesystem::path(dir) / outputFileName(name)).string();
}

std::vector<int64_t> dimsOf(const kiln_tensor &tensor) {
  return std::vector<int64_t>(tensor.dims, tensor.dims + tensor.rank);
}

struct Errors {
  double maxAbs = 0, maxRel = 0;
  size_t outside = 0;
};

/// Integer and boolean values are exact: a tolerance would let an int64 sum
/// near 3000 be off by 3.
bool comparedExactly(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_I8: case KILN_DTYPE_U8: case KILN_DTYPE_I16: case KILN_DTYPE_U16:
  case KILN_DTYPE_I32: case KILN_DTYPE_U32: case KILN_DTYPE_I64: case KILN_DTYPE_U64:
  case KILN_DTYPE_BOOL: case KILN_DTYPE_I4: case KILN_DTYPE_U4: case KILN_DTYPE_I2:
  case KILN_DTYPE_U2:
    return true;
  default:
    return false;
  }
}

/// Whether element `i` of two arrays of one integer or bool `dtype` is equal,
/// compared in the type itself (doubles would round int64 values above 2^53).
bool exactlyEqual(int32_t dtype, const void *got, const void *want, size_t i) {
  switch (dtype) {
  case KILN_DTYPE_I4: case KILN_DTYPE_U4: case KILN_DTYPE_I2: case KILN_DTYPE_U2:
    // One byte per element; the value is the low bits, whatever the others hold.
    return elementAsDouble(dtype, got, i) == elementAsDouble(dtype, want, i);
  case KILN_DTYPE_BOOL: // 0 or 1, but any nonzero byte reads as true
    return (static_cast<const uint8_t *>(got)[i] != 0) ==
           (static_cast<const uint8_t *>(want)[i] != 0);
  default: {
    size_t size = kiln_dtype_size(dtype);
    return std::memcmp(static_cast<const char *>(got) + i * size,
                       static_cast<const char *>(want) + i * size, size) == 0;
  }
  }
}

Errors measure(const kiln_tensor &got, const kiln::npy::Array &want,
               const Tolerance &tolerance) {
  Errors errors;
  bool exact = comparedExactly(got.dtype);
  for (size_t i = 0, n = elementCount(got); i < n; ++i) {
    double a = elementAsDouble(got.dtype, got.data, i);
    double b = elementAsDouble(want.dtype, want.data.get(), i);
    if (exact) {
      if (exactlyEqual(got.dtype, got.data, want.data.get(), i))
        continue;
      ++errors.outside;
      double abs = std::max(std::fabs(a - b), 1.0); // unequal integers differ by >= 1
      errors.maxAbs = std::max(errors.maxAbs, abs);
      errors.maxRel = std::max(errors.maxRel, b != 0 ? abs / std::fabs(b)
                                              : std::numeric_limits<double>::infinity());
      continue;
    }
    if ((std::isnan(a) && std::isnan(b)) || a == b)
      continue; // NaN where NaN is expected; equal (also infinite) values
    double abs = std::fabs(a - b);
    double rel = b != 0 ? abs / std::fabs(b)
                 : abs == 0 ? 0 : std::numeric_limits<double>::infinity();
    if (std::isnan(abs)) // NaN on one side only
      abs = rel = std::numeric_limits<double>::infinity();
    errors.maxAbs = std::max(errors.maxAbs, abs);
    errors.maxRel = std::max(errors.maxRel, rel);
    if (!(abs <= tolerance.atol + tolerance.rtol * std::fabs(b)))
      ++errors.outside;
  }
  return errors;
}

/// Compares one output; returns whether it is within the tolerance.
bool compareOne(const kiln_tensor &got, const std::string &path,
                const Tolerance &tolerance) {
  kiln::npy::Array want;
  std::string error;
  if (!kiln::npy::read(path, want, error))
    throw ToolError("--compare: " + error);
  std::string prefix = fmt::format("compare '{}':", got.name);
  if (want.shape != dimsOf(got)) {
    fmt::print("{} FAIL: shape {} differs from the reference's {}\n", prefix,
               formatShape(got.dims, got.rank), formatShape(want.shape));
    return false;
  }
  // A type without a NumPy dtype is compared with its raw bits (rawBitsDtype).
  int32_t raw = rawBitsDtype(got.dtype);
  if (raw && want.dtype == raw)
    want.dtype = got.dtype;
  if (want.dtype != got.dtype) {
    // Values of another type are another result (an int32 where int64 was
    // expected, f32 where f16 was), however close they are.
    fmt::print("{} FAIL: dtype {} differs from the reference's {}\n", prefix,
               kiln_dtype_name(got.dtype), kiln_dtype_name(want.dtype));
    return false;
  }
  Errors errors = measure(got, want, tolerance);
  std::string verdict;
  if (!errors.outside)
    verdict = "ok";
  else if (comparedExactly(got.dtype))
    verdict = fmt::format("FAIL ({} of {} elements differ; {} is compared exactly)",
                          errors.outside, elementCount(got), kiln_dtype_name(got.dtype));
  else
    verdict = fmt::format("FAIL ({} of {} elements outside rtol={} atol={})",
                          errors.outside, elementCount(got), tolerance.rtol,
                          tolerance.atol);
  fmt::print("{} max_abs={:.3g} max_rel={:.3g} {}\n", prefix, errors.maxAbs,
             errors.maxRel, verdict);
  return errors.outside == 0;
}

} // namespace

std::string formatShape(const int64_t *dims, int32_t rank) {
  std::string out = "[";
  for (int32_t i = 0; i < rank; ++i)
    out += fmt::format("{}{}", i ? ", " : "", dims[i]);
  return out + "]";
}

std::string outputFileName(const std::string &name) {
  std::string out = name;
  for (char &c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-')
      c = '_';
  return out + ".npy";
}

void printOutputs(const Outputs &outputs) {
  for (const OutputTensor &output : outputs) {
    size_t count = elementCount(*output);
    std::string values;
    for (size_t i = 0; i < std::min(count, kPrintedValues); ++i)
      values += (i ? ", " : "") + formatElement(output->dtype, output->data, i);
    if (count > kPrintedValues)
      values += ", ...";
    fmt::print("output '{}': {} {} = [{}]\n", output->name,
               kiln_dtype_name(output->dtype),
               formatShape(output->dims, output->rank), values);
  }
}

void writeOutputs(const Outputs &outputs, const std::string &dir) {
  std::error_code code;
  std::filesystem::create_directories(dir, code);
  if (code)
    throw ToolError(
        fmt::format("cannot create output directory '{}': {}", dir, code.message()));
  std::map<std::string, std::string> written; // file name -> output name
  for (const OutputTensor &output : outputs) {
    auto [it, fresh] = written.emplace(outputFileName(output->name), output->name);
    if (!fresh)
      throw ToolError(fmt::format("outputs '{}' and '{}' would both be written to {}",
                                  it->second, output->name, it->first));
    std::string path = referencePath(dir, output->name);
    std::string error;
    int32_t raw = rawBitsDtype(output->dtype);
    if (!kiln::npy::write(path, raw ? raw : output->dtype, dimsOf(*output), output->data,
                          output->byte_size, error))
      throw ToolError(fmt::format("output '{}': {}", output->name, error));
    fmt::print("wrote {}\n", path);
  }
}

int compareOutputs(const Outputs &outputs, const std::string &dir,
                   const Tolerance &tolerance,
                   const std::map<std::string, Tolerance> &perOutput) {
  for (const auto &[name, _] : perOutput)
    if (std::none_of(outputs.begin(), outputs.end(),
                     [&](const OutputTensor &output) { return name == output->name; }))
      throw ToolError(fmt::format("--tolerance: the model has no output '{}'", name));
  int failed = 0;
  for (const OutputTensor &output : outputs) {
    auto own = perOutput.find(output->name);
    failed += compareOne(*output, referencePath(dir, output->name),
                         own == perOutput.end() ? tolerance : own->second)
                  ? 0
                  : 1;
  }
  return failed;
}

} // namespace kilnrun
