// RUN: kiln-opt %s --kiln-codegen-pipeline | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// A kiln.dispatch region as the CPU dispatch stage leaves it (a matmul,
/// its zero fill and its bias + relu epilogue) goes into codegen and comes
/// out as one kernel: one trace hook pair named after the region (its root
/// and its nodes, one cost entry), one call of a matmul kernel whose last
/// depth block applies the epilogue to the tile in registers and stores
/// the result into the output; no linalg op is left.
// CHECK: module attributes {kiln.dispatch_costs = array<i64: 1152, 1728>, kiln.dispatches = ["matmul fc,bias,relu"]
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-SAME: (%[[HOST:[^:]+]]: !llvm.ptr
// CHECK-SAME: %[[OUT:[^:]+]]: memref<4x16xf32>)
// CHECK-NOT: linalg.
// CHECK: call @kiln_trace_begin(%[[HOST]], %[[ID:.+]]) :
// CHECK-NOT: call @kiln_trace
// CHECK: %[[D:.+]] = memref.cast %[[OUT]]
// CHECK-NEXT: call @kiln_matmul_0(%[[HOST]], {{.*}}, %[[D]])
// CHECK-NEXT: call @kiln_trace_end(%[[HOST]], %[[ID]]) :
// CHECK-NEXT: return
// CHECK-LABEL: func.func private @kiln_matmul_0
// CHECK-NOT: linalg.
// CHECK: vector.fma
// CHECK: scf.yield
// CHECK: %[[BIAS:.+]] = vector.load
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %{{.+}}, %[[BIAS]] : vector<16xf32>
// CHECK-NEXT: %[[RELU:.+]] = arith.maximumf %[[SUM]], %{{.+}} : vector<16xf32>
// CHECK-NEXT: vector.store %[[RELU]], %arg5
// CHECK-NOT: linalg.
func.func @mlp(%a: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<4x16xf32> {
  %r = kiln.dispatch contraction ["fc", "bias", "relu"] (%x = %a, %y = %w, %z = %b) : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
    %m = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("fc")
    %e2 = tensor.empty() : tensor<4x16xf32>
    %g = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%z, %m : tensor<16xf32>, tensor<4x16xf32>) outs(%e2 : tensor<4x16xf32>) attrs = {kiln.epilogue = 1 : i64} {
    ^bb0(%bias: f32, %c: f32, %o: f32):
      %s = arith.addf %c, %bias : f32
      %v = arith.maximumf %s, %zero : f32
      linalg.yield %v : f32
    } -> tensor<4x16xf32> loc(fused["bias", "relu"])
    kiln.yield %g : tensor<4x16xf32>
  }
  return %r : tensor<4x16xf32>
}
