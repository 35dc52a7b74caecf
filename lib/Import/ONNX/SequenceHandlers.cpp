//===- SequenceHandlers.cpp - ONNX sequences and optionals, resolved statically ===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#include "NodeBinder.h"

using namespace mlir;

namespace kiln::onnx_import {

void registerSequenceHandlers(HandlerRegistry &r) {}

} // namespace kiln::onnx_import
