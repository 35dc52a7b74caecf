//===- ModelReader.cpp - Stage one: read and validate an ONNX file --------===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "ModelReader.h"

#include "kiln/Import/ONNX/ONNXImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <deque>

using namespace mlir;

namespace kiln::onnx_import {

ModelFile::ModelFile() = default;
ModelFile::ModelFile(ModelFile &&) = default;
ModelFile::~ModelFile() = default;

static constexpr int64_t kMinIRVersion = 3;

llvm::StringRef canonicalDomain(llvm::StringRef domain) {
  return domain == "ai.onnx" ? llvm::StringRef() : domain;
}

std::string describeNode(const onnx::NodeProto &node, size_t index) {
  std::string text = node.name().empty()
                         ? "node #" + std::to_string(index)
                         : "node '" + node.name() + "'";
  text += " (" + node.op_type();
  if (!canonicalDomain(node.domain()).empty())
    text += ", domain '" + node.domain() + "'";
  return text;
}

/// Silences protobuf's own logging (it would print to stderr on bad input);
/// the reader reports every problem itself.
namespace {
struct QuietProtobufLog {
  QuietProtobufLog() : previous(google::protobuf::SetLogHandler(nullptr)) {}
  ~QuietProtobufLog() { google::protobuf::SetLogHandler(previous); }
  google::protobuf::LogHandler *previous;
};
} // namespace

static LogicalResult parseFile(StringRef path, Location loc,
                               onnx::ModelProto &model) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file)
    return emitError(loc) << "cannot open input file '" << path
                          << "': " << file.getError().message();
  llvm::StringRef bytes = (*file)->getBuffer();
  if (bytes.empty())
    return emitError(loc) << "file is empty, not an ONNX model";
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return emitError(loc) << "file is " << bytes.size()
                          << " bytes; an ONNX protobuf is limited to 2 GiB "
                             "(keep weights in external data)";
  QuietProtobufLog quiet;
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()),
      static_cast<int>(bytes.size()));
  stream.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return emitError(loc) << "not a valid ONNX model: the protobuf does not "
                             "parse (truncated or malformed file)";
  return success();
}

static LogicalResult checkVersions(const onnx::ModelProto &model, Location loc,
                                   ModelFile &result) {
  int64_t ir = model.ir_version();
  if (ir < kMinIRVersion || ir > kMaxIRVersion)
    return emitError(loc) << "ir_version " << ir
                          << " is not supported, accepted range is ["
                          << kMinIRVersion << ", " << kMaxIRVersion << "]";
  for (const onnx::OperatorSetIdProto &entry : model.opset_import()) {
    StringRef domain = canonicalDomain(entry.domain());
    if (!result.domains.try_emplace(domain, entry.version()).second)
      return emitError(loc) << "opset_import lists domain '"
                            << (domain.empty() ? "ai.onnx" : domain)
                            << "' twice";
  }
  bool other = false;
  for (const OtherDomain &domain : kOtherDomains) {
    auto found = result.domains.find(domain.name);
    if (found == result.domains.end())
      continue;
    other = true;
    if (found->second < domain.minVersion || found->second > domain.maxVersion)
      return emitError(loc) << domain.name << " opset " << found->second
                            << " is not supported, accepted range is ["
                            << domain.minVersion << ", " << domain.maxVersion
                            << "]";
  }
  auto it = result.domains.find("");
  if (it == result.domains.end()) {
    if (!other)
      return emitError(loc) << "the model imports no ai.onnx opset (nor "
                               "ai.onnx.ml, ai.onnx.preview.training or "
                               "com.microsoft)";
  } else {
    result.opset = it->second;
    if (result.opset < kMinOpsetVersion || result.opset > kMaxOpsetVersion)
      return emitError(loc) << "ai.onnx opset " << result.opset
                            << " is not supported, accepted range is ["
                            << kMinOpsetVersion << ", " << kMaxOpsetVersion
                            << "]";
  }
  if (!model.has_graph())
    return emitError(loc) << "the model has no graph";
  return success();
}

namespace {
/// Who defines each value name: a graph input, an initializer or a node.
struct Definitions {
  llvm::StringMap<std::string> definer;      // name -> description
  llvm::StringMap<const onnx::NodeProto *> producer;
};
} // namespace

static LogicalResult collectDefinitions(const ModelFile &file, Location loc,
                                        Definitions &defs) {
  const onnx::GraphProto &graph = file.proto->graph();
  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &init : graph.initializer()) {
    if (init.name().empty())
      return emitError(loc) << "an initializer has no name";
    if (!initializers.insert(init.name()).second)
      return emitError(loc) << "value '" << init.name()
                            << "' is defined twice: by two initializers";
    defs.definer[init.name()] = "an initializer";
  }
  llvm::StringSet<> inputs;
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (input.name().empty())
      return emitError(loc) << "a graph input has no name";
    if (!inputs.insert(input.name()).second)
      return emitError(loc) << "value '" << input.name()
                            << "' is defined twice: by two graph inputs";
    // An initializer may give a graph input its default (IR < 4 requires it).
    defs.definer.try_emplace(input.name(), "a graph input");
  }
  for (const onnx::NodeProto &node : graph.node()) {
    std::string self = describeNode(node, file.nodeIndex.lookup(&node)) + ")";
    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      auto [it, inserted] = defs.definer.try_emplace(output, self);
      if (!inserted)
        return emitError(loc) << "value '" << output
                              << "' is defined twice: by " << it->second
                              << " and by " << self;
      defs.producer[output] = &node;
    }
  }
  return success();
}

static LogicalResult checkUses(const ModelFile &file, Location loc,
                               const Definitions &defs) {
  const onnx::GraphProto &graph = file.proto->graph();
  for (const onnx::NodeProto &node : graph.node())
    if (!file.domains.count(canonicalDomain(node.domain())))
      return emitError(loc)
             << describeNode(node, file.nodeIndex.lookup(&node))
             << "): domain '" << node.domain()
             << "' is not in the model's opset_import";
  for (const onnx::NodeProto &node : graph.node())
    for (auto [i, input] : llvm::enumerate(node.input()))
      if (!input.empty() && !defs.definer.count(input))
        return emitError(loc)
               << describeNode(node, file.nodeIndex.lookup(&node)) << "): input "
               << i << " '" << input
               << "' is not defined by any node, graph input or initializer";
  for (const onnx::ValueInfoProto &output : graph.output())
    if (!defs.definer.count(output.name()))
      return emitError(loc) << "graph output '" << output.name()
                            << "' is not defined by any node, graph input or "
                               "initializer";
  if (graph.output_size() == 0)
    return emitError(loc) << "the graph has no outputs";
  return success();
}

/// Calls `fn` on every name the graphs held by `node`'s attributes read from
/// enclosing graphs, at any depth: the names their nodes and outputs read
/// minus those each graph defines itself (inputs, initializers, outputs of
/// its nodes).
static void forEachBodyInput(const onnx::NodeProto &node,
                             llvm::function_ref<void(const std::string &)> fn) {
  auto visitGraph = [&](const onnx::GraphProto &graph) {
    llvm::StringSet<> local;
    for (const onnx::ValueInfoProto &input : graph.input())
      local.insert(input.name());
    for (const onnx::TensorProto &init : graph.initializer())
      local.insert(init.name());
    for (const onnx::NodeProto &inner : graph.node())
      for (const std::string &output : inner.output())
        local.insert(output);
    auto outer = [&](const std::string &name) {
      if (!name.empty() && !local.contains(name))
        fn(name);
    };
    for (const onnx::NodeProto &inner : graph.node()) {
      for (const std::string &input : inner.input())
        outer(input);
      forEachBodyInput(inner, outer);
    }
    for (const onnx::ValueInfoProto &output : graph.output())
      outer(output.name());
  };
  for (const onnx::AttributeProto &attr : node.attribute()) {
    if (attr.has_g())
      visitGraph(attr.g());
    for (const onnx::GraphProto &graph : attr.graphs())
      visitGraph(graph);
  }
}

/// Kahn's algorithm, keeping the file order among ready nodes so that the
/// imported IR follows the model's own order when it is already sorted.
static LogicalResult sortNodes(ModelFile &file, Location loc,
                               const Definitions &defs) {
  const onnx::GraphProto &graph = file.proto->graph();
  llvm::DenseMap<const onnx::NodeProto *, unsigned> pending;
  llvm::DenseMap<const onnx::NodeProto *, std::vector<const onnx::NodeProto *>>
      consumers;
  std::deque<const onnx::NodeProto *> ready;
  for (const onnx::NodeProto &node : graph.node()) {
    unsigned count = 0;
    // A body reads outer values implicitly: they order the node too.
    llvm::SmallPtrSet<const onnx::NodeProto *, 4> bodyProducers;
    forEachBodyInput(node, [&](const std::string &input) {
      if (const onnx::NodeProto *producer = defs.producer.lookup(input))
        bodyProducers.insert(producer);
    });
    for (const std::string &input : node.input()) {
      const onnx::NodeProto *producer = defs.producer.lookup(input);
      if (input.empty() || !producer)
        continue;
      bodyProducers.erase(producer);
      consumers[producer].push_back(&node);
      ++count;
    }
    for (const onnx::NodeProto *producer : bodyProducers) {
      consumers[producer].push_back(&node);
      ++count;
    }
    pending[&node] = count;
    if (count == 0)
      ready.push_back(&node);
  }
  while (!ready.empty()) {
    const onnx::NodeProto *node = ready.front();
    ready.pop_front();
    file.order.push_back(node);
    for (const onnx::NodeProto *consumer : consumers.lookup(node))
      if (--pending[consumer] == 0)
        ready.push_back(consumer);
  }
  if (file.order.size() == static_cast<size_t>(graph.node_size()))
    return success();
  InFlightDiagnostic diag = emitError(loc) << "the graph has a cycle through ";
  int listed = 0;
  for (const onnx::NodeProto &node : graph.node()) {
    if (pending[&node] == 0)
      continue;
    if (listed++ == 8) {
      diag << ", ...";
      break;
    }
    diag << (listed > 1 ? ", " : "")
         << describeNode(node, file.nodeIndex.lookup(&node)) << ")";
  }
  return diag;
}

FailureOr<ModelFile> readModel(StringRef path, Location fileLoc) {
  ModelFile file;
  file.path = path.str();
  file.proto = std::make_unique<onnx::ModelProto>();
  if (failed(parseFile(path, fileLoc, *file.proto)) ||
      failed(checkVersions(*file.proto, fileLoc, file)))
    return failure();
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  if (directory.empty())
    directory = ".";
  file.directory = directory.str().str();
  const onnx::GraphProto &graph = file.proto->graph();
  for (auto [i, node] : llvm::enumerate(graph.node()))
    file.nodeIndex[&node] = i;
  Definitions defs;
  if (failed(collectDefinitions(file, fileLoc, defs)) ||
      failed(checkUses(file, fileLoc, defs)) ||
      failed(sortNodes(file, fileLoc, defs)))
    return failure();
  return file;
}

} // namespace kiln::onnx_import
