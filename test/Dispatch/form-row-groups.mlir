// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-row-groups))" | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-form-row-groups{half-floats=true one-row-length=true}))" | FileCheck %s --check-prefix=CUDA

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// Two softmax-like runs over the same 8 rows, of lengths 64 and 32, one
/// after the other. The CPU's rule (each op loops over its own row) makes
/// them one group; with one-row-length (the CUDA row kernel gives a row one
/// team of threads) they are two.
// CHECK-LABEL: func @two_lengths
// CHECK-COUNT-4: kiln.row_group = 0 : i64
// CHECK-NOT: kiln.row_group = 1
// CUDA-LABEL: func @two_lengths
// CUDA-COUNT-2: kiln.row_group = 0 : i64
// CUDA-COUNT-2: kiln.row_group = 1 : i64
func.func @two_lengths(%x: tensor<8x64xf32>, %y: tensor<8x32xf32>) -> (tensor<8x64xf32>, tensor<8x32xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %ex = tensor.empty() : tensor<8x64xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<8x64xf32>, tensor<8xf32>) outs(%ex : tensor<8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x64xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %f2 = linalg.fill ins(%ninf : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %m2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<8x32xf32>) outs(%f2 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %ey = tensor.empty() : tensor<8x32xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %m2 : tensor<8x32xf32>, tensor<8xf32>) outs(%ey : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  return %s, %s2 : tensor<8x64xf32>, tensor<8x32xf32>
}

/// f16 rows: a row group only with half-floats (the CUDA row kernel reads
/// them and computes in f32; the CPU's row kernels are f32 only).
// CHECK-LABEL: func @half_rows
// CHECK-NOT: kiln.row_group
// CUDA-LABEL: func @half_rows
// CUDA-COUNT-2: kiln.row_group = 0 : i64
func.func @half_rows(%x: tensor<8x64xf16>) -> tensor<8x64xf16> {
  %ninf = arith.constant 0xFC00 : f16
  %e = tensor.empty() : tensor<8xf16>
  %f = linalg.fill ins(%ninf : f16) outs(%e : tensor<8xf16>) -> tensor<8xf16>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf16>) outs(%f : tensor<8xf16>) {
  ^bb0(%a: f16, %acc: f16):
    %r = arith.maximumf %a, %acc : f16
    linalg.yield %r : f16
  } -> tensor<8xf16>
  %ex = tensor.empty() : tensor<8x64xf16>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<8x64xf16>, tensor<8xf16>) outs(%ex : tensor<8x64xf16>) {
  ^bb0(%a: f16, %b: f16, %o: f16):
    %r = arith.subf %a, %b : f16
    linalg.yield %r : f16
  } -> tensor<8x64xf16>
  return %s : tensor<8x64xf16>
}

/// A global average pool: the sum [2, 8] read as [2, 8, 1, 1] by its
/// division. The division's loops collapse to read the sums directly, so
/// it joins the reduction's group (one row kernel, not two kernels).
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func @pool_division
// CHECK: linalg.generic
// CHECK-SAME: kiln.row_group = 0 : i64
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}} : tensor<2x8xf32>)
// CHECK-SAME: kiln.row_group = 0 : i64
// CHECK: tensor.expand_shape
func.func @pool_division(%x: tensor<2x8x16xf32>) -> tensor<2x8x1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x8x16xf32>) outs(%f : tensor<2x8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc fastmath<reassoc> : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %v = tensor.expand_shape %s [[0], [1, 2, 3]] output_shape [2, 8, 1, 1] : tensor<2x8xf32> into tensor<2x8x1x1xf32>
  %eo = tensor.empty() : tensor<2x8x1x1xf32>
  %d = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v : tensor<2x8x1x1xf32>) outs(%eo : tensor<2x8x1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = arith.constant 16.0 : f32
    %r = arith.divf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<2x8x1x1xf32>
  return %d : tensor<2x8x1x1xf32>
}
