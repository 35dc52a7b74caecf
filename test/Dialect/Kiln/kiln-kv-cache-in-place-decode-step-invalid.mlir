// RUN: kiln-opt %s --split-input-file --kiln-kv-cache-in-place="cache-length=8 decode-step" --verify-diagnostics

/// The rows are written at the position ids.
// expected-error @+1 {{decode-step writes each sequence's row at its 'position_ids', but the model has no such input}}
func.func @main(%ids: tensor<1x1xi64> {kiln.name = "input_ids"},
                %mask: tensor<1x8xi64> {kiln.name = "attention_mask"},
                %past: tensor<1x2x7x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<1x2x1x4xf32>) -> (tensor<1x2x8x4xf32> {kiln.name = "present.0.key"}) {
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  return %cat : tensor<1x2x8x4xf32>
}

// -----

/// Two tokens per sequence are not one decode step.
// expected-error @+1 {{decode-step expects 'input_ids' and 'position_ids' of one static token per sequence and an 'attention_mask' of 8 columns, found 'tensor<1x2xi64>', 'tensor<1x2xi64>' and 'tensor<1x8xi64>'}}
func.func @main(%ids: tensor<1x2xi64> {kiln.name = "input_ids"},
                %mask: tensor<1x8xi64> {kiln.name = "attention_mask"},
                %pos: tensor<1x2xi64> {kiln.name = "position_ids"},
                %past: tensor<1x2x6x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<1x2x2x4xf32>) -> (tensor<1x2x8x4xf32> {kiln.name = "present.0.key"}) {
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<1x2x6x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x8x4xf32>
  return %cat : tensor<1x2x8x4xf32>
}

// -----

/// A past of the wrong length (not imported by kilnc --decode-step).
// expected-error @+1 {{decode-step expects the static past 'past_key_values.0.key' of 7 rows and its concat of 8, found 'tensor<1x2x?x4xf32>' and 'tensor<1x2x?x4xf32>'}}
func.func @main(%ids: tensor<1x1xi64> {kiln.name = "input_ids"},
                %mask: tensor<1x8xi64> {kiln.name = "attention_mask"},
                %pos: tensor<1x1xi64> {kiln.name = "position_ids"},
                %past: tensor<1x2x?x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<1x2x1x4xf32>) -> (tensor<1x2x?x4xf32> {kiln.name = "present.0.key"}) {
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<1x2x?x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x?x4xf32>
  return %cat : tensor<1x2x?x4xf32>
}
