// RUN: kiln-opt %s --split-input-file --kiln-kv-cache-dtype --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-kv-cache-dtype=precision=bf16 --verify-diagnostics | FileCheck %s --check-prefix=BF16

/// A decoder layer's cache as exporters write it: the present is the concat
/// of the past and the new keys, read by attention too. The past input and
/// the present output become f16; the concat runs in f16 (the past as it
/// is, the new keys rounded), attention reads it widened; the mask input
/// and the logits keep f32.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[PAST:[^:]+]]: tensor<?x2x?x4xf16> {kiln.name = "past_key_values.0.key"}
// CHECK-SAME: %[[NEW:[^:]+]]: tensor<?x2x1x4xf32> {kiln.name = "new"}
// CHECK-SAME: -> (tensor<?x2x?x4xf16> {kiln.name = "present.0.key"}, tensor<?x2x?x4xf32> {kiln.name = "logits"})
// CHECK: %[[ROUNDED:.+]] = kiln.cast %[[NEW]] : tensor<?x2x1x4xf32> -> tensor<?x2x1x4xf16>
// CHECK: %[[CAT:.+]] = kiln.concat %[[PAST]], %[[ROUNDED]] {axis = 2 : i64} : (tensor<?x2x?x4xf16>, tensor<?x2x1x4xf16>) -> tensor<?x2x?x4xf16>
// CHECK: %[[WIDE:.+]] = kiln.cast %[[CAT]] : tensor<?x2x?x4xf16> -> tensor<?x2x?x4xf32>
// CHECK: %[[READ:.+]] = kiln.neg %[[WIDE]]
// CHECK: return %[[CAT]], %[[READ]]
// BF16-LABEL: func.func @main
// BF16-SAME: tensor<?x2x?x4xbf16> {kiln.name = "past_key_values.0.key"}
// BF16: kiln.concat {{.*}} -> tensor<?x2x?x4xbf16>
func.func @main(%past: tensor<?x2x?x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<?x2x1x4xf32> {kiln.name = "new"})
    -> (tensor<?x2x?x4xf32> {kiln.name = "present.0.key"}, tensor<?x2x?x4xf32> {kiln.name = "logits"}) {
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %read = kiln.neg %cat : tensor<?x2x?x4xf32>
  return %cat, %read : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
}

// -----

/// A present that is not a concat is rounded by a cast; a cache input that
/// is not rank 4 or not f32 is left as it is.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %{{[^:]+}}: tensor<2x3xf32> {kiln.name = "past_key_values.0.value"}
// CHECK-SAME: -> (tensor<1x2x3x4xf16> {kiln.name = "present.0.value"})
// CHECK: %[[R:.+]] = kiln.cast %arg1 : tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf16>
// CHECK: return %[[R]]
func.func @main(%flat: tensor<2x3xf32> {kiln.name = "past_key_values.0.value"},
                %x: tensor<1x2x3x4xf32> {kiln.name = "x"})
    -> (tensor<1x2x3x4xf32> {kiln.name = "present.0.value"}) {
  return %x : tensor<1x2x3x4xf32>
}

// -----

// expected-error @+1 {{kiln-kv-cache-dtype: expected one public function (the model) or one named 'main'}}
module {
  func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
  func.func @b(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}
