// @main returns strided views of its argument (the executor copies them out
// row-major).
func.func @main(%a: tensor<4x3xf32>) -> (tensor<2x2xf32>, tensor<3xf32>) {
  %s = tensor.extract_slice %a[1, 1] [2, 2] [2, 1] : tensor<4x3xf32> to tensor<2x2xf32>
  %t = tensor.extract_slice %a[3, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<3xf32>
  return %s, %t : tensor<2x2xf32>, tensor<3xf32>
}
