// RUN: kiln-opt %s --split-input-file --kiln-prepare-entry -verify-diagnostics | FileCheck %s

/// The single public function becomes the private @kiln_entry, with the
/// runtime's host pointer as a new first argument.
// CHECK: func.func private @kiln_entry(%{{.*}}: !llvm.ptr {kiln.host}, %{{.*}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK: func.func private @helper
func.func @model(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @helper() {
  return
}

// -----

/// With several public functions the model must be called main.
// CHECK: func.func private @kiln_entry(%{{.*}}: !llvm.ptr {kiln.host})
// CHECK: func.func @other()
func.func @main() {
  return
}
func.func @other() {
  return
}

// -----

// expected-error @+1 {{expected one public function (the model) or one named 'main', found 2 public functions}}
module {
  func.func @a() {
    return
  }
  func.func @b() {
    return
  }
}
