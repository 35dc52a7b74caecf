//===- ArenaWeightsTraceTest.cpp - Arenas, non-embedded weights, traces ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The `weighted` fake artifacts (Inputs/weighted.c) stage every row in the
// run's arena, read weights from wherever the descriptor says they live and
// call the trace hooks, as kilnc-generated code does.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <unistd.h>

namespace kiln::test {
namespace {

namespace fs = std::filesystem;

std::vector<float> floatsOf(const kiln_tensor &tensor) {
  std::vector<float> values(tensor.byte_size / sizeof(float));
  std::memcpy(values.data(), tensor.data, tensor.byte_size);
  return values;
}

/// Runs `session` on x = row * 100 + column for `rows` rows; returns y.
std::vector<float> runRows(kiln_session *session, int64_t rows, std::string &error,
                           kiln_trace *trace = nullptr) {
  std::vector<float> x(static_cast<size_t>(rows) * 12);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i / 12 * 100 + i % 12);
  InputTensor input = makeInput("x", KILN_DTYPE_F32, {rows, 12}, x);
  kiln_tensor view = input.view();
  kiln_tensor *output = nullptr;
  error = messageOf(kiln_session_run_traced(session, &view, 1, &output, 1, trace));
  TensorPtr owned(output);
  return output ? floatsOf(*output) : std::vector<float>();
}

TEST(Arena, EmbeddedWeightsThroughTheArena) {
  ModelPtr model = loadModel("weighted");
  ASSERT_TRUE(model);
  kiln_model_info info;
  ASSERT_EQ(messageOf(kiln_model_get_info(model.get(), &info)), "");
  EXPECT_EQ(info.arena_bytes, 48u);
  EXPECT_EQ(info.weights_mode, KILN_WEIGHTS_EMBEDDED);
  EXPECT_STREQ(info.weights_path, "");
  EXPECT_EQ(info.num_dispatches, 2u);
  SessionPtr session = createSession(model.get());
  std::string error;
  std::vector<float> y = runRows(session.get(), 2, error);
  ASSERT_EQ(error, "");
  for (size_t i = 0; i < y.size(); ++i)
    EXPECT_EQ(y[i], static_cast<float>(i / 12 * 100 + 2 * (i % 12))) << i;
}

TEST(Arena, CountsAgainstTheByteLimit) {
  ModelPtr model = loadModel("weighted");
  std::string error;
  SessionPtr small = createSession(model.get(), 1, 40);
  runRows(small.get(), 1, error);
  EXPECT_EQ(error, "the model's scratch arena needs 48 bytes, over the session's "
                   "byte limit of 40 bytes");
  SessionPtr tight = createSession(model.get(), 1, 60);
  runRows(tight.get(), 1, error);
  EXPECT_EQ(error, "the outputs need 48 bytes or more (96 with the scratch arena), over "
                   "the session's byte limit of 60 bytes");
}

// Concurrent runs must never share an arena: the fake model returns 9 (an
// INTERNAL status) when a row it staged changed under it.
TEST(Arena, ConcurrentRunsGetTheirOwnArenas) {
  ModelPtr model = loadModel("weighted");
  SessionPtr session = createSession(model.get(), 2);
  constexpr int kThreads = 8, kRuns = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        std::string error;
        int64_t rows = 1 + (t + r) % 5;
        std::vector<float> y = runRows(session.get(), rows, error);
        bool ok = error.empty() && y.size() == static_cast<size_t>(rows) * 12;
        for (size_t i = 0; ok && i < y.size(); ++i)
          ok = y[i] == static_cast<float>(i / 12 * 100 + 2 * (i % 12));
        if (!ok)
          failures.fetch_add(1);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
}

class ExternalWeights : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("kiln-weights-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    artifact = (dir / "model.so").string();
    fs::copy_file(modelPath("weighted_external"), artifact);
  }
  void TearDown() override { fs::remove_all(dir); }

  /// Writes the weights file the fake expects (byte k = k), `size` bytes of it.
  void writeWeights(size_t size, int flip = -1) {
    std::string bytes;
    for (size_t k = 0; k < size; ++k)
      bytes.push_back(static_cast<char>(k == static_cast<size_t>(flip) ? k ^ 1 : k));
    std::ofstream(dir / "weighted.weights", std::ios::binary) << bytes;
  }

  std::string loadError() {
    kiln_model *model = nullptr;
    kiln_status *status = kiln_model_load(artifact.c_str(), &model);
    code = kiln_status_get_code(status);
    EXPECT_EQ(model, nullptr);
    kiln_model_destroy(model);
    return messageOf(status);
  }

  fs::path dir;
  std::string artifact;
  kiln_status_code code = KILN_STATUS_OK;
};

TEST_F(ExternalWeights, MapsTheFileNextToTheArtifact) {
  writeWeights(64);
  kiln_model *raw = nullptr;
  ASSERT_EQ(messageOf(kiln_model_load(artifact.c_str(), &raw)), "");
  ModelPtr model(raw);
  kiln_model_info info;
  ASSERT_EQ(messageOf(kiln_model_get_info(model.get(), &info)), "");
  EXPECT_EQ(info.weights_mode, KILN_WEIGHTS_EXTERNAL);
  EXPECT_EQ(info.weights_path, (dir / "weighted.weights").string());
  EXPECT_EQ(info.weights_bytes, 64u);
  SessionPtr session = createSession(model.get());
  std::string error;
  std::vector<float> y = runRows(session.get(), 1, error);
  ASSERT_EQ(error, "");
  for (size_t i = 0; i < 12; ++i) {
    float w;
    unsigned char bytes[4] = {static_cast<unsigned char>(4 * i), static_cast<unsigned char>(4 * i + 1),
                              static_cast<unsigned char>(4 * i + 2), static_cast<unsigned char>(4 * i + 3)};
    std::memcpy(&w, bytes, 4);
    EXPECT_EQ(y[i], static_cast<float>(i) + w) << i;
  }
}

TEST_F(ExternalWeights, MissingFile) {
  EXPECT_EQ(loadError(), "cannot load model '" + artifact + "': weights file '" +
                             (dir / "weighted.weights").string() +
                             "' not found (kilnc --weights=external writes it next to "
                             "the artifact; keep them together)");
  EXPECT_EQ(code, KILN_STATUS_NOT_FOUND);
}

TEST_F(ExternalWeights, ShortFile) {
  writeWeights(63);
  EXPECT_EQ(loadError(), "cannot load model '" + artifact + "': weights file '" +
                             (dir / "weighted.weights").string() +
                             "' has 63 bytes, the artifact expects 64 (truncated)");
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
}

TEST_F(ExternalWeights, LongFile) {
  writeWeights(65);
  EXPECT_NE(loadError().find("has 65 bytes, the artifact expects 64 (from another compilation?)"),
            std::string::npos);
}

TEST_F(ExternalWeights, CorruptFile) {
  writeWeights(64, 17);
  std::string message = loadError();
  EXPECT_NE(message.find("weighted.weights' is corrupt: its contents hash to 0x"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("(edited, or from another compilation)"), std::string::npos);
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
}

TEST_F(ExternalWeights, DirectoryInsteadOfFile) {
  fs::create_directories(dir / "weighted.weights");
  EXPECT_NE(loadError().find("weighted.weights' is not a regular file"), std::string::npos);
}

TEST(NoWeights, FilledWithSeededValues) {
  ModelPtr model = loadModel("weighted_none");
  ASSERT_TRUE(model);
  kiln_model_info info;
  ASSERT_EQ(messageOf(kiln_model_get_info(model.get(), &info)), "");
  EXPECT_EQ(info.weights_mode, KILN_WEIGHTS_NONE);
  SessionPtr session = createSession(model.get());
  std::string error;
  std::vector<float> first = runRows(session.get(), 1, error);
  ASSERT_EQ(error, "");
  bool anyNonZero = false;
  for (size_t i = 0; i < 12; ++i) {
    float w = first[i] - static_cast<float>(i);
    EXPECT_GE(w, -0.125f);
    EXPECT_LT(w, 0.125f);
    anyNonZero |= w != 0.0f;
  }
  EXPECT_TRUE(anyNonZero);
  // Seeded: a second load gets the same values.
  ModelPtr again = loadModel("weighted_none");
  SessionPtr other = createSession(again.get());
  EXPECT_EQ(runRows(other.get(), 1, error), first);
}

// CUDA --precision=fp16|bf16 blobs: a 16-bit segment gets values of its
// type in the same range (read as f32, its bytes would be two unrelated
// halves, some of them NaN or huge).
TEST(NoWeights, HalfSegmentsFilledWithTheirType) {
  for (const char *name : {"weighted_none_f16", "weighted_none_bf16"}) {
    ModelPtr model = loadModel(name);
    ASSERT_TRUE(model) << name;
    SessionPtr session = createSession(model.get());
    std::string error;
    std::vector<float> rows = runRows(session.get(), 1, error);
    ASSERT_EQ(error, "") << name;
    bool anyNonZero = false;
    for (size_t i = 0; i < 12; ++i) {
      float w = rows[i] - static_cast<float>(i);
      EXPECT_GE(w, -0.125f) << name;
      EXPECT_LE(w, 0.125f) << name;
      anyNonZero |= w != 0.0f;
    }
    EXPECT_TRUE(anyNonZero) << name;
  }
}

TEST(DescriptorV2, BadWeightsFields) {
  for (auto [name, reason] : std::vector<std::pair<std::string, std::string>>{
           {"bad_weights_mode", "unknown weights mode 7, expected 0 (embedded), 1 "
                                "(external) or 2 (none)"},
           {"bad_weights_file", "external weights need a weights file name without '/'"},
           {"null_dispatch_name", "dispatch 1 has no name"},
           {"bad_segment_dtype", "weights segment 0 has dtype 5, expected f32, f16 or bf16"},
           {"bad_segment_range", "weights segment 1 (64 bytes at 32) is not an aligned run "
                                 "after the previous segment inside the 128 weight bytes"},
           {"null_segments", "descriptor has a NULL weights segment array"}}) {
    kiln_model *model = nullptr;
    std::string message = messageOf(kiln_model_load(modelPath(name).c_str(), &model));
    EXPECT_EQ(message, "cannot load model '" + modelPath(name) + "': " + reason);
    kiln_model_destroy(model);
  }
}

TEST(Trace, RecordsRunsAndDispatches) {
  ModelPtr model = loadModel("weighted");
  SessionPtr session = createSession(model.get());
  kiln_trace *raw = nullptr;
  ASSERT_EQ(messageOf(kiln_trace_create(&raw)), "");
  std::unique_ptr<kiln_trace, void (*)(kiln_trace *)> trace(raw, &kiln_trace_destroy);
  std::string error;
  runRows(session.get(), 2, error, trace.get());
  ASSERT_EQ(error, "");
  runRows(session.get(), 1, error); // untraced: no events
  ASSERT_EQ(kiln_trace_event_count(trace.get()), 5u);
  std::vector<std::string> names;
  uint64_t previousEnd = 0;
  for (size_t i = 0; i < 5; ++i) {
    kiln_trace_event event;
    ASSERT_EQ(messageOf(kiln_trace_get_event(trace.get(), i, &event)), "");
    names.push_back(event.name);
    EXPECT_LE(event.begin_ns, event.end_ns);
    if (event.dispatch >= 0) {
      EXPECT_GE(event.begin_ns, previousEnd);
      previousEnd = event.end_ns;
    }
  }
  EXPECT_EQ(names, (std::vector<std::string>{"stage /add", "copy /out", "stage /add",
                                             "copy /out", "run"}));
  kiln_trace_event event;
  EXPECT_EQ(messageOf(kiln_trace_get_event(trace.get(), 5, &event)),
            "event index 5 is out of range, the trace has 5 events");

  fs::path path = fs::temp_directory_path() / ("kiln-trace-" + std::to_string(::getpid()) + ".json");
  ASSERT_EQ(messageOf(kiln_trace_write_json(trace.get(), path.c_str())), "");
  std::ifstream in(path);
  std::string json((std::istreambuf_iterator<char>(in)), {});
  fs::remove(path);
  EXPECT_EQ(json.rfind("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", 0), 0u);
  EXPECT_NE(json.find("{\"name\": \"stage /add\", \"cat\": \"dispatch\", \"ph\": \"X\""),
            std::string::npos);
  EXPECT_NE(json.find("\"name\": \"run\", \"cat\": \"run\""), std::string::npos);
  EXPECT_EQ(messageOf(kiln_trace_write_json(trace.get(), "/nonexistent-dir/t.json")),
            "cannot write trace '/nonexistent-dir/t.json'");
  EXPECT_EQ(messageOf(kiln_trace_create(nullptr)), "out_trace is NULL");
  EXPECT_EQ(kiln_trace_event_count(nullptr), 0u);
}

} // namespace
} // namespace kiln::test
