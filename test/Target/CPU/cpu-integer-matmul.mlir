// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-integer-matmul{avx2=true})" | FileCheck %s
// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-integer-matmul)" | FileCheck %s --check-prefix=PORTABLE
// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-integer-matmul{avx2=true vnni=true})" | FileCheck %s --check-prefix=VNNI
// RUN: kiln-opt %s -split-input-file --pass-pipeline="builtin.module(kiln-cpu-integer-matmul{avx2=true avxvnni=true})" | FileCheck %s --check-prefix=YMM

/// A run-time B: one parallel loop packs it (two rows of 16 columns
/// interleaved per k pair, masked at N = 40, the odd last k with a zero
/// row), the other runs the tiles: 6 x 2 accumulators of vector<8xi32>, a
/// vpmaddwd per accumulator and k pair, A's pair broadcast as one i32. The
/// zero fill of C is dropped; C is stored with masks at the column edge.
// CHECK-LABEL: func @runtime_b
// CHECK-NOT: linalg.fill
// CHECK: %[[PACK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<{{[0-9]+}}xi16>
// CHECK: scf.parallel
// CHECK: vector.maskedload %{{.*}} : memref<77x40xi16>, vector<16xi1>, vector<16xi16> into vector<16xi16>
// CHECK: vector.interleave %{{.*}}, %{{.*}} : vector<16xi16> -> vector<32xi16>
// CHECK: {kiln.heavy}
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>)
// CHECK: vector.load %[[PACK]][%{{.*}}] : memref<{{[0-9]+}}xi16>, vector<16xi16>
// CHECK: %[[PAIR:.*]] = vector.load %{{.*}} : memref<13x77xi16>, vector<2xi16>
// CHECK: %[[WORD:.*]] = vector.bitcast %[[PAIR]] : vector<2xi16> to vector<1xi32>
// CHECK: vector.broadcast %[[WORD]] : vector<1xi32> to vector<8xi32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"(%{{.*}}, %{{.*}}) : (vector<16xi16>, vector<16xi16>) -> vector<8xi32>
// CHECK: vector.maskedstore %{{.*}} : memref<13x40xi32>, vector<8xi1>, vector<8xi32>
// CHECK: {kiln.heavy}
// CHECK: memref.dealloc %[[PACK]]
// CHECK-NOT: linalg.matmul
/// With vnni but no byte windows on the run-time operands, vpmaddwd.
// VNNI-LABEL: func @runtime_b
// VNNI-NOT: vpdpbusd
// VNNI: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// VNNI-NOT: vpdpbusd
// PORTABLE-LABEL: func @runtime_b
// PORTABLE-NOT: llvm.call_intrinsic
// PORTABLE: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 8, 10, 12, 14] : vector<16xi16>, vector<16xi16>
// PORTABLE: arith.extsi %{{.*}} : vector<8xi16> to vector<8xi32>
// PORTABLE: arith.muli %{{.*}} : vector<8xi32>
func.func @runtime_b(%a: memref<13x77xi16>, %b: memref<77x40xi16>, %c: memref<13x40xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<13x40xi32>)
  linalg.matmul ins(%a, %b : memref<13x77xi16>, memref<77x40xi16>) outs(%c : memref<13x40xi32>)
  return
}

// -----

/// A constant B is packed at compile time into an i16 global of pair
/// panels (the original global, now unread, is dropped): no packing loop.
/// The marked epilogue (the requantization) runs on the accumulators and
/// stores i8 into its output; C is never written.
/// With vnni: column 0 spans -1..255, more than a byte, so vpmaddwd.
// VNNI-LABEL: func @constant_b_epilogue
// VNNI: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// VNNI-NOT: vpdpbusd
// CHECK: memref.global "private" constant @w_pairs : memref<64xi16> = dense_resource<w_pairs>
// CHECK-NOT: memref.global "private" constant @w :
// CHECK-LABEL: func @constant_b_epilogue
// CHECK-NOT: vector.interleave
// CHECK: memref.get_global @w_pairs
// CHECK: scf.parallel
// CHECK: llvm.call_intrinsic "llvm.x86.avx2.pmadd.wd"
// CHECK: arith.sitofp %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: math.roundeven %{{.*}} : vector<8xf32>
// CHECK: arith.fptosi %{{.*}} : vector<8xf32> to vector<8xi8>
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}] : memref<7x16xi8>, vector<8xi8>
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
memref.global "private" constant @w : memref<4x16xi16> = dense<[[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16], [255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -255], [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3]]>
func.func @constant_b_epilogue(%a: memref<7x4xi16>, %scale: memref<16xf32>, %d: memref<7x16xi8>) {
  %b = memref.get_global @w : memref<4x16xi16>
  %c = memref.alloc() : memref<7x16xi32>
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<7x16xi32>)
  linalg.matmul ins(%a, %b : memref<7x4xi16>, memref<4x16xi16>) outs(%c : memref<7x16xi32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %scale : memref<7x16xi32>, memref<16xf32>) outs(%d : memref<7x16xi8>)
      attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: i32, %s: f32, %o: i8):
    %f = arith.sitofp %x : i32 to f32
    %m = arith.mulf %f, %s : f32
    %r = math.roundeven %m : f32
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %l = arith.maximumf %r, %lo : f32
    %h = arith.minimumf %l, %hi : f32
    %q = arith.fptosi %h : f32 to i8
    linalg.yield %q : i8
  }
  memref.dealloc %c : memref<7x16xi32>
  return
}

// -----

/// VNNI, both operands at run time (MatMulInteger: A - 77 and B - 131 from
/// u8). A's rows become u8 (+ 77), 32 elements a step, zeros past K = 77
/// up to 80, each row's sum kept as -3 sum (oB = -128 + 131 = 3); B's
/// panels of 64 columns (N = 100: 2 panels of 4 vectors, no fewer vector
/// columns with 3 or 2) become s8 (+ 3), quads of k rows interleaved per
/// column, column sums as -77 sum + K 77 3. The tile: 6 x 4 accumulators
/// of vector<16xi32>, one vpdpbusd per accumulator and k quad with A's 4
/// bytes broadcast as one i32; the terms are added before the store; the
/// last M % 6 = 1 rows are one tile.
// VNNI-LABEL: func @runtime_both
// VNNI: %[[APACK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1040xi8>
// VNNI: %[[ROWS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<13xi32>
// VNNI: vector.load %{{.*}} : memref<13x77xi16>, vector<32xi16>
// VNNI: arith.trunci %{{.*}} : vector<32xi16> to vector<32xi8>
// VNNI: vector.constant_mask [13] : vector<32xi1>
// VNNI: vector.constant_mask [16] : vector<32xi1>
// VNNI: vector.reduction <add>, %{{.*}} : vector<32xi32> into i32
// VNNI: arith.constant -3 : i32
// VNNI: memref.store %{{.*}}, %[[ROWS]]
// VNNI: %[[BPACK:.*]] = memref.alloc() {alignment = 64 : i64} : memref<10240xi8>
// VNNI: %[[COLS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<128xi32>
// VNNI: scf.parallel
// VNNI: vector.maskedload %{{.*}} : memref<77x100xi16>, vector<32xi1>, vector<32xi16> into vector<32xi16>
// VNNI: vector.interleave %{{.*}}, %{{.*}} : vector<32xi8> -> vector<64xi8>
// VNNI: vector.interleave %{{.*}}, %{{.*}} : vector<64xi8> -> vector<128xi8>
// VNNI: arith.constant dense<-77> : vector<32xi32>
// VNNI: arith.constant dense<17787> : vector<32xi32>
// VNNI: vector.store %{{.*}}, %[[COLS]]
// VNNI: {kiln.heavy}
// VNNI: scf.parallel
// VNNI: scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// VNNI: vector.load %[[BPACK]][%{{.*}}] : memref<10240xi8>, vector<64xi8>
// VNNI: %[[FOUR:.*]] = vector.load %[[APACK]][%{{.*}}] : memref<1040xi8>, vector<4xi8>
// VNNI: %[[WORD:.*]] = vector.bitcast %[[FOUR]] : vector<4xi8> to vector<1xi32>
// VNNI: %[[SPLAT:.*]] = vector.broadcast %[[WORD]] : vector<1xi32> to vector<16xi32>
// VNNI: %[[ABYTES:.*]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<64xi8>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.*}}, %[[ABYTES]], %{{.*}}) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// VNNI: vector.load %[[COLS]][%{{.*}}] : memref<128xi32>, vector<16xi32>
// VNNI: memref.load %[[ROWS]]
// VNNI: vector.maskedstore %{{.*}} : memref<13x100xi32>, vector<16xi1>, vector<16xi32>
// VNNI: scf.if
// VNNI: scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// VNNI: {kiln.heavy}
// VNNI: memref.dealloc %[[APACK]]
// VNNI: memref.dealloc %[[ROWS]]
// VNNI: memref.dealloc %[[BPACK]]
// VNNI: memref.dealloc %[[COLS]]
// VNNI-NOT: linalg.matmul
/// With AVX-VNNI only, the same on ymm: panels of 16 columns (one chunk of
/// 16 per quad when packing B), 6 x 2 accumulators of vector<8xi32>.
// YMM-LABEL: func @runtime_both
// YMM: vector.interleave %{{.*}}, %{{.*}} : vector<16xi8> -> vector<32xi8>
// YMM: vector.interleave %{{.*}}, %{{.*}} : vector<32xi8> -> vector<64xi8>
// YMM: scf.for {{.*}} -> (vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>, vector<8xi32>)
// YMM: vector.load %{{.*}} : memref<{{[0-9]+}}xi8>, vector<32xi8>
// YMM: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.256"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<8xi32>, vector<32xi8>, vector<32xi8>) -> vector<8xi32>
// YMM: vector.maskedstore %{{.*}} : memref<13x100xi32>, vector<8xi1>, vector<8xi32>
// YMM-NOT: vpdpbusd.512
func.func @runtime_both(%a: memref<13x77xi16>, %b: memref<77x100xi16>, %c: memref<13x100xi32>) {
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<13x100xi32>)
  linalg.matmul {kiln.lhs_bytes = -77 : i64, kiln.rhs_bytes = -131 : i64} ins(%a, %b : memref<13x77xi16>, memref<77x100xi16>) outs(%c : memref<13x100xi32>)
  return
}

// -----

/// VNNI, constant weights that are s8 already (oB = 0: no row sums of A)
/// and A - 100 from u8: B's quad panels and the column terms are globals,
/// the epilogue runs on the 16-lane accumulators. N = 20 takes one panel of
/// 2 vectors (32 columns, not 64).
// VNNI-DAG: memref.global "private" constant @ws_rhs_quads : memref<256xi8>
// VNNI-DAG: memref.global "private" constant @ws_col_terms : memref<32xi32>
// VNNI-NOT: memref.global "private" constant @ws :
// VNNI-NOT: row_terms
// VNNI-LABEL: func @vnni_constant_b_epilogue
// VNNI-NOT: vector.interleave
// VNNI-NOT: vector.reduction
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VNNI: arith.sitofp %{{.*}} : vector<16xi32> to vector<16xf32>
// VNNI: arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
// VNNI: vector.maskedstore %arg2[%{{.*}}], %{{.*}}, %{{.*}} : memref<7x20xi8>, vector<16xi1>, vector<16xi8>
// VNNI-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
memref.global "private" constant @ws : memref<5x20xi16> = dense<[[1, -128, 127, 0, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20], [-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12, -13, -14, -15, -16, -17, -18, -19, -20], [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]]>
func.func @vnni_constant_b_epilogue(%a: memref<7x5xi16>, %scale: memref<20xf32>, %d: memref<7x20xi8>) {
  %b = memref.get_global @ws : memref<5x20xi16>
  %c = memref.alloc() : memref<7x20xi32>
  %zero = arith.constant 0 : i32
  linalg.fill ins(%zero : i32) outs(%c : memref<7x20xi32>)
  linalg.matmul {kiln.lhs_bytes = -100 : i64} ins(%a, %b : memref<7x5xi16>, memref<5x20xi16>) outs(%c : memref<7x20xi32>)
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %scale : memref<7x20xi32>, memref<20xf32>) outs(%d : memref<7x20xi8>)
      attrs = {kiln.epilogue = 0 : i64} {
  ^bb0(%x: i32, %s: f32, %o: i8):
    %f = arith.sitofp %x : i32 to f32
    %m = arith.mulf %f, %s : f32
    %r = math.roundeven %m : f32
    %lo = arith.constant -128.0 : f32
    %hi = arith.constant 127.0 : f32
    %l = arith.maximumf %r, %lo : f32
    %h = arith.minimumf %l, %hi : f32
    %q = arith.fptosi %h : f32 to i8
    linalg.yield %q : i8
  }
  memref.dealloc %c : memref<7x20xi32>
  return
}

// -----

/// VNNI, constant weights whose columns each span at most a byte but not
/// together (per-column zero points): each column gets its own shift, kept
/// as a column scale that multiplies A's row sums.
// VNNI-DAG: memref.global "private" constant @wc_col_scales : memref<32xi32>
// VNNI-DAG: memref.global "private" constant @wc_col_terms : memref<32xi32>
// VNNI-DAG: memref.global "private" constant @wc_rhs_quads : memref<128xi8>
// VNNI-LABEL: func @per_column_b
// VNNI: vector.reduction <add>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VNNI: arith.muli %{{.*}}, %{{.*}} : vector<16xi32>
memref.global "private" constant @wc : memref<2x3xi16> = dense<[[255, -200, 0], [0, -300, 1]]>
func.func @per_column_b(%a: memref<4x2xi16>, %c: memref<4x3xi32>) {
  %b = memref.get_global @wc : memref<2x3xi16>
  linalg.matmul {kiln.lhs_bytes = -128 : i64} ins(%a, %b : memref<4x2xi16>, memref<2x3xi16>) outs(%c : memref<4x3xi32>)
  return
}

// -----

/// VNNI, a constant A with per-row shifts (a conv's weights with
/// per-channel zero points) and a run-time B: A's bytes, row terms and row
/// scales are globals; B's column sums are taken while packing it.
// VNNI-DAG: memref.global "private" constant @wa_row_scales : memref<3xi32>
// VNNI-DAG: memref.global "private" constant @wa_row_terms : memref<3xi32>
// VNNI-DAG: memref.global "private" constant @wa_lhs_bytes : memref<12xi8>
// VNNI-LABEL: func @per_row_a
// VNNI: vector.interleave
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VNNI: arith.muli %{{.*}}, %{{.*}} : vector<16xi32>
memref.global "private" constant @wa : memref<3x2xi16> = dense<[[-255, 0], [100, 300], [-1, 1]]>
func.func @per_row_a(%b: memref<2x9xi16>, %c: memref<3x9xi32>) {
  %a = memref.get_global @wa : memref<3x2xi16>
  linalg.matmul {kiln.rhs_bytes = -100 : i64} ins(%a, %b : memref<3x2xi16>, memref<2x9xi16>) outs(%c : memref<3x9xi32>)
  return
}

// -----

/// VNNI with N = 40: 3 vectors a tile row (one panel of 48 columns; 4 would
/// compute 64), 6 x 3 accumulators, B packed 16 columns a step.
// VNNI-LABEL: func @three_vectors
// VNNI: memref.alloc() {alignment = 64 : i64} : memref<384xi8>
// VNNI: memref.alloc() {alignment = 64 : i64} : memref<48xi32>
// VNNI: vector.maskedload %{{.*}} : memref<8x40xi16>, vector<16xi1>, vector<16xi16> into vector<16xi16>
// VNNI: vector.interleave %{{.*}}, %{{.*}} : vector<16xi8> -> vector<32xi8>
// VNNI: vector.interleave %{{.*}}, %{{.*}} : vector<32xi8> -> vector<64xi8>
// VNNI: scf.for {{.*}} -> (vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>, vector<16xi32>)
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
func.func @three_vectors(%a: memref<6x8xi16>, %b: memref<8x40xi16>, %c: memref<6x40xi32>) {
  linalg.matmul {kiln.lhs_bytes = -5 : i64, kiln.rhs_bytes = -128 : i64} ins(%a, %b : memref<6x8xi16>, memref<8x40xi16>) outs(%c : memref<6x40xi32>)
  return
}

// -----

/// VNNI with a run-time B of 4 panels or more (N = 256): each compute task
/// is one whole panel and packs it first, so there is one parallel loop.
// VNNI-LABEL: func @pack_in_tasks
// VNNI: scf.parallel
// VNNI: vector.interleave %{{.*}}, %{{.*}} : vector<64xi8> -> vector<128xi8>
// VNNI: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// VNNI: {kiln.heavy}
// VNNI-NOT: scf.parallel
// VNNI: return
func.func @pack_in_tasks(%a: memref<6x8xi16>, %b: memref<8x256xi16>, %c: memref<6x256xi32>) {
  linalg.matmul {kiln.lhs_bytes = -5 : i64, kiln.rhs_bytes = -128 : i64} ins(%a, %b : memref<6x8xi16>, memref<8x256xi16>) outs(%c : memref<6x256xi32>)
  return
}
