//===- Compile.cpp - The compile driver for bindings, in plain C++ --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "kiln/Driver/Compile.h"

#include "kiln/Driver/Driver.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/WithColor.h"

namespace kiln::driver {

/// The job kilnc would run for `request`'s flags; false after printing the
/// flag error on `os`.
static bool buildJob(const CompileRequest &request, CompileJob &job, llvm::raw_ostream &os) {
  auto fail = [&](const llvm::Twine &message) {
    llvm::WithColor::error(os, "kilnc") << message << "\n";
    return false;
  };
  job.input = request.input;
  job.output = request.output;
  job.stage = Stage::Lib;
  std::optional<Target> target = llvm::StringSwitch<std::optional<Target>>(request.target)
                                     .Case("cpu", Target::CPU)
                                     .Case("cuda", Target::CUDA)
                                     .Default(std::nullopt);
  if (!target)
    return fail("--target='" + request.target + "', expected cpu or cuda");
  job.options.target = *target;
  std::optional<WeightsMode> weights =
      llvm::StringSwitch<std::optional<WeightsMode>>(request.weights)
          .Case("embed", WeightsMode::Embed)
          .Case("external", WeightsMode::External)
          .Case("none", WeightsMode::None)
          .Default(std::nullopt);
  if (!weights)
    return fail("--weights='" + request.weights + "', expected embed, external or none");
  job.options.weights = *weights;
  TargetOptionText text;
  text.cpu = request.cpu;
  text.gpu = request.gpu;
  text.precision = request.precision;
  if (llvm::Error error = parsePipelineOptions(text, job.options))
    return fail(llvm::toString(std::move(error)));
  job.options.maxFoldBytes = request.maxFoldBytes;
  if (!request.matmulTile.empty())
    if (llvm::Error error = parseMatmulTile(request.matmulTile, job.options.matmul))
      return fail(llvm::toString(std::move(error)));
  for (const std::string &flag : request.inputShapes)
    if (llvm::Error error = addInputShape(flag, job.import))
      return fail(llvm::toString(std::move(error)));
  return true;
}

CompileOutcome compile(const CompileRequest &request) {
  CompileOutcome outcome;
  llvm::raw_string_ostream os(outcome.messages);
  CompileJob job;
  outcome.exitCode = buildJob(request, job, os) ? runCompile(job, os) : 1;
  return outcome;
}

CheckOutcome check(const CompileRequest &request) {
  CheckOutcome outcome;
  llvm::raw_string_ostream os(outcome.report);
  CompileJob job;
  outcome.exitCode = buildJob(request, job, os) ? runCheck(job, os, &outcome.opTypes) : 1;
  return outcome;
}

} // namespace kiln::driver
