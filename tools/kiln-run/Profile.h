//===- Profile.h - kiln-run's --trace and --profile ------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_PROFILE_H
#define KILN_TOOLS_KILNRUN_PROFILE_H

#include "kiln-c/runtime.h"

namespace kilnrun {

/// Prints the per-dispatch table of --profile: for each dispatch (kernel)
/// over all traced runs, its share of the runs' time, total and mean
/// milliseconds and calls, largest first, then the time outside dispatches.
void printProfile(const kiln_trace *trace);

} // namespace kilnrun

#endif // KILN_TOOLS_KILNRUN_PROFILE_H
