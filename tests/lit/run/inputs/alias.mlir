// @main returns its argument twice and one constant twice: results that alias
// an input or each other (each must be copied out and freed at most once).
func.func @main(%a: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  return %a, %a, %c, %c : tensor<?x3xf32>, tensor<?x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
