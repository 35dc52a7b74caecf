// A hand-written kiln model: a two-layer MLP on a flattened 1x8x1x1 image,
// written the way exporters write it (Shape -> Reshape plumbing, a scale by
// one, Gemm with transposed weights). test/tools/kilnc/example-mlir.test
// compiles and runs it; the README example is the ONNX model of make_mlp.py.
func.func @main(%image: tensor<1x8x1x1xf32>) -> tensor<1x4xf32> {
  %dims = kiln.shape %image {end = 2 : i64} : (tensor<1x8x1x1xf32>) -> tensor<2xi64>
  %flat = kiln.reshape %image, %dims : (tensor<1x8x1x1xf32>, tensor<2xi64>) -> tensor<1x8xf32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %x = kiln.mul %flat, %one : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %w1 = kiln.constant dense<[[0.1, -0.2, 0.3, -0.4, 0.5, -0.6, 0.7, -0.8],
                             [0.2, 0.1, -0.1, 0.3, -0.2, 0.4, -0.3, 0.5],
                             [-0.5, 0.4, 0.3, -0.2, 0.1, 0.0, 0.2, -0.1],
                             [0.3, 0.3, 0.3, 0.3, -0.3, -0.3, -0.3, -0.3],
                             [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7],
                             [0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]]> : tensor<6x8xf32>
  %b1 = kiln.constant dense<[0.01, 0.02, 0.03, 0.04, 0.05, 0.06]> : tensor<6xf32>
  %h = kiln.gemm %x, %w1, %b1 {trans_b = true} : (tensor<1x8xf32>, tensor<6x8xf32>, tensor<6xf32>) -> tensor<1x6xf32>
  %a = kiln.relu %h : tensor<1x6xf32>
  %w2 = kiln.constant dense<[[0.5, -0.5, 0.25, -0.25],
                             [0.1, 0.2, 0.3, 0.4],
                             [-0.4, -0.3, -0.2, -0.1],
                             [1.0, 0.0, -1.0, 0.0],
                             [0.0, 1.0, 0.0, -1.0],
                             [0.3, -0.3, 0.3, -0.3]]> : tensor<6x4xf32>
  %y = kiln.matmul %a, %w2 : (tensor<1x6xf32>, tensor<6x4xf32>) -> tensor<1x4xf32>
  %p = kiln.softmax %y {axis = -1 : i64} : tensor<1x4xf32>
  return %p : tensor<1x4xf32>
}
