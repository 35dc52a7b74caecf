//===- ModelLoader.h - Checks a descriptor and makes a kiln_model of it ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MODELLOADER_H
#define KILN_RUNTIME_MODELLOADER_H

#include "Model.h"

#include <memory>

namespace kiln::rt {

/// The second half of kiln_model_load: checks the descriptor `abi` (magic,
/// version, a structure safe to walk, checksum, meaning) and on success
/// copies it into `model` (whose path, library and file size are set) and
/// hands the model to `*out_model`. Separate so that the artifact fuzzer can
/// check descriptors built in memory, without an artifact to dlopen.
kiln_status *adoptDescriptor(std::unique_ptr<kiln_model> model,
                             const kiln_abi_model &abi, kiln_model **out_model);

} // namespace kiln::rt

#endif // KILN_RUNTIME_MODELLOADER_H
