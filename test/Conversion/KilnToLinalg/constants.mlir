// RUN: kiln-opt %s --convert-kiln-to-linalg | FileCheck %s

/// A bool resource blob (one byte per element, as ONNX stores it) becomes a
/// dense i1 constant, which LLVM translation can lay out.
// CHECK-LABEL: func @bool_blob
// CHECK: arith.constant dense<[true, false, false, true]> : tensor<4xi1>
func.func @bool_blob() -> tensor<4xi1> {
  %0 = kiln.constant dense_resource<mask> : tensor<4xi1>
  return %0 : tensor<4xi1>
}

{-#
  dialect_resources: {
    builtin: {
      mask: "0x0400000001000001"
    }
  }
#-}
