//===- OpTypeSupport.h - One op type of a model and whether it imports -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===------------------------------------------------------------------------===//
//
// Plain C++ (no LLVM types): the Python bindings read it without LLVM headers.
//
//===------------------------------------------------------------------------===//

#ifndef KILN_IMPORT_ONNX_OPTYPESUPPORT_H
#define KILN_IMPORT_ONNX_OPTYPESUPPORT_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::onnx_import {

/// One op type of a model, as checkModel reports it.
struct OpTypeSupport {
  std::string domain, opType;
  int64_t count = 0;
  /// Empty when the importer supports the op type; otherwise why not.
  std::string why;
  /// For an unsupported type, its nodes in model order as the importer's
  /// errors name them: `'name'`, `#index` when unnamed, `(in a body)`.
  std::vector<std::string> nodes;
};

} // namespace kiln::onnx_import

#endif // KILN_IMPORT_ONNX_OPTYPESUPPORT_H
