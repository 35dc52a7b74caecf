// relu(conv3x3(x, w, b) + r) at batch 17 (above 16: linalg.conv_2d_nchw_fchw
// reaches the CUDA codegen), padding 1: im2col + one product per image.
func.func @main(%x: tensor<17x16x12x12xf32>, %r: tensor<17x32x12x12xf32>) -> tensor<17x32x12x12xf32> {
  %w = kiln.constant dense<0.25> : tensor<32x16x3x3xf32>
  %b = kiln.constant dense<0.5> : tensor<32xf32>
  %c = kiln.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<17x16x12x12xf32>, tensor<32x16x3x3xf32>, tensor<32xf32>) -> tensor<17x32x12x12xf32>
  %s = kiln.add %c, %r : (tensor<17x32x12x12xf32>, tensor<17x32x12x12xf32>) -> tensor<17x32x12x12xf32>
  %o = kiln.relu %s : tensor<17x32x12x12xf32>
  return %o : tensor<17x32x12x12xf32>
}
