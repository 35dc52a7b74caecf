// RUN: kiln-opt %s --kiln-inline-dispatch-regions | FileCheck %s

/// Each region's body replaces it in place: region arguments become the
/// operands, results the yielded values; nested dispatches dissolve too.
// CHECK-LABEL: func @inline
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NEXT: %[[M:.+]] = linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[E]] : tensor<4x16xf32>)
// CHECK-NEXT: %[[V:.+]] = tensor.expand_shape %[[M]]
// CHECK-NEXT: %[[N:.+]] = scf.if %arg2
// CHECK-NEXT: %[[G:.+]] = linalg.negf ins(%[[M]] : tensor<4x16xf32>) outs(%[[E]] : tensor<4x16xf32>)
// CHECK-NEXT: scf.yield %[[G]]
// CHECK: return %[[M]], %[[V]], %[[N]]
// CHECK-NOT: kiln.
func.func @inline(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %c: i1) -> (tensor<4x16xf32>, tensor<2x2x16xf32>, tensor<4x16xf32>) {
  %e = tensor.empty() : tensor<4x16xf32>
  %r:2 = kiln.dispatch contraction ["mm"] (%x = %a, %y = %w, %o = %e) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<2x2x16xf32>) {
    %m = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x16xf32>) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
    %v = tensor.expand_shape %m [[0, 1], [2]] output_shape [2, 2, 16] : tensor<4x16xf32> into tensor<2x2x16xf32>
    kiln.yield %m, %v : tensor<4x16xf32>, tensor<2x2x16xf32>
  }
  %n = scf.if %c -> tensor<4x16xf32> {
    %g = kiln.dispatch elementwise [] (%x = %r#0, %o = %e) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
      %g = linalg.negf ins(%x : tensor<4x16xf32>) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
      kiln.yield %g : tensor<4x16xf32>
    }
    scf.yield %g : tensor<4x16xf32>
  } else {
    scf.yield %e : tensor<4x16xf32>
  }
  return %r#0, %r#1, %n : tensor<4x16xf32>, tensor<2x2x16xf32>, tensor<4x16xf32>
}
