// A 96x80x72 matmul with a ReLU epilogue: the model bench/tune_cpu.py tunes in tune-cpu.test.
func.func @main(%x: tensor<96x80xf32>, %w: tensor<80x72xf32>) -> tensor<96x72xf32> {
  %a = kiln.matmul %x, %w : (tensor<96x80xf32>, tensor<80x72xf32>) -> tensor<96x72xf32>
  %r = kiln.relu %a : tensor<96x72xf32>
  return %r : tensor<96x72xf32>
}
