// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file -verify-diagnostics | FileCheck %s

/// top_k: ranks along the axis (a reduction over j), then position p takes
/// the element of rank p (a reduction over i with two results).
// CHECK-DAG: #[[OUTER:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ALONG:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func @top_k
// CHECK: %[[RANKS:.+]] = linalg.generic {indexing_maps = [#[[OUTER]], #[[ALONG]], #[[OUTER]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.*}} : tensor<3x4xi64>)
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpi ult
// CHECK: %{{.*}}:2 = linalg.generic {indexing_maps = [#[[ALONG]], #[[ALONG]], #[[OUTER]], #[[OUTER]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}}, %[[RANKS]] : tensor<3x4xf32>, tensor<3x4xi64>)
// CHECK-SAME: outs(%{{.*}}, %{{.*}} : tensor<3x2xf32>, tensor<3x2xi64>)
func.func @top_k(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = kiln.top_k %x {k = 2 : i64, axis = -1 : i64} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

/// Smallest of unsigned integers compares unsigned.
// CHECK-LABEL: func @top_k_smallest_unsigned
// CHECK: arith.cmpi ult, %{{.*}}, %{{.*}} : i64
// CHECK: arith.cmpi eq
func.func @top_k_smallest_unsigned(%x: tensor<5xui64>) -> (tensor<3xui64>, tensor<3xi64>) {
  %v, %i = kiln.top_k %x {k = 3 : i64, axis = 0 : i64, largest = false} : (tensor<5xui64>) -> (tensor<3xui64>, tensor<3xi64>)
  return %v, %i : tensor<3xui64>, tensor<3xi64>
}

// -----

func.func @top_k_dynamic(%x: tensor<?xf32>) -> (tensor<1xf32>, tensor<1xi64>) {
  // expected-error @+1 {{(kiln.top_k): cannot lower to linalg with operand types (tensor<?xf32>) and result types (tensor<1xf32>, tensor<1xi64>): unsupported: dynamic shapes (dynamic: operand 0 dims 0)}}
  %v, %i = kiln.top_k %x {k = 1 : i64, axis = 0 : i64} : (tensor<?xf32>) -> (tensor<1xf32>, tensor<1xi64>)
  return %v, %i : tensor<1xf32>, tensor<1xi64>
}

// -----

/// scatter_elements: the output starts as the input and a reduction dim walks
/// the updates' axis; rows past the updates' extent off the axis are skipped.
// CHECK-LABEL: func @scatter_add
// CHECK-SAME: (%[[X:.+]]: tensor<3x3xf32>, %[[I:.+]]: tensor<2x3xi64>, %[[U:.+]]: tensor<2x3xf32>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: outs(%[[X]] : tensor<3x3xf32>)
// CHECK: %[[IDX:.+]] = tensor.extract %[[I]]
// CHECK: arith.cmpi slt, %[[IDX]]
// CHECK: arith.cmpi eq
// CHECK: %[[UPD:.+]] = tensor.extract %[[U]]
// CHECK: %[[SUM:.+]] = arith.addf %{{.*}}, %[[UPD]] : f32
// CHECK: arith.select %{{.*}}, %[[SUM]], %{{.*}} : f32
func.func @scatter_add(%x: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = kiln.scatter_elements add %x, %i, %u {axis = 1 : i64} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @scatter_unsigned_max(%x: tensor<3xui8>, %i: tensor<2xi64>, %u: tensor<2xui8>) -> tensor<3xui8> {
  // expected-error @+1 {{(kiln.scatter_elements): cannot lower to linalg with operand types (tensor<3xui8>, tensor<2xi64>, tensor<2xui8>) and result types (tensor<3xui8>): unsupported: unsigned max/min scatter}}
  %0 = kiln.scatter_elements max %x, %i, %u {axis = 0 : i64} : (tensor<3xui8>, tensor<2xi64>, tensor<2xui8>) -> tensor<3xui8>
  return %0 : tensor<3xui8>
}
