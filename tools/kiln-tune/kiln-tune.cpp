//===- kiln-tune.cpp - Tuning database tool --------------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// `kiln-tune merge A.jsonl B.jsonl ... -o OUT.jsonl`: one record per
// (target, features, space, key), the valid and faster one, in key order
// (kiln/Driver/TuningDatabase.h). Reading any input fails with
// `kiln-tune: error: FILE:LINE: ...` and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "kiln/Driver/TuningDatabase.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

static cl::SubCommand mergeCommand("merge", "Merge tuning databases, keeping the faster "
                                            "valid record per key");
static cl::list<std::string> inputs(cl::Positional, cl::desc("<database.jsonl>..."),
                                    cl::OneOrMore, cl::sub(mergeCommand));
static cl::opt<std::string> output("o", cl::desc("Output database (default: stdout)"),
                                   cl::value_desc("file"), cl::init("-"), cl::sub(mergeCommand));

static int fail(const Twine &message) {
  WithColor::error(errs(), "kiln-tune") << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "Kiln tuning database tool\n");
  if (!mergeCommand)
    return fail("expected a subcommand: merge");
  std::vector<kiln::driver::TuningRecord> records;
  for (const std::string &input : inputs) {
    Expected<std::vector<kiln::driver::TuningRecord>> read =
        kiln::driver::readTuningDatabase(input);
    if (!read)
      return fail(toString(read.takeError()));
    records.insert(records.end(), read->begin(), read->end());
  }
  std::error_code error;
  ToolOutputFile out(output, error, sys::fs::OF_Text);
  if (error)
    return fail("cannot write '" + output + "': " + error.message());
  kiln::driver::writeTuningDatabase(kiln::driver::mergeTuningRecords(records), out.os());
  out.keep();
  return 0;
}
