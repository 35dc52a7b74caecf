//===- Check.h - kilnc --check: what a compile of the model would say -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNC_CHECK_H
#define KILN_TOOLS_KILNC_CHECK_H

#include "kiln/Pipelines/Pipelines.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace kilnc {

/// The --check report of the ONNX model at `path` on `os`: the op types
/// (count, supported or why not), then the compile's own front half -- the
/// import with its symbolic shape reasoning, the graph and linalg stages and
/// the model signature -- each with the error a compile would print, naming
/// the node. Returns the exit code: 0 when all of it passes, 1 otherwise.
int runCheck(llvm::StringRef path, const kiln::PipelineOptions &options,
             llvm::raw_ostream &os);

} // namespace kilnc

#endif // KILN_TOOLS_KILNC_CHECK_H
