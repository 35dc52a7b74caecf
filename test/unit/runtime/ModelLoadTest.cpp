//===- ModelLoadTest.cpp - kiln_model_load: descriptors and load errors ----===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtils.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>

namespace kiln::test {
namespace {

namespace fs = std::filesystem;

/// Loads `path`, expecting failure; returns the code and message.
std::pair<kiln_status_code, std::string> loadError(const std::string &path) {
  kiln_model *model = reinterpret_cast<kiln_model *>(0x1);
  kiln_status *status = kiln_model_load(path.c_str(), &model);
  EXPECT_NE(status, nullptr) << path;
  EXPECT_EQ(model, nullptr) << "out_model must be NULL on failure";
  kiln_status_code code = kiln_status_get_code(status);
  return {code, messageOf(status)};
}

class ModelLoadFiles : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("kiln-load-test-" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  /// Writes the first `count` bytes of the add_one artifact (all if npos),
  /// then lets `patch` edit them.
  std::string writeCopy(const std::string &name, size_t count,
                        void (*patch)(std::string &) = nullptr) {
    std::ifstream in(modelPath("add_one"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    bytes.resize(std::min(count, bytes.size()));
    if (patch)
      patch(bytes);
    std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  fs::path dir;
};

TEST(ModelLoad, DescribesAddOne) {
  ModelPtr model = loadModel("add_one");
  ASSERT_TRUE(model);
  kiln_model_info info;
  ASSERT_EQ(messageOf(kiln_model_get_info(model.get(), &info)), "");
  EXPECT_EQ(info.path, modelPath("add_one"));
  EXPECT_STREQ(info.producer, "kiln-test add_one");
  EXPECT_EQ(info.weights_bytes, 48u);
  EXPECT_EQ(info.file_bytes, fs::file_size(modelPath("add_one")));
  EXPECT_EQ(info.abi_version, 6u);
  EXPECT_EQ(info.num_inputs, 1u);
  EXPECT_EQ(info.num_outputs, 1u);

  kiln_tensor_info x;
  ASSERT_EQ(messageOf(kiln_model_input_info(model.get(), 0, &x)), "");
  EXPECT_STREQ(x.name, "x");
  EXPECT_EQ(x.dtype, KILN_DTYPE_F32);
  ASSERT_EQ(x.rank, 3);
  EXPECT_EQ(std::vector<int64_t>(x.dims, x.dims + 3),
            (std::vector<int64_t>{-1, 3, 4}));
  EXPECT_STREQ(x.dim_names[0], "batch");
  EXPECT_EQ(x.dim_names[1], nullptr);
  EXPECT_EQ(x.dim_names[2], nullptr);

  kiln_tensor_info y;
  ASSERT_EQ(messageOf(kiln_model_output_info(model.get(), 0, &y)), "");
  EXPECT_STREQ(y.name, "y");
  EXPECT_STREQ(y.dim_names[0], "batch");
}

TEST(ModelLoad, DescribesSharedSymbols) {
  ModelPtr model = loadModel("masked_sum");
  ASSERT_TRUE(model);
  kiln_tensor_info ids, mask, count;
  ASSERT_EQ(messageOf(kiln_model_input_info(model.get(), 0, &ids)), "");
  ASSERT_EQ(messageOf(kiln_model_input_info(model.get(), 1, &mask)), "");
  ASSERT_EQ(messageOf(kiln_model_output_info(model.get(), 1, &count)), "");
  EXPECT_STREQ(ids.name, "ids");
  EXPECT_EQ(ids.dtype, KILN_DTYPE_I64);
  EXPECT_STREQ(mask.name, "mask");
  EXPECT_EQ(mask.dtype, KILN_DTYPE_BOOL);
  EXPECT_STREQ(mask.dim_names[1], "seq");
  EXPECT_STREQ(count.name, "valid:count");
  EXPECT_EQ(count.dtype, KILN_DTYPE_I32);
  EXPECT_EQ(count.dims[0], -1);
}

TEST(ModelLoad, QueryErrors) {
  ModelPtr model = loadModel("add_one");
  kiln_tensor_info info;
  EXPECT_EQ(messageOf(kiln_model_input_info(model.get(), 1, &info)),
            "input index 1 is out of range, the model has 1 inputs");
  EXPECT_EQ(messageOf(kiln_model_output_info(model.get(), 7, &info)),
            "output index 7 is out of range, the model has 1 outputs");
  EXPECT_EQ(messageOf(kiln_model_input_info(nullptr, 0, &info)), "model is NULL");
  EXPECT_EQ(messageOf(kiln_model_get_info(model.get(), nullptr)),
            "out_info is NULL");
}

TEST(ModelLoad, MissingFile) {
  std::string path = modelPath("does_not_exist");
  auto [code, message] = loadError(path);
  EXPECT_EQ(code, KILN_STATUS_NOT_FOUND);
  EXPECT_EQ(message, "cannot load model '" + path + "': file not found");
}

TEST(ModelLoad, BadArguments) {
  kiln_model *model = nullptr;
  EXPECT_EQ(messageOf(kiln_model_load(nullptr, &model)), "model path is empty");
  EXPECT_EQ(messageOf(kiln_model_load("x.so", nullptr)), "out_model is NULL");
  auto [code, message] = loadError(KILN_TEST_MODELS_DIR);
  EXPECT_EQ(message, std::string("cannot load model '") + KILN_TEST_MODELS_DIR +
                         "': not a regular file");
}

TEST_F(ModelLoadFiles, GarbageFile) {
  std::string path = (dir / "garbage.so").string();
  std::ofstream(path) << "this is not a shared library, just text\n";
  auto [code, message] = loadError(path);
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
  EXPECT_EQ(message,
            "cannot load model '" + path + "': not a shared library (no ELF header)");
}

TEST_F(ModelLoadFiles, EmptyFile) {
  std::string path = writeCopy("empty.so", 0);
  EXPECT_EQ(loadError(path).second,
            "cannot load model '" + path + "': not a shared library (no ELF header)");
}

TEST_F(ModelLoadFiles, TruncatedInsideTheElfHeader) {
  std::string path = writeCopy("short.so", 40);
  EXPECT_EQ(loadError(path).second,
            "cannot load model '" + path + "': truncated: the file has only 40 bytes");
}

TEST_F(ModelLoadFiles, TruncatedAnywhere) {
  // dlopen would map the missing bytes and die of SIGBUS; the loader must
  // notice first, wherever the cut is.
  size_t size = fs::file_size(modelPath("add_one"));
  for (size_t cut : {size_t(64), size_t(100), size_t(1000), size_t(3000),
                     size / 2, size - 100, size - 1}) {
    std::string path = writeCopy("cut" + std::to_string(cut) + ".so", cut);
    auto [code, message] = loadError(path);
    EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
    EXPECT_EQ(message.rfind("cannot load model '" + path + "': truncated: ", 0), 0u)
        << message;
  }
}

TEST_F(ModelLoadFiles, ElfButNotSharedLibrary) {
  // e_type 1 is ET_REL, an object file.
  std::string path = writeCopy("object.so", std::string::npos,
                               [](std::string &bytes) { bytes[16] = 1; });
  EXPECT_EQ(loadError(path).second,
            "cannot load model '" + path + "': an ELF file but not a shared library");
}

TEST_F(ModelLoadFiles, ElfForAnotherMachine) {
  // e_machine 183 is AArch64 (or, on an AArch64 host, 62: x86-64).
  std::string path = writeCopy("arm.so", std::string::npos, [](std::string &bytes) {
    bytes[18] = bytes[18] == 62 ? char(183) : char(62);
  });
  EXPECT_NE(loadError(path).second.find("': built for another architecture (ELF machine "),
            std::string::npos);
}

TEST(ModelLoad, MissingEntrySymbol) {
  auto [code, message] = loadError(modelPath("no_entry"));
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
  EXPECT_EQ(message, "cannot load model '" + modelPath("no_entry") +
                         "': not a Kiln artifact: it does not export "
                         "'kiln_abi_model_v1'");
}

TEST(ModelLoad, SharedLibraryThatIsNotAnArtifact) {
  // The runtime's own shared library is a fine example of one.
  auto [code, message] = loadError(KILN_RUNTIME_SHARED_LIBRARY);
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
  EXPECT_NE(message.find("not a Kiln artifact"), std::string::npos) << message;
}

TEST(ModelLoad, EntryReturnsNull) {
  EXPECT_EQ(loadError(modelPath("null_entry")).second,
            "cannot load model '" + modelPath("null_entry") +
                "': not a Kiln artifact: kiln_abi_model_v1() returned NULL");
}

TEST(ModelLoad, BadMagic) {
  auto [code, message] = loadError(modelPath("bad_magic"));
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
  EXPECT_EQ(message, "cannot load model '" + modelPath("bad_magic") +
                         "': bad magic 0x464C457F, expected 0x4E4C494B ('KILN')");
}

TEST(ModelLoad, OutputAliases) {
  // ABI v6: an output that is its input updated in place loads; an alias
  // to a missing input or to an input of other dims is refused.
  kiln_model *model = nullptr;
  ASSERT_EQ(messageOf(kiln_model_load(modelPath("aliased_output").c_str(), &model)), "");
  int64_t input = 7;
  EXPECT_EQ(messageOf(kiln_model_output_alias(model, 0, &input)), "");
  EXPECT_EQ(input, 0);
  EXPECT_EQ(messageOf(kiln_model_output_alias(model, 1, &input)),
            "output index 1 is out of range, the model has 1 outputs");
  EXPECT_EQ(messageOf(kiln_model_output_alias(model, 0, nullptr)), "out_input is NULL");
  kiln_model_destroy(model);
  ModelPtr plain = loadModel("add_one");
  EXPECT_EQ(messageOf(kiln_model_output_alias(plain.get(), 0, &input)), "");
  EXPECT_EQ(input, -1);
  EXPECT_EQ(loadError(modelPath("bad_alias_index")).second,
            "cannot load model '" + modelPath("bad_alias_index") +
                "': output 'y' aliases input 3, but the model has 1 inputs");
  EXPECT_EQ(loadError(modelPath("bad_alias_dims")).second,
            "cannot load model '" + modelPath("bad_alias_dims") +
                "': output 'y' aliases input 'x', but their dtypes or dims differ");
}

TEST(ModelLoad, VersionMismatch) {
  auto [code, message] = loadError(modelPath("bad_version"));
  EXPECT_EQ(code, KILN_STATUS_VERSION_MISMATCH);
  EXPECT_EQ(message, "cannot load model '" + modelPath("bad_version") +
                         "': ABI version mismatch: the artifact has version 7, "
                         "this runtime supports versions 5 to 6");
}

TEST(ModelLoad, UnknownCPUExtension) {
  auto [code, message] = loadError(modelPath("unknown_cpu_feature"));
  EXPECT_EQ(code, KILN_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(message, "cannot load model '" + modelPath("unknown_cpu_feature") +
                         "': it needs CPU extensions this runtime does not know "
                         "(no-such-extension): use the runtime of the kilnc that compiled it");
}

TEST(ModelLoad, BaselineCPUFeaturesLoad) {
  kiln_model *model = nullptr;
  kiln_status *status = kiln_model_load(modelPath("baseline_cpu_features").c_str(), &model);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_OK) << kiln_status_message(status);
  kiln_status_destroy(status);
  kiln_model_destroy(model);
}

TEST(ModelLoad, ChecksumMismatch) {
  auto [code, message] = loadError(modelPath("bad_checksum"));
  EXPECT_EQ(code, KILN_STATUS_INVALID_MODEL);
  std::string prefix = "cannot load model '" + modelPath("bad_checksum") +
                       "': checksum mismatch: the descriptor says 0x";
  EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
  EXPECT_NE(message.find("(corrupt or edited file)"), std::string::npos);
}

TEST(ModelLoad, UnknownDtypeWithValidChecksum) {
  EXPECT_EQ(loadError(modelPath("bad_dtype")).second,
            "cannot load model '" + modelPath("bad_dtype") +
                "': input 'x' has unknown dtype 99");
}

TEST(ModelLoad, RelativePathWithoutSlashIsTheCurrentDirectory) {
  std::string previous = fs::current_path().string();
  fs::current_path(KILN_TEST_MODELS_DIR);
  kiln_model *raw = nullptr;
  std::string message = messageOf(kiln_model_load("add_one.so", &raw));
  ModelPtr model(raw);
  fs::current_path(previous);
  EXPECT_EQ(message, "");
  EXPECT_NE(model, nullptr);
}

TEST(ModelLoad, DestroyAcceptsNull) {
  kiln_model_destroy(nullptr);
  kiln_session_destroy(nullptr);
  kiln_tensor_destroy(nullptr);
  kiln_status_destroy(nullptr);
  EXPECT_STREQ(kiln_status_message(nullptr), "OK");
  EXPECT_EQ(kiln_status_get_code(nullptr), KILN_STATUS_OK);
}

TEST(Dtype, NamesAndSizes) {
  struct Row {
    int32_t dtype;
    const char *name;
    size_t size;
  } rows[] = {{KILN_DTYPE_F32, "f32", 4}, {KILN_DTYPE_F16, "f16", 2},
              {KILN_DTYPE_BF16, "bf16", 2}, {KILN_DTYPE_F64, "f64", 8},
              {KILN_DTYPE_I8, "i8", 1},   {KILN_DTYPE_U8, "u8", 1},
              {KILN_DTYPE_I16, "i16", 2}, {KILN_DTYPE_I32, "i32", 4},
              {KILN_DTYPE_I64, "i64", 8}, {KILN_DTYPE_BOOL, "bool", 1},
              {KILN_DTYPE_U16, "u16", 2}, {KILN_DTYPE_U32, "u32", 4},
              {KILN_DTYPE_U64, "u64", 8}, {KILN_DTYPE_F8E4M3FN, "f8e4m3fn", 1},
              {KILN_DTYPE_F8E4M3FNUZ, "f8e4m3fnuz", 1},
              {KILN_DTYPE_F8E5M2, "f8e5m2", 1},
              {KILN_DTYPE_F8E5M2FNUZ, "f8e5m2fnuz", 1},
              {KILN_DTYPE_I4, "i4", 1}, {KILN_DTYPE_U4, "u4", 1},
              {KILN_DTYPE_I2, "i2", 1}, {KILN_DTYPE_U2, "u2", 1},
              {KILN_DTYPE_F4E2M1, "f4e2m1", 1}, {KILN_DTYPE_F8E8M0, "f8e8m0", 1}};
  for (const Row &row : rows) {
    EXPECT_STREQ(kiln_dtype_name(row.dtype), row.name);
    EXPECT_EQ(kiln_dtype_size(row.dtype), row.size) << row.name;
  }
  EXPECT_EQ(kiln_dtype_name(0), nullptr);
  EXPECT_EQ(kiln_dtype_size(24), 0u);
}

TEST(Dtype, ByteSizeChecksOverflow) {
  int64_t dims[] = {2, 3, 4};
  size_t bytes = 0;
  EXPECT_EQ(messageOf(kiln_byte_size(KILN_DTYPE_F64, 3, dims, &bytes)), "");
  EXPECT_EQ(bytes, 192u);
  EXPECT_EQ(messageOf(kiln_byte_size(KILN_DTYPE_F32, 0, nullptr, &bytes)), "");
  EXPECT_EQ(bytes, 4u);
  int64_t huge[] = {int64_t(1) << 40, int64_t(1) << 22};
  EXPECT_EQ(messageOf(kiln_byte_size(KILN_DTYPE_I8, 2, huge, &bytes)), "");
  EXPECT_EQ(messageOf(kiln_byte_size(KILN_DTYPE_I32, 2, huge, &bytes)),
            "byte size of [1099511627776, 4194304] i32 overflows 64 bits");
  int64_t negative[] = {2, -1};
  EXPECT_EQ(messageOf(kiln_byte_size(KILN_DTYPE_I8, 2, negative, &bytes)),
            "dim 1: got -1, expected >= 0");
  EXPECT_EQ(messageOf(kiln_byte_size(24, 1, dims, &bytes)), "unknown dtype 24");
}

} // namespace
} // namespace kiln::test
