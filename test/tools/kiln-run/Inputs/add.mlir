func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = kiln.add %x, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
