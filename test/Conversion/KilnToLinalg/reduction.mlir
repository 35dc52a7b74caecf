// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file | FileCheck %s

/// Reductions into the shape without the axes, then expand_shape for keepdims.
// CHECK-LABEL: func @reduce_mean_keepdims
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 3, 1] : tensor<2x3xf32> into tensor<2x3x1xf32>
func.func @reduce_mean_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x3x1xf32> {
  %0 = kiln.reduce mean %x {axes = array<i64: -1>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  return %0 : tensor<2x3x1xf32>
}

// -----

/// softmax = exp(x - max) * (1 / sum): four generics, max first for
/// stability; the reciprocal depends only on the row.
// CHECK-LABEL: func @softmax
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maxnumf %{{.+}}, %{{.+}} fastmath<reassoc>
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: ^bb0(%[[E:.+]]: f32, %[[S:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[R:.+]] = arith.divf %{{.+}}, %[[S]]
// CHECK: arith.mulf %[[E]], %[[R]]
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = kiln.softmax %x {axis = 1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

/// argmax keeps the value and the index in one reduction generic.
// CHECK-LABEL: func @argmax
// CHECK: linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2xf32>, tensor<2xi64>)
// CHECK: arith.cmpf ogt
// CHECK: linalg.index 1
func.func @argmax(%x: tensor<2x8xf32>) -> tensor<2xi64> {
  %0 = kiln.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<2x8xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

/// Global average pooling is a mean over the spatial dims, reduced as one
/// collapsed axis.
// CHECK-LABEL: func @global_avg_pool
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1], [2, 3]] : tensor<1x8x7x7xf32> into tensor<1x8x49xf32>
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: tensor.expand_shape
func.func @global_avg_pool(%x: tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32> {
  %0 = kiln.global_avg_pool %x : (tensor<1x8x7x7xf32>) -> tensor<1x8x1x1xf32>
  return %0 : tensor<1x8x1x1xf32>
}

// -----

/// Reduction combiners may reassociate (prod and l1 too), so that codegen can
/// keep partial vector accumulators.
// CHECK-LABEL: func @reduce_prod_l1
// CHECK: arith.mulf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
// CHECK: math.absf
// CHECK: arith.addf %{{.+}}, %{{.+}} fastmath<reassoc> : f32
func.func @reduce_prod_l1(%x: tensor<2x8xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = kiln.reduce prod %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x8xf32>) -> tensor<2xf32>
  %1 = kiln.reduce l1 %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x8xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

/// cumsum: output dims parallel plus a reduction over the source position j
/// along the axis; exclusive keeps j < i.
// CHECK-DAG: #[[SRC:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[DST:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func @cumsum_exclusive
// CHECK: linalg.generic {indexing_maps = [#[[SRC]], #[[DST]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[J:.+]] = linalg.index 2 : index
// CHECK: %[[TAKE:.+]] = arith.cmpi slt, %[[J]], %[[I]] : index
// CHECK: arith.select %[[TAKE]]
// CHECK: arith.addf
func.func @cumsum_exclusive(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.cumsum %x {axis = 0 : i64, exclusive = true} : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

/// cumprod: the cumsum generic with 1 and multiplication.
// CHECK-LABEL: func @cumprod
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: linalg.generic
// CHECK: arith.mulf
func.func @cumprod(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kiln.cumprod %x {axis = 0 : i64} : tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
