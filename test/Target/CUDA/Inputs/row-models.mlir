// Row kernels and a vectorized elementwise kernel (row-kernels-ptx.test):
// softmax over rows of 4096 f32, softmax over ragged rows of 4095,
// layer_norm over f16 rows of 768, the elementwise chain of cuda_ops.py.
func.func @main(%x: tensor<64x4096xf32>, %r: tensor<64x4095xf32>, %h: tensor<64x768xf16>, %g: tensor<768xf16>, %b: tensor<768xf16>) -> (tensor<64x4096xf32>, tensor<64x4095xf32>, tensor<64x768xf16>, tensor<64x4096xf32>) {
  %s = kiln.softmax %x {axis = -1 : i64} : tensor<64x4096xf32>
  %t = kiln.softmax %r {axis = -1 : i64} : tensor<64x4095xf32>
  %l = kiln.layer_norm %h, %g, %b {axis = -1 : i64, epsilon = 1.0e-5 : f32} : (tensor<64x768xf16>, tensor<768xf16>, tensor<768xf16>) -> tensor<64x768xf16>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %m = kiln.mul %x, %half : (tensor<64x4096xf32>, tensor<f32>) -> tensor<64x4096xf32>
  %a = kiln.add %m, %one : (tensor<64x4096xf32>, tensor<f32>) -> tensor<64x4096xf32>
  %c = kiln.relu %a : tensor<64x4096xf32>
  %y = kiln.mul %c, %x : (tensor<64x4096xf32>, tensor<64x4096xf32>) -> tensor<64x4096xf32>
  return %s, %t, %l, %y : tensor<64x4096xf32>, tensor<64x4095xf32>, tensor<64x768xf16>, tensor<64x4096xf32>
}
