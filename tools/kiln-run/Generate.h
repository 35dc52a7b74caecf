//===- Generate.h - kiln-run --generate: greedy decoding through kiln_decoder ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_GENERATE_H
#define KILN_TOOLS_KILNRUN_GENERATE_H

#include "KilnRun.h"

#include <cstdint>
#include <string>

namespace kilnrun {

struct GenerateOptions {
  int64_t tokens = 0;       // --generate N: new tokens per sequence
  std::string promptFile;   // --prompt-ids: [batch, length] or [length] ids
  int64_t promptLength = 8; // random prompt (no --prompt-ids)
  int64_t batch = 1;        // random prompt
  uint64_t seed = 1;
  int64_t maxTokens = 0;    // cache capacity; 0 = prompt + tokens
  std::string compareFile;  // --compare: [batch, prompt + tokens] (or longer) ids
};

/// Prefills the prompt, decodes greedily until `tokens` new tokens per
/// sequence, prints the time to first token, the decode tokens/s and the
/// ids, and compares them with --compare (ToolError on a difference).
void generate(kiln_session *session, const GenerateOptions &options);

} // namespace kilnrun

#endif // KILN_TOOLS_KILNRUN_GENERATE_H
