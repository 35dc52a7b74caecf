// RUN: kiln-opt %s --kiln-cuda-codegen-pipeline | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

/// A kiln.dispatch region of a matmul with its bias + relu epilogue (as
/// kiln-form-gemm-epilogues marks it) goes into the CUDA codegen (fp32 on sm_90a: 3xTF32) and comes out as one
/// GEMM template launch (TMA + wgmma) whose epilogue applies the bias and
/// relu, inside one trace hook pair named after the region. The product
/// keeps the region's id through kiln-cuda-split-f32; the kernels that
/// split A and B and transpose B are dispatches of their own, before it.
// CHECK: kiln.dispatches = ["generic fc", "generic fc", "transpose fc", "matmul fc,bias,relu"]
// CHECK-LABEL: func.func private @kiln_entry
// CHECK-COUNT-3: gpu.launch_func
// CHECK: call @kiln_trace_begin(%{{.+}}, %[[ID:.+]]) :
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.call @mgpuTensorMapEncodeTiledMemref
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.launch_func @kiln_kernels::@[[GEMM:[a-z_0-9]+]] {{.*}} dynamic_shared_memory_size
// CHECK-NEXT: call @kiln_trace_end(%{{.+}}, %[[ID]]) :
// CHECK-NOT: gpu.launch_func
// CHECK: gpu.func @[[GEMM]](
// CHECK: nvvm.wgmma.mma_async
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK-NOT: gpu.func
func.func @mlp(%a: tensor<128x64xf32>, %w: tensor<64x128xf32>, %b: tensor<128xf32>) -> tensor<128x128xf32> {
  %r = kiln.dispatch contraction ["fc", "bias", "relu"] (%x = %a, %y = %w, %z = %b) : (tensor<128x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<128x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<128x128xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
    %m = linalg.matmul ins(%x, %y : tensor<128x64xf32>, tensor<64x128xf32>) outs(%f : tensor<128x128xf32>) -> tensor<128x128xf32> loc("fc")
    %e2 = tensor.empty() : tensor<128x128xf32>
    %g = linalg.generic {indexing_maps = [#row, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%z, %m : tensor<128xf32>, tensor<128x128xf32>) outs(%e2 : tensor<128x128xf32>)
        attrs = {kiln.epilogue = 1 : i64} {
    ^bb0(%bias: f32, %c: f32, %o: f32):
      %s = arith.addf %c, %bias : f32
      %v = arith.maximumf %s, %zero : f32
      linalg.yield %v : f32
    } -> tensor<128x128xf32> loc(fused["bias", "relu"])
    kiln.yield %g : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}
