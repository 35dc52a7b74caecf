// A small model for the concurrency test (examples.run_concurrent): two
// dense layers, a residual and a softmax over 64 rows, so that a run has
// several planned arena buffers and matmuls that run on the thread pool.
func.func @main(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %w1 = kiln.constant dense<0.015625> : tensor<128x256xf32>
  %b1 = kiln.constant dense<-0.25> : tensor<256xf32>
  %h = kiln.gemm %x, %w1, %b1 : (tensor<64x128xf32>, tensor<128x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
  %a = kiln.relu %h : tensor<64x256xf32>
  %w2 = kiln.constant dense<-0.0078125> : tensor<256x128xf32>
  %y = kiln.matmul %a, %w2 : (tensor<64x256xf32>, tensor<256x128xf32>) -> tensor<64x128xf32>
  %s = kiln.add %y, %x : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %p = kiln.softmax %s {axis = -1 : i64} : tensor<64x128xf32>
  return %p : tensor<64x128xf32>
}
