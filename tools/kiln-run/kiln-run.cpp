//===- kiln-run.cpp - Runs a compiled Kiln model: inputs, outputs, timing --===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// kiln-run MODEL.so [--input NAME=FILE.npy]... [--output-dir DIR] ...
//
// Loads an artifact through the C API, reads or generates its inputs, runs
// it once (after --warmup runs), prints and optionally writes and compares
// the outputs, then runs --bench more times for latency statistics. Every
// failure is one `error: ...` line on stderr and exit code 1.
//
//===----------------------------------------------------------------------===//

#include "Bench.h"
#include "Compile.h"
#include "Generate.h"
#include "Inputs.h"
#include "KilnRun.h"
#include "Outputs.h"
#include "Profile.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <fmt/format.h>

namespace kilnrun {
namespace {

struct Options {
  std::string model;
  CompileOptions compile;
  InputOptions inputs;
  std::string outputDir;
  std::string compareDir;
  Tolerance tolerance;
  std::vector<std::string> outputTolerances; // NAME=RTOL,ATOL
  std::string device = "cpu";
  int threads = 0;
  int warmup = 0;
  int bench = 0;
  uint64_t maxBytes = 0;
  std::string traceFile;
  bool profile = false;
  GenerateOptions generate;
};

/// CLI11's NonNegativeNumber prints its range's bounds as long decimals;
/// this says what is wrong in words.
template <typename T> CLI::Validator nonNegative() {
  return CLI::Validator(
      [](std::string &text) -> std::string {
        T value{};
        if (!CLI::detail::lexical_cast(text, value) || value < 0)
          return fmt::format("got {}, expected a number >= 0", text);
        return "";
      },
      "NONNEGATIVE");
}

void addOptions(CLI::App &app, Options &o) {
  app.add_option("model", o.model,
                 "Compiled model (.so from kilnc), or an .onnx/.mlir model that "
                 "kiln-run compiles with kilnc (cached)")
      ->required();
  app.add_option("--kilnc", o.compile.kilnc,
                 "kilnc used for .onnx/.mlir models (default: $KILNC, next to "
                 "kiln-run, PATH)");
  app.add_option("--kilnc-arg", o.compile.kilncArgs,
                 "Extra kilnc argument, e.g. --kilnc-arg=--input-shape=x=1x3x224x224")
      ->allow_extra_args(false);
  app.add_option("--cache-dir", o.compile.cacheDir,
                 "Compiled-model cache (default: $KILN_CACHE_DIR, ~/.cache/kiln)");
  app.add_option("--input", o.inputs.files, "NAME=FILE.npy; others are random")
      ->allow_extra_args(false);
  app.add_option("--shape", o.inputs.shapes,
                 "NAME=2x3x... for a generated input with symbolic dims")
      ->allow_extra_args(false);
  app.add_option("--seed", o.inputs.seed, "Seed of generated inputs")
      ->capture_default_str();
  app.add_option("--output-dir", o.outputDir, "Write outputs as DIR/NAME.npy");
  app.add_option("--compare", o.compareDir,
                 "Compare outputs with DIR/NAME.npy; exit 1 if outside tolerance");
  app.add_option("--rtol", o.tolerance.rtol, "Relative tolerance of --compare")
      ->capture_default_str()
      ->check(nonNegative<double>());
  app.add_option("--atol", o.tolerance.atol, "Absolute tolerance of --compare")
      ->capture_default_str()
      ->check(nonNegative<double>());
  app.add_option("--tolerance", o.outputTolerances,
                 "NAME=RTOL,ATOL: --compare tolerance of one output (float outputs; "
                 "integers and bools always compare exactly)")
      ->allow_extra_args(false);
  app.add_option("--device", o.device, "cpu or cuda")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--threads", o.threads, "Threads (0: one per core)")
      ->capture_default_str()
      ->check(nonNegative<int>());
  app.add_option("--max-bytes", o.maxBytes,
                 "Byte limit of one run's allocations (0: physical memory)")
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed runs before the first")
      ->capture_default_str()
      ->check(nonNegative<int>());
  app.add_option("--bench", o.bench, "Timed runs for latency statistics")
      ->capture_default_str()
      ->check(nonNegative<int>());
  app.add_option("--trace", o.traceFile,
                 "Write a Chrome-trace JSON of the timed runs' dispatches to FILE");
  app.add_flag("--profile", o.profile,
               "Print each dispatch's share of the timed runs (per-dispatch table)");
  app.add_option("--generate", o.generate.tokens,
                 "Greedy decoding of N new tokens per sequence through the runtime's "
                 "decoder (a model with past_key_values inputs); --compare then names "
                 "an ids .npy [batch, prompt + N]")
      ->check(CLI::PositiveNumber);
  app.add_option("--prompt-ids", o.generate.promptFile,
                 "--generate: prompt ids .npy, i64 or i32 [batch, length]");
  app.add_option("--prompt-length", o.generate.promptLength,
                 "--generate without --prompt-ids: random prompt length (seeded by --seed)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--batch", o.generate.batch,
                 "--generate without --prompt-ids: sequences in the random prompt")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-tokens", o.generate.maxTokens,
                 "--generate: KV cache capacity per sequence (0: prompt + N)")
      ->capture_default_str()
      ->check(nonNegative<int64_t>());
}

/// --generate runs the decoder only; options of the single-run mode are refused.
void checkGenerateOptions(const CLI::App &app, Options &o) {
  if (o.generate.tokens == 0) {
    for (const char *name : {"--prompt-ids", "--prompt-length", "--batch", "--max-tokens"})
      if (app.count(name))
        throw ToolError(fmt::format("{} needs --generate N", name));
    return;
  }
  for (const char *name : {"--input", "--shape", "--output-dir", "--warmup", "--bench",
                           "--trace", "--profile", "--tolerance", "--rtol", "--atol"})
    if (app.count(name))
      throw ToolError(fmt::format("{} does not apply to --generate", name));
  if (app.count("--prompt-ids") && (app.count("--prompt-length") || app.count("--batch")))
    throw ToolError("--prompt-length and --batch describe a random prompt; --prompt-ids "
                    "gives one");
  o.generate.seed = o.inputs.seed;
  o.generate.compareFile = o.compareDir;
}

/// --tolerance NAME=RTOL,ATOL, one per output.
std::map<std::string, Tolerance>
parseOutputTolerances(const std::vector<std::string> &specs) {
  std::map<std::string, Tolerance> out;
  for (const std::string &spec : specs) {
    size_t eq = spec.rfind('='), comma = spec.rfind(',');
    Tolerance t;
    char *rtolEnd = nullptr, *atolEnd = nullptr;
    bool ok = eq != std::string::npos && eq > 0 && comma != std::string::npos && comma > eq;
    if (ok) {
      std::string rtol = spec.substr(eq + 1, comma - eq - 1), atol = spec.substr(comma + 1);
      t.rtol = std::strtod(rtol.c_str(), &rtolEnd);
      t.atol = std::strtod(atol.c_str(), &atolEnd);
      ok = !rtol.empty() && !atol.empty() && *rtolEnd == 0 && *atolEnd == 0 &&
           t.rtol >= 0 && t.atol >= 0;
    }
    if (!ok)
      throw ToolError(fmt::format("--tolerance '{}': expected NAME=RTOL,ATOL with "
                                  "numbers >= 0",
                                  spec));
    if (!out.emplace(spec.substr(0, eq), t).second)
      throw ToolError(fmt::format("--tolerance: output '{}' is named twice",
                                  spec.substr(0, eq)));
  }
  return out;
}

struct ModelHandle {
  kiln_model *model = nullptr;
  ~ModelHandle() { kiln_model_destroy(model); }
};
struct SessionHandle {
  kiln_session *session = nullptr;
  ~SessionHandle() { kiln_session_destroy(session); }
};
struct TraceHandle {
  kiln_trace *trace = nullptr;
  ~TraceHandle() { kiln_trace_destroy(trace); }
};

std::string weightsPlace(const kiln_model_info &info) {
  switch (info.weights_mode) {
  case KILN_WEIGHTS_EXTERNAL:
    return fmt::format("in {}", info.weights_path);
  case KILN_WEIGHTS_NONE:
    return "generated";
  default:
    return "embedded";
  }
}

void printModel(const kiln_model *model) {
  kiln_model_info info;
  check(kiln_model_get_info(model, &info));
  fmt::print("model: {} (file {} bytes, weights {} bytes {}, arena {} bytes, producer '{}', "
             "ABI v{})\n",
             info.path, info.file_bytes, info.weights_bytes, weightsPlace(info),
             info.arena_bytes, info.producer, info.abi_version);
  if (info.weights_mode == KILN_WEIGHTS_NONE) {
    std::fflush(stdout);
    fmt::print(stderr, "warning: '{}' was compiled with --weights=none: its weights are "
                       "pseudo-random, so its outputs are meaningless (benchmarking only)\n",
               info.path);
  }
}

Outputs runOnce(kiln_session *session, const std::vector<kiln_tensor> &inputs,
                size_t numOutputs, kiln_trace *trace = nullptr) {
  std::vector<kiln_tensor *> raw(numOutputs, nullptr);
  check(kiln_session_run_traced(session, inputs.data(), inputs.size(), raw.data(),
                                raw.size(), trace));
  Outputs outputs;
  for (kiln_tensor *tensor : raw)
    outputs.emplace_back(tensor);
  return outputs;
}

int runTool(Options &o) {
  if (needsCompilation(o.model)) {
    // A CUDA session needs a CUDA artifact (an explicit --kilnc-arg=--target wins).
    bool hasTarget = std::any_of(o.compile.kilncArgs.begin(), o.compile.kilncArgs.end(),
                                 [](const std::string &arg) {
      return arg.rfind("--target", 0) == 0;
    });
    if (o.device == "cuda" && !hasTarget)
      o.compile.kilncArgs.push_back("--target=cuda");
    o.model = compileModel(o.model, o.compile);
  }
  ModelHandle model;
  check(kiln_model_load(o.model.c_str(), &model.model));
  printModel(model.model);
  kiln_session_options options;
  kiln_session_options_init(&options);
  options.device = o.device == "cuda" ? KILN_DEVICE_CUDA : KILN_DEVICE_CPU;
  options.num_threads = o.threads;
  options.max_bytes = o.maxBytes;
  SessionHandle session;
  check(kiln_session_create(model.model, &options, &session.session));
  check(kiln_session_get_options(session.session, &options));
  fmt::print("session: {}, {} threads\n", o.device, options.num_threads);
  if (o.generate.tokens > 0) {
    generate(session.session, o.generate);
    return 0;
  }

  o.inputs.maxBytes = options.max_bytes;
  Inputs inputs = prepareInputs(model.model, o.inputs);
  std::vector<kiln_tensor> views = inputs.views();
  kiln_model_info info;
  check(kiln_model_get_info(model.model, &info));
  TraceHandle trace; // the timed runs, for --trace and --profile
  if (!o.traceFile.empty() || o.profile)
    check(kiln_trace_create(&trace.trace));
  for (int i = 0; i < o.warmup; ++i)
    runOnce(session.session, views, info.num_outputs);
  auto start = std::chrono::steady_clock::now();
  Outputs outputs = runOnce(session.session, views, info.num_outputs, trace.trace);
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  printOutputs(outputs);
  fmt::print("run: {:.3f} ms\n", elapsed.count());
  std::function<double()> deviceMs;
  if (options.device == KILN_DEVICE_CUDA) {
    deviceMs = [&] {
      double ms = 0;
      check(kiln_session_get_device_ms(session.session, &ms));
      return ms;
    };
    fmt::print("device: {:.4f} ms (inputs on the device to outputs ready)\n", deviceMs());
  }
  if (!o.outputDir.empty())
    writeOutputs(outputs, o.outputDir);
  if (!o.compareDir.empty()) {
    int failed = compareOutputs(outputs, o.compareDir, o.tolerance,
                                parseOutputTolerances(o.outputTolerances));
    if (failed)
      throw ToolError(fmt::format("{} of {} outputs differ from the references in {}",
                                  failed, outputs.size(), o.compareDir));
  }
  if (o.bench > 0)
    bench([&] { runOnce(session.session, views, info.num_outputs, trace.trace); }, o.bench,
          deviceMs);
  if (o.profile)
    printProfile(trace.trace);
  if (!o.traceFile.empty()) {
    check(kiln_trace_write_json(trace.trace, o.traceFile.c_str()));
    fmt::print("wrote trace {} ({} events)\n", o.traceFile,
               kiln_trace_event_count(trace.trace));
  }
  return 0;
}

int reportError(const std::string &message) {
  std::fflush(stdout); // keep stdout lines before the error when both are shown
  fmt::print(stderr, "error: {}\n", message);
  return 1;
}

} // namespace
} // namespace kilnrun

int main(int argc, char **argv) {
  using namespace kilnrun;
  CLI::App app("kiln-run: run a compiled Kiln model", "kiln-run");
  Options options;
  addOptions(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    return reportError(e.what());
  }
  try {
    checkGenerateOptions(app, options);
    return runTool(options);
  } catch (const ToolError &e) {
    return reportError(e.what());
  } catch (const std::bad_alloc &) {
    return reportError("out of memory");
  } catch (const std::exception &e) {
    return reportError(fmt::format("internal error: {}", e.what()));
  }
}
