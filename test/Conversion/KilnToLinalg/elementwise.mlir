// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// Elementwise kiln ops become one linalg.generic each; broadcasting is in the maps.

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @add_broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>, %[[Y:.+]]: tensor<3xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[Y]] : tensor<2x3xf32>, tensor<3xf32>) outs(%[[INIT]] : tensor<2x3xf32>)
// CHECK: arith.addf
func.func @add_broadcast(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

/// A static size-1 dim against a bigger one reads index 0.
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-LABEL: func @stretch_unit_dim
// CHECK: linalg.generic {indexing_maps = [{{.*}}, #[[COL]], {{.*}}]
func.func @stretch_unit_dim(%x: tensor<4x5xf32>, %y: tensor<4x1xf32>) -> tensor<4x5xf32> {
  %0 = kiln.mul %x, %y : (tensor<4x5xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

/// Dynamic result dims come from the operands through tensor.dim.
// CHECK-LABEL: func @dynamic
// CHECK: %[[C0:.+]] = arith.constant 0 : index
// CHECK: %[[D:.+]] = tensor.dim %{{.*}}, %[[C0]] : tensor<?x8xf32>
// CHECK: tensor.empty(%[[D]]) : tensor<?x8xf32>
// CHECK: math.exp
func.func @dynamic(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = kiln.exp %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

/// sigmoid(x) = 1 / (1 + e^-x); relu(x) = max(x, 0); comparisons give i1.
// CHECK-LABEL: func @formulas
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: arith.maximumf
// CHECK: arith.cmpf olt
// CHECK: arith.select
func.func @formulas(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>) {
  %0 = kiln.sigmoid %x : tensor<4xf32>
  %1 = kiln.relu %x : tensor<4xf32>
  %2 = kiln.less %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %3 = kiln.select %2, %x, %1 : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>
}

// -----

/// Casts follow ONNX: float -> int truncates (fptosi), to bool is x != 0.
// CHECK-LABEL: func @casts
// CHECK: arith.fptosi
// CHECK: arith.cmpf une
// CHECK: arith.uitofp
func.func @casts(%x: tensor<4xf32>, %b: tensor<4xi1>) -> (tensor<4xi64>, tensor<4xi1>, tensor<4xf32>) {
  %0 = kiln.cast %x : tensor<4xf32> -> tensor<4xi64>
  %1 = kiln.cast %x : tensor<4xf32> -> tensor<4xi1>
  %2 = kiln.cast %b : tensor<4xi1> -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xi64>, tensor<4xi1>, tensor<4xf32>
}

// -----

/// Constants become arith.constant.
// CHECK-LABEL: func @constant
// CHECK: arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func @constant() -> tensor<2xf32> {
  %0 = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

/// Floored float mod: remf, then add the divisor when the signs differ; a
/// zero result takes the divisor's sign.
// CHECK-LABEL: func @mod_floored_float
// CHECK: %[[R:.+]] = arith.remf
// CHECK: arith.cmpf une, %[[R]]
// CHECK: %[[ADD:.+]] = arith.addf %[[R]]
// CHECK: %[[SEL:.+]] = arith.select %{{.+}}, %[[ADD]], %[[R]]
// CHECK: math.copysign %[[SEL]]
func.func @mod_floored_float(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.mod %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

/// Integer pow: square-and-multiply over the exponent's bits (31 steps for
/// i32), and the reciprocal's integer part for negative exponents.
// CHECK-LABEL: func @pow_int
// CHECK: linalg.generic
// CHECK-NOT: math.ipowi
// CHECK-COUNT-31: arith.shrui
// CHECK-NOT: arith.shrui
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: linalg.yield
func.func @pow_int(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.pow %x, %y : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
