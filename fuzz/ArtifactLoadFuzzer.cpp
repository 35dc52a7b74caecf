//===- ArtifactLoadFuzzer.cpp - Fuzz target: artifact bytes -> runtime checks ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Everything the runtime checks before it trusts an artifact, without running
// artifact code. The first byte picks what the rest is:
//   0: a whole file for the ELF header check that precedes dlopen (the bytes
//      go into a memfd, so the real fd-based check runs);
//   1: a recipe for an artifact descriptor (counts, names, dtypes, ranks,
//      dims, symbols; a valid magic, version and checksum unless the recipe
//      says otherwise), which goes through the descriptor checks of
//      kiln_model_load, then session creation and one kiln_session_run with
//      inputs made from the remaining bytes: input validation and output
//      sizing under a byte limit of at most 1 MiB. The run function is a
//      stub that touches no data.
// dlopen itself is not fuzzed: loading an artifact runs its code, so an
// artifact is trusted once its headers are checked (SECURITY.md).
//
//===----------------------------------------------------------------------===//

#include "ElfCheck.h"
#include "ModelLoader.h"

#include "kiln-c/checksum.h"
#include "kiln-c/runtime.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace {

/// Takes values from the front of the input; zeros once it runs out.
class Bytes {
public:
  Bytes(const uint8_t *data, size_t size) : data(data), size(size) {}
  template <typename T> T take() {
    T value{};
    size_t n = std::min(sizeof(T), size);
    std::memcpy(&value, data, n);
    data += n, size -= n;
    return value;
  }
  std::string takeString(size_t maxLength) {
    size_t n = std::min<size_t>(take<uint8_t>() % (maxLength + 1), size);
    std::string text(reinterpret_cast<const char *>(data), n);
    data += n, size -= n;
    return text.c_str(); // up to an embedded NUL, as C sees it
  }
  /// Mostly interesting dims: small sizes, -1, other negatives, huge ones.
  int64_t takeDim() {
    switch (take<uint8_t>() % 8) {
    case 0: return -1;
    case 1: return -1 - take<uint8_t>();
    case 2: return int64_t(1) << (take<uint8_t>() % 64);
    case 3: return take<int64_t>();
    default: return take<uint8_t>() % 9;
    }
  }
  const uint8_t *data;
  size_t size;
};

void checkElf(const uint8_t *data, size_t size) {
  int fd = ::memfd_create("kiln-fuzz-artifact", MFD_CLOEXEC);
  if (fd < 0 || ::write(fd, data, size) != static_cast<ssize_t>(size))
    std::abort(); // the harness failed, not the runtime
  (void)kiln::rt::checkSharedLibraryHeaders(fd, size);
  ::close(fd);
}

int32_t stubRun(void *const *, const int64_t *, const kiln_abi_host *) {
  return 0;
}

/// Owns the strings and arrays a descriptor points into.
struct Descriptor {
  kiln_abi_model abi{};
  std::deque<std::string> strings;
  std::deque<std::vector<int64_t>> dims;
  std::deque<std::vector<const char *>> dimNames;
  std::vector<kiln_abi_tensor> inputs, outputs;
  bool walkable = true; // what the checksum needs: names, dims, sane ranks

  const char *string(std::string text) {
    return strings.emplace_back(std::move(text)).c_str();
  }
  kiln_abi_tensor tensor(Bytes &in, uint8_t flags) {
    kiln_abi_tensor t{};
    t.name = flags & 1 ? nullptr : string(in.takeString(6));
    t.dtype = flags & 2 ? in.take<int32_t>() : in.take<uint8_t>() % 12;
    t.rank = flags & 4 ? in.take<int8_t>() : in.take<uint8_t>() % 5;
    walkable &= t.name && t.rank >= 0 && t.rank <= 32;
    std::vector<int64_t> &d = dims.emplace_back();
    std::vector<const char *> &n = dimNames.emplace_back();
    for (int32_t i = 0; i < t.rank; ++i) {
      d.push_back(in.takeDim());
      static const char *const kSymbols[] = {"a", "b", "", nullptr};
      n.push_back(kSymbols[in.take<uint8_t>() % 4]);
    }
    t.dims = d.data();
    t.dim_names = flags & 8 ? nullptr : n.data();
    return t;
  }
  void build(Bytes &in) {
    uint8_t flags = in.take<uint8_t>();
    abi.magic = flags & 1 ? in.take<uint32_t>() : KILN_ABI_MAGIC;
    abi.abi_version = flags & 2 ? in.take<uint32_t>() : KILN_ABI_VERSION;
    // A huge count must be refused before the arrays are walked.
    abi.num_inputs = flags & 4 ? in.take<uint32_t>() : in.take<uint8_t>() % 5;
    abi.num_outputs = in.take<uint8_t>() % 4;
    size_t allocated = std::min<uint32_t>(abi.num_inputs, 1u << 16);
    for (size_t i = 0; i < allocated; ++i)
      inputs.push_back(i < 8 ? tensor(in, in.take<uint8_t>()) : kiln_abi_tensor{});
    for (uint32_t i = 0; i < abi.num_outputs; ++i)
      outputs.push_back(tensor(in, in.take<uint8_t>()));
    walkable &= abi.num_inputs <= 8;
    abi.inputs = inputs.empty() ? nullptr : inputs.data();
    abi.outputs = outputs.empty() ? nullptr : outputs.data();
    abi.run = flags & 8 ? nullptr : &stubRun;
    abi.producer = flags & 16 ? nullptr : "fuzz";
    abi.weights_bytes = in.take<uint8_t>();
    abi.checksum = (flags & 32) || !walkable ? in.take<uint64_t>()
                                           : kiln_abi_descriptor_checksum(&abi);
  }
};

/// One run with inputs made from the remaining bytes.
void runOnce(kiln_model *model, Bytes &in) {
  kiln_session_options options;
  kiln_session_options_init(&options);
  options.num_threads = 1;
  // Small, so that accepted runs stay cheap; the check is the same.
  options.max_bytes = 1 + in.take<uint32_t>() % (1u << 20);
  kiln_session *session = nullptr;
  if (kiln_status *status = kiln_session_create(model, &options, &session)) {
    kiln_status_destroy(status);
    return;
  }
  size_t count = 0, numInputs = 0;
  kiln_model_info info{};
  if (!kiln_model_get_info(model, &info))
    count = info.num_inputs;
  numInputs = in.take<uint8_t>() % 4 == 0 ? in.take<uint8_t>() % 6 : count;
  std::vector<kiln_tensor> inputs(numInputs);
  std::deque<std::string> names;
  std::deque<std::vector<int64_t>> dims;
  static uint8_t dummy[64]; // never read: the run is a stub
  for (size_t i = 0; i < numInputs; ++i) {
    kiln_tensor_info want{};
    bool known = i < count && !kiln_model_input_info(model, i, &want);
    uint8_t flags = in.take<uint8_t>();
    kiln_tensor &t = inputs[i];
    t.name = known && !(flags & 1) ? want.name
                                   : names.emplace_back(in.takeString(6)).c_str();
    t.dtype = known && !(flags & 2) ? want.dtype : in.take<uint8_t>() % 12;
    t.rank = known && !(flags & 4) ? want.rank : in.take<uint8_t>() % 5;
    std::vector<int64_t> &d = dims.emplace_back();
    for (int32_t k = 0; k < t.rank; ++k)
      d.push_back(known && k < want.rank && want.dims[k] >= 0 && !(flags & 8)
                      ? want.dims[k]
                      : in.takeDim());
    t.dims = d.data();
    size_t bytes = 0;
    if (kiln_status *status = kiln_byte_size(t.dtype, t.rank, t.dims, &bytes))
      kiln_status_destroy(status);
    t.byte_size = flags & 16 ? in.take<uint64_t>() : bytes;
    t.data = flags & 32 ? nullptr : dummy;
  }
  size_t numOutputs = in.take<uint8_t>() % 8 == 0 ? in.take<uint8_t>() % 4
                                                  : info.num_outputs;
  std::vector<kiln_tensor *> outputs(numOutputs);
  kiln_status *status = kiln_session_run(session, inputs.data(), numInputs,
                                         outputs.data(), numOutputs);
  kiln_status_destroy(status);
  for (kiln_tensor *output : outputs)
    kiln_tensor_destroy(output);
  kiln_session_destroy(session);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  if (data[0] % 2 == 0) {
    checkElf(data + 1, size - 1);
    return 0;
  }
  Bytes in(data + 1, size - 1);
  Descriptor descriptor;
  descriptor.build(in);
  auto model = std::make_unique<kiln_model>();
  model->path = "fuzz.so";
  kiln_model *loaded = nullptr;
  kiln_status *status =
      kiln::rt::adoptDescriptor(std::move(model), descriptor.abi, &loaded);
  kiln_status_destroy(status);
  if (loaded)
    runOnce(loaded, in);
  kiln_model_destroy(loaded);
  return 0;
}
