// RUN: kiln-opt %s --split-input-file --kiln-prepare-entry -verify-diagnostics | FileCheck %s

/// The single public function becomes the private @kiln_entry, with the
/// runtime's host pointer as a new first argument.
// CHECK: func.func private @kiln_entry(%{{.*}}: !llvm.ptr {kiln.host}, %{{.*}}: tensor<4xf32> {bufferization.writable = false}) -> tensor<4xf32>
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

// -----

/// Run-time checks get the host and a message id; equal messages share an
/// id, checks of a constant true condition go, and the linalg stage's
/// declaration is replaced by the hook the artifact writer defines.
// CHECK: module attributes {kiln.check_messages = ["dim mismatch in add: {0} vs {1}", "index {0} out of range [-{1}, {1}) in gather"]}
// CHECK: func.func private @kiln_entry(%[[HOST:.+]]: !llvm.ptr {kiln.host}, %[[OK:.+]]: i1, %[[A:.+]]: index, %[[B:.+]]: index)
// CHECK: %[[ID0:.+]] = arith.constant 0 : i32
// CHECK: call @kiln_check_hook(%[[HOST]], %[[OK]], %[[ID0]], %[[A]], %[[B]])
// CHECK: %[[ID1:.+]] = arith.constant 1 : i32
// CHECK: call @kiln_check_hook(%[[HOST]], %[[OK]], %[[ID1]], %[[B]], %[[A]])
// CHECK: %[[ID0B:.+]] = arith.constant 0 : i32
// CHECK: call @kiln_check_hook(%[[HOST]], %[[OK]], %[[ID0B]], %[[B]], %[[A]])
// CHECK-NOT: call
// CHECK: return
// CHECK-NOT: @kiln_check(
// CHECK: func.func private @kiln_check_hook(!llvm.ptr, i1, i32, index, index)
func.func @model(%ok: i1, %a: index, %b: index) {
  %true = arith.constant true
  call @kiln_check(%ok, %a, %b) {kiln.check_message = "dim mismatch in add: {0} vs {1}"} : (i1, index, index) -> ()
  call @kiln_check(%ok, %b, %a) {kiln.check_message = "index {0} out of range [-{1}, {1}) in gather"} : (i1, index, index) -> ()
  call @kiln_check(%ok, %b, %a) {kiln.check_message = "dim mismatch in add: {0} vs {1}"} : (i1, index, index) -> ()
  call @kiln_check(%true, %a, %b) {kiln.check_message = "never fails"} : (i1, index, index) -> ()
  return
}
func.func private @kiln_check(i1, index, index)

// -----

/// Checks live in the model function, where the host is.
func.func @model(%ok: i1, %a: index) {
  call @helper(%ok, %a) : (i1, index) -> ()
  return
}
func.func private @helper(%ok: i1, %a: index) {
  // expected-error @+1 {{a run-time check outside the model function}}
  call @kiln_check(%ok, %a, %a) {kiln.check_message = "m"} : (i1, index, index) -> ()
  return
}
func.func private @kiln_check(i1, index, index)
