// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-split-fills))" | FileCheck %s

/// A fill with several users (merged by CSE) is cloned, with its
/// tensor.empty, right before each user; the shared one is gone.
// CHECK-LABEL: func @shared_fill
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[F0:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[F0]] : tensor<4x8xf32>)
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[F1:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg2 : {{.*}}) outs(%[[F1]] : tensor<4x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @shared_fill(%a: tensor<4x2xf32>, %b: tensor<2x8xf32>, %c: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x = linalg.matmul ins(%a, %b : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %c : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A fill with one user, and a fill of a function argument (no tensor.empty
/// to clone; the argument is shared), each as it is / cloned without it.
// CHECK-LABEL: func @single_and_argument
// CHECK: %[[ONE:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%arg1 : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[ONE]]
// CHECK-NEXT: %[[TWO:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%arg1 : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[TWO]]
// CHECK-LABEL: func @single_fill
// CHECK: tensor.empty
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.matmul
func.func @single_and_argument(%a: tensor<4x2xf32>, %init: tensor<4x8xf32>, %b: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x = linalg.matmul ins(%a, %b : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @single_fill(%a: tensor<4x2xf32>, %b: tensor<2x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x = linalg.matmul ins(%a, %b : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}
