// RUN: kiln-opt --kiln-cuda-split-f32 %s | FileCheck %s
// RUN: kiln-opt --kiln-cuda-split-f32="convolutions=false" %s | FileCheck %s --check-prefix=NOCONV
// kilnc's pair: kiln-cuda-lower-precision with matmuls=false then makes the
// tripled convolution im2col + products and leaves every matmul alone.
// RUN: kiln-opt --kiln-cuda-split-f32 --kiln-cuda-lower-precision="precision=tf32 matmuls=false" %s | FileCheck %s --check-prefix=PAIR

// A weight B is split and transposed now: B'^T = [Bb | Bs | Bb] along K
// (0.1 = 0.0999755859375 + 2.4423e-05 in tf32); A by a generic writing
// [M, 3, K] (part 0 small), collapsed to [M, 3K]; the product reads B'^T.
// CHECK-DAG: #[[MA:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[MB:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MC:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @weight
// CHECK: %[[PARTS:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<16x4xf32>) outs(%{{.*}} : tensor<16x3x4xf32>)
// CHECK:   arith.bitcast %{{.*}} : f32 to i32
// CHECK:   arith.addi %{{.*}}, %c4096_i32
// CHECK:   arith.andi %{{.*}}, %c-8192_i32
// CHECK:   arith.cmpf oeq
// CHECK:   arith.subf
// CHECK:   %[[PART:.*]] = linalg.index 1 : index
// CHECK:   arith.cmpi eq, %[[PART]], %c0
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[PARTS]] {{\[}}[0], [1, 2]] : tensor<16x3x4xf32> into tensor<16x12xf32>
// CHECK: %[[BT:.*]] = arith.constant dense<{{\[}}[0.0999755859, 0.0999755859, 0.0999755859, 0.0999755859, 2.44230032E-5, 2.44230032E-5, 2.44230032E-5, 2.44230032E-5, 0.0999755859, 0.0999755859, 0.0999755859, 0.0999755859]
// CHECK-SAME: tensor<8x12xf32>
// CHECK: linalg.matmul indexing_maps = [#[[MA]], #[[MB]], #[[MC]]] ins(%[[A]], %[[BT]] : tensor<16x12xf32>, tensor<8x12xf32>) outs(%arg1 : tensor<16x8xf32>)
// CHECK-NOT: arith.constant dense
func.func @weight(%a: tensor<16x4xf32>, %init: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %w = arith.constant dense<0.1> : tensor<4x8xf32>
  %0 = linalg.matmul ins(%a, %w : tensor<16x4xf32>, tensor<4x8xf32>) outs(%init : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// An activation B: split along K (part 1 small) into [b, 3, K, N], collapsed
// to [b, 3K, N], then transposed to [b, N, 3K].
// CHECK-LABEL: func.func @batch
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<2x8x4xf32>) outs(%{{.*}} : tensor<2x8x3x4xf32>)
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<2x8x3x4xf32> into tensor<2x8x12xf32>
// CHECK: %[[BP:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x4x8xf32>) outs(%{{.*}} : tensor<2x3x4x8xf32>)
// CHECK:   %[[PART:.*]] = linalg.index 1 : index
// CHECK:   arith.cmpi eq, %[[PART]], %c1
// CHECK: %[[B:.*]] = tensor.collapse_shape %[[BP]] {{\[}}[0], [1, 2], [3]] : tensor<2x3x4x8xf32> into tensor<2x12x8xf32>
// CHECK: %[[BT:.*]] = linalg.transpose ins(%[[B]] : tensor<2x12x8xf32>) outs(%{{.*}} : tensor<2x8x12xf32>) permutation = [0, 2, 1]
// CHECK: linalg.batch_matmul indexing_maps = [{{.*}}] ins(%{{.*}}, %[[BT]] : tensor<2x8x12xf32>, tensor<2x8x12xf32>) outs(%arg2 : tensor<2x8x8xf32>)
func.func @batch(%a: tensor<2x8x4xf32>, %b: tensor<2x4x8xf32>, %init: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x8x4xf32>, tensor<2x4x8xf32>) outs(%init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// A K-major B (attention's K^T read where it lies, [b, N, K]): split along
// its last axis, K (part 1 small), and read as it is, no transpose.
// CHECK-LABEL: func.func @batch_k_major
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<2x8x4xf32>) outs(%{{.*}} : tensor<2x8x3x4xf32>)
// CHECK: %[[BP:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<2x8x4xf32>) outs(%{{.*}} : tensor<2x8x3x4xf32>)
// CHECK:   %[[PART:.*]] = linalg.index 2 : index
// CHECK:   arith.cmpi eq, %[[PART]], %c1
// CHECK: %[[B:.*]] = tensor.collapse_shape %[[BP]] {{\[}}[0], [1], [2, 3]] : tensor<2x8x3x4xf32> into tensor<2x8x12xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul indexing_maps = [{{.*}}] ins(%{{.*}}, %[[B]] : tensor<2x8x12xf32>, tensor<2x8x12xf32>) outs(%arg2 : tensor<2x8x8xf32>)
func.func @batch_k_major(%a: tensor<2x8x4xf32>, %b: tensor<2x8x4xf32>, %init: tensor<2x8x8xf32>) -> tensor<2x8x8xf32> {
  %0 = linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
      ins(%a, %b : tensor<2x8x4xf32>, tensor<2x8x4xf32>) outs(%init : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %0 : tensor<2x8x8xf32>
}

// A convolution gets three times the channels: the input split before its
// zero padding ([xb ; xs ; xb] along C) and padded again, the filters
// [Ws | Wb | Wb] now; the unsplit padding and filters are gone.
// CHECK-LABEL: func.func @conv
// CHECK: %[[XP:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<2x4x6x6xf32>) outs(%{{.*}} : tensor<2x3x4x6x6xf32>)
// CHECK: %[[X:.*]] = tensor.collapse_shape %[[XP]] {{\[}}[0], [1, 2], [3], [4]] : tensor<2x3x4x6x6xf32> into tensor<2x12x6x6xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x12x8x8xf32>)
// CHECK: %[[PAD:.*]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 1, 1] [2, 12, 6, 6] [1, 1, 1, 1]
// CHECK: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<8x12x3x3xf32>
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[PAD]], %[[W]] : tensor<2x12x8x8xf32>, tensor<8x12x3x3xf32>)
// CHECK-NOT: tensor<2x4x8x8xf32>
// CHECK-NOT: tensor<8x4x3x3xf32>
// PAIR-LABEL: func.func @conv
// PAIR: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6x6x12x3x3xf32>)
// PAIR: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x108xf32>, tensor<2x36x108xf32>)
// PAIR-NOT: linalg.conv_2d_nchw_fchw
// PAIR-LABEL: func.func @conv_symbolic_batch
// PAIR: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x108xf32>, tensor<?x36x108xf32>)
// PAIR-NOT: linalg.conv_2d_nchw_fchw
// PAIR-LABEL: func.func @refused
// PAIR-NOT: linalg.transpose
// PAIR: linalg.matmul ins(%arg0, %arg1 : tensor<16x6xf32>, tensor<6x8xf32>)
// PAIR: linalg.matmul ins(%arg2, %arg3 : tensor<16x8xf32>, tensor<8x6xf32>)
// NOCONV-LABEL: func.func @conv
// NOCONV: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>)
func.func @conv(%x: tensor<2x4x6x6xf32>, %init: tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x8x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %padded = tensor.insert_slice %x into %zeros[0, 0, 1, 1] [2, 4, 6, 6] [1, 1, 1, 1] : tensor<2x4x6x6xf32> into tensor<2x4x8x8xf32>
  %w = arith.constant dense<0.5> : tensor<8x4x3x3xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<2x4x8x8xf32>, tensor<8x4x3x3xf32>) outs(%init : tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  return %0 : tensor<2x8x6x6xf32>
}

// The same convolution with a symbolic batch: the split input, its padding
// and the im2col product keep the image count (one GEMM launch over all
// images).
// CHECK-LABEL: func.func @conv_symbolic_batch
// CHECK: %[[XP:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x4x6x6xf32>) outs(%{{.*}} : tensor<?x3x4x6x6xf32>)
// CHECK: %[[X:.*]] = tensor.collapse_shape %[[XP]] {{.*}} into tensor<?x12x6x6xf32>
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?x12x8x8xf32>)
// CHECK: %[[PAD:.*]] = tensor.insert_slice %[[X]] into %[[Z]][0, 0, 1, 1] [%{{.*}}, 12, 6, 6] [1, 1, 1, 1]
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[PAD]], %{{.*}} : tensor<?x12x8x8xf32>, tensor<8x12x3x3xf32>)
func.func @conv_symbolic_batch(%x: tensor<?x4x6x6xf32>, %init: tensor<?x8x6x6xf32>) -> tensor<?x8x6x6xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x6x6xf32>
  %empty = tensor.empty(%n) : tensor<?x4x8x8xf32>
  %zeros = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x4x8x8xf32>) -> tensor<?x4x8x8xf32>
  %padded = tensor.insert_slice %x into %zeros[0, 0, 1, 1] [%n, 4, 6, 6] [1, 1, 1, 1] : tensor<?x4x6x6xf32> into tensor<?x4x8x8xf32>
  %w = arith.constant dense<0.5> : tensor<8x4x3x3xf32>
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<?x4x8x8xf32>, tensor<8x4x3x3xf32>) outs(%init : tensor<?x8x6x6xf32>) -> tensor<?x8x6x6xf32>
  return %0 : tensor<?x8x6x6xf32>
}

// Refused (the SIMT path stays): K not a multiple of 4, N not a multiple
// of 4, a symbolic N, f16 operands, user-defined maps.
// CHECK-LABEL: func.func @refused
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul ins(%arg0, %arg1 : tensor<16x6xf32>, tensor<6x8xf32>)
// CHECK: linalg.matmul ins(%arg2, %arg3 : tensor<16x8xf32>, tensor<8x6xf32>)
// CHECK: linalg.matmul ins(%arg4, %arg5 : tensor<16x8xf32>, tensor<8x?xf32>)
// CHECK: linalg.matmul ins(%arg6, %arg7 : tensor<16x8xf16>, tensor<8x8xf16>)
// CHECK: linalg.matmul indexing_maps
// CHECK-SAME: ins(%arg0, %arg8 : tensor<16x6xf32>, tensor<8x6xf32>)
func.func @refused(%a0: tensor<16x6xf32>, %b0: tensor<6x8xf32>, %a1: tensor<16x8xf32>, %b1: tensor<8x6xf32>,
                   %a2: tensor<16x8xf32>, %b2: tensor<8x?xf32>, %a3: tensor<16x8xf16>, %b3: tensor<8x8xf16>,
                   %b4: tensor<8x6xf32>)
    -> (tensor<16x8xf32>, tensor<16x6xf32>, tensor<16x?xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %c1 = arith.constant 1 : index
  %e0 = tensor.empty() : tensor<16x8xf32>
  %e1 = tensor.empty() : tensor<16x6xf32>
  %d = tensor.dim %b2, %c1 : tensor<8x?xf32>
  %e2 = tensor.empty(%d) : tensor<16x?xf32>
  %0 = linalg.matmul ins(%a0, %b0 : tensor<16x6xf32>, tensor<6x8xf32>) outs(%e0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %1 = linalg.matmul ins(%a1, %b1 : tensor<16x8xf32>, tensor<8x6xf32>) outs(%e1 : tensor<16x6xf32>) -> tensor<16x6xf32>
  %2 = linalg.matmul ins(%a2, %b2 : tensor<16x8xf32>, tensor<8x?xf32>) outs(%e2 : tensor<16x?xf32>) -> tensor<16x?xf32>
  %3 = linalg.matmul ins(%a3, %b3 : tensor<16x8xf16>, tensor<8x8xf16>) outs(%e0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %4 = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
         ins(%a0, %b4 : tensor<16x6xf32>, tensor<8x6xf32>) outs(%e0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %0, %1, %2, %3, %4 : tensor<16x8xf32>, tensor<16x6xf32>, tensor<16x?xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// Symbolic rows M (a classifier's after the flatten of a symbolic batch):
// split like static ones, A' [M, 3K] keeping M's run-time size.
// CHECK-LABEL: func.func @symbolic_rows
// CHECK: %[[AP:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<?x8xf32>) outs(%{{.*}} : tensor<?x3x8xf32>)
// CHECK: %[[A:.*]] = tensor.collapse_shape %[[AP]] {{.*}} into tensor<?x24xf32>
// CHECK: linalg.matmul indexing_maps = {{.*}} ins(%[[A]], %{{.*}} : tensor<?x24xf32>, tensor<8x24xf32>) outs(%{{.*}} : tensor<?x8xf32>)
func.func @symbolic_rows(%a: tensor<?x8xf32>, %init: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %b = arith.constant dense<0.25> : tensor<8x8xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<?x8xf32>, tensor<8x8xf32>) outs(%init : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// An activation read by two products (Q and K projections) is split once.
// CHECK-LABEL: func.func @shared
// CHECK: %[[A:.*]] = tensor.collapse_shape
// CHECK-SAME: tensor<16x3x4xf32> into tensor<16x12xf32>
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul indexing_maps = [{{.*}}] ins(%[[A]], %{{.*}} : tensor<16x12xf32>, tensor<8x12xf32>)
// CHECK: linalg.matmul indexing_maps = [{{.*}}] ins(%[[A]], %{{.*}} : tensor<16x12xf32>, tensor<8x12xf32>)
func.func @shared(%a: tensor<16x4xf32>, %init: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %wq = arith.constant dense<0.25> : tensor<4x8xf32>
  %wk = arith.constant dense<0.5> : tensor<4x8xf32>
  %q = linalg.matmul ins(%a, %wq : tensor<16x4xf32>, tensor<4x8xf32>) outs(%init : tensor<16x8xf32>) -> tensor<16x8xf32>
  %k = linalg.matmul ins(%a, %wk : tensor<16x4xf32>, tensor<4x8xf32>) outs(%init : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %q, %k : tensor<16x8xf32>, tensor<16x8xf32>
}

// A weight held as a resource blob (what the ONNX importer makes) is split
// now too: 0.1 as above.
// CHECK-LABEL: func.func @resource
// CHECK: %[[BT:.*]] = arith.constant dense<{{\[}}[0.0999755859, 0.0999755859, 0.0999755859, 0.0999755859, 2.44230032E-5, 2.44230032E-5, 2.44230032E-5, 2.44230032E-5, 0.0999755859, 0.0999755859, 0.0999755859, 0.0999755859]
// CHECK-SAME: tensor<4x12xf32>
// CHECK: linalg.matmul indexing_maps = [{{.*}}] ins(%{{.*}}, %[[BT]] : tensor<16x12xf32>, tensor<4x12xf32>)
// CHECK-NOT: dense_resource<w4x4>
func.func @resource(%a: tensor<16x4xf32>, %init: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %w = arith.constant dense_resource<w4x4> : tensor<4x4xf32>
  %0 = linalg.matmul ins(%a, %w : tensor<16x4xf32>, tensor<4x4xf32>) outs(%init : tensor<16x4xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w4x4: "0x04000000CDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3DCDCCCC3D"
    }
  }
#-}
