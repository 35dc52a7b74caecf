func.func @main(%a: tensor<?x4xf32> {kiln.name = "a", kiln.dim_names = ["m", ""]}, %b: tensor<?x4xf32> {kiln.name = "b", kiln.dim_names = ["n", ""]}) -> (tensor<?x4xf32> {kiln.name = "y", kiln.dim_names = ["m", ""]}) {
  %0 = kiln.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
