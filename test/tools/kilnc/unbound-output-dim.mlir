// RUN: not kilnc %s -o %t.so 2>&1 | FileCheck %s

/// An output dim that no input dim determines (here it comes from the values
/// of a shape tensor) cannot be sized by the runtime: a clean compile error.
// CHECK: error: output 'y' dim 0 ('rows') depends on tensor values, not on input shapes
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}, %s: tensor<2xi64> {kiln.name = "s"})
    -> (tensor<?x4xf32> {kiln.name = "y", kiln.dim_names = ["rows", ""]}) {
  %y = kiln.expand %x, %s : (tensor<4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
