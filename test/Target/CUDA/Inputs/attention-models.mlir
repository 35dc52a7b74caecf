// Attention models for the CUDA attention kernel tests: BERT's shape with an
// additive key mask (f32 model, ragged Sq = Sk = 100) and a causal f16 one
// with head dim 128 and Sk = 257.
func.func @main(%q: tensor<2x4x100x64xf32>, %k: tensor<2x4x100x64xf32>, %v: tensor<2x4x100x64xf32>,
                %m: tensor<2x1x1x100xf32>, %h: tensor<1x2x100x128xf16>, %hk: tensor<1x2x257x128xf16>)
    -> (tensor<2x4x100x64xf32>, tensor<1x2x100x128xf16>) {
  %o = kiln.attention %q, %k, %v, %m {scale = 0.125 : f32} : (tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x4x100x64xf32>, tensor<2x1x1x100xf32>) -> tensor<2x4x100x64xf32>
  %c = kiln.attention %h, %hk, %hk {is_causal = true} : (tensor<1x2x100x128xf16>, tensor<1x2x257x128xf16>, tensor<1x2x257x128xf16>) -> tensor<1x2x100x128xf16>
  return %o, %c : tensor<2x4x100x64xf32>, tensor<1x2x100x128xf16>
}
