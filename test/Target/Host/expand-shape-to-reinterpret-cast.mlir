// RUN: kiln-opt %s --split-input-file --kiln-expand-shape-to-reinterpret-cast | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-expand-shape-to-reinterpret-cast --expand-strided-metadata | FileCheck %s --check-prefix=EXPANDED

/// Two dynamic dims in one group (the rows of [batch, seq, K] after a
/// matmul): sizes from output_shape, the outer stride is seq * 64.
// CHECK-LABEL: func.func @rows
//  CHECK-SAME: (%[[SRC:.+]]: memref<?x64xf32>, %[[B:.+]]: index, %[[S:.+]]: index)
//       CHECK:   %[[BASE:.+]], %[[OFF:.+]], %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %[[SRC]]
//       CHECK:   %[[OUTER:.+]] = arith.muli %[[S]], %c64
//       CHECK:   memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[B]], %[[S]], 64], strides: [%[[OUTER]], 64, 1]
//   CHECK-NOT:   memref.expand_shape
// EXPANDED-LABEL: func.func @rows
//   EXPANDED-NOT:   memref.expand_shape
func.func @rows(%m: memref<?x64xf32>, %b: index, %s: index) -> memref<?x?x64xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, %s, 64] : memref<?x64xf32> into memref<?x?x64xf32>
  return %e : memref<?x?x64xf32>
}

// -----

/// A strided source (a column slice): the group's innermost dim keeps the
/// source's dynamic stride; the offset is the source's.
// CHECK-LABEL: func.func @strided
//       CHECK:   %[[BASE:.+]], %[[OFF:.+]], %{{.+}}, %[[STRIDE:.+]] = memref.extract_strided_metadata
//       CHECK:   %[[OUTER:.+]] = arith.muli %[[STRIDE]], %{{.+}}
//       CHECK:   memref.reinterpret_cast %[[BASE]] to offset: [%[[OFF]]], sizes: [%{{.+}}, %{{.+}}], strides: [%[[OUTER]], %[[STRIDE]]]
func.func @strided(%m: memref<?xf32, strided<[?], offset: ?>>, %a: index, %b: index) -> memref<?x?xf32, strided<[?, ?], offset: ?>> {
  %e = memref.expand_shape %m [[0, 1]] output_shape [%a, %b] : memref<?xf32, strided<[?], offset: ?>> into memref<?x?xf32, strided<[?, ?], offset: ?>>
  return %e : memref<?x?xf32, strided<[?, ?], offset: ?>>
}

// -----

/// One dynamic dim per group is left to expand-strided-metadata.
// CHECK-LABEL: func.func @one_dynamic
//       CHECK:   memref.expand_shape
//   CHECK-NOT:   memref.reinterpret_cast
func.func @one_dynamic(%m: memref<?x64xf32>, %b: index) -> memref<?x17x64xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%b, 17, 64] : memref<?x64xf32> into memref<?x17x64xf32>
  return %e : memref<?x17x64xf32>
}
