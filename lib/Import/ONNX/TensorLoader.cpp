//===- TensorLoader.cpp - ONNX tensors to MLIR attributes, safely ---------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "TensorLoader.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <cstring>

using namespace mlir;
using onnx::TensorProto;

namespace kiln::onnx_import {

Type convertElementType(MLIRContext *context, int32_t onnxType) {
  Builder b(context);
  switch (onnxType) {
  case TensorProto::FLOAT: return b.getF32Type();
  case TensorProto::FLOAT16: return b.getF16Type();
  case TensorProto::BFLOAT16: return b.getBF16Type();
  case TensorProto::DOUBLE: return b.getF64Type();
  case TensorProto::BOOL: return b.getI1Type();
  case TensorProto::INT8: return b.getIntegerType(8);
  case TensorProto::INT16: return b.getIntegerType(16);
  case TensorProto::INT32: return b.getIntegerType(32);
  case TensorProto::INT64: return b.getIntegerType(64);
  case TensorProto::UINT8: return b.getIntegerType(8, /*isSigned=*/false);
  case TensorProto::UINT16: return b.getIntegerType(16, false);
  case TensorProto::UINT32: return b.getIntegerType(32, false);
  case TensorProto::UINT64: return b.getIntegerType(64, false);
  // The 8-bit floats (ONNX 1.14; the 1.12 schema has no names for them).
  case 17: return b.getType<Float8E4M3FNType>();
  case 18: return b.getType<Float8E4M3FNUZType>();
  case 19: return b.getType<Float8E5M2Type>();
  case 20: return b.getType<Float8E5M2FNUZType>();
  // The sub-byte types and E8M0 (ONNX 1.16-1.20): one byte per element in
  // memory (docs/onnx-import.md, "Element types").
  case 21: return b.getIntegerType(4, /*isSigned=*/false);
  case 22: return b.getIntegerType(4);
  case 23: return b.getType<Float4E2M1FNType>();
  case 24: return b.getType<Float8E8M0FNUType>();
  case 25: return b.getIntegerType(2, /*isSigned=*/false);
  case 26: return b.getIntegerType(2);
  default: return Type();
  }
}

std::string elementTypeName(int32_t onnxType) {
  static const char *const newer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",
      "INT4",         "FLOAT4E2M1",     "FLOAT8E8M0", "UINT2",          "INT2"};
  if (onnxType >= 17 && onnxType <= 26)
    return newer[onnxType - 17];
  if (TensorProto::DataType_IsValid(onnxType))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnxType));
  return "data type " + std::to_string(onnxType);
}

/// Bytes of one element in ONNX's (and Kiln's) storage: i1 takes a byte.
static unsigned storageBytes(Type type) {
  return std::max(1u, type.getIntOrFloatBitWidth() / 8);
}

/// Bits of one element in ONNX's packed storage when it packs several
/// elements into a byte (4-bit and 2-bit types, low bits first), else 0.
static unsigned packedBits(Type type) {
  unsigned width = type.getIntOrFloatBitWidth();
  return width > 1 && width < 8 ? width : 0;
}

/// ONNX's packed elements one per byte: each element's bits in the low bits
/// of its byte, the others zero (ml_dtypes' layout, and Kiln's).
static std::vector<char> unpackElements(ArrayRef<char> packed, unsigned bits,
                                        int64_t count) {
  std::vector<char> out(static_cast<size_t>(count));
  unsigned perByte = 8 / bits, mask = (1u << bits) - 1;
  for (int64_t i = 0; i < count; ++i) {
    auto byte = static_cast<unsigned char>(packed[i / perByte]);
    out[i] = static_cast<char>((byte >> (bits * (i % perByte))) & mask);
  }
  return out;
}

/// Bytes borrowed from somewhere that `keepAlive` keeps mapped or allocated.
struct TensorLoader::Bytes {
  ArrayRef<char> data;
  AsmResourceBlob::DeleterFn release;
};

TensorLoader::TensorLoader(MLIRContext *context, StringRef modelDirectory,
                           Location loc)
    : context(context), directory(modelDirectory.str()), loc(loc) {}
TensorLoader::~TensorLoader() = default;

//===----------------------------------------------------------------------===//
// External data: confined to the model directory
//===----------------------------------------------------------------------===//

FailureOr<std::shared_ptr<llvm::MemoryBuffer>>
TensorLoader::openConfined(StringRef location, const std::string &what) {
  // Escaped: the location is untrusted bytes (a NUL, control characters).
  std::string shown;
  llvm::raw_string_ostream(shown).write_escaped(location);
  auto fail = [&]() {
    return emitError(loc) << what << ": external data location '" << shown
                          << "' ";
  };
  if (location.empty())
    return fail() << "is empty";
  if (location.contains('\0'))
    return fail() << "contains a NUL byte";
  if (location.starts_with("/") || location.starts_with("\\") ||
      llvm::sys::path::is_absolute(location))
    return fail() << "is an absolute path; it must be relative to the model "
                     "directory";
  SmallVector<StringRef> parts;
  location.split(parts, '/');
  for (StringRef part : parts)
    for (StringRef piece : llvm::split(part, "\\"))
      if (piece == "..")
        return fail() << "contains '..'; it must stay inside the model "
                         "directory";
  SmallString<256> realDir, realFile, joined(directory);
  llvm::sys::path::append(joined, location);
  if (std::error_code ec = llvm::sys::fs::real_path(directory, realDir))
    return fail() << "cannot be resolved: " << ec.message();
  if (std::error_code ec = llvm::sys::fs::real_path(joined, realFile))
    return fail() << "cannot be opened: " << ec.message();
  // Symlinks are followed by real_path, so a link leaving the directory (to a
  // file or through a linked directory) shows up here.
  SmallString<256> prefix(realDir);
  prefix += llvm::sys::path::get_separator();
  if (!StringRef(realFile).starts_with(prefix))
    return fail() << "resolves to '" << realFile
                  << "', outside the model directory '" << realDir << "'";
  if (!llvm::sys::fs::is_regular_file(realFile))
    return fail() << "is not a regular file";
  auto cached = files.find(realFile);
  if (cached != files.end())
    return cached->second;
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(realFile, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail() << "cannot be opened: " << buffer.getError().message();
  std::shared_ptr<llvm::MemoryBuffer> shared = std::move(*buffer);
  files[realFile] = shared;
  return shared;
}

/// Parses an external_data number: decimal digits only, no sign, no overflow.
static std::optional<uint64_t> parseCount(StringRef text) {
  uint64_t value;
  if (text.empty() || !llvm::all_of(text, llvm::isDigit) ||
      text.getAsInteger(10, value))
    return std::nullopt;
  return value;
}

FailureOr<TensorLoader::Bytes>
TensorLoader::externalBytes(const TensorProto &tensor, uint64_t byteCount,
                            const std::string &what) {
  std::string location;
  std::optional<uint64_t> offset = 0, length;
  bool haveLocation = false;
  for (const onnx::StringStringEntryProto &entry : tensor.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      haveLocation = true;
    } else if (entry.key() == "offset" || entry.key() == "length") {
      std::optional<uint64_t> value = parseCount(entry.value());
      if (!value)
        return emitError(loc) << what << ": external data '" << entry.key()
                              << "' value '" << entry.value()
                              << "' is not a non-negative integer";
      (entry.key() == "offset" ? offset : length) = value;
    }
  }
  if (!haveLocation)
    return emitError(loc) << what << ": external data has no 'location'";
  FailureOr<std::shared_ptr<llvm::MemoryBuffer>> file =
      openConfined(location, what);
  if (failed(file))
    return failure();
  uint64_t size = (*file)->getBufferSize();
  if (length && *length != byteCount)
    return emitError(loc) << what << ": external data length " << *length
                          << " disagrees with the " << byteCount
                          << " bytes its type and dims need";
  // Written so that no sum can wrap: offset + byteCount <= size.
  if (byteCount > size || *offset > size - byteCount)
    return emitError(loc) << what << ": external data bytes [" << *offset
                          << ", " << *offset << " + " << byteCount
                          << ") are past the end of '" << location << "' ("
                          << size << " bytes)";
  std::shared_ptr<llvm::MemoryBuffer> keep = *file;
  return Bytes{ArrayRef<char>((*file)->getBufferStart() + *offset, byteCount),
               [keep](void *, size_t, size_t) mutable { keep.reset(); }};
}

//===----------------------------------------------------------------------===//
// Typed fields
//===----------------------------------------------------------------------===//

/// Copies a typed repeated field into little-endian storage of `width` bytes.
template <typename Field>
static void appendValues(const Field &field, unsigned width,
                         std::vector<char> &out) {
  for (auto value : field) {
    uint64_t bits;
    if constexpr (std::is_same_v<decltype(value), float>) {
      uint32_t b32;
      std::memcpy(&b32, &value, 4);
      bits = b32;
    } else if constexpr (std::is_same_v<decltype(value), double>) {
      std::memcpy(&bits, &value, 8);
    } else {
      bits = static_cast<uint64_t>(value);
    }
    char bytes[8];
    std::memcpy(bytes, &bits, 8); // hosts are little-endian, like ONNX
    out.insert(out.end(), bytes, bytes + width);
  }
}

/// The typed field that holds `dataType`, as (name, count, copy function).
static LogicalResult typedBytes(const TensorProto &t, Type type, int64_t count,
                                Location loc, const std::string &what,
                                std::vector<char> &out) {
  unsigned width = storageBytes(type);
  int size;
  const char *field;
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    size = t.float_data_size(), field = "float_data";
    break;
  case TensorProto::DOUBLE:
    size = t.double_data_size(), field = "double_data";
    break;
  case TensorProto::INT64:
    size = t.int64_data_size(), field = "int64_data";
    break;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    size = t.uint64_data_size(), field = "uint64_data";
    break;
  default:
    size = t.int32_data_size(), field = "int32_data";
    break;
  }
  if (size != count)
    return emitError(loc) << what << ": has " << size << " values in " << field
                          << ", expected " << count << " (the product of its dims)";
  out.reserve(static_cast<size_t>(count) * width);
  switch (t.data_type()) {
  case TensorProto::FLOAT: appendValues(t.float_data(), width, out); break;
  case TensorProto::DOUBLE: appendValues(t.double_data(), width, out); break;
  case TensorProto::INT64: appendValues(t.int64_data(), width, out); break;
  case TensorProto::UINT32:
  case TensorProto::UINT64: appendValues(t.uint64_data(), width, out); break;
  default: appendValues(t.int32_data(), width, out); break;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

static std::string blobName(StringRef name) {
  std::string result;
  for (char c : name)
    result += (llvm::isAlnum(c) || c == '_' || c == '.') ? c : '_';
  return result.empty() ? "tensor" : result;
}

static ElementsAttr denseAttr(RankedTensorType type, ArrayRef<char> data) {
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits;
    for (char c : data)
      bits.push_back(c != 0);
    return DenseElementsAttr::get(type, bits);
  }
  return DenseElementsAttr::getFromRawBuffer(type, data);
}

FailureOr<ElementsAttr> TensorLoader::load(TensorProto &tensor,
                                           const llvm::Twine &whatTwine) {
  std::string what = whatTwine.str();
  Type elementType = convertElementType(context, tensor.data_type());
  if (!elementType)
    return emitError(loc) << what << ": element type "
                          << elementTypeName(tensor.data_type())
                          << " is not supported";

  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (auto [i, dim] : llvm::enumerate(tensor.dims())) {
    if (dim < 0)
      return emitError(loc) << what << ": dim " << i << " is " << dim
                            << ", accepted range is [0, inf)";
    if (llvm::MulOverflow(count, static_cast<int64_t>(dim), count))
      return emitError(loc) << what << ": element count overflows int64";
    dims.push_back(dim);
  }
  int64_t byteCount;
  if (llvm::MulOverflow(count, static_cast<int64_t>(storageBytes(elementType)),
                        byteCount))
    return emitError(loc) << what << ": byte count overflows int64";
  // Sub-byte types are packed in the file: ceil(count / elements per byte).
  unsigned bits = packedBits(elementType);
  if (bits)
    byteCount = count / (8 / bits) + (count % (8 / bits) != 0);
  auto type = RankedTensorType::get(dims, elementType);

  Bytes bytes;
  std::vector<char> converted;
  if (tensor.data_location() == TensorProto::EXTERNAL) {
    FailureOr<Bytes> external = externalBytes(tensor, byteCount, what);
    if (failed(external))
      return failure();
    bytes = std::move(*external);
  } else if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != static_cast<uint64_t>(byteCount))
      return emitError(loc) << what << ": raw_data has "
                            << tensor.raw_data().size() << " bytes, expected "
                            << byteCount << " (" << count << " x "
                            << elementType
                            << (bits ? ", packed " + std::to_string(8 / bits) + " per byte"
                                     : std::string())
                            << ")";
    // Take the string out of the message: the blob then owns it, no copy.
    std::string *owned = tensor.release_raw_data();
    bytes.data = ArrayRef<char>(owned->data(), owned->size());
    bytes.release = [owned](void *, size_t, size_t) { delete owned; };
  } else {
    // int32_data holds one packed byte per value for the sub-byte types.
    if (failed(typedBytes(tensor, elementType, bits ? byteCount : count, loc, what,
                          converted)))
      return failure();
    bytes.data = converted;
  }
  if (bits) {
    std::vector<char> unpacked = unpackElements(bytes.data, bits, count);
    if (bytes.release)
      bytes.release(nullptr, 0, 0);
    bytes.release = nullptr;
    converted = std::move(unpacked);
    bytes.data = converted;
  }

  if (count <= kMaxInlineElements) {
    ElementsAttr attr = denseAttr(type, bytes.data);
    if (bytes.release)
      bytes.release(nullptr, 0, 0);
    return attr;
  }
  size_t align = storageBytes(elementType);
  bool misaligned = reinterpret_cast<uintptr_t>(bytes.data.data()) % align != 0;
  AsmResourceBlob blob;
  if (!bytes.release || misaligned || elementType.isInteger(1)) {
    blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes.data, align);
    if (elementType.isInteger(1))
      for (char &c : blob.getMutableData())
        c = c != 0;
    if (bytes.release)
      bytes.release(nullptr, 0, 0);
  } else {
    blob = UnmanagedAsmResourceBlob::allocateWithAlign(
        bytes.data, align, std::move(bytes.release));
  }
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, blobName(tensor.name()), std::move(blob)));
}

} // namespace kiln::onnx_import
