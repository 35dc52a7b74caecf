//===- DynamicSlice.h - ONNX Slice with bounds computed by the graph -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===---------------------------------------------------------------------------===//

#ifndef KILN_LIB_IMPORT_ONNX_DYNAMICSLICE_H
#define KILN_LIB_IMPORT_ONNX_DYNAMICSLICE_H

#include "NodeBinder.h"

namespace kiln::onnx_import {

/// True when the Slice node's 'starts' or 'ends' input is not a constant.
bool hasComputedSliceBounds(NodeBinder &b);

/// Slice with computed bounds (constant axes, positive constant steps) as
/// kiln.range positions and a kiln.gather per axis; the sliced dims are
/// dynamic.
mlir::LogicalResult importDynamicSlice(NodeBinder &b);

} // namespace kiln::onnx_import

#endif // KILN_LIB_IMPORT_ONNX_DYNAMICSLICE_H
