//===- Model.h - A loaded artifact: its library handle and descriptor copy -===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "kiln-c/abi.h"
#include "kiln-c/runtime.h"

#include <atomic>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::rt {

/// A copy of one kiln_abi_tensor, so that queries hand out pointers into
/// storage the runtime owns and checked once.
struct TensorDesc {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> dims;              // -1 = symbolic
  std::vector<std::string> dimNameStorage; // "" for static dims
  std::vector<const char *> dimNames;      // NULL for static dims
  /// An output that is an input's buffer updated in place (ABI v6
  /// output_aliases): that input's index; -1 otherwise.
  int32_t aliasedInput = -1;

  int32_t rank() const { return static_cast<int32_t>(dims.size()); }
  bool isSymbolic(int32_t i) const { return dims[i] < 0; }
  kiln_tensor_info info() const;
};

/// The descriptor's output_aliases (ABI v6), NULL for older layouts, which
/// end before the field.
inline const int32_t *outputAliases(const kiln_abi_model &abi) {
  return abi.abi_version >= 6 ? abi.output_aliases : nullptr;
}

} // namespace kiln::rt

struct kiln_model {
  // The caller's reference plus one per session; the library is closed when
  // the last one goes, so sessions may outlive kiln_model_destroy.
  std::atomic<int> refs{1};
  void *library = nullptr;
  const kiln_abi_model *abi = nullptr;
  std::string path;
  std::string producer;
  uint64_t fileBytes = 0;
  std::vector<kiln::rt::TensorDesc> inputs;
  std::vector<kiln::rt::TensorDesc> outputs;
  std::unordered_map<std::string, size_t> inputIndex;
  /// The GPU architecture of a CUDA artifact (KILN_ABI_CUDA_SYMBOL), empty
  /// for a CPU artifact.
  std::string cudaChip;
  std::vector<std::string> dispatchNames;
  // The weights blob for KILN_ABI_WEIGHTS_EXTERNAL (mapped) and _NONE
  // (allocated); NULL for embedded weights.
  void *weights = nullptr;
  bool weightsMapped = false;
  std::string weightsPath; // the external file, "" otherwise

  kiln_model() = default;
  kiln_model(const kiln_model &) = delete;
  kiln_model &operator=(const kiln_model &) = delete;
  ~kiln_model(); // unmaps or frees the weights, closes the library

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release();
};

#endif // KILN_RUNTIME_MODEL_H
