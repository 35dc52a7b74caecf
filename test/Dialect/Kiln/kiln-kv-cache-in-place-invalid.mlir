// RUN: kiln-opt %s --split-input-file --kiln-kv-cache-in-place=cache-length=64 --verify-diagnostics
// RUN: not kiln-opt %s --split-input-file --kiln-kv-cache-in-place=cache-length=0 2>&1 | FileCheck %s --check-prefix=LENGTH
// LENGTH: error: kiln-kv-cache-in-place: cache-length=0, expected at least 1

/// The fill level comes from the mask's and the ids' lengths.
// expected-error @+1 {{the model has no 'attention_mask' input}}
func.func @main(%ids: tensor<?x?xi64> {kiln.name = "input_ids"},
                %past: tensor<?x2x?x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<?x2x1x4xf32>) -> (tensor<?x2x?x4xf32> {kiln.name = "present.0.key"}) {
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  return %cat : tensor<?x2x?x4xf32>
}

// -----

/// A present that is not the concat of its past along axis 2.
// expected-error @+1 {{output 'present.0.key' is not the concat of a past_key_values input and new rows along axis 2}}
func.func @main(%ids: tensor<?x?xi64> {kiln.name = "input_ids"},
                %mask: tensor<?x?xi64> {kiln.name = "attention_mask"},
                %past: tensor<?x2x?x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<?x2x?x4xf32>) -> (tensor<?x2x?x4xf32> {kiln.name = "present.0.key"}) {
  %cat = kiln.concat %new, %past {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  return %cat : tensor<?x2x?x4xf32>
}

// -----

/// The past's values read by anything but the concat.
func.func @main(%ids: tensor<?x?xi64> {kiln.name = "input_ids"},
                %mask: tensor<?x?xi64> {kiln.name = "attention_mask"},
                %past: tensor<?x2x?x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<?x2x1x4xf32>)
    -> (tensor<?x2x?x4xf32> {kiln.name = "present.0.key"}, tensor<?x2x?x4xf32> {kiln.name = "y"}) {
  // expected-error @+1 {{the past 'past_key_values.0.key' is read by 'kiln.neg'; only its shape and the concat with the new rows may read it}}
  %y = kiln.neg %past : tensor<?x2x?x4xf32>
  %cat = kiln.concat %past, %new {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  return %cat, %y : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
}

// -----

/// One past for two presents.
func.func @main(%ids: tensor<?x?xi64> {kiln.name = "input_ids"},
                %mask: tensor<?x?xi64> {kiln.name = "attention_mask"},
                %past: tensor<?x2x?x4xf32> {kiln.name = "past_key_values.0.key"},
                %new: tensor<?x2x1x4xf32>, %other: tensor<?x2x1x4xf32>)
    -> (tensor<?x2x?x4xf32> {kiln.name = "present.0.key"}, tensor<?x2x?x4xf32> {kiln.name = "present.0.value"}) {
  %a = kiln.concat %past, %new {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  // expected-error @+1 {{the past 'past_key_values.0.key' is read by 'kiln.concat'}}
  %b = kiln.concat %past, %other {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  return %a, %b : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
}
