// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-matmul{vector-width=16 tile-rows=6 tile-vectors=4})" | FileCheck %s

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, d1)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d2)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// A 1x1 conv's taps with a B prologue (a squeeze-excite scale): per B row
/// (input channel) the per-channel input is loaded and sigmoid(s) computed
/// once as scalars; per vector of columns x is loaded, scaled by the splat
/// and zeroed past the columns before it is packed. No linalg op is left.
// CHECK-LABEL: func @excite_prologue
// CHECK-NOT: linalg.generic
// CHECK: vector.create_mask
// CHECK: %[[CH:.*]] = arith.divui %{{.*}}, %c1{{.*}} : index
// CHECK: %[[S:.*]] = memref.load %arg2[%[[CH]]] : memref<8xf32>
// CHECK: %[[N:.*]] = arith.negf %[[S]] : f32
// CHECK: math.exp %[[N]] : f32
// CHECK: %[[G:.*]] = arith.divf %{{.*}} : f32
// CHECK: %[[XV:.*]] = vector.maskedload %arg1[%[[CH]], %{{.*}}], %{{.*}}, %{{.*}} : memref<8x40xf32>
// CHECK: %[[GV:.*]] = vector.broadcast %[[G]] : f32 to vector<16xf32>
// CHECK: %[[E:.*]] = arith.mulf %[[XV]], %[[GV]] : vector<16xf32>
// CHECK: arith.select %{{.*}}, %[[E]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @excite_prologue(%w: memref<4x8x1x1xf32>, %x: memref<8x40xf32>, %s: memref<8xf32>, %out: memref<4x40xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.generic {indexing_maps = [#w, #x, #c, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x, %s : memref<4x8x1x1xf32>, memref<8x40xf32>, memref<8xf32>) outs(%out : memref<4x40xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %xv: f32, %sv: f32, %o: f32):
    %n = arith.negf %sv : f32
    %ex = math.exp %n : f32
    %d = arith.addf %ex, %one : f32
    %g = arith.divf %one, %d : f32
    %e = arith.mulf %xv, %g : f32
    %m = arith.mulf %a, %e : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  return
}

// -----

#w = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#x = affine_map<(d0, d1, d2, d3, d4) -> (d2, (d1 floordiv 40) * 42 + d1 mod 40)>
#t0 = affine_map<(d0, d1, d2, d3, d4) -> (d2, 0, 0, 0)>
#t1 = affine_map<(d0, d1, d2, d3, d4) -> (d2, 0, 0, 1)>
#c = affine_map<(d0, d1, d2, d3, d4) -> (d2)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1)>

/// A depthwise conv (two taps here, views of the padded input at pitch 42)
/// with bias and ReLU6 as the B prologue of a 1x1 conv whose B columns are
/// image rows of 40 at row step 42: each vector of 16 columns is one or two
/// masked loads per tap (lanes in the next image row read 2 further on),
/// no gathers. Panels where no vector wraps to the next row take the
/// one-load version (scf.if on the panel's wrap flag); in the others each
/// vector loads its inputs twice only where it wraps itself (scf.if on its
/// own flag, yielding the inputs' vectors).
// CHECK-LABEL: func @depthwise_prologue
// CHECK-NOT: vector.gather
// CHECK: %[[Y:.*]] = arith.divui %[[P:.*]], %c40{{.*}} : index
// CHECK: %[[X:.*]] = arith.remui %[[P]], %c40{{.*}} : index
// CHECK: %[[YO:.*]] = arith.muli %[[Y]], %c42{{.*}} : index
// CHECK: %[[BASE:.*]] = arith.addi %[[YO]], %[[X]] : index
// CHECK: %[[NEXT:.*]] = arith.addi %[[BASE]], %c2{{.*}} : index
// CHECK: vector.reduction <or>
// CHECK: scf.if
// CHECK: memref.load %arg3[%[[CH:.*]], %c0{{.*}}, %c0{{.*}}, %c0{{.*}}] : memref<8x1x1x2xf32>
// CHECK: memref.load %arg3[%[[CH]], %c0{{.*}}, %c0{{.*}}, %c1{{.*}}] : memref<8x1x1x2xf32>
// CHECK: memref.load %arg4[%[[CH]]] : memref<8xf32>
// CHECK: scf.if %{{.*}} -> (vector<16xf32>, vector<16xf32>) {
// CHECK: %[[A0:.*]] = vector.maskedload %arg1[%[[CH]], %{{.*}}], %{{.*}}, %{{.*}} : memref<8x84xf32>
// CHECK: vector.maskedload %arg1[%[[CH]], %{{.*}}], %{{.*}}, %[[A0]] : memref<8x84xf32>
// CHECK: %[[B0:.*]] = vector.maskedload %arg2[%[[CH]], %{{.*}}], %{{.*}}, %{{.*}} : memref<8x84xf32, strided<[85, 1], offset: 1>>
// CHECK: vector.maskedload %arg2[%[[CH]], %{{.*}}], %{{.*}}, %[[B0]]
// CHECK: } else {
// CHECK-COUNT-2: vector.maskedload
// CHECK-NOT: vector.maskedload
// CHECK: scf.yield
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: arith.minimumf {{.*}} : vector<16xf32>
// CHECK: } else {
// CHECK-COUNT-2: vector.maskedload
// CHECK-NOT: vector.maskedload
// CHECK: math.fma
// CHECK-NOT: linalg.generic
func.func @depthwise_prologue(%w: memref<4x8x1x1xf32>, %x0: memref<8x84xf32>, %x1: memref<8x84xf32, strided<[85, 1], offset: 1>>, %dw: memref<8x1x1x2xf32>, %bias: memref<8xf32>, %out: memref<4x80xf32>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  linalg.generic {indexing_maps = [#w, #x, #x, #t0, #t1, #c, #o], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%w, %x0, %x1, %dw, %dw, %bias : memref<4x8x1x1xf32>, memref<8x84xf32>, memref<8x84xf32, strided<[85, 1], offset: 1>>, memref<8x1x1x2xf32>, memref<8x1x1x2xf32>, memref<8xf32>) outs(%out : memref<4x80xf32>) attrs = {kiln.conv_taps} {
  ^bb0(%a: f32, %u: f32, %v: f32, %k0: f32, %k1: f32, %b: f32, %o: f32):
    %p = arith.mulf %u, %k0 : f32
    %q = math.fma %v, %k1, %p : f32
    %sb = arith.addf %q, %b : f32
    %lo = arith.maximumf %sb, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    %m = arith.mulf %a, %hi : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  return
}
