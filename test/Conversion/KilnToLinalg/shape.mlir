// RUN: kiln-opt %s --convert-kiln-to-linalg -split-input-file -verify-diagnostics | FileCheck %s

/// Static reshapes are views: a collapse when the result groups the input's
/// dims, an expand for the reverse, else a collapse to 1-D and an expand.
// CHECK-LABEL: func @reshape_static
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] : tensor<1x8x1x1xf32> into tensor<1x8xf32>
// CHECK-NOT: tensor.reshape
func.func @reshape_static(%x: tensor<1x8x1x1xf32>) -> tensor<1x8xf32> {
  %0 = kiln.reshape %x : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

// CHECK-LABEL: func @reshape_static_expand
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [2, 4, 16] : tensor<2x64xf32> into tensor<2x4x16xf32>
func.func @reshape_static_expand(%x: tensor<2x64xf32>) -> tensor<2x4x16xf32> {
  %0 = kiln.reshape %x : (tensor<2x64xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

// CHECK-LABEL: func @reshape_static_regroup
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<6x4xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [4, 6] : tensor<24xf32> into tensor<4x6xf32>
func.func @reshape_static_regroup(%x: tensor<6x4xf32>) -> tensor<4x6xf32> {
  %0 = kiln.reshape %x : (tensor<6x4xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

/// A dynamic result keeps tensor.reshape with the shape operand.
// CHECK-LABEL: func @reshape_dynamic
// CHECK: tensor.reshape %{{.*}}(%{{.*}}) : (tensor<?x8xf32>, tensor<2xi64>) -> tensor<?x4xf32>
func.func @reshape_dynamic(%x: tensor<?x8xf32>, %s: tensor<2xi64>) -> tensor<?x4xf32> {
  %0 = kiln.reshape %x, %s : (tensor<?x8xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

/// One dynamic dim on each side and the same static count (48·28 = 2·24·28):
/// the dynamic dims are equal (n·s = m·s), so the reshape is a view whatever
/// the shape operand computes (ShuffleNet's channel shuffle with a symbolic
/// batch), and so is the reverse; the expand's batch is the input's.
// CHECK-LABEL: func @reshape_dynamic_batch
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[N:.*]] = tensor.dim %arg0, %[[C0]] : tensor<?x48x28xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [%[[N]], 2, 24, 28] : tensor<?x48x28xf32> into tensor<?x2x24x28xf32>
// CHECK: tensor.collapse_shape %[[E]] {{\[\[}}0], [1, 2], [3]] : tensor<?x2x24x28xf32> into tensor<?x48x28xf32>
// CHECK-NOT: tensor.reshape
func.func @reshape_dynamic_batch(%x: tensor<?x48x28xf32>, %s: tensor<4xi64>, %t: tensor<3xi64>) -> tensor<?x48x28xf32> {
  %0 = kiln.reshape %x, %s : (tensor<?x48x28xf32>, tensor<4xi64>) -> tensor<?x2x24x28xf32>
  %1 = kiln.reshape %0, %t : (tensor<?x2x24x28xf32>, tensor<3xi64>) -> tensor<?x48x28xf32>
  return %1 : tensor<?x48x28xf32>
}

/// Different static counts (8 against 4): the dynamic dims differ, the
/// reshape reads its shape operand.
// CHECK-LABEL: func @reshape_dynamic_other_count
// CHECK: tensor.reshape
func.func @reshape_dynamic_other_count(%x: tensor<?x8xf32>, %s: tensor<3xi64>) -> tensor<?x2x2xf32> {
  %0 = kiln.reshape %x, %s : (tensor<?x8xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  return %0 : tensor<?x2x2xf32>
}

// -----

// CHECK-LABEL: func @squeeze_unsqueeze
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<1x5x1xf32> into tensor<5xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 5] : tensor<5xf32> into tensor<1x5xf32>
func.func @squeeze_unsqueeze(%x: tensor<1x5x1xf32>) -> tensor<1x5xf32> {
  %0 = kiln.squeeze %x {axes = array<i64: 0, 2>} : (tensor<1x5x1xf32>) -> tensor<5xf32>
  %1 = kiln.unsqueeze %0 {axes = array<i64: 0>} : (tensor<5xf32>) -> tensor<1x5xf32>
  return %1 : tensor<1x5xf32>
}

// -----

// CHECK-LABEL: func @transpose_concat_slice
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x3xf32>) outs(%{{.*}} : tensor<3x2xf32>) permutation = [1, 0]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [3, 2] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[3, 0] [3, 2] [1, 1]
// CHECK: tensor.extract_slice %{{.*}}[1, 0] [2, 2] [2, 1]
func.func @transpose_concat_slice(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = kiln.concat %0, %0 {axis = 0 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %2 = kiln.slice %1 {starts = array<i64: 1>, ends = array<i64: 5>, axes = array<i64: 0>, steps = array<i64: 2>} : (tensor<6x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}

// -----

/// Gather wraps negative indices and clamps into range before reading.
// CHECK-LABEL: func @gather
// CHECK: linalg.generic
// CHECK: arith.index_cast
// CHECK: arith.select
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<100x16xf32>
func.func @gather(%table: tensor<100x16xf32>, %ids: tensor<2x5xi64>) -> tensor<2x5x16xf32> {
  %0 = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
  return %0 : tensor<2x5x16xf32>
}

// -----

/// An op the lowering does not cover yet (unsigned cumsum) is a clean
/// error naming it.
func.func @unsupported(%x: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{(kiln.cumsum): cannot lower to linalg with operand types (tensor<4xui8>) and result types (tensor<4xui8>): unsupported: unsigned integer tensors}}
  %0 = kiln.cumsum %x {axis = 0 : i64} : tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

/// A range with run-time bounds: length max(ceildiv(limit - start, delta), 0)
/// (0 for a zero delta), then out[i] = start + i * delta.
// CHECK-LABEL: func @range_dynamic
//       CHECK:   %[[D:.+]] = tensor.extract %arg2[]
//       CHECK:   %[[L:.+]] = tensor.extract %arg1[]
//       CHECK:   arith.ceildivsi
//       CHECK:   %[[N:.+]] = arith.index_cast
//       CHECK:   tensor.empty(%[[N]]) : tensor<?xi64>
//       CHECK:   linalg.generic
//       CHECK:     linalg.index 0
//       CHECK:     arith.muli
//       CHECK:     arith.addi
func.func @range_dynamic(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %r = kiln.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}

// -----

/// Float ranges count and step in f64, then round.
// CHECK-LABEL: func @range_f32
//       CHECK:   math.ceil
//       CHECK:   arith.fptosi
//       CHECK:   linalg.generic
//       CHECK:     arith.sitofp
//       CHECK:     arith.truncf
func.func @range_f32(%s: tensor<f32>, %l: tensor<f32>, %d: tensor<f32>) -> tensor<?xf32> {
  %r = kiln.range %s, %l, %d : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
// -----

/// Border modes gather: reflect mirrors j = i - begin into [0, size) with
/// period 2 * (size - 1).
// CHECK-LABEL: func @pad_reflect
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<3x7xf32>)
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: %[[J:.+]] = arith.subi %[[I]], %c1
// CHECK: arith.remsi %[[J]], %c6
// CHECK: arith.cmpi sgt, %{{.*}}, %c3
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<3x4xf32>
func.func @pad_reflect(%x: tensor<3x4xf32>) -> tensor<3x7xf32> {
  %0 = kiln.pad reflect %x {pads = array<i64: 0, 1, 0, 2>} : (tensor<3x4xf32>) -> tensor<3x7xf32>
  return %0 : tensor<3x7xf32>
}

// -----

/// Edge clamps, wrap takes the non-negative remainder.
// CHECK-LABEL: func @pad_edge_wrap
// CHECK: linalg.generic
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: linalg.generic
// CHECK: arith.remsi %{{.*}}, %c4
// CHECK: arith.addi %{{.*}}, %c4{{.*}} : index
func.func @pad_edge_wrap(%x: tensor<4xf32>) -> (tensor<9xf32>, tensor<9xf32>) {
  %0 = kiln.pad edge %x {pads = array<i64: 2, 3>} : (tensor<4xf32>) -> tensor<9xf32>
  %1 = kiln.pad wrap %x {pads = array<i64: 2, 3>} : (tensor<4xf32>) -> tensor<9xf32>
  return %0, %1 : tensor<9xf32>, tensor<9xf32>
}

// -----

/// Constant padding that crops reads in range and selects the fill elsewhere.
// CHECK-LABEL: func @pad_crop
// CHECK-DAG: %[[FILL:.+]] = arith.constant 1.500000e+00 : f32
// CHECK: linalg.generic
// CHECK: %[[V:.+]] = tensor.extract
// CHECK: arith.select %{{.*}}, %[[V]], %[[FILL]] : f32
func.func @pad_crop(%x: tensor<4xf32>) -> tensor<5xf32> {
  %0 = kiln.pad constant %x {pads = array<i64: -1, 2>, value = 1.5 : f64} : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @pad_edge_dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{(kiln.pad): cannot lower to linalg with operand types (tensor<?xf32>) and result types (tensor<?xf32>): unsupported: border modes and crops need a static result (dynamic: operand 0 dims 0; result dims 0)}}
  %0 = kiln.pad edge %x {pads = array<i64: 2, 3>} : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

/// One-hot: the new dim is a loop dim; negative indices count from depth.
// CHECK-DAG: #[[IDX:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func @one_hot
// CHECK: linalg.generic {indexing_maps = [#[[IDX]], #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<4xi32>) outs(%{{.*}} : tensor<10x4xf32>)
// CHECK: %[[I:.+]] = arith.extsi %{{.*}} : i32 to i64
// CHECK: arith.cmpi slt, %[[I]], %c0_i64
// CHECK: arith.addi %[[I]], %c10_i64
// CHECK: linalg.index 0
// CHECK: arith.cmpi eq
// CHECK: arith.select
func.func @one_hot(%i: tensor<4xi32>, %v: tensor<2xf32>) -> tensor<10x4xf32> {
  %0 = kiln.one_hot %i, %v {depth = 10 : i64, axis = 0 : i64} : (tensor<4xi32>, tensor<2xf32>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}

// -----

/// A negative step gathers backwards from the clamped start.
// CHECK-DAG: #[[REV:.+]] = affine_map<(d0, d1) -> (d0, d1 * -2 + 9)>
// CHECK-LABEL: func @slice_negative_step
// CHECK: linalg.generic {indexing_maps = [#[[REV]], #{{.+}}]
// CHECK-SAME: outs(%{{.*}} : tensor<2x4xf32>)
func.func @slice_negative_step(%x: tensor<2x10xf32>) -> tensor<2x4xf32> {
  %0 = kiln.slice %x {axes = array<i64: 1>, starts = array<i64: 20>, ends = array<i64: 1>, steps = array<i64: -2>} : (tensor<2x10xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

/// Empty slices, split pieces and concat inputs read nothing: no
/// extract_slice or insert_slice at the end of a dim.
// CHECK-LABEL: func @empty_pieces
// CHECK-SAME: (%[[X:.+]]: tensor<2x8xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x0xf32>
// CHECK: %[[P:.+]] = tensor.empty() : tensor<2x0xf32>
// CHECK: %[[C:.+]] = tensor.empty() : tensor<2x8xf32>
// CHECK: %[[R:.+]] = tensor.insert_slice %[[X]] into %[[C]][0, 0] [2, 8] [1, 1]
// CHECK-NOT: insert_slice
// CHECK: return %[[E]], %[[P]], %[[R]]
func.func @empty_pieces(%x: tensor<2x8xf32>) -> (tensor<2x0xf32>, tensor<2x0xf32>, tensor<2x8xf32>) {
  %0 = kiln.slice %x {axes = array<i64: 1>, starts = array<i64: 10>, ends = array<i64: 12>, steps = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x0xf32>
  %1:2 = kiln.split %x {axis = 1 : i64, sizes = array<i64: 8, 0>} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x0xf32>)
  %2 = kiln.concat %x, %1#1 {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x0xf32>) -> tensor<2x8xf32>
  return %0, %1#1, %2 : tensor<2x0xf32>, tensor<2x0xf32>, tensor<2x8xf32>
}

// -----

/// A dynamic flatten at the ends (axis = rank: [N, 1], axis 0: [1, N], the
/// attention-mask plumbing of decoder exports) collapses every dim into N,
/// then adds the unit dim.
// CHECK-LABEL: func @flatten_dynamic_ends
// CHECK: %[[ALL:.+]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<?x?xi1> into tensor<?xi1>
// CHECK: tensor.expand_shape %[[ALL]] {{\[\[}}0, 1]] output_shape [%{{.*}}, 1] : tensor<?xi1> into tensor<?x1xi1>
// CHECK: %[[ALL2:.+]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1, 2]] : tensor<?x3x?xf32> into tensor<?xf32>
// CHECK: tensor.expand_shape %[[ALL2]] {{\[\[}}0, 1]] output_shape [1, %{{.*}}] : tensor<?xf32> into tensor<1x?xf32>
func.func @flatten_dynamic_ends(%m: tensor<?x?xi1>, %x: tensor<?x3x?xf32>) -> (tensor<?x1xi1>, tensor<1x?xf32>) {
  %0 = kiln.flatten %m {axis = 2 : i64} : (tensor<?x?xi1>) -> tensor<?x1xi1>
  %1 = kiln.flatten %x {axis = 0 : i64} : (tensor<?x3x?xf32>) -> tensor<1x?xf32>
  return %0, %1 : tensor<?x1xi1>, tensor<1x?xf32>
}
