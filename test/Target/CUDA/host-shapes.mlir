// RUN: kiln-opt %s --split-input-file --kiln-cuda-host-shapes | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-host-shapes | FileCheck %s --check-prefix=BODY

/// A decoder's head split: Shape -> Gather(0), Gather(1) -> Concat with the
/// constant [4, 16] -> Reshape. The shape's elements become the input's
/// tensor.dim values and the reshape views sized by them; no generic, concat
/// or tensor.reshape is left for the device.
// CHECK-LABEL: func.func @split_heads
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[X]], %[[C1]]
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2]]
// CHECK: %[[R:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1, 2, 3]] output_shape [%[[B]], %[[S]], 4, 16]
// CHECK-NEXT: return %[[R]]
// BODY-LABEL: func.func @split_heads
// BODY-NOT: linalg.generic
// BODY-NOT: tensor.insert_slice
// BODY-NOT: tensor.extract
// BODY-NOT: tensor.reshape
// BODY: return
#id = affine_map<(d0) -> (d0)>
#gather0 = affine_map<() -> ()>
func.func @split_heads(%x: tensor<?x?x64xf32>) -> tensor<?x?x4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %i0 = arith.index_cast %d0 : index to i64
  %i1 = arith.index_cast %d1 : index to i64
  %c64 = arith.constant 64 : i64
  %shape = tensor.from_elements %i0, %i1, %c64 : tensor<3xi64>
  // Gather(shape, 0) and Gather(shape, 1), as GatherToLinalg writes them.
  %idx0 = arith.constant dense<0> : tensor<i64>
  %idx1 = arith.constant dense<1> : tensor<i64>
  %e0 = tensor.empty() : tensor<i64>
  %g0 = linalg.generic {indexing_maps = [#gather0, #gather0], iterator_types = []}
      ins(%idx0 : tensor<i64>) outs(%e0 : tensor<i64>) {
  ^bb0(%i: i64, %o: i64):
    %k = arith.index_cast %i : i64 to index
    %neg = arith.cmpi slt, %k, %c0 : index
    %wrapped = arith.addi %k, %c3 : index
    %w = arith.select %neg, %wrapped, %k : index
    %clamped = arith.minsi %w, %c2 : index
    %v = tensor.extract %shape[%clamped] : tensor<3xi64>
    linalg.yield %v : i64
  } -> tensor<i64>
  %g1 = linalg.generic {indexing_maps = [#gather0, #gather0], iterator_types = []}
      ins(%idx1 : tensor<i64>) outs(%e0 : tensor<i64>) {
  ^bb0(%i: i64, %o: i64):
    %k = arith.index_cast %i : i64 to index
    %v = tensor.extract %shape[%k] : tensor<3xi64>
    linalg.yield %v : i64
  } -> tensor<i64>
  // Unsqueeze each to [1] and concat them with [4, 16].
  %u0 = tensor.expand_shape %g0 [] output_shape [1] : tensor<i64> into tensor<1xi64>
  %u1 = tensor.expand_shape %g1 [] output_shape [1] : tensor<i64> into tensor<1xi64>
  %heads = arith.constant dense<[4, 16]> : tensor<2xi64>
  %e4 = tensor.empty() : tensor<4xi64>
  %s0 = tensor.insert_slice %u0 into %e4[0] [1] [1] : tensor<1xi64> into tensor<4xi64>
  %s1 = tensor.insert_slice %u1 into %s0[1] [1] [1] : tensor<1xi64> into tensor<4xi64>
  %s2 = tensor.insert_slice %heads into %s1[2] [2] [1] : tensor<2xi64> into tensor<4xi64>
  %r = tensor.reshape %x(%s2) : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %r : tensor<?x?x4x16xf32>
}

// -----

/// Reshape's run-time -1: the known entries' product (a reduction, unrolled)
/// divides the input's size; elementwise select/equal generics on the way
/// are evaluated per element on the host.
// CHECK-LABEL: func.func @inferred
// CHECK-SAME: (%[[X:.+]]: tensor<?x?xf32>)
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[S:.+]] = tensor.dim %[[X]], %c1
// CHECK: %[[N:.+]] = arith.muli
// CHECK: arith.divsi
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [%{{.+}}, 8]
// BODY-LABEL: func.func @inferred
// BODY-NOT: linalg.
// BODY-NOT: tensor.extract
// BODY-NOT: tensor.reshape
// BODY: return
#map1 = affine_map<(d0) -> (d0)>
#map0 = affine_map<(d0) -> ()>
func.func @inferred(%x: tensor<?x?xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %n = arith.muli %d0, %d1 : index
  %size = arith.index_cast %n : index to i64
  %total = tensor.from_elements %size : tensor<i64>
  %shape = arith.constant dense<[-1, 8]> : tensor<2xi64>
  %e2 = tensor.empty() : tensor<2xi64>
  // known = select(shape == -1, 1, shape)
  %known = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel"]}
      ins(%shape : tensor<2xi64>) outs(%e2 : tensor<2xi64>) {
  ^bb0(%s: i64, %o: i64):
    %m1 = arith.constant -1 : i64
    %one = arith.constant 1 : i64
    %is = arith.cmpi eq, %s, %m1 : i64
    %v = arith.select %is, %one, %s : i64
    linalg.yield %v : i64
  } -> tensor<2xi64>
  // product = prod(known)
  %one = arith.constant 1 : i64
  %e0 = tensor.empty() : tensor<i64>
  %init = linalg.fill ins(%one : i64) outs(%e0 : tensor<i64>) -> tensor<i64>
  %prod = linalg.generic {indexing_maps = [#map1, #map0], iterator_types = ["reduction"]}
      ins(%known : tensor<2xi64>) outs(%init : tensor<i64>) {
  ^bb0(%k: i64, %acc: i64):
    %p = arith.muli %k, %acc : i64
    linalg.yield %p : i64
  } -> tensor<i64>
  // missing = total / product; out = select(shape == -1, missing, shape)
  %out = linalg.generic {indexing_maps = [#map1, #map0, #map0, #map1],
                         iterator_types = ["parallel"]}
      ins(%shape, %total, %prod : tensor<2xi64>, tensor<i64>, tensor<i64>)
      outs(%e2 : tensor<2xi64>) {
  ^bb0(%s: i64, %t: i64, %p: i64, %o: i64):
    %m1 = arith.constant -1 : i64
    %is = arith.cmpi eq, %s, %m1 : i64
    %q = arith.divsi %t, %p : i64
    %v = arith.select %is, %q, %s : i64
    linalg.yield %v : i64
  } -> tensor<2xi64>
  %r = tensor.reshape %x(%out) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

/// ConstantOfShape and Range sizes: the extracts that size tensor.empty and
/// bound the range become host scalars (a slice of the shape, a rank-0
/// gather); the range's generic itself stays a kernel.
// CHECK-LABEL: func.func @sizes
// CHECK-SAME: (%[[M:.+]]: tensor<?x?xi64>)
// CHECK: %[[T:.+]] = tensor.dim %[[M]], %c1
// CHECK: %[[I:.+]] = arith.index_cast %[[T]] : index to i64
// CHECK: %[[N:.+]] = arith.index_cast %[[I]] : i64 to index
// CHECK: %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[E]] : tensor<?xf32>)
// BODY-LABEL: func.func @sizes
// BODY-NOT: tensor.extract
// BODY: return
#s = affine_map<(d0) -> (d0)>
func.func @sizes(%mask: tensor<?x?xi64>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %mask, %c0 : tensor<?x?xi64>
  %d1 = tensor.dim %mask, %c1 : tensor<?x?xi64>
  %i0 = arith.index_cast %d0 : index to i64
  %i1 = arith.index_cast %d1 : index to i64
  %shape = tensor.from_elements %i0, %i1 : tensor<2xi64>
  %last = tensor.extract_slice %shape[1] [1] [1] : tensor<2xi64> to tensor<1xi64>
  %v = tensor.extract %last[%c0] : tensor<1xi64>
  %n = arith.index_cast %v : i64 to index
  %e = tensor.empty(%n) : tensor<?xf32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %f : tensor<?xf32>
}

// -----

/// What the host cannot compute stays: an element of a model input, an
/// extract at a run-time index, an extract of a large tensor, an extract
/// inside a kernel body; a reshape whose shape is an input keeps its reads
/// (kiln-cuda-serial-kernels refuses them after bufferization).
// CHECK-LABEL: func.func @stays
// CHECK: tensor.extract %arg0[%c0]
// CHECK: tensor.extract %{{.+}}[%arg2]
// CHECK: tensor.extract %{{.+}}[%c3]
// CHECK: linalg.generic
// CHECK: tensor.extract %arg0
// CHECK: tensor.collapse_shape %arg1
// CHECK: %[[E:.+]] = tensor.extract %arg0[%{{.+}}]
// CHECK: %[[I:.+]] = arith.index_cast %[[E]]
// CHECK: tensor.expand_shape %{{.+}} output_shape [%[[I]], 2]
#e = affine_map<(d0) -> (d0)>
func.func @stays(%shape: tensor<2xi64>, %x: tensor<4x2xf32>, %i: index)
    -> (i64, i64, f32, tensor<4xi64>, tensor<?x2xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %a = tensor.extract %shape[%c0] : tensor<2xi64>
  %e2 = tensor.empty() : tensor<2xi64>
  %twice = linalg.generic {indexing_maps = [#e, #e], iterator_types = ["parallel"]}
      ins(%shape : tensor<2xi64>) outs(%e2 : tensor<2xi64>) {
  ^bb0(%s: i64, %o: i64):
    %t = arith.addi %s, %s : i64
    linalg.yield %t : i64
  } -> tensor<2xi64>
  %b = tensor.extract %twice[%i] : tensor<2xi64>
  %e100 = tensor.empty() : tensor<100xf32>
  %one = arith.constant 1.0 : f32
  %big = linalg.fill ins(%one : f32) outs(%e100 : tensor<100xf32>) -> tensor<100xf32>
  %c = tensor.extract %big[%c3] : tensor<100xf32>
  %e4 = tensor.empty() : tensor<4xi64>
  %inside = linalg.generic {indexing_maps = [#e], iterator_types = ["parallel"]}
      outs(%e4 : tensor<4xi64>) {
  ^bb0(%o: i64):
    %s0 = tensor.extract %shape[%c0] : tensor<2xi64>
    linalg.yield %s0 : i64
  } -> tensor<4xi64>
  %r = tensor.reshape %x(%shape) : (tensor<4x2xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  return %a, %b, %c, %inside, %r : i64, i64, f32, tensor<4xi64>, tensor<?x2xf32>
}
