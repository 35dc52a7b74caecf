// RUN: kiln-opt %s --split-input-file --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --verify-diagnostics | kiln-opt --split-input-file | FileCheck %s

/// kiln.dispatch round-trips: kind, nodes, the operands bound to region
/// arguments, the functional type, extra attributes, the yield.
// CHECK-LABEL: func @matmul_relu
// CHECK: %[[R:.+]] = kiln.dispatch contraction ["fc/Gemm", "fc/Relu"] (%[[A:.+]] = %arg0, %[[W:.+]] = %arg1, %[[E:.+]] = %{{.+}}) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT: linalg.matmul ins(%[[A]], %[[W]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[E]] : tensor<4x16xf32>)
// CHECK: kiln.yield %{{.+}} : tensor<4x16xf32>
// CHECK: return %[[R]]
func.func @matmul_relu(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %r = kiln.dispatch contraction ["fc/Gemm", "fc/Relu"] (%x = %a, %y = %w, %o = %e) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> {
    %m = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x16xf32>) outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
    kiln.yield %m : tensor<4x16xf32>
  }
  return %r : tensor<4x16xf32>
}

/// No operands, several results, scalars, and a discardable attribute.
// CHECK-LABEL: func @several
// CHECK: %{{.+}}:2 = kiln.dispatch data_movement [] () : () -> (tensor<2xf32>, f32) attributes {note = 1 : i64} {
// CHECK: kiln.yield %{{.+}}, %{{.+}} : tensor<2xf32>, f32
func.func @several() -> (tensor<2xf32>, f32) {
  %r:2 = kiln.dispatch data_movement [] () : () -> (tensor<2xf32>, f32) attributes {note = 1} {
    %c = arith.constant 1.0 : f32
    %t = tensor.empty() : tensor<2xf32>
    kiln.yield %t, %c : tensor<2xf32>, f32
  }
  return %r#0, %r#1 : tensor<2xf32>, f32
}

/// Every kind parses.
// CHECK-LABEL: func @kinds
// CHECK: kiln.dispatch contraction
// CHECK: kiln.dispatch convolution
// CHECK: kiln.dispatch pooling
// CHECK: kiln.dispatch reduction
// CHECK: kiln.dispatch elementwise
// CHECK: kiln.dispatch data_movement
// CHECK: kiln.dispatch row_group
// CHECK: kiln.dispatch attention
func.func @kinds() {
  kiln.dispatch contraction [] () : () -> () { kiln.yield }
  kiln.dispatch convolution [] () : () -> () { kiln.yield }
  kiln.dispatch pooling [] () : () -> () { kiln.yield }
  kiln.dispatch reduction [] () : () -> () { kiln.yield }
  kiln.dispatch elementwise [] () : () -> () { kiln.yield }
  kiln.dispatch data_movement [] () : () -> () { kiln.yield }
  kiln.dispatch row_group [] () : () -> () { kiln.yield }
  kiln.dispatch attention [] () : () -> () { kiln.yield }
  return
}

// -----

func.func @kind() {
  // expected-error @+1 {{'kiln.dispatch' op has unknown kind 'gemm', expected one of contraction, convolution, pooling, reduction, elementwise, data_movement, row_group, attention}}
  kiln.dispatch gemm [] () : () -> () { kiln.yield }
  return
}

// -----

func.func @memref_operand(%m: memref<4xf32>) {
  // expected-error @+1 {{'kiln.dispatch' op works on tensors, but operand #0 is 'memref<4xf32>'}}
  kiln.dispatch elementwise [] (%x = %m) : (memref<4xf32>) -> () { kiln.yield }
  return
}

// -----

func.func @memref_result() {
  // expected-error @+1 {{'kiln.dispatch' op works on tensors, but result #0 is 'memref<4xf32>'}}
  %r = kiln.dispatch elementwise [] () : () -> memref<4xf32> {
    %m = memref.alloc() : memref<4xf32>
    kiln.yield %m : memref<4xf32>
  }
  return
}

// -----

func.func @yield_count(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.dispatch' op yields 0 values for 1 results}}
  %r = kiln.dispatch elementwise [] (%x = %t) : (tensor<4xf32>) -> tensor<4xf32> {
    kiln.yield
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_type(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.dispatch' op yields 'tensor<4xf32>' as result #0 of type 'tensor<?xf32>'}}
  %r = kiln.dispatch elementwise [] (%x = %t) : (tensor<4xf32>) -> tensor<?xf32> {
    kiln.yield %x : tensor<4xf32>
  }
  return %t : tensor<4xf32>
}

// -----

func.func @no_yield(%t: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.dispatch' op expects its region to end with kiln.yield}}
  "kiln.dispatch"(%t) <{kind = "elementwise", nodes = []}> ({
  ^bb0(%x: tensor<4xf32>):
    %c = arith.constant 0 : i32
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @argument_count(%t: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.dispatch' op expects one region argument per operand, got 0 for 1 operands}}
  "kiln.dispatch"(%t) <{kind = "elementwise", nodes = []}> ({
    kiln.yield
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @argument_type(%t: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.dispatch' op region argument #0 has type 'tensor<?xf32>', but its operand has type 'tensor<4xf32>'}}
  "kiln.dispatch"(%t) <{kind = "elementwise", nodes = []}> ({
  ^bb0(%x: tensor<?xf32>):
    kiln.yield
  }) : (tensor<4xf32>) -> ()
  return
}

// -----

/// Isolated from above: values of the function reach the region only as
/// operands.
func.func @captured(%t: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %r = kiln.dispatch elementwise [] () : () -> tensor<4xf32> {
    // expected-error @+1 {{'kiln.yield' op using value defined outside the region}}
    kiln.yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @stray_yield(%t: tensor<4xf32>) {
  // expected-error @+1 {{'kiln.yield' op expects parent op 'kiln.dispatch'}}
  kiln.yield %t : tensor<4xf32>
}

// -----

func.func @operand_types(%t: tensor<4xf32>) {
  // expected-error @+1 {{expects 1 operand types, got 0}}
  kiln.dispatch elementwise [] (%x = %t) : () -> () { kiln.yield }
  return
}
