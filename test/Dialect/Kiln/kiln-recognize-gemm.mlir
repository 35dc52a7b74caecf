// RUN: kiln-opt %s --kiln-recognize-gemm --split-input-file | FileCheck %s

/// 2-D product plus a row bias, either operand order.
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[A:.+]]: tensor<4x8xf32>, %[[B:.+]]: tensor<8x16xf32>, %[[C:.+]]: tensor<16xf32>)
// CHECK-NEXT: %[[G:.+]] = kiln.gemm %[[A]], %[[B]], %[[C]] : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[G]]
func.func @linear(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf32>) -> tensor<4x16xf32> {
  %m = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y = kiln.add %c, %m : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

/// The TorchScript exporter's [batch, seq, hidden] x [hidden, out] + [out]:
/// the leading dims fold into the rows.
// CHECK-LABEL: func @sequence
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x8xf32>, %[[B:.+]]: tensor<8x16xf32>, %[[C:.+]]: tensor<1x1x16xf32>)
// CHECK-DAG: %[[C1:.+]] = kiln.reshape %[[C]] : (tensor<1x1x16xf32>) -> tensor<16xf32>
// CHECK-DAG: %[[A2:.+]] = kiln.reshape %[[A]] : (tensor<2x3x8xf32>) -> tensor<6x8xf32>
// CHECK: %[[G:.+]] = kiln.gemm %[[A2]], %[[B]], %[[C1]] : (tensor<6x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<6x16xf32>
// CHECK: %[[Y:.+]] = kiln.reshape %[[G]] : (tensor<6x16xf32>) -> tensor<2x3x16xf32>
// CHECK: return %[[Y]]
func.func @sequence(%a: tensor<2x3x8xf32>, %b: tensor<8x16xf32>, %c: tensor<1x1x16xf32>) -> tensor<2x3x16xf32> {
  %m = kiln.matmul %a, %b : (tensor<2x3x8xf32>, tensor<8x16xf32>) -> tensor<2x3x16xf32>
  %y = kiln.add %m, %c : (tensor<2x3x16xf32>, tensor<1x1x16xf32>) -> tensor<2x3x16xf32>
  return %y : tensor<2x3x16xf32>
}

// -----

/// Not a bias: a full [M, N] addend, a bias that widens the result, a
/// product used elsewhere, a batched B, or dynamic leading dims.
// CHECK-LABEL: func @not_gemm
// CHECK-NOT: kiln.gemm
func.func @not_gemm(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %full: tensor<4x16xf32>,
                    %wide: tensor<2x4x16xf32>, %a3: tensor<2x4x8xf32>, %b3: tensor<2x8x16xf32>,
                    %c: tensor<16xf32>, %ad: tensor<?x3x8xf32>)
    -> (tensor<4x16xf32>, tensor<2x4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x16xf32>, tensor<?x3x16xf32>) {
  %m1 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y1 = kiln.add %m1, %full : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  %m2 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y2 = kiln.add %m2, %wide : (tensor<4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %m3 = kiln.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y3 = kiln.add %m3, %c : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %m4 = kiln.matmul %a3, %b3 : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
  %y4 = kiln.add %m4, %c : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
  %m5 = kiln.matmul %ad, %b : (tensor<?x3x8xf32>, tensor<8x16xf32>) -> tensor<?x3x16xf32>
  %y5 = kiln.add %m5, %c : (tensor<?x3x16xf32>, tensor<16xf32>) -> tensor<?x3x16xf32>
  return %y1, %y2, %y3, %m3, %y4, %y5 : tensor<4x16xf32>, tensor<2x4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>, tensor<2x4x16xf32>, tensor<?x3x16xf32>
}
