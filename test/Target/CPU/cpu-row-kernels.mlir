// RUN: kiln-opt %s --split-input-file --kiln-cpu-row-kernels | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-row-kernels="vector-width=8 accumulators=2" | FileCheck %s --check-prefix=AVX2

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// Softmax as bufferization leaves it (max, exp, sum, divide; the reduced
/// buffer reused): one loop over blocks of rows on the pool (4 rows of 1000
/// make a task of >= 4096 elements); max and sum stay in registers (the
/// scratch buffer is gone); the row is read in vectors with 4 partial
/// accumulators and one masked tail, reduced once per row.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: memref<64x1000xf32>, %[[Y:.+]]: memref<64x1000xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %c64, %c4
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%[[BLOCKS]])
// CHECK: %[[FIRST:.+]] = arith.muli %[[B]], %c4
// CHECK: %[[END:.+]] = arith.addi %[[FIRST]], %c4
// CHECK: %[[LAST:.+]] = arith.minui %[[END]], %c64
// CHECK: scf.for %[[R:.+]] = %[[FIRST]] to %[[LAST]]
// CHECK: %[[MAXES:.+]]:4 = scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: vector.load %[[X]][%[[R]], %{{.+}}] : memref<64x1000xf32>, vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.create_mask
// CHECK: vector.maskedload %[[X]]
// CHECK: arith.select
// CHECK: vector.extract_strided_slice %{{.+}} {offsets = [8], sizes = [8], strides = [1]} : vector<16xf32> to vector<8xf32>
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK: arith.maximumf {{.*}} : vector<4xf32>
// CHECK: arith.maximumf {{.*}} : vector<2xf32>
// CHECK: arith.maximumf {{.*}} : vector<1xf32>
// CHECK: %[[MAX:.+]] = vector.extract %{{.+}}[0] : f32 from vector<1xf32>
// CHECK: %[[M:.+]] = arith.maximumf %[[MAX]], %{{.+}} fastmath<reassoc> : f32
// CHECK: %[[MV:.+]] = vector.broadcast %[[M]] : f32 to vector<16xf32>
// CHECK: scf.for
// CHECK: arith.subf %{{.+}}, %[[MV]] : vector<16xf32>
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: vector.store {{.*}}, %[[Y]]
// CHECK: vector.maskedstore %[[Y]]
// CHECK: arith.addf {{.*}} : vector<1xf32>
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK: } {kiln.heavy}
// CHECK-NOT: linalg.
// AVX2-LABEL: func.func @softmax
// AVX2: scf.for {{.*}} -> (vector<8xf32>, vector<8xf32>)
func.func @softmax(%x: memref<64x1000xf32>, %y: memref<64x1000xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %lowest = arith.constant 0xFF800000 : f32
  %r = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.fill ins(%lowest : f32) outs(%r : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x1000xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<64x1000xf32>, memref<64xf32>) outs(%y : memref<64x1000xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  linalg.fill ins(%zero : f32) outs(%r : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<64x1000xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %r : memref<64x1000xf32>, memref<64xf32>) outs(%y : memref<64x1000xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %0 = arith.divf %in, %s : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1)>
#param = affine_map<(d0, d1, d2) -> (d2)>

/// Layer norm with a residual add before it and a copied init: the add, both
/// statistics and the scaling are one kernel over the 2x3 rows (delinearized
/// from one index); the copy moves a register value; the scale is read by
/// the row position. Small, so not marked for the pool.
// CHECK-LABEL: func.func @layer_norm
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel
// CHECK: scf.for %[[R:.+]] =
// CHECK: %[[I1:.+]] = arith.remui %[[R]], %c3
// CHECK: %[[I0:.+]] = arith.divui %[[R]], %c3
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: vector.store {{.*}}[%[[I0]], %[[I1]], %{{.+}}]
// CHECK: arith.addf {{.*}} : vector<1xf32>
// CHECK: arith.addf {{.*}} : vector<1xf32>
// CHECK: vector.load %{{.+}}[%{{.+}}] : memref<40xf32>, vector<16xf32>
// CHECK: math.rsqrt {{.*}} : vector<16xf32>
// CHECK-NOT: kiln.heavy
// CHECK: return
func.func @layer_norm(%a: memref<2x3x40xf32>, %b: memref<2x3x40xf32>, %g: memref<40xf32>,
                      %y: memref<2x3x40xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %n = arith.constant 4.000000e+01 : f32
  %eps = arith.constant 9.99999974E-6 : f32
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %b : memref<2x3x40xf32>, memref<2x3x40xf32>) outs(%y : memref<2x3x40xf32>) {
  ^bb0(%u: f32, %v: f32, %out: f32):
    %0 = arith.addf %u, %v : f32
    linalg.yield %0 : f32
  }
  %s = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<2x3xf32>)
  %t = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
  memref.copy %s, %t : memref<2x3xf32> to memref<2x3xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y : memref<2x3x40xf32>) outs(%t : memref<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %t : memref<2x3x40xf32>, memref<2x3xf32>) outs(%y : memref<2x3x40xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.divf %sum, %n : f32
    %1 = arith.subf %in, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%y : memref<2x3x40xf32>) outs(%s : memref<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %0, %out fastmath<reassoc> : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #param, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%y, %s, %g : memref<2x3x40xf32>, memref<2x3xf32>, memref<40xf32>) outs(%y : memref<2x3x40xf32>) {
  ^bb0(%in: f32, %sq: f32, %gamma: f32, %out: f32):
    %0 = arith.divf %sq, %n : f32
    %1 = arith.addf %0, %eps : f32
    %2 = math.rsqrt %1 : f32
    %3 = arith.mulf %in, %2 : f32
    %4 = arith.mulf %3, %gamma : f32
    linalg.yield %4 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

/// A reduction over the outer dim is not a row reduction: left alone.
// CHECK-LABEL: func.func @column_sum
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
func.func @column_sum(%x: memref<64x100xf32>, %s: memref<100xf32>) {
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<64x100xf32>) outs(%s : memref<100xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// A float sum that may not reassociate, and an integer division (masked
/// lanes would divide by zero), are left to the generic loops.
// CHECK-LABEL: func.func @ordered_sum
// CHECK: linalg.generic
// CHECK-LABEL: func.func @integer_division
// CHECK: linalg.generic
// CHECK-NOT: scf.parallel
func.func @ordered_sum(%x: memref<64x100xf32>, %s: memref<64xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x100xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}
func.func @integer_division(%x: memref<64x100xi32>, %s: memref<64xi32>) {
  %c3 = arith.constant 3 : i32
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x100xi32>) outs(%s : memref<64xi32>) {
  ^bb0(%in: i32, %out: i32):
    %0 = arith.divsi %in, %c3 : i32
    %1 = arith.addi %0, %out : i32
    linalg.yield %1 : i32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#t = affine_map<(d0, d1) -> (d1, d0)>

/// A consumer reading the reduced buffer across rows (here: the written
/// buffer through a transposed map) cannot join: the group ends before it.
// CHECK-LABEL: func.func @cross_row_consumer
// CHECK: scf.parallel
// CHECK: arith.maxsi {{.*}} : vector<1xi32>
// CHECK: linalg.generic
func.func @cross_row_consumer(%x: memref<8x8xi32>, %m: memref<8xi32>, %y: memref<8x8xi32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x8xi32>) outs(%m : memref<8xi32>) {
  ^bb0(%in: i32, %out: i32):
    %0 = arith.maxsi %in, %out : i32
    linalg.yield %0 : i32
  }
  linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x8xi32>) outs(%x : memref<8x8xi32>) {
  ^bb0(%in: i32, %out: i32):
    linalg.yield %in : i32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// Dynamic rows and row length: the reduction alone, sizes from the buffer,
/// blocks of max(1, 4096 / length) rows per task (computed at run time),
/// always offered to the pool; the masked tail runs only when the length
/// is not a multiple of the vector width at run time.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[ROWS:.+]] = memref.dim %{{.+}}, %c0
// CHECK: %[[LENGTH:.+]] = memref.dim %{{.+}}, %c1
// CHECK: %[[NONZERO:.+]] = arith.maxui %[[LENGTH]], %c1
// CHECK: %[[PER:.+]] = arith.divui %c4096, %[[NONZERO]]
// CHECK: %[[BLOCK:.+]] = arith.maxui %[[PER]], %c1
// CHECK: %[[BLOCKS:.+]] = arith.ceildivui %[[ROWS]], %[[BLOCK]]
// CHECK: scf.parallel (%{{.+}}) = (%{{.+}}) to (%[[BLOCKS]])
// CHECK: %[[N:.+]] = memref.dim %{{.+}}, %c1
// CHECK: %[[WIDE:.+]] = arith.subi %[[N]], %{{.+}} : index
// CHECK: %[[FULL:.+]] = arith.subi %[[N]], %{{.+}} : index
// CHECK: %[[REST:.+]] = scf.for %{{.+}} = %[[WIDE]] to %[[FULL]] step %c16 iter_args
// CHECK: %[[TAIL:.+]] = arith.cmpi ne, %[[FULL]], %[[N]] : index
// CHECK: scf.if %[[TAIL]] -> (vector<16xf32>) {
// CHECK: vector.maskedload
// CHECK: } else {
// CHECK: scf.yield %[[REST]] : vector<16xf32>
// CHECK: arith.addf {{.*}} : vector<1xf32>
// CHECK: } {kiln.heavy}
func.func @dynamic(%x: memref<?x?xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// A temporary only the group uses, of the row shape, is a row on the task's
/// stack (so the group is always outlined); the last op writing it stores
/// straight into the target of the copy that follows, and the copy goes.
// CHECK-LABEL: func.func @row_scratch
// CHECK-SAME: (%{{.+}}: memref<3x100xf32>, %[[Y:.+]]: memref<3x100xf32>)
// CHECK-NOT: memref.alloc()
// CHECK: scf.parallel
// CHECK: %[[ROW:.+]] = memref.alloca() {alignment = 64 : i64} : memref<100xf32>
// CHECK: math.exp
// CHECK: vector.store %{{.+}}, %[[ROW]][%{{.+}}] : memref<100xf32>, vector<16xf32>
// CHECK: arith.addf {{.*}} : vector<1xf32>
// CHECK: vector.load %[[ROW]]
// CHECK: arith.mulf
// CHECK: vector.store %{{.+}}, %[[Y]]
// CHECK-NOT: memref.copy
// CHECK: } {kiln.heavy}
func.func @row_scratch(%x: memref<3x100xf32>, %y: memref<3x100xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %one = arith.constant 1.000000e+00 : f32
  %e = memref.alloc() {alignment = 64 : i64} : memref<3x100xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x100xf32>) outs(%e : memref<3x100xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  %s = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<3xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : memref<3x100xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : memref<3x100xf32>, memref<3xf32>) outs(%e : memref<3x100xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.divf %one, %sum : f32
    %1 = arith.mulf %in, %0 : f32
    linalg.yield %1 : f32
  }
  memref.copy %e, %y : memref<3x100xf32> to memref<3x100xf32>
  return
}

// -----

#in3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sum = affine_map<(d0, d1, d2) -> (d0, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>

/// A global average pool with a symbolic batch (rows [?, 4]): the fill,
/// the sum and the division share the buffer the group writes, so they run
/// over the same rows: one kernel (the sums a per-row value). An op over
/// another [?, 4] buffer that shares nothing written stays out.
// CHECK-LABEL: func.func @dynamic_rows_group
// CHECK: scf.parallel
// CHECK-NOT: linalg.fill
// CHECK: vector.maskedload
// CHECK: arith.divf
// CHECK: } {kiln.heavy}
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic
// CHECK: arith.negf
func.func @dynamic_rows_group(%x: memref<?x4x8xf32>, %y: memref<?x4xf32>, %z: memref<?x4xf32>,
                              %w: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 8.0 : f32
  %b = memref.dim %x, %c0 : memref<?x4x8xf32>
  %s = memref.alloc(%b) : memref<?x4xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<?x4xf32>)
  linalg.generic {indexing_maps = [#in3, #sum], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<?x4x8xf32>) outs(%s : memref<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o fastmath<reassoc> : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : memref<?x4xf32>) outs(%y : memref<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.divf %a, %n : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<?x4xf32>) outs(%w : memref<?x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.negf %a : f32
    linalg.yield %d : f32
  }
  memref.dealloc %s : memref<?x4xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// Bufferization writes a row group's last member into the interior of a
/// padded buffer (the zero-padded input of a Conv, here [5, 12]) and places
/// the padding's fill between the members. The fill touches no buffer the
/// members above it use, so they move past it (as past another buffer's
/// fill above the seed): one kernel (the exp's rows on the stack) that
/// stores through the strided view.
// CHECK-LABEL: func.func @padded_destination
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<8x8xf32>)
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[PAD:.+]] : memref<5x12xf32>)
// CHECK: %[[VIEW:.+]] = memref.subview %[[PAD]][1, 2] [3, 8] [1, 1]
// CHECK: scf.parallel
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK: %[[VIEW]]
// CHECK-NOT: linalg.generic
// CHECK: memref.copy %[[PAD]]
func.func @padded_destination(%x: memref<3x8xf32>, %p: memref<5x12xf32>,
                              %q: memref<8x8xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %t = memref.alloc() {alignment = 64 : i64} : memref<3x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x8xf32>) outs(%t : memref<3x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  %other = memref.alloc() {alignment = 64 : i64} : memref<8x8xf32>
  linalg.fill ins(%zero : f32) outs(%other : memref<8x8xf32>)
  %s = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<3xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%t : memref<3x8xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  %pad = memref.alloc() {alignment = 64 : i64} : memref<5x12xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<5x12xf32>)
  %view = memref.subview %pad[1, 2] [3, 8] [1, 1] : memref<5x12xf32> to memref<3x8xf32, strided<[12, 1], offset: 14>>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %s : memref<3x8xf32>, memref<3xf32>) outs(%view : memref<3x8xf32, strided<[12, 1], offset: 14>>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.divf %in, %sum : f32
    linalg.yield %0 : f32
  }
  memref.copy %pad, %p : memref<5x12xf32> to memref<5x12xf32>
  memref.copy %other, %q : memref<8x8xf32> to memref<8x8xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// A fill between a member above it and the seed that overwrites what the
/// member wrote (a view of the same buffer) cannot run first: the group
/// ends at the fill, and the exp above it stays a generic.
// CHECK-LABEL: func.func @fill_of_a_member_buffer
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : memref<4x8xf32>)
// CHECK: scf.parallel
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @fill_of_a_member_buffer(%x: memref<3x8xf32>, %y: memref<3x8xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %big = memref.alloc() {alignment = 64 : i64} : memref<4x8xf32>
  %view = memref.subview %big[0, 0] [3, 8] [1, 1] : memref<4x8xf32> to memref<3x8xf32, strided<[8, 1]>>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x8xf32>) outs(%view : memref<3x8xf32, strided<[8, 1]>>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%big : memref<4x8xf32>)
  %s = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<3xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%view : memref<3x8xf32, strided<[8, 1]>>) outs(%s : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<3x8xf32>, memref<3xf32>) outs(%y : memref<3x8xf32>) {
  ^bb0(%in: f32, %sum: f32, %out: f32):
    %0 = arith.subf %in, %sum : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// A concat of a row group's values (random graph 38: a LayerNormalization
/// and a sum, concatenated along the row): bufferization writes one piece
/// in place and copies the other, two views of the concat buffer that the
/// group writes. Their slices do not overlap, so they are separate buffers
/// to the group: one kernel, the copy in it.
// CHECK-LABEL: func.func @concat_copy_between
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK-NOT: memref.copy
// CHECK-NOT: linalg.generic
// CHECK: return

/// The same with the member after the copy writing a slice one row up from
/// the copy's (row r of one view is row r + 1 of the other): it cannot
/// join, the group ends with the copy.
// CHECK-LABEL: func.func @concat_copy_overlapping
// CHECK: scf.parallel
// CHECK-NOT: memref.copy
// CHECK: linalg.generic
// CHECK: arith.divf
func.func @concat_copy_between(%x: memref<3x8xf32>, %cat: memref<3x16xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  linalg.fill ins(%lowest : f32) outs(%s : memref<3xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x8xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  %t = memref.alloc() {alignment = 64 : i64} : memref<3x8xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<3x8xf32>, memref<3xf32>) outs(%t : memref<3x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  %first = memref.subview %cat[0, 0] [3, 8] [1, 1] : memref<3x16xf32> to memref<3x8xf32, strided<[16, 1]>>
  memref.copy %t, %first : memref<3x8xf32> to memref<3x8xf32, strided<[16, 1]>>
  %second = memref.subview %cat[0, 8] [3, 8] [1, 1] : memref<3x16xf32> to memref<3x8xf32, strided<[16, 1], offset: 8>>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %s : memref<3x8xf32>, memref<3xf32>) outs(%second : memref<3x8xf32, strided<[16, 1], offset: 8>>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.divf %in, %m : f32
    linalg.yield %0 : f32
  }
  return
}

func.func @concat_copy_overlapping(%x: memref<3x8xf32>, %cat: memref<4x16xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  linalg.fill ins(%lowest : f32) outs(%s : memref<3xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x8xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  %t = memref.alloc() {alignment = 64 : i64} : memref<3x8xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<3x8xf32>, memref<3xf32>) outs(%t : memref<3x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.subf %in, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  }
  %down = memref.subview %cat[1, 0] [3, 8] [1, 1] : memref<4x16xf32> to memref<3x8xf32, strided<[16, 1], offset: 16>>
  memref.copy %t, %down : memref<3x8xf32> to memref<3x8xf32, strided<[16, 1], offset: 16>>
  %up = memref.subview %cat[0, 0] [3, 8] [1, 1] : memref<4x16xf32> to memref<3x8xf32, strided<[16, 1]>>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %s : memref<3x8xf32>, memref<3xf32>) outs(%up : memref<3x8xf32, strided<[16, 1]>>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %0 = arith.divf %in, %m : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// Bufferization reuses a buffer in place and reads and writes it through
/// equivalent views (random graph 100170: one collapse_shape per use): the
/// same buffer to the group, one kernel.
// CHECK-LABEL: func.func @in_place_through_equal_views
// CHECK-NOT: linalg.generic
// CHECK: scf.parallel
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @in_place_through_equal_views(%x: memref<3x8xf32>, %buf: memref<3x1x8xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %in = memref.collapse_shape %buf [[0, 1], [2]] : memref<3x1x8xf32> into memref<3x8xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x8xf32>) outs(%in : memref<3x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = math.exp %a : f32
    linalg.yield %0 : f32
  }
  %s = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<3xf32>)
  %again = memref.collapse_shape %buf [[0, 1], [2]] : memref<3x1x8xf32> into memref<3x8xf32>
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%again : memref<3x8xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.addf %a, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  %out = memref.collapse_shape %buf [[0, 1], [2]] : memref<3x1x8xf32> into memref<3x8xf32>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%again, %s : memref<3x8xf32>, memref<3xf32>) outs(%out : memref<3x8xf32>) {
  ^bb0(%a: f32, %sum: f32, %o: f32):
    %0 = arith.divf %a, %sum : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// A buffer padded along the row only (random graph 100974: a Pad of the
/// last axis after a LayerNormalization): its fill is a row op and joins,
/// and the member writing its interior (a subview keeping the rows whole)
/// writes the same rows: one kernel, which also takes the final copy.
// CHECK-LABEL: func.func @padded_along_the_row
// CHECK-NOT: linalg.
// CHECK: scf.parallel
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.
// CHECK-NOT: memref.copy
// CHECK: return
func.func @padded_along_the_row(%x: memref<3x8xf32>, %p: memref<3x12xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %s = memref.alloc() {alignment = 64 : i64} : memref<3xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<3xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<3x8xf32>) outs(%s : memref<3xf32>) {
  ^bb0(%a: f32, %out: f32):
    %0 = arith.addf %a, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  %pad = memref.alloc() {alignment = 64 : i64} : memref<3x12xf32>
  linalg.fill ins(%zero : f32) outs(%pad : memref<3x12xf32>)
  %view = memref.subview %pad[0, 2] [3, 8] [1, 1] : memref<3x12xf32> to memref<3x8xf32, strided<[12, 1], offset: 2>>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<3x8xf32>, memref<3xf32>) outs(%view : memref<3x8xf32, strided<[12, 1], offset: 2>>) {
  ^bb0(%a: f32, %sum: f32, %o: f32):
    %0 = arith.divf %a, %sum : f32
    linalg.yield %0 : f32
  }
  memref.copy %pad, %p : memref<3x12xf32> to memref<3x12xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

/// The dispatch stage decides what one kernel is: two row reductions over
/// the same rows, each of its own dispatch (kiln.dispatch ids 0 and 1), stay
/// two row kernels although running them as one would be row-local (without
/// ids they become one, as in @softmax).
// CHECK-LABEL: func.func @two_dispatches
// CHECK-COUNT-2: scf.parallel
// CHECK-NOT: linalg.
func.func @two_dispatches(%x: memref<64x1000xf32>, %a: memref<64xf32>, %b: memref<64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%zero : f32) outs(%a : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x1000xf32>) outs(%a : memref<64xf32>)
      attrs = {kiln.dispatch = {id = 0 : i64, kind = "reduction", nodes = ["sum"]}} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  linalg.fill ins(%zero : f32) outs(%b : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x1000xf32>) outs(%b : memref<64xf32>)
      attrs = {kiln.dispatch = {id = 1 : i64, kind = "reduction", nodes = ["max"]}} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out fastmath<reassoc> : f32
    linalg.yield %0 : f32
  }
  return
}
