// RUN: kiln-opt %s --convert-kiln-to-linalg | FileCheck %s

/// The row at each sequence's position takes the update's row, every other
/// element keeps the cache's: a generic over the cache whose init is the
/// cache itself (bufferized in place), no run-time check (a position
/// outside the cache matches no row).
// CHECK-DAG: #[[CACHE:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
// CHECK-DAG: #[[POS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0)>
// CHECK-LABEL: func.func @write
// CHECK-SAME: (%[[CACHE_ARG:.+]]: tensor<2x3x16x4xf16>, %[[NEW:.+]]: tensor<2x3x1x4xf16>, %[[AT:.+]]: tensor<2x1xi64>)
// CHECK-NOT: kiln_check
// CHECK: %[[OUT:.+]] = linalg.generic {indexing_maps = [#[[ROW]], #[[POS]], #[[CACHE]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[NEW]], %[[AT]] : tensor<2x3x1x4xf16>, tensor<2x1xi64>) outs(%[[CACHE_ARG]] : tensor<2x3x16x4xf16>)
// CHECK: ^bb0(%[[V:.+]]: f16, %[[P:.+]]: i64, %[[OLD:.+]]: f16):
// CHECK: %[[I:.+]] = linalg.index 2 : index
// CHECK: %[[R:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[HERE:.+]] = arith.cmpi eq, %[[R]], %[[P]] : i64
// CHECK: %[[PICK:.+]] = arith.select %[[HERE]], %[[V]], %[[OLD]] : f16
// CHECK: linalg.yield %[[PICK]] : f16
// CHECK: return %[[OUT]]
func.func @write(%cache: tensor<2x3x16x4xf16>, %new: tensor<2x3x1x4xf16>, %at: tensor<2x1xi64>)
    -> tensor<2x3x16x4xf16> {
  %updated = kiln.kv_cache_write %cache, %new, %at {axis = 2 : i64} : (tensor<2x3x16x4xf16>, tensor<2x3x1x4xf16>, tensor<2x1xi64>) -> tensor<2x3x16x4xf16>
  return %updated : tensor<2x3x16x4xf16>
}
