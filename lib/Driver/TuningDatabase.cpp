//===- TuningDatabase.cpp - Measured kernel configurations -----------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See kiln/Driver/TuningDatabase.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Driver/TuningDatabase.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <tuple>

namespace kiln::driver {

namespace {

llvm::Error lineError(llvm::StringRef path, size_t line, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path + ":" + llvm::Twine(line) + ": " + message);
}

/// The record of one parsed line, or an error naming the bad field.
llvm::Expected<TuningRecord> parseRecord(const llvm::json::Value &value, llvm::StringRef path,
                                         size_t line) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return lineError(path, line, "expected a JSON object (one record per line)");
  TuningRecord record;
  std::pair<llvm::StringRef, std::string *> strings[] = {
      {"key", &record.key},         {"signature", &record.signature},
      {"target", &record.target},   {"features", &record.features},
      {"space", &record.space},     {"config", &record.config}};
  for (auto [name, field] : strings) {
    std::optional<llvm::StringRef> text = object->getString(name);
    if (!text || text->empty())
      return lineError(path, line, "record has no string '" + name + "'");
    *field = text->str();
  }
  std::optional<double> time = object->getNumber("time_us");
  if (!time || *time < 0)
    return lineError(path, line, "record has no 'time_us' (microseconds >= 0)");
  record.microseconds = *time;
  std::optional<bool> valid = object->getBoolean("valid");
  if (!valid)
    return lineError(path, line, "record has no boolean 'valid'");
  record.valid = *valid;
  if (std::optional<llvm::StringRef> note = object->getString("note"))
    record.note = note->str();
  return record;
}

/// Sorts before: the same slot, and the better record (merge keeps it).
auto slot(const TuningRecord &r) { return std::tie(r.target, r.features, r.space, r.key); }

bool better(const TuningRecord &x, const TuningRecord &y) {
  if (x.valid != y.valid)
    return x.valid;
  if (x.microseconds != y.microseconds)
    return x.microseconds < y.microseconds;
  return std::tie(x.config, x.signature, x.note) < std::tie(y.config, y.signature, y.note);
}

} // namespace

std::string formatTuningRecord(const TuningRecord &record) {
  // llvm::json::Object sorts its keys: fixed order, one line.
  llvm::json::Object object{{"key", record.key},
                            {"signature", record.signature},
                            {"target", record.target},
                            {"features", record.features},
                            {"space", record.space},
                            {"config", record.config},
                            {"valid", record.valid}};
  // Three decimals, so a re-read and re-written record is the same text.
  object["time_us"] = std::stod(llvm::formatv("{0:f3}", record.microseconds).str());
  if (!record.note.empty())
    object["note"] = record.note;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object));
  return text;
}

llvm::Expected<std::vector<TuningRecord>> readTuningDatabase(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "cannot read tuning database '" + path +
                                                          "': " + buffer.getError().message());
  std::vector<TuningRecord> records;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (auto [index, text] : llvm::enumerate(lines)) {
    size_t line = index + 1;
    if (text.trim().empty())
      continue;
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
    if (!value)
      return lineError(path, line,
                       "truncated or malformed record: " + llvm::toString(value.takeError()));
    llvm::Expected<TuningRecord> record = parseRecord(*value, path, line);
    if (!record)
      return record.takeError();
    records.push_back(std::move(*record));
  }
  return records;
}

std::vector<TuningRecord> mergeTuningRecords(llvm::ArrayRef<TuningRecord> records) {
  std::vector<TuningRecord> sorted(records.begin(), records.end());
  std::sort(sorted.begin(), sorted.end(), [](const TuningRecord &x, const TuningRecord &y) {
    if (slot(x) != slot(y))
      return slot(x) < slot(y);
    return better(x, y);
  });
  std::vector<TuningRecord> merged;
  for (TuningRecord &record : sorted)
    if (merged.empty() || slot(merged.back()) != slot(record))
      merged.push_back(std::move(record));
  return merged;
}

void writeTuningDatabase(llvm::ArrayRef<TuningRecord> records, llvm::raw_ostream &os) {
  for (const TuningRecord &record : records)
    os << formatTuningRecord(record) << "\n";
}

std::string tuningFeatureSet(const HostCPU &cpu) {
  return cpu.isNative() ? llvm::sys::getHostCPUName().str() : cpu.name;
}

TuningSelection selectTuningRecords(llvm::ArrayRef<TuningRecord> records, llvm::StringRef target,
                                    llvm::StringRef features, llvm::StringRef space) {
  TuningSelection selection;
  for (const TuningRecord &record : mergeTuningRecords(records)) {
    if (record.target != target || record.features != features) {
      ++selection.otherFeatures;
    } else if (record.space != space) {
      ++selection.otherSpace;
    } else if (!record.valid) {
      ++selection.invalid;
    } else {
      ++selection.used;
      selection.tuned.push_back(record.key + "=" + record.config + "@" +
                                llvm::formatv("{0:f3}", record.microseconds).str());
    }
  }
  return selection;
}

} // namespace kiln::driver
