// RUN: kilnc %s --emit=graph | FileCheck %s
// RUN: kilnc %s --emit=graph --max-fold-bytes=16 | FileCheck %s --check-prefix=LIMIT
// RUN: not kilnc %s --emit=graph --max-fold-bytes=-1 2>&1 | FileCheck %s --check-prefix=BAD

/// --max-fold-bytes caps the constants the graph stage computes: the 24-byte
/// transpose folds by default (64 MiB) and stays an op under a 16-byte limit.

// CHECK-LABEL: func @transpose_constant
// CHECK-NEXT: kiln.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: kiln.transpose
// LIMIT-LABEL: func @transpose_constant
// LIMIT: kiln.transpose
// BAD: error: --max-fold-bytes=-1: expected a byte count >= 0
func.func @transpose_constant() -> tensor<3x2xf32> {
  %c = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = kiln.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}
