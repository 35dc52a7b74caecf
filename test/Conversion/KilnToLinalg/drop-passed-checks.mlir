// RUN: kiln-opt %s --kiln-drop-passed-checks | FileCheck %s

/// A check whose condition folded to true goes; one that can fail stays,
/// and so does a call of another function.
// CHECK-LABEL: func.func @checks
// CHECK-NOT: call @kiln_check(%true
// CHECK: %[[OK:.+]] = arith.cmpi eq, %[[A:.+]], %[[B:.+]] : index
// CHECK: call @kiln_check(%[[OK]], %[[A]], %[[B]]) {kiln.check_message = "dim mismatch in add 'a': {0} vs {1}"}
// CHECK: call @other(%true)
// CHECK-NOT: call @kiln_check
// CHECK: return
module {
  func.func private @kiln_check(i1, index, index)
  func.func private @other(i1)
  func.func @checks(%x: tensor<?xf32>, %y: tensor<?xf32>) {
    %c0 = arith.constant 0 : index
    %true = arith.constant true
    %a = tensor.dim %x, %c0 : tensor<?xf32>
    %b = tensor.dim %y, %c0 : tensor<?xf32>
    call @kiln_check(%true, %a, %a) {kiln.check_message = "dim mismatch in select 'w': {0} vs {1}"} : (i1, index, index) -> ()
    %ok = arith.cmpi eq, %a, %b : index
    call @kiln_check(%ok, %a, %b) {kiln.check_message = "dim mismatch in add 'a': {0} vs {1}"} : (i1, index, index) -> ()
    call @other(%true) : (i1) -> ()
    call @kiln_check(%true, %b, %b) {kiln.check_message = "dim mismatch in select 'w': {0} vs {1}"} : (i1, index, index) -> ()
    return
  }
}
