// Matmul models for the GEMM template tests: a tile-multiple product with a
// weight (B constant), a batched one, and one with N not a multiple of 8
// (generic path).
func.func @main(%a: tensor<256x128xf32>, %x: tensor<2x128x64xf32>, %y: tensor<2x64x256xf32>,
                %r: tensor<100x72xf32>, %s: tensor<72x36xf32>)
    -> (tensor<256x256xf32>, tensor<2x128x256xf32>, tensor<100x36xf32>) {
  %w = kiln.constant dense<0.5> : tensor<128x256xf32>
  %p = kiln.matmul %a, %w : (tensor<256x128xf32>, tensor<128x256xf32>) -> tensor<256x256xf32>
  %q = kiln.matmul %x, %y : (tensor<2x128x64xf32>, tensor<2x64x256xf32>) -> tensor<2x128x256xf32>
  %t = kiln.matmul %r, %s : (tensor<100x72xf32>, tensor<72x36xf32>) -> tensor<100x36xf32>
  return %p, %q, %t : tensor<256x256xf32>, tensor<2x128x256xf32>, tensor<100x36xf32>
}
