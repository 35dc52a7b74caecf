// RUN: kiln-opt %s --split-input-file --kiln-kv-cache-in-place=cache-length=64 | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-kv-cache-dtype --kiln-kv-cache-in-place=cache-length=64 | FileCheck %s --check-prefix=F16

/// A decoder layer as exporters write it: the past's length read from its
/// shape, the present the concat of the past and the new keys, read by
/// attention too. The past becomes the 64-row cache updated in place at
/// dim(attention_mask, 1) - dim(input_ids, 1); the present is the updated
/// cache (aliasing input 2), the shape read is [b, h, offset, d], the
/// concat's reader reads the valid rows.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[IDS:[^:]+]]: tensor<?x?xi64> {kiln.name = "input_ids"}
// CHECK-SAME: %[[MASK:[^:]+]]: tensor<?x?xi64> {kiln.name = "attention_mask"}
// CHECK-SAME: %[[PAST:[^:]+]]: tensor<?x2x64x4xf32> {kiln.dim_names = ["batch", "", "past_sequence", ""], kiln.name = "past_key_values.0.key"}
// CHECK-SAME: -> (tensor<?x2x64x4xf32> {kiln.aliases_input = 2 : i64, kiln.dim_names = ["batch", "", "past_sequence", ""], kiln.name = "present.0.key"}, tensor<?x2x?x4xf32> {kiln.name = "logits"}, tensor<4xi64> {kiln.name = "past_shape"})
// CHECK-DAG: %[[MASK_SHAPE:.+]] = kiln.shape %[[MASK]]
// CHECK-DAG: %[[TOTAL:.+]] = kiln.gather %[[MASK_SHAPE]]
// CHECK-DAG: %[[IDS_SHAPE:.+]] = kiln.shape %[[IDS]]
// CHECK-DAG: %[[SEQ:.+]] = kiln.gather %[[IDS_SHAPE]]
// CHECK: %[[OFFSET:.+]] = kiln.sub %[[TOTAL]], %[[SEQ]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[CACHE_SHAPE:.+]] = kiln.shape %[[PAST]]
// CHECK: %[[PAST_SHAPE:.+]] = kiln.add %[[CACHE_SHAPE]]
// CHECK: %[[UPDATED:[^,]+]], %{{.+}}, %[[VALID:.+]] = kiln.kv_cache_update %[[PAST]], %{{.+}}, %[[OFFSET]] {axis = 2 : i64} : (tensor<?x2x64x4xf32>, tensor<?x2x1x4xf32>, tensor<i64>) -> (tensor<?x2x64x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
// CHECK-NOT: kiln.concat
// CHECK: %[[READ:.+]] = kiln.neg %[[VALID]]
// CHECK: return %[[UPDATED]], %[[READ]], %[[PAST_SHAPE]]

/// With an f16 cache (kiln-kv-cache-dtype first) the update is in f16 and
/// the readers widen its valid rows.
// F16-LABEL: func.func @main
// F16-SAME: tensor<?x2x64x4xf16> {kiln.dim_names = ["batch", "", "past_sequence", ""], kiln.name = "past_key_values.0.key"}
// F16: %[[UPDATED:[^,]+]], %{{.+}}, %[[VALID:.+]] = kiln.kv_cache_update {{.*}} -> (tensor<?x2x64x4xf16>, tensor<?x2x?x4xf16>, tensor<?x2x?x4xf16>)
// F16: kiln.cast %[[VALID]] : tensor<?x2x?x4xf16> -> tensor<?x2x?x4xf32>
// F16: return %[[UPDATED]],
func.func @main(%ids: tensor<?x?xi64> {kiln.name = "input_ids"},
                %mask: tensor<?x?xi64> {kiln.name = "attention_mask"},
                %past: tensor<?x2x?x4xf32> {kiln.dim_names = ["batch", "", "past_sequence", ""], kiln.name = "past_key_values.0.key"},
                %new: tensor<?x2x1x4xf32>)
    -> (tensor<?x2x?x4xf32> {kiln.name = "present.0.key"}, tensor<?x2x?x4xf32> {kiln.name = "logits"},
        tensor<4xi64> {kiln.name = "past_shape"}) {
  %shape = kiln.shape %past : (tensor<?x2x?x4xf32>) -> tensor<4xi64>
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %read = kiln.neg %cat : tensor<?x2x?x4xf32>
  return %cat, %read, %shape : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<4xi64>
}

// -----

/// A Shape with bounds reads those dims of [b, h, offset, d].
// CHECK-LABEL: func.func @main
// CHECK: %[[PAST_SHAPE:.+]] = kiln.add
// CHECK: %[[LENGTH:.+]] = kiln.slice %[[PAST_SHAPE]] {axes = array<i64: 0>, ends = array<i64: 3>, starts = array<i64: 2>, steps = array<i64: 1>} : (tensor<4xi64>) -> tensor<1xi64>
// CHECK: return %{{.+}}, %[[LENGTH]]
func.func @main(%ids: tensor<?x?xi64> {kiln.name = "input_ids"},
                %mask: tensor<?x?xi64> {kiln.name = "attention_mask"},
                %past: tensor<?x2x?x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<?x2x?x4xf32>)
    -> (tensor<?x2x?x4xf32> {kiln.name = "present.0.key"}, tensor<1xi64> {kiln.name = "length"}) {
  %length = kiln.shape %past {start = 2 : i64, end = 3 : i64} : (tensor<?x2x?x4xf32>) -> tensor<1xi64>
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  return %cat, %length : tensor<?x2x?x4xf32>, tensor<1xi64>
}

// -----

/// A model without presents is left alone.
// CHECK-LABEL: func.func @main
// CHECK-NEXT: kiln.neg
func.func @main(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "y"}) {
  %y = kiln.neg %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
