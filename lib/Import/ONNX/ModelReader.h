//===- ModelReader.h - Stage one: read and validate an ONNX file -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//
//
// The thin protobuf layer: parses the file, checks the IR version and the
// imported opsets, that every value is defined exactly once, and orders the
// nodes topologically. It knows nothing about individual ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_LIB_IMPORT_ONNX_MODELREADER_H
#define KILN_LIB_IMPORT_ONNX_MODELREADER_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
class NodeProto;
} // namespace onnx

namespace kiln::onnx_import {

/// A parsed model whose graph structure has been checked.
struct ModelFile {
  ModelFile();
  ModelFile(ModelFile &&);
  ~ModelFile();

  std::string path;
  /// Directory holding the model: external data must stay inside it.
  std::string directory;
  std::unique_ptr<onnx::ModelProto> proto;
  /// The ai.onnx opset version (0 when the model imports only other
  /// supported domains).
  int64_t opset = 0;
  /// Every imported domain (ai.onnx as "") and its version.
  llvm::StringMap<int64_t> domains;
  /// Nodes in a topological order (producers before consumers).
  std::vector<const onnx::NodeProto *> order;
  /// Index of each node in the graph, for naming unnamed nodes.
  llvm::DenseMap<const onnx::NodeProto *, size_t> nodeIndex;
};

/// Reads `path`; emits one error at `fileLoc` and fails on the first problem.
mlir::FailureOr<ModelFile> readModel(llvm::StringRef path, mlir::Location fileLoc);

/// "node 'name' (Op" or "node #3 (Op" for unnamed nodes, plus the domain when
/// it is not ai.onnx; callers close the parenthesis.
std::string describeNode(const onnx::NodeProto &node, size_t index);

/// Domain name with ai.onnx spelled as "" (its canonical form in the reader).
llvm::StringRef canonicalDomain(llvm::StringRef domain);

/// The domains besides ai.onnx that have handlers, with the opset versions
/// the reader accepts for them. A model must import ai.onnx or one of these.
struct OtherDomain {
  llvm::StringLiteral name;
  int64_t minVersion, maxVersion;
};
inline constexpr OtherDomain kOtherDomains[] = {
    {"ai.onnx.ml", 1, 5},                 // Binarizer, ArrayFeatureExtractor, TreeEnsemble
    {"ai.onnx.preview.training", 1, 1},   // Adagrad, Adam, Momentum
    {"com.microsoft", 1, 1}};             // onnxruntime's LLM contrib ops

} // namespace kiln::onnx_import

#endif // KILN_LIB_IMPORT_ONNX_MODELREADER_H
