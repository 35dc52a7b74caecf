//===- FusionReport.h - What the dispatch stage made of a model -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===----------------------------------------------------------------------===//

#ifndef KILN_DISPATCH_FUSIONREPORT_H
#define KILN_DISPATCH_FUSIONREPORT_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln {

/// Prints one line (or JSON object) per dispatch of `module` after the
/// dispatch stage: one per `kiln.dispatch` region (its first linalg op or
/// attention kernel the root, the others fused into it; a kernel op
/// outside every region is one of its own). For each: its
/// kind (contraction, convolution, pooling, reduction, elementwise, data
/// movement, row kernel), the op and the ops fused into it with their operand and
/// result shapes, and the source nodes (ONNX node names from the fused
/// locations) it covers.
void printFusionReport(mlir::ModuleOp module, llvm::raw_ostream &os, bool json);

/// The kind of kernel `op` is: contraction, convolution, pooling,
/// reduction, elementwise or data movement.
std::string dispatchKind(mlir::linalg::LinalgOp op);

/// The source (ONNX node) names behind `loc`, in order, without repeats.
std::vector<std::string> sourceNodeNames(mlir::Location loc);

} // namespace kiln

#endif // KILN_DISPATCH_FUSIONREPORT_H
