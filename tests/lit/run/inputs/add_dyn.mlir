// @main adds two tensor<?x3xf32>: a dynamic leading dim, one result.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x3xf32>
  %init = tensor.empty(%n) : tensor<?x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<?x3xf32>, tensor<?x3xf32>) outs(%init : tensor<?x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<?x3xf32>
  return %sum : tensor<?x3xf32>
}
