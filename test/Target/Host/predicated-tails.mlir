// RUN: kilnc %s --cpu=znver4 --emit=obj -o %t.o
// RUN: llvm-objdump -d --no-show-raw-insn %t.o | FileCheck %s
// RUN: kilnc %s --cpu=znver3 --emit=obj -o %t.avx2.o
// RUN: llvm-objdump -d --no-show-raw-insn %t.avx2.o | FileCheck %s --check-prefix=AVX2

/// PredicatedTails.cpp: an elementwise loop over rows of 14 elements (not a
/// multiple of the 16 lanes) read with unit stride runs each row as one
/// masked vector iteration (a masked load and store) instead of 14 scalar
/// ones; rows of 16 read with stride 2 keep their unmasked wide loads (a
/// masked tail would gather them).
// CHECK: vmovups ({{[^)]+}}), %zmm{{[0-9]+}} {%k{{[1-7]}}} {z}
// CHECK: vmovups %zmm{{[0-9]+}}, ({{[^)]+}}) {%k{{[1-7]}}}
// CHECK-NOT: {%k{{[1-7]}}} {z}
// CHECK: vmovups ({{[^)]+}}), %ymm{{[0-9]+}}
// CHECK-NOT: {%k{{[1-7]}}} {z}
/// Without AVX-512 (256-bit vectors, no mask registers) the loops keep their
/// epilogues: no masked moves.
// AVX2-NOT: vmaskmov
func.func @main(%x: tensor<64x16xf32> {kiln.name = "x"}, %z: tensor<64x32xf32> {kiln.name = "z"})
    -> (tensor<64x14xf32> {kiln.name = "y"}, tensor<64x16xf32> {kiln.name = "w"}) {
  %s = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 14>, axes = array<i64: 1>, steps = array<i64: 1>} : (tensor<64x16xf32>) -> tensor<64x14xf32>
  %y = kiln.exp %s : tensor<64x14xf32>
  %t = kiln.slice %z {starts = array<i64: 0>, ends = array<i64: 32>, axes = array<i64: 1>, steps = array<i64: 2>} : (tensor<64x32xf32>) -> tensor<64x16xf32>
  %w = kiln.exp %t : tensor<64x16xf32>
  return %y, %w : tensor<64x14xf32>, tensor<64x16xf32>
}
