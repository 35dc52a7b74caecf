// RUN: kiln-opt %s --pass-pipeline="builtin.module(kiln-cpu-nbits-matmul{vector-width=8})" --split-input-file --verify-diagnostics

// The kernel packs its weight at compile time: q must be a constant.
memref.global "private" constant @s : memref<5x3xf32> = dense<0.5>
func.func @runtime_q(%a: memref<3x40xf32>, %q: memref<5x48xi8>, %c: memref<3x5xf32>) {
  %s = memref.get_global @s : memref<5x3xf32>
  // expected-error @+1 {{'kiln.matmul_nbits_kernel' op needs constant q, scales and zero_points (weights)}}
  kiln.matmul_nbits_kernel %a, %q, %s, %s into %c {bits = 4 : i64, block_size = 16 : i64} : memref<3x40xf32>, memref<5x48xi8>, memref<5x3xf32>, memref<5x3xf32>, memref<3x5xf32>
  return
}

// -----

func.func @strided_c(%a: memref<3x40xf32>, %q: memref<5x48xi8>, %s: memref<5x3xf32>, %c: memref<3x5xf32, strided<[10, 2]>>) {
  // expected-error @+1 {{'kiln.matmul_nbits_kernel' op needs static buffers with a unit inner stride for the CPU kernel}}
  kiln.matmul_nbits_kernel %a, %q, %s, %s into %c {bits = 4 : i64, block_size = 16 : i64} : memref<3x40xf32>, memref<5x48xi8>, memref<5x3xf32>, memref<5x3xf32>, memref<3x5xf32, strided<[10, 2]>>
  return
}
