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
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <map>
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

std::string shippedTuningDirectory(llvm::StringRef executable) {
  if (executable.empty())
    return "";
  llvm::SmallString<256> directory(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(executable)));
  llvm::sys::path::append(directory, "share", "kiln", "tuning");
  return std::string(directory);
}

std::vector<std::string> listTuningDatabases(llvm::StringRef directory) {
  std::vector<std::string> files;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(directory, error), end; it != end && !error;
       it.increment(error))
    if (llvm::sys::path::extension(it->path()) == ".jsonl")
      files.push_back(it->path());
  // Directory order is the file system's: sort, so the report is stable.
  llvm::sort(files);
  return files;
}

llvm::Expected<TuningPlan> planTuning(llvm::ArrayRef<std::string> shipped, llvm::StringRef given,
                                      llvm::StringRef target, llvm::StringRef features,
                                      llvm::StringRef space) {
  TuningPlan plan;
  std::vector<TuningRecord> pooled;
  for (const std::string &path : shipped) {
    llvm::Expected<std::vector<TuningRecord>> records = readTuningDatabase(path);
    if (!records)
      return records.takeError();
    plan.databases.push_back(
        {path, /*shipped=*/true, selectTuningRecords(*records, target, features, space)});
    pooled.insert(pooled.end(), records->begin(), records->end());
  }
  // KEY -> KEY=CONFIG@MICROSECONDS: the shipped winners, then the given
  // database's over them.
  std::map<std::string, std::string> byKey;
  auto key = [](llvm::StringRef entry) { return entry.split('=').first.str(); };
  for (std::string &entry : selectTuningRecords(pooled, target, features, space).tuned)
    byKey[key(entry)] = std::move(entry);
  if (!given.empty()) {
    llvm::Expected<std::vector<TuningRecord>> records = readTuningDatabase(given);
    if (!records)
      return records.takeError();
    TuningDatabaseUse use{given.str(), /*shipped=*/false,
                          selectTuningRecords(*records, target, features, space)};
    for (const std::string &entry : use.selection.tuned) {
      auto [it, inserted] = byKey.insert_or_assign(key(entry), entry);
      plan.replacedShipped += !inserted;
    }
    plan.databases.push_back(std::move(use));
  }
  for (auto &item : byKey)
    plan.tuned.push_back(std::move(item.second));
  return plan;
}

} // namespace kiln::driver
