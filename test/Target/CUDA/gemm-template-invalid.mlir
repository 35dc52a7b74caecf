// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-cuda-gemm %s

// The dispatch stage made the generic the product's epilogue, but the
// product adds to C's values (no zero fill): the kernel cannot apply it.
func.func @not_from_zero(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %out: memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<128x128xf32>
  // expected-error @+1 {{kiln-cuda-gemm: the epilogue of dispatch 3 cannot be applied by the GEMM kernel: the product does not start from a zero fill of C}}
  linalg.matmul {kiln.dispatch = {id = 3 : i64, kind = "contraction", nodes = []}}
      ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xf32>)
      attrs = {kiln.dispatch = {id = 3 : i64, kind = "contraction", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<128x128xf32>
  return
}

// -----

// The epilogue's output is a strided view: the kernel stores dense rows.
func.func @strided_output(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %big: memref<128x256xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<128x128xf32>
  %out = memref.subview %big[0, 0] [128, 128] [1, 2] : memref<128x256xf32> to memref<128x128xf32, strided<[256, 2]>>
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  // expected-error @+1 {{the epilogue of dispatch 0 cannot be applied by the GEMM kernel: its output is not a dense f32/f16/bf16 buffer written with the identity map}}
  linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}}
      ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<128x128xf32>) outs(%out : memref<128x128xf32, strided<[256, 2]>>)
      attrs = {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<128x128xf32>
  return
}

// -----

// A marked epilogue whose product the template does not take (N = 100, not
// a multiple of 8) would be a kernel the dispatch stage did not count.
func.func @product_not_taken(%a: memref<128x64xf16>, %b: memref<64x100xf16>, %out: memref<128x100xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<128x100xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<128x100xf32>)
  linalg.matmul {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}}
      ins(%a, %b : memref<128x64xf16>, memref<64x100xf16>) outs(%c : memref<128x100xf32>)
  // expected-error @+1 {{matmul epilogue could not be fused into the matmul kernel}}
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<128x100xf32>) outs(%out : memref<128x100xf32>)
      attrs = {kiln.dispatch = {id = 0 : i64, kind = "contraction", nodes = []}, kiln.epilogue = 0 : i64} {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<128x100xf32>
  return
}
