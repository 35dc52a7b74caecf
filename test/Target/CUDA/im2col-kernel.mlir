// RUN: kiln-opt --split-input-file --kiln-cuda-gemm %s | FileCheck %s

// A padded 3x3 convolution's im2col in f16: the kernel reads the unpadded
// source with bounds checks (clamped indices, zero where outside), so the
// zero fill and the copy into the padded buffer go; 8 taps per thread, one
// 16-byte store; the grid is (an image's 324 vectors / 256, 2 images).
// CHECK-LABEL: func.func @padded_3x3
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2, 3, 4, 5]] : memref<2x6x6x8x3x3xf16> into memref<5184xf16>
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %c2{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c256
// CHECK: arith.cmpi ult, %{{.*}}, %c324_i32 : i32
// CHECK: arith.remui %{{.*}}, %c36_i32 : i32
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK-COUNT-8: memref.load %[[SRC:arg0]][
// CHECK: vector.from_elements {{.*}} : vector<8xf16>
// CHECK: vector.store %{{.*}}, %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<5184xf16>, vector<8xf16>
// CHECK-NOT: linalg.generic
// CHECK: memref.dealloc %{{.*}} : memref<2x6x6x8x3x3xf16>
func.func @padded_3x3(%x: memref<2x8x6x6xf32>, %out: memref<2x6x6x8x3x3xf16>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x8x8x8xf32>)
  %inner = memref.subview %padded[0, 0, 1, 1] [2, 8, 6, 6] [1, 1, 1, 1] : memref<2x8x8x8xf32> to memref<2x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<2x8x6x6xf32>) outs(%inner : memref<2x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>)
  %col = memref.alloc() {alignment = 64 : i64} : memref<2x6x6x8x3x3xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<2x8x8x8xf32>) outs(%col : memref<2x6x6x8x3x3xf16>) attrs = {kiln.im2col = array<i64: 1, 1, 1, 1>} {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  memref.dealloc %padded : memref<2x8x8x8xf32>
  memref.copy %col, %out : memref<2x6x6x8x3x3xf16> to memref<2x6x6x8x3x3xf16>
  memref.dealloc %col : memref<2x6x6x8x3x3xf16>
  return
}

// -----

// A strided 1x1 convolution in f32 (tf32): 4 channels per thread, no
// padding, so no bounds checks; the input is read where it is.
// CHECK-LABEL: func.func @strided_1x1_f32
// CHECK: gpu.launch
// CHECK-NOT: arith.select
// CHECK-COUNT-4: memref.load %arg0[
// CHECK-NOT: arith.truncf
// The tensor cores would truncate f32 to tf32: each value is rounded to
// nearest first, (bits + 0x1000) & ~0x1fff.
// CHECK: %[[HALF:.*]] = arith.constant 4096 : i32
// CHECK: %[[MASK:.*]] = arith.constant -8192 : i32
// CHECK: %[[SUM:.*]] = arith.addi %{{.*}}, %[[HALF]] : i32
// CHECK: arith.andi %[[SUM]], %[[MASK]] : i32
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<288xf32>, vector<4xf32>
// CHECK-NOT: linalg.generic
func.func @strided_1x1_f32(%x: memref<2x16x6x6xf32>, %col: memref<2x3x3x16x1x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x16x6x6xf32>) outs(%col : memref<2x3x3x16x1x1xf32>) attrs = {kiln.im2col = array<i64: 2, 2, 1, 1>} {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// An RGB stem: spatial padding, then zero channels (3 -> 8) so that K is a
// multiple of 8; both levels fold, the channel is checked too.
// CHECK-LABEL: func.func @stem
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: gpu.launch
// CHECK: arith.cmpi slt, %{{.*}}, %c3_i32{{.*}} : i32
// CHECK: memref.load %arg0[{{.*}}] : memref<2x3x8x8xf32>
// CHECK: vector.store {{.*}} vector<8xf16>
// CHECK-NOT: memref.alloc() {{.*}} : memref<2x8x10x10xf32>
func.func @stem(%x: memref<2x3x8x8xf32>, %col: memref<2x4x4x8x3x3xf16>) {
  %zero = arith.constant 0.0 : f32
  %spatial = memref.alloc() {alignment = 64 : i64} : memref<2x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%spatial : memref<2x3x10x10xf32>)
  %s1 = memref.subview %spatial[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.copy ins(%x : memref<2x3x8x8xf32>) outs(%s1 : memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>)
  %channels = memref.alloc() {alignment = 64 : i64} : memref<2x8x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%channels : memref<2x8x10x10xf32>)
  %s2 = memref.subview %channels[0, 0, 0, 0] [2, 3, 10, 10] [1, 1, 1, 1] : memref<2x8x10x10xf32> to memref<2x3x10x10xf32, strided<[800, 100, 10, 1]>>
  linalg.copy ins(%spatial : memref<2x3x10x10xf32>) outs(%s2 : memref<2x3x10x10xf32, strided<[800, 100, 10, 1]>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%channels : memref<2x8x10x10xf32>) outs(%col : memref<2x4x4x8x3x3xf16>) attrs = {kiln.im2col = array<i64: 2, 2, 1, 1>} {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  memref.dealloc %spatial : memref<2x3x10x10xf32>
  memref.dealloc %channels : memref<2x8x10x10xf32>
  return
}

// -----

// The padded buffer has another reader: the padding stays, the kernel
// reads the padded buffer without checks.
// CHECK-LABEL: func.func @padded_read_elsewhere
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: gpu.launch
// CHECK-NOT: arith.select
// CHECK: memref.load %[[PADDED:.*]][{{.*}}] : memref<2x8x8x8xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<2x8x8x8xf32>) outs(%arg2
func.func @padded_read_elsewhere(%x: memref<2x8x6x6xf32>, %col: memref<2x6x6x8x3x3xf16>, %other: memref<2x8x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<2x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x8x8x8xf32>)
  %inner = memref.subview %padded[0, 0, 1, 1] [2, 8, 6, 6] [1, 1, 1, 1] : memref<2x8x8x8xf32> to memref<2x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<2x8x6x6xf32>) outs(%inner : memref<2x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<2x8x8x8xf32>) outs(%col : memref<2x6x6x8x3x3xf16>) attrs = {kiln.im2col = array<i64: 1, 1, 1, 1>} {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  linalg.copy ins(%padded : memref<2x8x8x8xf32>) outs(%other : memref<2x8x8x8xf32>)
  memref.dealloc %padded : memref<2x8x8x8xf32>
  return
}

// -----

// What stays generic: K = 3 is not a multiple of 8 (no 16-byte rows), and a
// generic without the kiln.im2col mark, or whose maps disagree with it.
// CHECK-LABEL: func.func @stays_generic
// CHECK-NOT: gpu.launch
// CHECK-COUNT-3: linalg.generic
func.func @stays_generic(%x: memref<2x3x6x6xf32>, %col: memref<2x6x6x3x1x1xf16>, %x8: memref<2x8x6x6xf32>, %col8: memref<2x6x6x8x1x1xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<2x3x6x6xf32>) outs(%col : memref<2x6x6x3x1x1xf16>) attrs = {kiln.im2col = array<i64: 1, 1, 1, 1>} {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x8 : memref<2x8x6x6xf32>) outs(%col8 : memref<2x6x6x8x1x1xf16>) {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x8 : memref<2x8x6x6xf32>) outs(%col8 : memref<2x6x6x8x1x1xf16>) attrs = {kiln.im2col = array<i64: 2, 2, 1, 1>} {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  return
}

// -----

// The stem's two pads as bufferization writes them into one allocation: the
// zero channels filled, a subview for the 3 real channels filled too, and
// the image copied into a subview of that subview.
// CHECK-LABEL: func.func @stem_one_buffer
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK-NOT: memref.subview
// CHECK: gpu.launch
// CHECK: memref.load %arg0[{{.*}}] : memref<2x3x8x8xf32>
// CHECK: vector.store {{.*}} vector<8xf16>
func.func @stem_one_buffer(%x: memref<2x3x8x8xf32>, %col: memref<2x4x4x8x3x3xf16>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() {alignment = 64 : i64} : memref<2x8x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x8x10x10xf32>)
  %real = memref.subview %padded[0, 0, 0, 0] [2, 3, 10, 10] [1, 1, 1, 1] : memref<2x8x10x10xf32> to memref<2x3x10x10xf32, strided<[800, 100, 10, 1]>>
  linalg.fill ins(%zero : f32) outs(%real : memref<2x3x10x10xf32, strided<[800, 100, 10, 1]>>)
  %inner = memref.subview %real[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32, strided<[800, 100, 10, 1]>> to memref<2x3x8x8xf32, strided<[800, 100, 10, 1], offset: 11>>
  linalg.copy ins(%x : memref<2x3x8x8xf32>) outs(%inner : memref<2x3x8x8xf32, strided<[800, 100, 10, 1], offset: 11>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 * 2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<2x8x10x10xf32>) outs(%col : memref<2x4x4x8x3x3xf16>) attrs = {kiln.im2col = array<i64: 2, 2, 1, 1>} {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  memref.dealloc %padded : memref<2x8x10x10xf32>
  return
}

// -----

// A padded 3x3 convolution with a symbolic batch: the grid's second
// dimension is the image count read from col at run time; the pad's views
// cover every image (the allocation's size value), so the kernel reads the
// unpadded source and the fill and copy go. Each image's offset into col is
// added in 64 bits (the images past 2^31 elements stay addressable).
// CHECK-LABEL: func.func @padded_symbolic_batch
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.copy
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %arg1 {{\[}}[0, 1, 2, 3, 4, 5]] : memref<?x6x6x8x3x3xf16> into memref<?xf16>
// CHECK: %[[N:.*]] = memref.dim %arg1, %c0{{.*}} : memref<?x6x6x8x3x3xf16>
// CHECK: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2{{.*}}, %{{.*}} = %[[N]], %{{.*}} = %c1{{.*}})
// CHECK: %[[IMG:.*]] = gpu.block_id  y
// CHECK: arith.cmpi ult, %{{.*}}, %c324_i32 : i32
// CHECK-COUNT-8: memref.load %arg0[%[[IMG]],
// CHECK: arith.muli %[[IMG]], %c2592 : index
// CHECK: vector.store %{{.*}}, %[[FLAT]][%{{.*}}] {alignment = 16 : i64} : memref<?xf16>, vector<8xf16>
// CHECK-NOT: linalg.generic
func.func @padded_symbolic_batch(%x: memref<?x8x6x6xf32>, %col: memref<?x6x6x8x3x3xf16>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x8x6x6xf32>
  %padded = memref.alloc(%n) {alignment = 64 : i64} : memref<?x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<?x8x8x8xf32>)
  %inner = memref.subview %padded[0, 0, 1, 1] [%n, 8, 6, 6] [1, 1, 1, 1] : memref<?x8x8x8xf32> to memref<?x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<?x8x6x6xf32>) outs(%inner : memref<?x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<?x8x8x8xf32>) outs(%col : memref<?x6x6x8x3x3xf16>) attrs = {kiln.im2col = array<i64: 1, 1, 1, 1>} {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  memref.dealloc %padded : memref<?x8x8x8xf32>
  return
}

// -----

// A view of the padded buffer whose image count is another value: it may
// not cover every image, so the padding stays and the kernel reads the
// padded buffer.
// CHECK-LABEL: func.func @padded_other_batch
// CHECK: linalg.fill
// CHECK: linalg.copy
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<?x8x8x8xf32>
func.func @padded_other_batch(%x: memref<?x8x6x6xf32>, %col: memref<?x6x6x8x3x3xf16>, %m: index) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = memref.dim %col, %c0 : memref<?x6x6x8x3x3xf16>
  %padded = memref.alloc(%n) {alignment = 64 : i64} : memref<?x8x8x8xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<?x8x8x8xf32>)
  %inner = memref.subview %padded[0, 0, 1, 1] [%m, 8, 6, 6] [1, 1, 1, 1] : memref<?x8x8x8xf32> to memref<?x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>
  linalg.copy ins(%x : memref<?x8x6x6xf32>) outs(%inner : memref<?x8x6x6xf32, strided<[512, 64, 8, 1], offset: 9>>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 + d4, d2 + d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%padded : memref<?x8x8x8xf32>) outs(%col : memref<?x6x6x8x3x3xf16>) attrs = {kiln.im2col = array<i64: 1, 1, 1, 1>} {
  ^bb0(%in: f32, %o: f16):
    %t = arith.truncf %in : f32 to f16
    linalg.yield %t : f16
  }
  memref.dealloc %padded : memref<?x8x8x8xf32>
  return
}
