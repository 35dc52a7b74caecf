// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-fuse-elementwise,kiln-form-dispatch-regions))" | FileCheck %s

#id = affine_map<(d0) -> (d0)>

/// An elementwise chain fuses into one generic: one elementwise dispatch
/// covering both model nodes.
// CHECK-LABEL: func @chain
// CHECK-NEXT: %[[R:.+]] = kiln.dispatch elementwise ["tanh", "add"] (%{{.+}} = %arg0, %{{.+}} = %arg1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.generic
// CHECK: arith.addf
// CHECK-NEXT: math.tanh
// CHECK: kiln.yield
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]]
func.func @chain(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %s = arith.addf %u, %v : f32
    linalg.yield %s : f32
  } -> tensor<8xf32> loc("add")
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = math.tanh %u : f32
    linalg.yield %s : f32
  } -> tensor<8xf32> loc("tanh")
  return %r : tensor<8xf32>
}
