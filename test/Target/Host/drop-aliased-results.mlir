// RUN: kiln-opt %s --split-input-file --kiln-drop-aliased-results --verify-diagnostics | FileCheck %s

/// The cache (model input 1, after the host pointer) is returned as itself,
/// through a cast: the result goes, the other one stays.
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: -> (memref<?xf32> {kiln.name = "logits"})
// CHECK: return %{{.+}} : memref<?xf32>
func.func private @kiln_entry(%host: !llvm.ptr {kiln.host}, %x: memref<?xf32> {kiln.name = "x"},
                              %cache: memref<2x8xf16> {kiln.name = "past_key_values.0.key"})
    -> (memref<2x8xf16> {kiln.aliases_input = 1 : i64, kiln.name = "present.0.key"},
        memref<?xf32> {kiln.name = "logits"}) {
  %cast = memref.cast %cache : memref<2x8xf16> to memref<2x8xf16, strided<[8, 1]>>
  %back = memref.cast %cast : memref<2x8xf16, strided<[8, 1]>> to memref<2x8xf16>
  return %back, %x : memref<2x8xf16>, memref<?xf32>
}

// -----

/// A marked result bufferization copied.
// expected-error @+1 {{output 'present.0.key' should be input 'past_key_values.0.key' updated in place, but bufferization gives it a buffer of its own}}
func.func private @kiln_entry(%host: !llvm.ptr {kiln.host},
                              %cache: memref<2x8xf16> {kiln.name = "past_key_values.0.key"})
    -> (memref<2x8xf16> {kiln.aliases_input = 0 : i64, kiln.name = "present.0.key"}) {
  %copy = memref.alloc() : memref<2x8xf16>
  memref.copy %cache, %copy : memref<2x8xf16> to memref<2x8xf16>
  return %copy : memref<2x8xf16>
}

// -----

/// An input index the function does not have.
// expected-error @+1 {{output 'present.0.key' aliases input 3, which the model does not have}}
func.func private @kiln_entry(%host: !llvm.ptr {kiln.host},
                              %cache: memref<2x8xf16> {kiln.name = "past_key_values.0.key"})
    -> (memref<2x8xf16> {kiln.aliases_input = 3 : i64, kiln.name = "present.0.key"}) {
  return %cache : memref<2x8xf16>
}
