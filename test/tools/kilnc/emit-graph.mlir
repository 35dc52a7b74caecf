// RUN: kilnc %s --emit=graph | FileCheck %s
// RUN: kilnc %s --emit=graph -v -o %t.mlir 2>&1 | FileCheck %s --check-prefix=VERBOSE
// RUN: FileCheck %s < %t.mlir
// RUN: kilnc %s --emit=import | FileCheck %s --check-prefix=IMPORT

/// --emit=graph folds shape plumbing and identities; --emit=import leaves them.

// CHECK-LABEL: func @mlp
// CHECK-NOT: kiln.shape
// CHECK-NOT: kiln.mul
// CHECK: kiln.reshape %{{.*}} : (tensor<1x4x1x1xf32>) -> tensor<1x4xf32>
// CHECK: kiln.gemm
// CHECK: kiln.relu
// IMPORT: kiln.shape
// IMPORT: kiln.mul
// VERBOSE: kilnc: import {{[0-9.]+}} ms
// VERBOSE: kilnc: graph {{[0-9.]+}} ms
func.func @mlp(%x: tensor<1x4x1x1xf32>) -> tensor<1x8xf32> {
  %s = kiln.shape %x {end = 2 : i64} : (tensor<1x4x1x1xf32>) -> tensor<2xi64>
  %flat = kiln.reshape %x, %s : (tensor<1x4x1x1xf32>, tensor<2xi64>) -> tensor<1x4xf32>
  %one = kiln.constant dense<1.0> : tensor<1x4xf32>
  %scaled = kiln.mul %flat, %one : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %w = kiln.constant dense<0.5> : tensor<8x4xf32>
  %b = kiln.constant dense<0.1> : tensor<8xf32>
  %y = kiln.gemm %scaled, %w, %b {trans_b = true} : (tensor<1x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %r = kiln.relu %y : tensor<1x8xf32>
  return %r : tensor<1x8xf32>
}
