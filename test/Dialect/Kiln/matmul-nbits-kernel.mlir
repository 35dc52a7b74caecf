// RUN: kiln-opt %s --split-input-file --verify-diagnostics | FileCheck %s

/// kiln.matmul_nbits_kernel round-trips on tensors and on buffers.
// CHECK-LABEL: func @tensors
// CHECK: kiln.matmul_nbits_kernel %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}} {bits = 4 : i64, block_size = 32 : i64} : tensor<3x100xf32>, tensor<7x128xi8>, tensor<7x4xf32>, tensor<7x4xf32>, tensor<3x7xf32> -> tensor<3x7xf32>
func.func @tensors(%a: tensor<3x100xf32>, %q: tensor<7x128xi8>, %s: tensor<7x4xf32>, %o: tensor<3x7xf32>) -> tensor<3x7xf32> {
  %r = kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 4 : i64, block_size = 32 : i64} : tensor<3x100xf32>, tensor<7x128xi8>, tensor<7x4xf32>, tensor<7x4xf32>, tensor<3x7xf32> -> tensor<3x7xf32>
  return %r : tensor<3x7xf32>
}
// CHECK-LABEL: func @buffers
// CHECK: kiln.matmul_nbits_kernel %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} into %{{.+}} {bits = 8 : i64, block_size = 16 : i64} : memref<1x16xf32>, memref<5x16xi8>, memref<5x1xf32>, memref<5x1xf32>, memref<1x5xf32>{{$}}
func.func @buffers(%a: memref<1x16xf32>, %q: memref<5x16xi8>, %s: memref<5x1xf32>, %o: memref<1x5xf32>) {
  kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 8 : i64, block_size = 16 : i64} : memref<1x16xf32>, memref<5x16xi8>, memref<5x1xf32>, memref<5x1xf32>, memref<1x5xf32>
  return
}

// -----

func.func @element(%a: tensor<1x16xf32>, %q: tensor<5x16xui8>, %s: tensor<5x1xf32>, %o: tensor<1x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{expects i8 elements in q, got 'ui8'}}
  %r = kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 4 : i64, block_size = 16 : i64} : tensor<1x16xf32>, tensor<5x16xui8>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<1x5xf32> -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}

// -----

func.func @rank(%a: tensor<16xf32>, %q: tensor<5x16xi8>, %s: tensor<5x1xf32>, %o: tensor<1x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{expects a rank-2 a, got 'tensor<16xf32>'}}
  %r = kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 4 : i64, block_size = 16 : i64} : tensor<16xf32>, tensor<5x16xi8>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<1x5xf32> -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}

// -----

func.func @bits(%a: tensor<1x16xf32>, %q: tensor<5x16xi8>, %s: tensor<5x1xf32>, %o: tensor<1x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{expects bits 4 or 8, got 2}}
  %r = kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 2 : i64, block_size = 16 : i64} : tensor<1x16xf32>, tensor<5x16xi8>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<1x5xf32> -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}

// -----

func.func @block(%a: tensor<1x16xf32>, %q: tensor<5x16xi8>, %s: tensor<5x1xf32>, %o: tensor<1x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{expects a block_size that is a power of 2, got 12}}
  %r = kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 4 : i64, block_size = 12 : i64} : tensor<1x16xf32>, tensor<5x16xi8>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<1x5xf32> -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}

// -----

func.func @blocks(%a: tensor<1x40xf32>, %q: tensor<5x32xi8>, %s: tensor<5x2xf32>, %o: tensor<1x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{expects static q [N, blocks * block_size], scales and zero_points [N, blocks] with blocks = ceil(K / block_size)}}
  %r = kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 4 : i64, block_size = 16 : i64} : tensor<1x40xf32>, tensor<5x32xi8>, tensor<5x2xf32>, tensor<5x2xf32>, tensor<1x5xf32> -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}

// -----

func.func @init(%a: tensor<2x16xf32>, %q: tensor<5x16xi8>, %s: tensor<5x1xf32>, %o: tensor<1x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{init 'tensor<1x5xf32>' is not [M, N] for a 'tensor<2x16xf32>' and q 'tensor<5x16xi8>'}}
  %r = kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 4 : i64, block_size = 16 : i64} : tensor<2x16xf32>, tensor<5x16xi8>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<1x5xf32> -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}

// -----

func.func @mixed(%a: memref<1x16xf32>, %q: tensor<5x16xi8>, %s: tensor<5x1xf32>, %o: tensor<1x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{mixes tensors and buffers (a)}}
  %r = kiln.matmul_nbits_kernel %a, %q, %s, %s into %o {bits = 4 : i64, block_size = 16 : i64} : memref<1x16xf32>, tensor<5x16xi8>, tensor<5x1xf32>, tensor<5x1xf32>, tensor<1x5xf32> -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}
