//===- TensorLoader.h - ONNX tensors to MLIR attributes, safely --*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The one place that turns untrusted tensor bytes into attributes: element
// types, dims and byte counts (checked arithmetic), raw_data and the typed
// fields, and external data files, which must resolve inside the model's
// directory. Large tensors become dense_resource blobs that borrow the bytes
// (memory-mapped files, or the protobuf's own string) instead of copying.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_IMPORT_ONNX_TENSORLOADER_H
#define KILN_LIB_IMPORT_ONNX_TENSORLOADER_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace kiln::onnx_import {

/// The MLIR element type of an ONNX `TensorProto.DataType`, or null when Kiln
/// has no such type (strings, complex, 4-bit types, ...).
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t onnxType);

/// The ONNX spelling of a data type code ("FLOAT", "INT64", ...).
std::string elementTypeName(int32_t onnxType);

/// Tensors at most this large become `dense<...>` (they fold; shape math).
constexpr int64_t kMaxInlineElements = 16;

class TensorLoader {
public:
  TensorLoader(mlir::MLIRContext *context, llvm::StringRef modelDirectory,
               mlir::Location loc);
  ~TensorLoader();

  /// Converts `tensor`; `what` names it in messages ("initializer 'w'").
  /// May take ownership of the tensor's raw_data to avoid a copy.
  mlir::FailureOr<mlir::ElementsAttr> load(onnx::TensorProto &tensor,
                                           const llvm::Twine &what);

private:
  struct Bytes;
  mlir::FailureOr<Bytes> externalBytes(const onnx::TensorProto &tensor,
                                       uint64_t byteCount,
                                       const std::string &what);
  mlir::FailureOr<std::shared_ptr<llvm::MemoryBuffer>>
  openConfined(llvm::StringRef location, const std::string &what);

  mlir::MLIRContext *context;
  std::string directory;
  mlir::Location loc;
  llvm::StringMap<std::shared_ptr<llvm::MemoryBuffer>> files;
};

} // namespace kiln::onnx_import

#endif // KILN_LIB_IMPORT_ONNX_TENSORLOADER_H
