//===- ShapeFolding.h - Import-time evaluation of small integer ops -*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===--------------------------------------------------------------------------===//
//
// Exporters compute shapes with chains of Shape, Gather, Unsqueeze, Concat,
// arithmetic and Where. When the input shapes are static (declared, or fixed
// with --input-shape), those chains are integer arithmetic on a few values;
// evaluating them while importing lets Reshape, Expand and friends see
// constant shapes and get static result types.
//
//===--------------------------------------------------------------------------===//

#ifndef KILN_LIB_IMPORT_ONNX_SHAPEFOLDING_H
#define KILN_LIB_IMPORT_ONNX_SHAPEFOLDING_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

namespace kiln::onnx_import {

/// The value of `op`'s single result when it is a kiln op on small integer
/// (or boolean) constants that this evaluator knows; null otherwise.
mlir::DenseElementsAttr evaluateIntegerOp(mlir::Operation *op);

} // namespace kiln::onnx_import

#endif // KILN_LIB_IMPORT_ONNX_SHAPEFOLDING_H
