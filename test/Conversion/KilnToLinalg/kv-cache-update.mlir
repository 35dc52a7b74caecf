// RUN: kiln-opt %s --convert-kiln-to-linalg | FileCheck %s

/// The new rows are inserted at the offset after a run-time check that they
/// fit the 64 rows; past and valid rows are slices of the updated cache.
// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[CACHE:.+]]: tensor<?x2x64x4xf16>, %[[NEW:.+]]: tensor<?x2x?x4xf16>, %[[OFFSET:.+]]: tensor<i64>)
// CHECK: %[[EXTRACTED:.+]] = tensor.extract %[[OFFSET]][] : tensor<i64>
// CHECK: %[[AT:.+]] = arith.index_cast %[[EXTRACTED]] : i64 to index
// CHECK: %[[ROWS:.+]] = tensor.dim %[[NEW]], %c2
// CHECK: %[[END:.+]] = arith.addi %[[AT]], %[[ROWS]] : index
// CHECK: %[[NOT_NEGATIVE:.+]] = arith.cmpi sge, %[[AT]], %c0
// CHECK: %[[FITS:.+]] = arith.cmpi ule, %[[END]], %c64
// CHECK: %[[OK:.+]] = arith.andi %[[FITS]], %[[NOT_NEGATIVE]] : i1
// CHECK: call @kiln_check(%[[OK]], %[[END]], %c64) {kiln.check_message = "kv cache update: rows up to {0} do not fit the cache length {1}"}
// CHECK: %[[BATCH:.+]] = tensor.dim %[[NEW]], %c0
// CHECK: %[[NEW_ROWS:.+]] = tensor.dim %[[NEW]], %c2
// CHECK: %[[UPDATED:.+]] = tensor.insert_slice %[[NEW]] into %[[CACHE]][0, 0, %[[AT]], 0] [%[[BATCH]], 2, %[[NEW_ROWS]], 4] [1, 1, 1, 1] : tensor<?x2x?x4xf16> into tensor<?x2x64x4xf16>
// CHECK: %[[PAST:.+]] = tensor.extract_slice %[[UPDATED]][0, 0, 0, 0] [%[[BATCH]], 2, %[[AT]], 4] [1, 1, 1, 1] : tensor<?x2x64x4xf16> to tensor<?x2x?x4xf16>
// CHECK: %[[VALID:.+]] = tensor.extract_slice %[[UPDATED]][0, 0, 0, 0] [%[[BATCH]], 2, %[[END]], 4] [1, 1, 1, 1] : tensor<?x2x64x4xf16> to tensor<?x2x?x4xf16>
// CHECK: return %[[UPDATED]], %[[PAST]], %[[VALID]]
func.func @update(%cache: tensor<?x2x64x4xf16>, %new: tensor<?x2x?x4xf16>, %offset: tensor<i64>)
    -> (tensor<?x2x64x4xf16>, tensor<?x2x?x4xf16>, tensor<?x2x?x4xf16>) {
  %updated, %past, %valid = kiln.kv_cache_update %cache, %new, %offset {axis = 2 : i64} : (tensor<?x2x64x4xf16>, tensor<?x2x?x4xf16>, tensor<i64>) -> (tensor<?x2x64x4xf16>, tensor<?x2x?x4xf16>, tensor<?x2x?x4xf16>)
  return %updated, %past, %valid : tensor<?x2x64x4xf16>, tensor<?x2x?x4xf16>, tensor<?x2x?x4xf16>
}
