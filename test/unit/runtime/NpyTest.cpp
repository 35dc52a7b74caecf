//===- NpyTest.cpp - .npy round trips, NumPy's exact bytes, malformed files ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "npy/Npy.h"

#include "kiln-c/runtime.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace kiln::npy {
namespace {

/// What numpy.save writes before the data: magic, version 1.0, the header
/// length, and `dict` padded with spaces and a newline to `total` bytes.
/// The totals in the tests were taken from NumPy 2.4.
std::string numpyHeader(const std::string &dict, size_t total) {
  std::string out("\x93NUMPY\x01\x00", 8);
  size_t length = total - 10;
  out += static_cast<char>(length & 0xFF);
  out += static_cast<char>(length >> 8);
  out += dict;
  out.append(total - out.size() - 1, ' ');
  return out + "\n";
}

std::string encodeOrDie(int32_t dtype, const std::vector<int64_t> &shape,
                        const void *data, size_t bytes) {
  std::string out, error;
  EXPECT_TRUE(encode(dtype, shape, data, bytes, out, error)) << error;
  return out;
}

std::string decodeError(const std::string &bytes) {
  Array array;
  std::string error;
  EXPECT_FALSE(decode(reinterpret_cast<const uint8_t *>(bytes.data()),
                      bytes.size(), array, error));
  return error;
}

TEST(Npy, HeadersMatchNumpy) {
  float scalar = 1.5f;
  EXPECT_EQ(encodeOrDie(KILN_DTYPE_F32, {}, &scalar, 4),
            numpyHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 128) +
                std::string(reinterpret_cast<char *>(&scalar), 4));
  int16_t vec[3] = {0, 1, 2};
  EXPECT_EQ(encodeOrDie(KILN_DTYPE_I16, {3}, vec, 6).substr(0, 128),
            numpyHeader("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 128));
  std::vector<float> zeros(24);
  EXPECT_EQ(encodeOrDie(KILN_DTYPE_F32, {2, 3, 4}, zeros.data(), 96).size(), 224u);
  EXPECT_EQ(encodeOrDie(KILN_DTYPE_BOOL, {12345678901, 0}, nullptr, 0),
            numpyHeader("{'descr': '|b1', 'fortran_order': False, 'shape': "
                        "(12345678901, 0), }",
                        128));
}

TEST(Npy, RoundTripEveryDtype) {
  int32_t dtypes[] = {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_F64,
                      KILN_DTYPE_I8,  KILN_DTYPE_U8,  KILN_DTYPE_I16,
                      KILN_DTYPE_I32, KILN_DTYPE_I64, KILN_DTYPE_BOOL,
                      KILN_DTYPE_U16, KILN_DTYPE_U32, KILN_DTYPE_U64};
  std::vector<std::vector<int64_t>> shapes = {{}, {5}, {2, 3, 4}, {3, 0, 2}};
  for (int32_t dtype : dtypes)
    for (const std::vector<int64_t> &shape : shapes) {
      size_t count = 1;
      for (int64_t dim : shape)
        count *= static_cast<size_t>(dim);
      std::vector<uint8_t> data(count * kiln_dtype_size(dtype));
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = static_cast<uint8_t>(dtype == KILN_DTYPE_BOOL ? i % 2 : 31 * i + 7);
      std::string bytes = encodeOrDie(dtype, shape, data.data(), data.size());
      EXPECT_EQ(bytes.size() % 64, data.size() % 64) << "data must start aligned";
      Array array;
      std::string error;
      ASSERT_TRUE(decode(reinterpret_cast<const uint8_t *>(bytes.data()),
                         bytes.size(), array, error))
          << error;
      EXPECT_EQ(array.dtype, dtype);
      EXPECT_EQ(array.shape, shape);
      ASSERT_EQ(array.byteSize, data.size());
      EXPECT_EQ(reinterpret_cast<uintptr_t>(array.data.get()) % 64, 0u);
      if (!data.empty()) {
        EXPECT_EQ(std::memcmp(array.data.get(), data.data(), data.size()), 0)
            << kiln_dtype_name(dtype);
      }
    }
}

TEST(Npy, ReadsVersions2And3) {
  for (char version : {'\x02', '\x03'}) {
    std::string dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }";
    std::string bytes("\x93NUMPY", 6);
    bytes += version;
    bytes += '\0';
    uint32_t length = static_cast<uint32_t>(dict.size() + 1);
    bytes.append(reinterpret_cast<const char *>(&length), 4);
    bytes += dict + "\n";
    bytes.append("\x01\x00\x02\x00\x03\x00", 6);
    Array array;
    std::string error;
    ASSERT_TRUE(decode(reinterpret_cast<const uint8_t *>(bytes.data()),
                       bytes.size(), array, error))
        << error;
    EXPECT_EQ(array.dtype, KILN_DTYPE_I16);
    EXPECT_EQ(reinterpret_cast<const int16_t *>(array.data.get())[2], 3);
  }
}

TEST(Npy, AcceptsEquivalentHeaders) {
  // Key order, double quotes, '=' byte order, a 1-D Fortran-order array.
  std::string bytes = numpyHeader(
      "{\"shape\": (2,), \"fortran_order\": True, \"descr\": \"=i4\"}", 128);
  bytes.append(8, '\0');
  Array array;
  std::string error;
  EXPECT_TRUE(decode(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(),
                     array, error))
      << error;
  EXPECT_EQ(array.dtype, KILN_DTYPE_I32);
}

std::string withDict(const std::string &dict, size_t dataBytes = 0) {
  return numpyHeader(dict, 128) + std::string(dataBytes, '\0');
}

TEST(Npy, MalformedFiles) {
  std::string good = withDict(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
  EXPECT_EQ(decodeError("PK\x03\x04 a zip file"), "bad magic: not a .npy file");
  EXPECT_EQ(decodeError("\x93NUM"), "truncated: 4 bytes, not even a header");
  EXPECT_EQ(decodeError(good.substr(0, 60)),
            "truncated: the header needs 118 bytes, the file has 50 after the prefix");
  EXPECT_EQ(decodeError(good.substr(0, good.size() - 1)),
            "size mismatch: the header says [2, 3] f32, which is 24 bytes of data, "
            "but the file has 23");
  EXPECT_EQ(decodeError(good + "x"),
            "size mismatch: the header says [2, 3] f32, which is 24 bytes of data, "
            "but the file has 25");
  std::string future = good;
  future[6] = 4;
  EXPECT_EQ(decodeError(future), "unsupported .npy format version 4.0");
  EXPECT_EQ(decodeError(withDict(
                "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24)),
            "Fortran-order arrays are not supported; save a C-order array "
            "(numpy.ascontiguousarray)");
}

TEST(Npy, BadHeaders) {
  EXPECT_EQ(decodeError(withDict("not a dict")), "bad header: expected a dict");
  EXPECT_EQ(decodeError(withDict("{'descr': '<f4', 'shape': (2,), }")),
            "bad header: it needs 'descr', 'fortran_order' and 'shape'");
  EXPECT_EQ(decodeError(withDict(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}")),
            "bad header: unknown key 'x'");
  EXPECT_EQ(decodeError(withDict(
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }")),
            "bad header: 'descr' must be a string (structured dtypes are not "
            "supported)");
  EXPECT_EQ(decodeError(withDict(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }")),
            "bad header: 'shape' must be a tuple of non-negative integers");
  EXPECT_EQ(decodeError(withDict(
                "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }")),
            "bad header: 'fortran_order' must be True or False");
  EXPECT_EQ(decodeError(withDict(
                "{'descr': '<f4' 'fortran_order': False, 'shape': (2,), }")),
            "bad header: expected ',' or '}'");
  EXPECT_EQ(decodeError(withDict(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), } junk")),
            "bad header: unexpected text after the dict");
  EXPECT_EQ(decodeError(withDict("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                 "(4294967296, 4294967296), }")),
            "bad header: byte size of [4294967296, 4294967296] f32 overflows 64 bits");
}

TEST(Npy, UnsupportedDtypes) {
  EXPECT_EQ(decodeError(withDict(
                "{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 8)),
            "unsupported dtype '<c8' (supported: f4 f2 f8 i1 u1 i2 i4 i8 b1 u2 u4 u8, "
            "little-endian)");
  EXPECT_EQ(decodeError(withDict(
                "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8)),
            "big-endian data ('>f4') is not supported");
  std::string out, error;
  uint16_t bf16[2] = {0x3F80, 0x4000};
  EXPECT_FALSE(encode(KILN_DTYPE_BF16, {2}, bf16, 4, out, error));
  EXPECT_EQ(error, "bf16 cannot be stored in .npy (NumPy has no bf16 dtype)");
  EXPECT_FALSE(encode(KILN_DTYPE_F32, {2}, bf16, 4, out, error));
  EXPECT_EQ(error, "byte size 4 does not match [2] f32");
}

TEST(Npy, Files) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("kiln-npy-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "a.npy").string();
  double values[2] = {0.25, -8};
  std::string error;
  ASSERT_TRUE(write(path, KILN_DTYPE_F64, {1, 2}, values, 16, error)) << error;
  Array array;
  ASSERT_TRUE(read(path, array, error)) << error;
  EXPECT_EQ(reinterpret_cast<const double *>(array.data.get())[1], -8);
  EXPECT_FALSE(read((dir / "missing.npy").string(), array, error));
  EXPECT_EQ(error, "'" + (dir / "missing.npy").string() +
                       "': cannot open: No such file or directory");
  EXPECT_FALSE(read(dir.string(), array, error));
  EXPECT_EQ(error, "'" + dir.string() + "': not a regular file");
  std::ofstream(path, std::ios::trunc) << "garbage";
  EXPECT_FALSE(read(path, array, error));
  EXPECT_EQ(error, "'" + path + "': bad magic: not a .npy file");
  EXPECT_FALSE(write((dir / "no/such/dir.npy").string(), KILN_DTYPE_F64, {1, 2},
                     values, 16, error));
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
  fs::remove_all(dir);
}

} // namespace
} // namespace kiln::npy
