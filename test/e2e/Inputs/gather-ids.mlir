func.func @main(%t: tensor<16x8xf32> {kiln.name = "table"}, %i: tensor<?xi64> {kiln.name = "ids", kiln.dim_names = ["n"]}) -> (tensor<?x8xf32> {kiln.name = "rows", kiln.dim_names = ["n", ""]}) {
  %0 = kiln.gather %t, %i {axis = 0 : i64} : (tensor<16x8xf32>, tensor<?xi64>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
