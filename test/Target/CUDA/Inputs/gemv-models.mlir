// One-row products for the one-row kernel's tests: a key/value projection of
// a ~1B Llama (K = 2048, N = 256: K split in 8 slices) with a bias (its
// epilogue), a 2048 x 2048 projection (8 slices), K = 200, N = 8448 (no
// split, a K tail) and K = 1000, N = 64 (8 slices of one row step, the last
// passing K).
func.func @main(%a: tensor<1x2048xf32>, %b: tensor<1x200xf32>, %c: tensor<1x1000xf32>)
    -> (tensor<1x256xf32>, tensor<1x2048xf32>, tensor<1x8448xf32>, tensor<1x64xf32>) {
  %w1 = kiln.constant dense<0.5> : tensor<2048x256xf32>
  %bias = kiln.constant dense<1.0> : tensor<256xf32>
  %w2 = kiln.constant dense<0.25> : tensor<2048x2048xf32>
  %w3 = kiln.constant dense<0.125> : tensor<200x8448xf32>
  %w4 = kiln.constant dense<0.125> : tensor<1000x64xf32>
  %p = kiln.matmul %a, %w1 : (tensor<1x2048xf32>, tensor<2048x256xf32>) -> tensor<1x256xf32>
  %pb = kiln.add %p, %bias : (tensor<1x256xf32>, tensor<256xf32>) -> tensor<1x256xf32>
  %q = kiln.matmul %a, %w2 : (tensor<1x2048xf32>, tensor<2048x2048xf32>) -> tensor<1x2048xf32>
  %r = kiln.matmul %b, %w3 : (tensor<1x200xf32>, tensor<200x8448xf32>) -> tensor<1x8448xf32>
  %s = kiln.matmul %c, %w4 : (tensor<1x1000xf32>, tensor<1000x64xf32>) -> tensor<1x64xf32>
  return %pb, %q, %r, %s : tensor<1x256xf32>, tensor<1x2048xf32>, tensor<1x8448xf32>, tensor<1x64xf32>
}
