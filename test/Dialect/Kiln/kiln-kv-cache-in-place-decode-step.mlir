// RUN: kiln-opt %s --split-input-file --kiln-kv-cache-in-place="cache-length=8 decode-step" | FileCheck %s

/// One static decode step (kilnc --decode-step=2 --kv-cache-length=8): the
/// 7-row past becomes the 8-row cache, written at each sequence's
/// position_ids; the concat's reader reads the whole updated cache and the
/// past's shape read stays the constant [2, 2, 7, 4].
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[POS:[^:]+]]: tensor<2x1xi64> {kiln.name = "position_ids"}
// CHECK-SAME: %[[PAST:[^:]+]]: tensor<2x2x8x4xf32> {kiln.name = "past_key_values.0.key"}
// CHECK-SAME: %[[NEW:[^:]+]]: tensor<2x2x1x4xf32>
// CHECK-SAME: -> (tensor<2x2x8x4xf32> {kiln.aliases_input = 3 : i64, kiln.name = "present.0.key"}, tensor<2x2x8x4xf32> {kiln.name = "logits"}, tensor<4xi64> {kiln.name = "past_shape"})
// CHECK: %[[SHAPE:.+]] = kiln.constant dense<[2, 2, 7, 4]> : tensor<4xi64>
// CHECK: %[[UPDATED:.+]] = kiln.kv_cache_write %[[PAST]], %[[NEW]], %[[POS]] {axis = 2 : i64} : (tensor<2x2x8x4xf32>, tensor<2x2x1x4xf32>, tensor<2x1xi64>) -> tensor<2x2x8x4xf32>
// CHECK-NOT: kiln.concat
// CHECK: %[[READ:.+]] = kiln.neg %[[UPDATED]]
// CHECK: return %[[UPDATED]], %[[READ]], %[[SHAPE]]
func.func @main(%ids: tensor<2x1xi64> {kiln.name = "input_ids"},
                %mask: tensor<2x8xi64> {kiln.name = "attention_mask"},
                %pos: tensor<2x1xi64> {kiln.name = "position_ids"},
                %past: tensor<2x2x7x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<2x2x1x4xf32>)
    -> (tensor<2x2x8x4xf32> {kiln.name = "present.0.key"}, tensor<2x2x8x4xf32> {kiln.name = "logits"},
        tensor<4xi64> {kiln.name = "past_shape"}) {
  %shape = kiln.shape %past : (tensor<2x2x7x4xf32>) -> tensor<4xi64>
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<2x2x7x4xf32>, tensor<2x2x1x4xf32>) -> tensor<2x2x8x4xf32>
  %read = kiln.neg %cat : tensor<2x2x8x4xf32>
  return %cat, %read, %shape : tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<4xi64>
}

// -----

/// i32 position ids are widened to the op's i64.
// CHECK-LABEL: func.func @main
// CHECK: %[[WIDE:.+]] = kiln.cast %{{.+}} : tensor<1x1xi32> -> tensor<1x1xi64>
// CHECK: kiln.kv_cache_write %{{.+}}, %{{.+}}, %[[WIDE]]
func.func @main(%ids: tensor<1x1xi64> {kiln.name = "input_ids"},
                %mask: tensor<1x8xi64> {kiln.name = "attention_mask"},
                %pos: tensor<1x1xi32> {kiln.name = "position_ids"},
                %past: tensor<1x2x7x4xf16> {kiln.name = "past_key_values.0.value"},
                %new: tensor<1x2x1x4xf16>) -> (tensor<1x2x8x4xf16> {kiln.name = "present.0.value"}) {
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<1x2x7x4xf16>, tensor<1x2x1x4xf16>) -> tensor<1x2x8x4xf16>
  return %cat : tensor<1x2x8x4xf16>
}
