// RUN: kiln-opt %s --split-input-file --kiln-append-greedy-ids --verify-diagnostics | FileCheck %s

/// The decoder's logits get an ArgMax over the vocabulary as one more
/// output, named greedy_ids, with the logits' batch and sequence dim names.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> (tensor<?x?x64xf32> {kiln.dim_names = ["batch", "sequence", ""], kiln.name = "logits"}, tensor<?x?xi64> {kiln.dim_names = ["batch", "sequence"], kiln.name = "greedy_ids"})
// CHECK: %[[IDS:.+]] = kiln.argmax %arg0 {axis = 2 : i64, keepdims = false} : (tensor<?x?x64xf32>) -> tensor<?x?xi64>
// CHECK: return %arg0, %[[IDS]]
func.func @main(%x: tensor<?x?x64xf32>) -> (tensor<?x?x64xf32> {kiln.dim_names = ["batch", "sequence", ""], kiln.name = "logits"}) {
  return %x : tensor<?x?x64xf32>
}

// -----

// expected-error @+1 {{kiln-append-greedy-ids: the model has no output 'logits'}}
func.func @main(%x: tensor<2x3x64xf32>) -> (tensor<2x3x64xf32> {kiln.name = "scores"}) {
  return %x : tensor<2x3x64xf32>
}

// -----

// expected-error @+1 {{kiln-append-greedy-ids: output 'logits' is 'tensor<2x64xf32>'; expected a float tensor [batch, sequence, vocabulary]}}
func.func @main(%x: tensor<2x64xf32>) -> (tensor<2x64xf32> {kiln.name = "logits"}) {
  return %x : tensor<2x64xf32>
}

// -----

// expected-error @+1 {{kiln-append-greedy-ids: the model already has an output 'greedy_ids'}}
func.func @main(%x: tensor<2x3x64xf32>, %i: tensor<2x3xi64>) -> (tensor<2x3x64xf32> {kiln.name = "logits"}, tensor<2x3xi64> {kiln.name = "greedy_ids"}) {
  return %x, %i : tensor<2x3x64xf32>, tensor<2x3xi64>
}

// -----

// expected-error @+1 {{kiln-append-greedy-ids: expected one public function (the model) or one named 'main'}}
module {
  func.func @a(%x: tensor<2x3x64xf32>) -> tensor<2x3x64xf32> {
    return %x : tensor<2x3x64xf32>
  }
  func.func @b(%x: tensor<2x3x64xf32>) -> tensor<2x3x64xf32> {
    return %x : tensor<2x3x64xf32>
  }
}
