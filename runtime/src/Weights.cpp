//===- Weights.cpp - Weights that are not embedded: mapped file or generated -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The weights blob holds the model's f32 constants at 64-byte aligned
// offsets. An external blob is mapped read-only (pages are shared between
// processes and loaded on first touch); its size and checksum are checked
// before any run can read it, so a truncated file is an error, not SIGBUS.
//
//===----------------------------------------------------------------------===//

#include "Weights.h"

#include "Status.h"
#include "kiln-c/checksum.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kiln::rt {
namespace {

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash ? slash : 1);
}

std::optional<WeightsProblem> mapWeightsFile(kiln_model &model) {
  const kiln_abi_model &abi = *model.abi;
  model.weightsPath = directoryOf(model.path) + "/" + abi.weights_file;
  std::string what = cat("weights file '", model.weightsPath, "'");
  int fd = ::open(model.weightsPath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    if (error == ENOENT)
      return WeightsProblem{KILN_STATUS_NOT_FOUND,
                            cat(what, " not found (kilnc --weights=external "
                                      "writes it next to the artifact; keep them together)")};
    return WeightsProblem{KILN_STATUS_INVALID_ARGUMENT, cat(what, ": ", std::strerror(error))};
  }
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return WeightsProblem{KILN_STATUS_INVALID_ARGUMENT, cat(what, " is not a regular file")};
  }
  uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size != abi.weights_bytes) {
    ::close(fd);
    return WeightsProblem{
        KILN_STATUS_INVALID_MODEL,
        cat(what, " has ", size, " bytes, the artifact expects ", abi.weights_bytes,
            size < abi.weights_bytes ? " (truncated)" : " (from another compilation?)")};
  }
  void *data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      int error = errno;
      ::close(fd);
      return WeightsProblem{KILN_STATUS_RESOURCE_EXHAUSTED,
                            cat("cannot map ", what, ": ", std::strerror(error))};
    }
  }
  ::close(fd);
  model.weights = data;
  model.weightsMapped = true;
  uint64_t checksum = kiln_abi_blob_checksum(data, size);
  if (checksum != abi.weights_checksum)
    return WeightsProblem{KILN_STATUS_INVALID_MODEL,
                          cat(what, " is corrupt: its contents hash to 0x", toHex(checksum, 16),
                              ", the artifact expects 0x", toHex(abi.weights_checksum, 16),
                              " (edited, or from another compilation)")};
  return std::nullopt;
}

/// SplitMix64, as kiln-run's generated inputs.
uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// IEEE binary16 / bfloat16 bits of `value`, a normal float in (-1, 1)
/// (truncated: these values only need to be of the right magnitude).
uint16_t halfBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  int32_t exponent = static_cast<int32_t>((bits >> 23) & 0xffu) - 127 + 15;
  if (exponent <= 0) // below f16's normal range: zero
    return sign;
  return sign | static_cast<uint16_t>(exponent << 10) |
         static_cast<uint16_t>((bits >> 13) & 0x3ffu);
}

uint16_t bfloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

std::optional<WeightsProblem> generateWeights(kiln_model &model) {
  uint64_t bytes = model.abi->weights_bytes;
  if (bytes == 0)
    return std::nullopt;
  uint64_t rounded = (bytes + 63) / 64 * 64;
  void *data = std::aligned_alloc(64, rounded);
  if (!data)
    return WeightsProblem{KILN_STATUS_RESOURCE_EXHAUSTED,
                          cat("cannot allocate ", bytes, " bytes of generated weights")};
  model.weights = data;
  // Uniform in [-1/8, 1/8): small enough that deep stacks stay finite.
  auto *values = static_cast<float *>(data);
  uint64_t state = kGeneratedWeightsSeed;
  for (uint64_t i = 0; i < rounded / sizeof(float); ++i)
    values[i] = static_cast<float>((nextRandom(state) >> 40) * 0x1p-24 - 0.5) * 0.25f;
  // 16-bit runs (CUDA --precision=fp16|bf16 weights): the same values
  // rounded to their type, one per element.
  for (uint32_t s = 0; s < model.abi->num_weights_segments; ++s) {
    const kiln_abi_weights_segment &segment = model.abi->weights_segments[s];
    if (segment.dtype == KILN_DTYPE_F32)
      continue;
    auto *halves = reinterpret_cast<uint16_t *>(static_cast<char *>(data) + segment.offset);
    for (uint64_t i = 0; i < segment.bytes / 2; ++i) {
      float value = static_cast<float>((nextRandom(state) >> 40) * 0x1p-24 - 0.5) * 0.25f;
      halves[i] = segment.dtype == KILN_DTYPE_F16 ? halfBits(value) : bfloatBits(value);
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<WeightsProblem> loadWeights(kiln_model &model) {
  switch (model.abi->weights_mode) {
  case KILN_ABI_WEIGHTS_EXTERNAL:
    return mapWeightsFile(model);
  case KILN_ABI_WEIGHTS_NONE:
    return generateWeights(model);
  default:
    return std::nullopt;
  }
}

} // namespace kiln::rt
