// An op with an out-of-range axis: kilnc reports it at its location.
func.func @bad(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
