//===- TuningDatabase.h - Measured kernel configurations -------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The tuning database (docs/tuning.md): JSON lines, one record per
// (dispatch signature, target, CPU feature set, space version) with the
// configuration measured fastest and its time. Read with errors naming the
// file and line, filtered to the compile's target, merged by key
// (kiln-tune merge), written in one canonical order so that one database
// always gives the same artifact.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DRIVER_TUNINGDATABASE_H
#define KILN_DRIVER_TUNINGDATABASE_H

#include "kiln/Target/TargetOptions.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln::driver {

/// One measured configuration of one dispatch signature.
struct TuningRecord {
  /// signatureKey(signature): 16 hex digits.
  std::string key;
  /// The canonical signature (kiln-cpu-matmul's matmulSignature).
  std::string signature;
  /// "cpu"; the feature set (tuningFeatureSet) and the space's version.
  std::string target, features, space;
  /// The configuration, e.g. 6x4x72x256x256x4.
  std::string config;
  /// Measured microseconds per run of the dispatch (summed over the
  /// dispatches that share the key); meaningless when invalid.
  double microseconds = 0;
  /// False: the candidate crashed, timed out or gave a wrong result; it is
  /// kept as evidence and never chosen.
  bool valid = true;
  /// What it was measured on (informational, e.g. the model's node names).
  std::string note;
};

/// The record as one canonical JSON line (fixed field order, times with
/// three decimals), without the newline.
std::string formatTuningRecord(const TuningRecord &record);

/// The records of the JSON-lines file `path` (blank lines skipped). A line
/// that is not a complete record is an error `PATH:LINE: ...` naming the
/// missing or malformed field.
llvm::Expected<std::vector<TuningRecord>> readTuningDatabase(llvm::StringRef path);

/// One record per (target, features, space, key): a valid one before an
/// invalid one, then the faster, then the smaller configuration text;
/// sorted by (target, features, space, key).
std::vector<TuningRecord> mergeTuningRecords(llvm::ArrayRef<TuningRecord> records);

/// Writes `records` one per line.
void writeTuningDatabase(llvm::ArrayRef<TuningRecord> records, llvm::raw_ostream &os);

/// The feature set a CPU artifact for `cpu` is tuned for: its LLVM CPU
/// name, the compiling machine's for native (`znver5`).
std::string tuningFeatureSet(const HostCPU &cpu);

/// What a compile takes from a database.
struct TuningSelection {
  /// KEY=CONFIG@MICROSECONDS of the valid records that apply, by key.
  std::vector<std::string> tuned;
  /// Records used, for another target or feature set, for another space
  /// version, and invalid ones.
  int64_t used = 0, otherFeatures = 0, otherSpace = 0, invalid = 0;
};

/// The winners in `records` (merged first) for `target`, `features` and
/// `space`.
TuningSelection selectTuningRecords(llvm::ArrayRef<TuningRecord> records, llvm::StringRef target,
                                    llvm::StringRef features, llvm::StringRef space);

/// Where the shipped databases of a tool at `executable` are:
/// `<bin>/../share/kiln/tuning`, the same beside the build tree's bin/ and an
/// install prefix's. Empty for an empty path (the executable's own path
/// unknown).
std::string shippedTuningDirectory(llvm::StringRef executable);

/// The `*.jsonl` files of `directory`, sorted by name (one file per CPU by
/// convention, e.g. `znver5.jsonl`); none when it does not exist.
std::vector<std::string> listTuningDatabases(llvm::StringRef directory);

/// One database a compile read, and what it took from it.
struct TuningDatabaseUse {
  std::string path;
  /// Shipped with the compiler (share/kiln/tuning), else given (--tuning-db).
  bool shipped = false;
  TuningSelection selection;
};

/// What a compile takes from its databases: per database its counts, and
/// the entries (KEY=CONFIG@MICROSECONDS, sorted by key) that configure the
/// matmuls: the given database's winner for a key, else the shipped ones'
/// (merged: the fastest valid record of the shipped files).
struct TuningPlan {
  std::vector<TuningDatabaseUse> databases;
  std::vector<std::string> tuned;
  /// Keys of the shipped databases that the given one replaced.
  int64_t replacedShipped = 0;
};

/// Reads `shipped` and then `given` (empty: none) and selects their records
/// for `target`, `features` and `space`. A corrupt file is an error naming
/// it and the line, whichever database it is.
llvm::Expected<TuningPlan> planTuning(llvm::ArrayRef<std::string> shipped, llvm::StringRef given,
                                      llvm::StringRef target, llvm::StringRef features,
                                      llvm::StringRef space);

} // namespace kiln::driver

#endif // KILN_DRIVER_TUNINGDATABASE_H
