//===- TuningReport.h - kilnc --report=tuning -------------------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// After the codegen stage: per tuned dispatch (a CPU matmul or conv's
// taps), its key, the configuration it was compiled with, whether it came
// from the tuning database or the cost model, and the measured time.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DRIVER_TUNINGREPORT_H
#define KILN_DRIVER_TUNINGREPORT_H

#include "kiln/Driver/TuningDatabase.h"
#include "kiln/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"

namespace kiln::driver {

/// Where the compile's configurations came from: the databases read (none
/// without one) and what was taken from them; `shippedDirectory`, where the
/// shipped ones were looked for (empty: not looked for, --tuning-db=none).
struct TuningSource {
  std::string features;
  std::string shippedDirectory;
  TuningPlan plan;
};

/// Prints the module's `kiln.tuning` choices. The JSON form also lists, per
/// choice, the trace ids of its dispatch (kiln-run --trace) and the space
/// ranked by the cost model (`candidates`, the tuner's search order).
void printTuningReport(mlir::ModuleOp module, const TuningSource &source,
                       const PipelineOptions &options, llvm::raw_ostream &os, bool json);

} // namespace kiln::driver

#endif // KILN_DRIVER_TUNINGREPORT_H
