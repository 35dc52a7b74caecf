// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-cache-row-writes))" -split-input-file | FileCheck %s

/// A decode step's cache write with the cast to f16 fused in (batch 2, 3
/// heads, 5 rows, 4 columns): a loop over (b, h, d) that loads b's position,
/// and where it lies in the cache stores the new element at that row.
// CHECK-LABEL: func @cache_write
// CHECK-SAME: (%[[V:.+]]: memref<2x3x1x4xf32>, %[[POS:.+]]: memref<2x1xi64>, %[[CACHE:.+]]: memref<2x3x5x4xf16>)
// CHECK: scf.parallel (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[D:[a-z0-9]+]]) =
// CHECK:   %[[P:.+]] = memref.load %[[POS]][%[[B]], %{{.+}}] : memref<2x1xi64>
// CHECK:   %[[ROW:.+]] = arith.index_cast %[[P]] : i64 to index
// CHECK:   %[[C5:.+]] = arith.constant 5 : index
// CHECK:   %[[IN:.+]] = arith.cmpi ult, %[[ROW]], %[[C5]] : index
// CHECK:   scf.if %[[IN]] {
// CHECK:     %[[X:.+]] = memref.load %[[V]][%[[B]], %[[H]], %{{.+}}, %[[D]]]
// CHECK:     %[[T:.+]] = arith.truncf %[[X]] : f32 to f16
// CHECK:     memref.store %[[T]], %[[CACHE]][%[[B]], %[[H]], %[[ROW]], %[[D]]]
// CHECK-NOT: linalg.generic
#v = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#pos = affine_map<(d0, d1, d2, d3) -> (d0, 0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @cache_write(%v: memref<2x3x1x4xf32>, %pos: memref<2x1xi64>, %cache: memref<2x3x5x4xf16>) {
  linalg.generic {indexing_maps = [#v, #pos, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v, %pos : memref<2x3x1x4xf32>, memref<2x1xi64>) outs(%cache : memref<2x3x5x4xf16>) {
  ^bb0(%in: f32, %p: i64, %out: f16):
    %t = arith.truncf %in : f32 to f16
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i64
    %eq = arith.cmpi eq, %ii, %p : i64
    %s = arith.select %eq, %t, %out : f16
    linalg.yield %s : f16
  }
  return
}

// -----

/// The rotary product fused in reads the new row at a rotated column
/// ((d + 2) mod 4) and asks for the column index: both at the point's
/// column, the row being the position.
// CHECK-LABEL: func @rotary_cache_write
// CHECK: scf.parallel (%[[B:[a-z0-9]+]], %[[H:[a-z0-9]+]], %[[D:[a-z0-9]+]]) =
// CHECK:   scf.if
// CHECK:     %[[R:.+]] = affine.apply #{{.+}}(%[[B]], %[[H]], %{{.+}}, %[[D]])
// CHECK:     memref.load %{{.+}}[%[[B]], %[[H]], %{{.+}}, %[[R]]]
// CHECK:     arith.cmpi ult, %[[D]]
// CHECK:     memref.store
// CHECK-NOT: linalg.generic
#rot = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, (d3 + 2) mod 4)>
#v = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#pos = affine_map<(d0, d1, d2, d3) -> (d0, 0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @rotary_cache_write(%k: memref<2x3x1x4xf32>, %pos: memref<2x1xi64>, %cache: memref<2x3x5x4xf32>) {
  linalg.generic {indexing_maps = [#v, #rot, #pos, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k, %k, %pos : memref<2x3x1x4xf32>, memref<2x3x1x4xf32>, memref<2x1xi64>) outs(%cache : memref<2x3x5x4xf32>) {
  ^bb0(%x: f32, %r: f32, %p: i64, %out: f32):
    %j = linalg.index 3 : index
    %c2 = arith.constant 2 : index
    %low = arith.cmpi ult, %j, %c2 : index
    %n = arith.negf %r : f32
    %rr = arith.select %low, %n, %r : f32
    %sum = arith.addf %x, %rr : f32
    %i = linalg.index 2 : index
    %ii = arith.index_cast %i : index to i64
    %eq = arith.cmpi eq, %ii, %p : i64
    %s = arith.select %eq, %sum, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// Not row writes: an input read along the row loop (the select keeps the
/// old element of another tensor), and out read elsewhere in the body.
// CHECK-LABEL: func @not_row_writes
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: scf.parallel
#pos = affine_map<(d0, d1) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @not_row_writes(%a: memref<2x5xf32>, %pos: memref<2xi64>, %c: memref<2x5xf32>) {
  linalg.generic {indexing_maps = [#id2, #pos, #id2], iterator_types = ["parallel", "parallel"]} ins(%a, %pos : memref<2x5xf32>, memref<2xi64>) outs(%c : memref<2x5xf32>) {
  ^bb0(%x: f32, %p: i64, %out: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %eq = arith.cmpi eq, %ii, %p : i64
    %s = arith.select %eq, %x, %out : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#pos, #id2], iterator_types = ["parallel", "parallel"]} ins(%pos : memref<2xi64>) outs(%c : memref<2x5xf32>) {
  ^bb0(%p: i64, %out: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i64
    %eq = arith.cmpi eq, %ii, %p : i64
    %d = arith.addf %out, %out : f32
    %s = arith.select %eq, %d, %out : f32
    linalg.yield %s : f32
  }
  return
}
