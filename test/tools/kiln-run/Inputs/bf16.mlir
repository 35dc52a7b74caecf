// bf16 in, f32 out and f32 in, bf16 out: kiln-run's raw-bits .npy convention
// for bf16 (bf16.test).
func.func @main(%x: tensor<4xbf16> {kiln.name = "x"}, %y: tensor<4xf32> {kiln.name = "y"})
    -> (tensor<4xf32> {kiln.name = "a"}, tensor<4xbf16> {kiln.name = "b"}) {
  %a = kiln.cast %x : tensor<4xbf16> -> tensor<4xf32>
  %b = kiln.cast %y : tensor<4xf32> -> tensor<4xbf16>
  return %a, %b : tensor<4xf32>, tensor<4xbf16>
}
