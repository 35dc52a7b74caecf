//===- Npy.cpp - Reading and writing NumPy .npy files ----------------------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The format: "\x93NUMPY", major and minor version bytes, the header length
// (2 bytes in 1.0, 4 in 2.0/3.0, little-endian), then a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
// spaces and a newline so that the data starts 64-byte aligned.
//
//===----------------------------------------------------------------------===//

#include "npy/Npy.h"

#include "kiln-c/runtime.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <fstream>
#include <iterator>
#include <optional>

namespace kiln::npy {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".npy data is read and written in host byte order");

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicBytes = 6;
constexpr size_t kAlignment = 64;
// numpy.save leaves room for the first dim to grow to this many digits.
constexpr size_t kGrowthAxisDigits = 21;

struct DescrEntry {
  int32_t dtype;
  const char *descr;
};
constexpr DescrEntry kDescrs[] = {
    {KILN_DTYPE_F32, "<f4"}, {KILN_DTYPE_F16, "<f2"}, {KILN_DTYPE_F64, "<f8"},
    {KILN_DTYPE_I8, "|i1"},  {KILN_DTYPE_U8, "|u1"},  {KILN_DTYPE_I16, "<i2"},
    {KILN_DTYPE_I32, "<i4"}, {KILN_DTYPE_I64, "<i8"}, {KILN_DTYPE_BOOL, "|b1"},
    {KILN_DTYPE_U16, "<u2"}, {KILN_DTYPE_U32, "<u4"}, {KILN_DTYPE_U64, "<u8"},
};

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

/// The dict fields of a header.
struct Header {
  std::string descr;
  std::optional<bool> fortranOrder;
  std::optional<std::vector<int64_t>> shape;
};

/// A recursive-descent reader for the tiny subset of Python literals that
/// .npy headers use.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}
  bool parse(Header &header, std::string &error);

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out);
  bool parseBool(bool &out);
  bool parseShape(std::vector<int64_t> &out);
  bool parseInt(int64_t &out);
  bool parseEntry(Header &header, std::string &error);

  std::string_view text;
  size_t pos = 0;
};

bool HeaderParser::parseString(std::string &out) {
  skipSpace();
  if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
    return false;
  char quote = text[pos++];
  size_t end = text.find(quote, pos);
  if (end == std::string_view::npos)
    return false;
  out = std::string(text.substr(pos, end - pos));
  pos = end + 1;
  return true;
}

bool HeaderParser::parseBool(bool &out) {
  skipSpace();
  for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
    size_t length = std::strlen(word);
    if (text.substr(pos, length) == word) {
      pos += length;
      out = value;
      return true;
    }
  }
  return false;
}

bool HeaderParser::parseInt(int64_t &out) {
  skipSpace();
  size_t start = pos;
  int64_t value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, text[pos] - '0', &value))
      return false;
    ++pos;
  }
  // Python 2 wrote longs with an L suffix.
  if (pos > start && pos < text.size() && text[pos] == 'L')
    ++pos;
  out = value;
  return pos > start;
}

bool HeaderParser::parseShape(std::vector<int64_t> &out) {
  if (!consume('('))
    return false;
  out.clear();
  while (!consume(')')) {
    int64_t dim;
    if (!parseInt(dim))
      return false;
    out.push_back(dim);
    if (!consume(',')) {
      if (!consume(')'))
        return false;
      break;
    }
  }
  return true;
}

bool HeaderParser::parseEntry(Header &header, std::string &error) {
  std::string key;
  if (!parseString(key) || !consume(':')) {
    error = "bad header: expected 'key': value";
    return false;
  }
  if (key == "descr") {
    if (parseString(header.descr))
      return true;
    error = "bad header: 'descr' must be a string (structured dtypes are not supported)";
  } else if (key == "fortran_order") {
    bool value;
    if (parseBool(value)) {
      header.fortranOrder = value;
      return true;
    }
    error = "bad header: 'fortran_order' must be True or False";
  } else if (key == "shape") {
    std::vector<int64_t> shape;
    if (parseShape(shape)) {
      header.shape = std::move(shape);
      return true;
    }
    error = "bad header: 'shape' must be a tuple of non-negative integers";
  } else {
    error = "bad header: unknown key '" + key + "'";
  }
  return false;
}

bool HeaderParser::parse(Header &header, std::string &error) {
  if (!consume('{')) {
    error = "bad header: expected a dict";
    return false;
  }
  for (;;) {
    if (consume('}'))
      break;
    if (!parseEntry(header, error))
      return false;
    if (consume(','))
      continue;
    if (consume('}'))
      break;
    error = "bad header: expected ',' or '}'";
    return false;
  }
  skipSpace();
  if (pos != text.size()) {
    error = "bad header: unexpected text after the dict";
    return false;
  }
  if (header.descr.empty() || !header.fortranOrder || !header.shape) {
    error = "bad header: it needs 'descr', 'fortran_order' and 'shape'";
    return false;
  }
  return true;
}

bool dtypeOfDescr(const std::string &descr, int32_t &dtype, std::string &error) {
  if (descr.size() >= 2 && descr[0] == '>' && descr.substr(1) != "i1" &&
      descr.substr(1) != "u1" && descr.substr(1) != "b1") {
    error = "big-endian data ('" + descr + "') is not supported";
    return false;
  }
  for (const DescrEntry &entry : kDescrs) {
    // Any byte-order mark is fine for one-byte types; '=' is the
    // (little-endian) host order.
    const char *want = entry.descr;
    if (descr.size() == 3 && std::strchr("<|=>", descr[0]) &&
        descr.compare(1, 2, want + 1) == 0 &&
        (want[0] == '|' || descr[0] == '<' || descr[0] == '=')) {
      dtype = entry.dtype;
      return true;
    }
  }
  error = "unsupported dtype '" + descr +
          "' (supported: f4 f2 f8 i1 u1 i2 i4 i8 b1 u2 u4 u8, little-endian)";
  return false;
}

bool decodeHeader(const uint8_t *bytes, size_t size, std::string_view &text,
                  size_t &dataStart, std::string &error) {
  if (std::memcmp(bytes, kMagic, std::min(size, kMagicBytes)) != 0) {
    error = "bad magic: not a .npy file";
    return false;
  }
  if (size < kMagicBytes + 4) {
    error = "truncated: " + std::to_string(size) + " bytes, not even a header";
    return false;
  }
  uint8_t major = bytes[6], minor = bytes[7];
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || minor != 0) {
    error = "unsupported .npy format version " + std::to_string(major) + "." +
            std::to_string(minor);
    return false;
  }
  size_t headerStart = 8 + lengthBytes;
  if (size < headerStart) {
    error = "truncated: the header length is cut off";
    return false;
  }
  size_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= static_cast<size_t>(bytes[8 + i]) << (8 * i);
  if (headerLength > size - headerStart) {
    error = "truncated: the header needs " + std::to_string(headerLength) +
            " bytes, the file has " + std::to_string(size - headerStart) +
            " after the prefix";
    return false;
  }
  text = std::string_view(reinterpret_cast<const char *>(bytes) + headerStart,
                          headerLength);
  dataStart = headerStart + headerLength;
  return true;
}

} // namespace

const char *descrOf(int32_t dtype) {
  for (const DescrEntry &entry : kDescrs)
    if (entry.dtype == dtype)
      return entry.descr;
  return nullptr;
}

bool allocate(Array &array, int32_t dtype, std::vector<int64_t> shape,
              std::string &error) {
  size_t bytes = 0;
  kiln_status *status = kiln_byte_size(dtype, static_cast<int32_t>(shape.size()),
                                       shape.data(), &bytes);
  if (status) {
    error = kiln_status_message(status);
    kiln_status_destroy(status);
    return false;
  }
  size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  auto *data = static_cast<uint8_t *>(
      rounded >= bytes ? std::aligned_alloc(kAlignment, rounded) : nullptr);
  if (!data) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes";
    return false;
  }
  array.dtype = dtype;
  array.shape = std::move(shape);
  array.data.reset(data);
  array.byteSize = bytes;
  return true;
}

bool decode(const uint8_t *bytes, size_t size, Array &out, std::string &error) {
  std::string_view text;
  size_t dataStart = 0;
  if (!decodeHeader(bytes, size, text, dataStart, error))
    return false;
  Header header;
  int32_t dtype = 0;
  if (!HeaderParser(text).parse(header, error) ||
      !dtypeOfDescr(header.descr, dtype, error))
    return false;
  // Fortran and C order are the same layout for at most one dim.
  if (*header.fortranOrder && header.shape->size() > 1) {
    error = "Fortran-order arrays are not supported; save a C-order array "
            "(numpy.ascontiguousarray)";
    return false;
  }
  std::vector<int64_t> shape = *header.shape;
  Array array;
  size_t expected = 0;
  kiln_status *status = kiln_byte_size(dtype, static_cast<int32_t>(shape.size()),
                                       shape.data(), &expected);
  if (status) {
    error = std::string("bad header: ") + kiln_status_message(status);
    kiln_status_destroy(status);
    return false;
  }
  if (expected != size - dataStart) {
    error = "size mismatch: the header says " + shapeText(shape) + " " +
            kiln_dtype_name(dtype) + ", which is " + std::to_string(expected) +
            " bytes of data, but the file has " + std::to_string(size - dataStart);
    return false;
  }
  if (!allocate(array, dtype, std::move(shape), error))
    return false;
  if (expected)
    std::memcpy(array.data.get(), bytes + dataStart, expected);
  out = std::move(array);
  return true;
}

bool encode(int32_t dtype, const std::vector<int64_t> &shape, const void *data,
            size_t byteSize, std::string &out, std::string &error) {
  const char *descr = descrOf(dtype);
  if (!descr) {
    const char *name = kiln_dtype_name(dtype);
    error = name ? std::string(name) + " cannot be stored in .npy (NumPy has no " +
                       name + " dtype)"
                 : "unknown dtype " + std::to_string(dtype);
    return false;
  }
  size_t expected = 0;
  kiln_status *status = kiln_byte_size(dtype, static_cast<int32_t>(shape.size()),
                                       shape.data(), &expected);
  if (status || expected != byteSize) {
    error = status ? kiln_status_message(status)
                   : "byte size " + std::to_string(byteSize) + " does not match " +
                         shapeText(shape) + " " + kiln_dtype_name(dtype);
    kiln_status_destroy(status);
    return false;
  }
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  if (!shape.empty())
    dict.append(kGrowthAxisDigits - std::to_string(shape[0]).size(), ' ');
  // Version 1.0 has a 2-byte length; numpy switches to 2.0 beyond it.
  size_t prefix = kMagicBytes + 2 + 2;
  size_t padded = dict.size() + 1;
  padded += kAlignment - (prefix + padded) % kAlignment;
  bool version2 = padded > 0xFFFF;
  if (version2) {
    prefix = kMagicBytes + 2 + 4;
    padded = dict.size() + 1;
    padded += kAlignment - (prefix + padded) % kAlignment;
  }
  out.assign(kMagic, kMagicBytes);
  out += static_cast<char>(version2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < (version2 ? 4u : 2u); ++i)
    out += static_cast<char>((padded >> (8 * i)) & 0xFF);
  out += dict;
  out.append(padded - dict.size() - 1, ' ');
  out += '\n';
  if (byteSize)
    out.append(static_cast<const char *>(data), byteSize);
  return true;
}

bool read(const std::string &path, Array &out, std::string &error) {
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    error = "'" + path + "': not a regular file";
    return false;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "'" + path + "': cannot open: " + std::strerror(errno);
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  if (file.bad()) {
    error = "'" + path + "': read error";
    return false;
  }
  if (!decode(bytes.data(), bytes.size(), out, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

bool write(const std::string &path, int32_t dtype,
           const std::vector<int64_t> &shape, const void *data, size_t byteSize,
           std::string &error) {
  std::string bytes;
  if (!encode(dtype, shape, data, byteSize, bytes, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file)
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (file)
    file.close();
  if (!file) {
    error = "'" + path + "': cannot write: " + std::strerror(errno);
    return false;
  }
  return true;
}

} // namespace kiln::npy
