// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-nbits-matmul{vector-width=8})" | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-nbits-matmul{vector-width=16})" | FileCheck %s --check-prefix=W16

/// With AVX-512's 16 lanes the panels are 4 x 16 columns: 16 bytes per load.
// W16-DAG: memref.global "private" constant @q_nbits : memref<1536xi8>
// W16-DAG: memref.global "private" constant @q_nbits_scales : memref<192xf32>
// W16-LABEL: func @four_bits
// W16: vector.load %{{.+}} : memref<1536xi8>, vector<16xi8>
// W16: arith.extui %{{.+}} : vector<16xi8> to vector<16xi32>
// W16: vector.fma %{{.+}} : vector<16xf32>

/// A 4-bit weight (N = 5, K = 40: two full blocks of 16 and 8 of a third)
/// repacked at compile time into i8 panels of 4 x 8 columns (two values per
/// byte), the scales and -zero * scale into f32 panels; the originals are
/// erased. Three rows: one 2-row tile (8 accumulators), then the last row
/// with even and odd k apart (8 accumulators). Per k pair and vector: 8
/// bytes zero-extended, the nibbles (and 15, shr 4) converted and
/// dequantized with one FMA each, one FMA per row. N = 5 is stored masked.
// CHECK-NOT: memref.global "private" constant @q{{8?}} :
// CHECK-NOT: memref.global "private" constant @s :
// CHECK-DAG: memref.global "private" constant @q_nbits_zero : memref<96xf32>
// CHECK-DAG: memref.global "private" constant @q_nbits_scales : memref<96xf32>
// CHECK-DAG: memref.global "private" constant @q_nbits : memref<768xi8>
// CHECK-DAG: memref.global "private" constant @q8_nbits : memref<1536xi8>
// CHECK-LABEL: func @four_bits
// CHECK: scf.parallel
// CHECK: scf.for {{.+}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %{{.+}} : memref<96xf32>, vector<8xf32>
// CHECK: scf.for
// CHECK: memref.load %{{.+}} : memref<3x40xf32>
// CHECK: vector.broadcast %{{.+}} : f32 to vector<8xf32>
// CHECK: vector.load %{{.+}} : memref<768xi8>, vector<8xi8>
// CHECK: arith.extui %{{.+}} : vector<8xi8> to vector<8xi32>
// CHECK: arith.andi
// CHECK: arith.sitofp %{{.+}} : vector<8xi32> to vector<8xf32>
// CHECK: vector.fma
// CHECK: arith.shrui
// CHECK: vector.fma
// CHECK: vector.maskedstore %{{.+}} : memref<3x5xf32>, vector<8xi1>, vector<8xf32>
// CHECK: {kiln.heavy}
// CHECK-NOT: kiln.matmul_nbits_kernel
memref.global "private" constant @q : memref<5x48xi8> = dense<3>
memref.global "private" constant @s : memref<5x3xf32> = dense<0.5>
func.func @four_bits(%a: memref<3x40xf32>, %c: memref<3x5xf32>) {
  %q = memref.get_global @q : memref<5x48xi8>
  %s = memref.get_global @s : memref<5x3xf32>
  kiln.matmul_nbits_kernel %a, %q, %s, %s into %c {bits = 4 : i64, block_size = 16 : i64} : memref<3x40xf32>, memref<5x48xi8>, memref<5x3xf32>, memref<5x3xf32>, memref<3x5xf32>
  return
}

/// An 8-bit weight (one byte per value, rows 2p and 2p + 1 apart) whose
/// zero points are a splat, bufferized as a filled buffer: read from the
/// fill, which goes with its buffer. One row: even and odd k apart.
// CHECK-LABEL: func @eight_bits_filled_zero_points
// CHECK-NOT: linalg.fill
// CHECK-NOT: memref.alloc
// CHECK: scf.for {{.+}} -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
// CHECK: vector.load %{{.+}} : memref<1536xi8>, vector<8xi8>
// CHECK-NOT: arith.andi
// CHECK: arith.sitofp
// CHECK: vector.fma
// CHECK: vector.load %{{.+}} : memref<1536xi8>, vector<8xi8>
// CHECK: {kiln.heavy}
memref.global "private" constant @q8 : memref<5x48xi8> = dense<-56>
func.func @eight_bits_filled_zero_points(%a: memref<1x40xf32>, %c: memref<1x5xf32>) {
  %q = memref.get_global @q8 : memref<5x48xi8>
  %s = memref.get_global @s : memref<5x3xf32>
  %zero = arith.constant 128.0 : f32
  %z = memref.alloc() : memref<5x3xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<5x3xf32>)
  kiln.matmul_nbits_kernel %a, %q, %s, %z into %c {bits = 8 : i64, block_size = 16 : i64} : memref<1x40xf32>, memref<5x48xi8>, memref<5x3xf32>, memref<5x3xf32>, memref<1x5xf32>
  memref.dealloc %z : memref<5x3xf32>
  return
}
