// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// Two dynamic dims that a broadcast takes to be equal: the result size is
/// read from the first operand, the second is checked against it at run time
/// (the message names the op and the ONNX node).
// CHECK-LABEL: func @add_dynamic
// CHECK-DAG: %[[A:.+]] = tensor.dim %arg0, %c0
// CHECK-DAG: %[[B:.+]] = tensor.dim %arg1, %c0
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[B]], %[[A]] : index
// CHECK: call @kiln_check(%[[OK]], %[[B]], %[[A]]) {kiln.check_message = "dim mismatch in add '/embeddings/Add' (dim 0 of operand 1): {0} vs {1}"} : (i1, index, index) -> ()
// CHECK: linalg.generic
// CHECK: func.func private @kiln_check(i1, index, index)
func.func @add_dynamic(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = kiln.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> loc("/embeddings/Add")
  return %0 : tensor<?x4xf32>
}

// -----

/// A dynamic dim against a static result dim: checked against the constant.
/// A static 1 broadcasts and a rank-1 operand has no dim 0: neither is checked.
// CHECK-LABEL: func @add_dynamic_static
// CHECK: %[[D:.+]] = tensor.dim %arg0, %c0
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[D]], %c32
// CHECK: call @kiln_check(%[[OK]], %[[D]], %c32) {kiln.check_message = "dim mismatch in mul (dim 0 of operand 0): {0} vs {1}"}
// CHECK-NOT: call @kiln_check
// CHECK: linalg.generic
func.func @add_dynamic_static(%a: tensor<?x4xf32>, %b: tensor<32x4xf32>, %c: tensor<1x4xf32>) -> tensor<32x4xf32> {
  %0 = kiln.mul %a, %b : (tensor<?x4xf32>, tensor<32x4xf32>) -> tensor<32x4xf32>
  %1 = kiln.add %0, %c : (tensor<32x4xf32>, tensor<1x4xf32>) -> tensor<32x4xf32>
  return %1 : tensor<32x4xf32>
}

// -----

/// Static shapes: no check, and no declaration.
// CHECK-LABEL: func @add_static
// CHECK-NOT: kiln_check
func.func @add_static(%a: tensor<3x4xf32>, %b: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = kiln.add %a, %b : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

/// Matmul: the contraction dims, and non-broadcast batch dims.
// CHECK-LABEL: func @matmul_dynamic
// CHECK-DAG: %[[K1:.+]] = tensor.dim %arg0, %c2
// CHECK-DAG: %[[K2:.+]] = tensor.dim %arg1, %c1
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[K1]], %[[K2]]
// CHECK: call @kiln_check(%[[OK]], %[[K1]], %[[K2]]) {kiln.check_message = "dim mismatch in matmul (contraction dim): {0} vs {1}"}
// CHECK: call @kiln_check({{.*}}) {kiln.check_message = "dim mismatch in matmul (batch dim 0): {0} vs {1}"}
func.func @matmul_dynamic(%a: tensor<?x8x?xf32>, %b: tensor<?x?x16xf32>) -> tensor<?x8x16xf32> {
  %0 = kiln.matmul %a, %b : (tensor<?x8x?xf32>, tensor<?x?x16xf32>) -> tensor<?x8x16xf32>
  return %0 : tensor<?x8x16xf32>
}

// -----

/// Concat: every dim but the axis must be the result's.
// CHECK-LABEL: func @concat_dynamic
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[D1:.+]], %[[D0:.+]] : index
// CHECK: call @kiln_check(%[[OK]], %[[D1]], %[[D0]]) {kiln.check_message = "dim mismatch in concat (dim 0 of input 1): {0} vs {1}"}
// CHECK-NOT: kiln_check
// CHECK: tensor.empty(%[[D0]])
// CHECK: tensor.insert_slice
func.func @concat_dynamic(%a: tensor<?x4xf32>, %b: tensor<?x2xf32>) -> tensor<?x6xf32> {
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<?x4xf32>, tensor<?x2xf32>) -> tensor<?x6xf32>
  return %0 : tensor<?x6xf32>
}

// -----

/// Gather: indices in [-size, size), from one min/max reduction of them
/// (the gather clamps too, so a bad index never reads outside the table).
// CHECK-LABEL: func @gather_checked
// CHECK: %[[RANGE:.+]]:2 = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: %[[LOW:.+]] = tensor.extract %[[RANGE]]#0[]
// CHECK: %[[HIGH:.+]] = tensor.extract %[[RANGE]]#1[]
// CHECK: %[[LOWI:.+]] = arith.index_cast %[[LOW]] : i32 to index
// CHECK: %[[HIGHI:.+]] = arith.index_cast %[[HIGH]] : i32 to index
// CHECK: %[[NEG:.+]] = arith.subi %c0{{.*}}, %[[SIZE:.+]] : index
// CHECK: %[[OKHIGH:.+]] = arith.cmpi slt, %[[HIGHI]], %[[SIZE]]
// CHECK: call @kiln_check(%[[OKHIGH]], %[[HIGHI]], %[[SIZE]]) {kiln.check_message = "index {0} out of range [-{1}, {1}) in gather '/word/Gather'"}
// CHECK: %[[OKLOW:.+]] = arith.cmpi sge, %[[LOWI]], %[[NEG]]
// CHECK: call @kiln_check(%[[OKLOW]], %[[LOWI]], %[[SIZE]])
// CHECK: linalg.generic
func.func @gather_checked(%t: tensor<512x8xf32>, %i: tensor<2x3xi32>) -> tensor<2x3x8xf32> {
  %0 = kiln.gather %t, %i {axis = 0 : i64} : (tensor<512x8xf32>, tensor<2x3xi32>) -> tensor<2x3x8xf32> loc("/word/Gather")
  return %0 : tensor<2x3x8xf32>
}

// -----

/// Constant indices need no check.
// CHECK-LABEL: func @gather_constant
// CHECK-NOT: kiln_check
func.func @gather_constant(%t: tensor<512x8xf32>) -> tensor<2x8xf32> {
  %i = kiln.constant dense<[1, 7]> : tensor<2xi64>
  %0 = kiln.gather %t, %i {axis = 0 : i64} : (tensor<512x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
