// RUN: kiln-opt %s --kiln-graph-pipeline | FileCheck %s

/// The graph pipeline canonicalizes, then CSEs what canonicalization made equal.

// CHECK-LABEL: func @cse_after_fold
// CHECK-COUNT-1: kiln.exp
// CHECK-NOT: kiln.exp
func.func @cse_after_fold(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %zero = kiln.constant dense<0.0> : tensor<4xf32>
  %y = kiln.add %x, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %0 = kiln.exp %x : tensor<4xf32>
  %1 = kiln.exp %y : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
