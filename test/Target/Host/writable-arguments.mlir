// RUN: kiln-opt %s --split-input-file --kiln-prepare-entry --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

/// A plain input is read only (kiln-prepare-entry marks it
/// bufferization.writable = false, which bufferization consumes): it is
/// copied before the copy is written.
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: %[[X:[^:]+]]: memref<4xf32> {kiln.name = "x"}
// CHECK: %[[COPY:.+]] = memref.alloc
// CHECK: memref.copy %[[X]], %[[COPY]]
// CHECK: memref.subview %[[COPY]]
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}, %y: tensor<2xf32> {kiln.name = "y"}) -> tensor<4xf32> {
  %r = tensor.insert_slice %y into %x[0] [2] [1] : tensor<2xf32> into tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

/// An input that an output updates in place (a KV cache) is written where
/// it is.
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: %[[CACHE:[^:]+]]: memref<4xf32> {kiln.name = "past_key_values.0.key"}
// CHECK-NOT: memref.alloc
// CHECK: memref.subview %[[CACHE]]
func.func @main(%cache: tensor<4xf32> {kiln.name = "past_key_values.0.key"}, %y: tensor<2xf32> {kiln.name = "y"}) -> (tensor<4xf32> {kiln.aliases_input = 0 : i64, kiln.name = "present.0.key"}) {
  %r = tensor.insert_slice %y into %cache[0] [2] [1] : tensor<2xf32> into tensor<4xf32>
  return %r : tensor<4xf32>
}
