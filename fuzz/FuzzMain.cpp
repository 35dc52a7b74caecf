//===- FuzzMain.cpp - Replays fuzz inputs when libFuzzer is not linked ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// Builds without KILN_ENABLE_FUZZERS (any compiler) link this instead of
// libFuzzer: each file named on the command line goes through the target's
// LLVMFuzzerTestOneInput once, as `fuzzer FILE...` does under libFuzzer. The
// lit suite uses it to replay the seed corpus and every past crash.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-')
      continue; // libFuzzer flags: meaningless here
    std::ifstream file(argv[i], std::ios::binary);
    if (!file) {
      std::fprintf(stderr, "error: cannot read '%s'\n", argv[i]);
      return 1;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++replayed;
  }
  std::fprintf(stderr, "replayed %d inputs\n", replayed);
  return 0;
}
