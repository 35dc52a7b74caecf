//===- TuningReport.cpp - kilnc --report=tuning ----------------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// See kiln/Driver/TuningReport.h.
//
//===----------------------------------------------------------------------===//

#include "kiln/Driver/TuningReport.h"

#include "kiln/Target/CPU/MatmulTuning.h"
#include "kiln/Target/Host/ABI.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace mlir;

namespace kiln::driver {

namespace {

/// Candidates per choice in the JSON report: the tuner measures a prefix.
constexpr size_t kReportedCandidates = 16;

/// The trace ids (kiln-instrument-dispatches' names "op NODES") of the
/// dispatch covering `nodes`.
llvm::json::Array traceIds(ArrayAttr names, llvm::StringRef nodes) {
  llvm::json::Array ids;
  if (!names || nodes.empty())
    return ids;
  for (auto [i, name] : llvm::enumerate(names.getAsValueRange<StringAttr>()))
    if (name.split(' ').second == nodes)
      ids.push_back(static_cast<int64_t>(i));
  return ids;
}

/// Why no shipped database was read, if none was; then one line per
/// database read (the shipped ones first).
void printDatabases(const TuningSource &source, llvm::raw_ostream &os) {
  if (source.shippedDirectory.empty())
    os << "shipped tuning databases: not used\n";
  else if (llvm::none_of(source.plan.databases,
                         [](const TuningDatabaseUse &use) { return use.shipped; }))
    os << "shipped tuning databases: none in " << source.shippedDirectory << "\n";
  for (const TuningDatabaseUse &use : source.plan.databases) {
    const TuningSelection &s = use.selection;
    os << "tuning database " << use.path << " (" << (use.shipped ? "shipped" : "given")
       << "): " << s.used << " records used, " << s.otherFeatures
       << " ignored (other target or features), " << s.otherSpace
       << " ignored (other space version), " << s.invalid << " invalid";
    if (!use.shipped && source.plan.replacedShipped)
      os << "; its records replace " << source.plan.replacedShipped << " shipped ones";
    os << "\n";
  }
}

} // namespace

void printTuningReport(ModuleOp module, const TuningSource &source,
                       const PipelineOptions &options, llvm::raw_ostream &os, bool json) {
  auto choices = module->getAttrOfType<ArrayAttr>("kiln.tuning");
  auto names = module->getAttrOfType<ArrayAttr>(kDispatchNamesAttr);
  const CPUMatmulTiling &tiling = options.matmul;
  matmul_tuning::MatmulConfig fallback{tiling.rows, tiling.vectors, tiling.m,
                                       tiling.n,    tiling.k,       tiling.tasks};
  matmul_tuning::VectorRegisters vectors{options.vectorWidth, options.vectorRegisters};
  llvm::json::Array rows;
  size_t count = choices ? choices.size() : 0;
  if (!json) {
    os << "tuning report: " << count << " matmul choices, space "
       << matmul_tuning::kSpaceVersion << ", features " << source.features << "\n";
    printDatabases(source, os);
    os << llvm::formatv("  {0,8}  {1,-16}  {2,-20}  {3,-9}  {4,10}  {5}\n", "dispatch", "key",
                        "config", "source", "time_us", "nodes");
  }
  for (size_t i = 0; i < count; ++i) {
    auto choice = cast<DictionaryAttr>(choices[i]);
    auto text = [&](StringRef name) { return choice.getAs<StringAttr>(name).getValue(); };
    auto number = [&](StringRef name) { return choice.getAs<IntegerAttr>(name).getInt(); };
    auto time = choice.getAs<FloatAttr>("time_us");
    if (!json) {
      std::string measured = time ? llvm::formatv("{0:f3}", time.getValueAsDouble()).str() : "-";
      os << llvm::formatv("  {0,8}  {1,-16}  {2,-20}  {3,-9}  {4,10}  {5}\n", number("dispatch"),
                          text("key"), text("config"), text("source"), measured, text("nodes"));
      continue;
    }
    matmul_tuning::MatmulProblem problem{number("m"), number("n"), number("k"),
                                         choice.getAs<BoolAttr>("constant_a").getValue(),
                                         choice.getAs<BoolAttr>("constant_b").getValue()};
    llvm::json::Array candidates;
    for (const matmul_tuning::MatmulConfig &config : matmul_tuning::rankByCostModel(
             problem, fallback, vectors, kReportedCandidates))
      candidates.push_back(config.str());
    matmul_tuning::MatmulConfig modelPick =
        matmul_tuning::chooseByCostModel(problem, fallback, vectors);
    llvm::json::Object row{{"dispatch", number("dispatch")},
                           {"nodes", text("nodes")},
                           {"trace_ids", traceIds(names, text("nodes"))},
                           {"key", text("key")},
                           {"signature", text("signature")},
                           {"config", text("config")},
                           {"source", text("source")},
                           {"m", problem.m},
                           {"n", problem.n},
                           {"k", problem.k},
                           {"model_pick", modelPick.str()},
                           {"candidates", std::move(candidates)}};
    if (time)
      row["time_us"] = time.getValueAsDouble();
    rows.push_back(std::move(row));
  }
  if (!json)
    return;
  llvm::json::Object report{{"space", matmul_tuning::kSpaceVersion},
                            {"target", "cpu"},
                            {"features", source.features},
                            {"choices", std::move(rows)}};
  llvm::json::Array databases;
  for (const TuningDatabaseUse &use : source.plan.databases) {
    const TuningSelection &s = use.selection;
    databases.push_back(llvm::json::Object{{"path", use.path},
                                           {"origin", use.shipped ? "shipped" : "given"},
                                           {"used", s.used},
                                           {"other_features", s.otherFeatures},
                                           {"other_space", s.otherSpace},
                                           {"invalid", s.invalid}});
  }
  report["databases"] = llvm::json::Object{{"read", std::move(databases)},
                                           {"replaced_shipped", source.plan.replacedShipped},
                                           {"shipped_directory", source.shippedDirectory}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
}

} // namespace kiln::driver
