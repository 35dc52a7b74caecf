// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-split-fills{padding-in-place=true}))" | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(func.func(kiln-split-fills))" | FileCheck %s --check-prefix=DEFAULT

/// A fill with several users (merged by CSE) is cloned, with its
/// tensor.empty, right before each user; the shared one is gone.
// CHECK-LABEL: func @shared_fill
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[F0:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg1 : {{.*}}) outs(%[[F0]] : tensor<4x8xf32>)
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT: %[[F1:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul ins(%arg0, %arg2 : {{.*}}) outs(%[[F1]] : tensor<4x8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @shared_fill(%a: tensor<4x2xf32>, %b: tensor<2x8xf32>, %c: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x = linalg.matmul ins(%a, %b : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %c : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
}

/// A fill with one user, and a fill of a function argument (no tensor.empty
/// to clone; the argument is shared), each as it is / cloned without it.
// CHECK-LABEL: func @single_and_argument
// CHECK: %[[ONE:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%arg1 : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[ONE]]
// CHECK-NEXT: %[[TWO:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%arg1 : tensor<4x8xf32>)
// CHECK-NEXT: linalg.matmul {{.*}} outs(%[[TWO]]
// CHECK-LABEL: func @single_fill
// CHECK: tensor.empty
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.matmul
func.func @single_and_argument(%a: tensor<4x2xf32>, %init: tensor<4x8xf32>, %b: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x = linalg.matmul ins(%a, %b : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x, %y : tensor<4x8xf32>, tensor<4x8xf32>
}
func.func @single_fill(%a: tensor<4x2xf32>, %b: tensor<2x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x = linalg.matmul ins(%a, %b : tensor<4x2xf32>, tensor<2x8xf32>) outs(%fill : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %x : tensor<4x8xf32>
}

/// With padding-in-place, the padding an epilogue writes its image into
/// (insert_slice of a chain from tensor.empty) is filled before the chain's
/// first op, even with one
/// use, so that empty-tensor elimination can place the chain in it; and only
/// its border is filled (the rows above and below the image, the columns
/// left and right of it, each a fill inserted into the padded tensor): the
/// chain writes the rest. The padding of an insertion whose source is no
/// such chain (a function argument) is filled around it only too, right
/// before the insertion.
// CHECK-LABEL: func @padding_before_chain
// CHECK: %[[P0:.+]] = tensor.empty() : tensor<1x2x6x6xf32>
// CHECK: %[[TOP:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x1x6xf32>)
// CHECK: %[[P1:.+]] = tensor.insert_slice %[[TOP]] into %[[P0]][0, 0, 0, 0] [1, 2, 1, 6] [1, 1, 1, 1]
// CHECK: %[[BOTTOM:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x1x6xf32>)
// CHECK: %[[P2:.+]] = tensor.insert_slice %[[BOTTOM]] into %[[P1]][0, 0, 5, 0] [1, 2, 1, 6] [1, 1, 1, 1]
// CHECK: %[[LEFT:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x4x1xf32>)
// CHECK: %[[P3:.+]] = tensor.insert_slice %[[LEFT]] into %[[P2]][0, 0, 1, 0] [1, 2, 4, 1] [1, 1, 1, 1]
// CHECK: %[[RIGHT:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x4x1xf32>)
// CHECK: %[[P4:.+]] = tensor.insert_slice %[[RIGHT]] into %[[P3]][0, 0, 1, 5] [1, 2, 4, 1] [1, 1, 1, 1]
// CHECK-NEXT: %[[G:.+]] = linalg.generic
// CHECK: tensor.insert_slice %[[G]] into %[[P4]][0, 0, 1, 1]
// CHECK: %[[QE:.+]] = tensor.empty() : tensor<1x2x6x6xf32>
// Without padding-in-place (the CUDA pipeline) both fills are whole, each
// right before its insertion.
// DEFAULT-LABEL: func @padding_before_chain
// DEFAULT: linalg.generic
// DEFAULT: %[[E:.+]] = tensor.empty() : tensor<1x2x6x6xf32>
// DEFAULT-NEXT: %[[F:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x2x6x6xf32>)
// DEFAULT-NEXT: tensor.insert_slice %{{.*}} into %[[F]][0, 0, 1, 1]
// CHECK: %[[QTOP:.+]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x1x6xf32>)
// CHECK: %[[Q1:.+]] = tensor.insert_slice %[[QTOP]] into %[[QE]][0, 0, 0, 0]
// CHECK: tensor.insert_slice %{{.*}} into %[[Q1]][0, 0, 5, 0]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 0] [1, 2, 4, 1]
// CHECK: %[[Q4:.+]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 1, 5] [1, 2, 4, 1]
// CHECK-NEXT: tensor.insert_slice %arg0 into %[[Q4]][0, 0, 1, 1]
// CHECK-NOT: linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x2x6x6xf32>)
func.func @padding_before_chain(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %pe = tensor.empty() : tensor<1x2x6x6xf32>
  %pf = linalg.fill ins(%zero : f32) outs(%pe : tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x2x4x4xf32>) outs(%e : tensor<1x2x4x4xf32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.maximumf %u, %zero : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  %p = tensor.insert_slice %g into %pf[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
  %q = tensor.insert_slice %x into %pf[0, 0, 1, 1] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x6x6xf32>
  return %p, %q : tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>
}
