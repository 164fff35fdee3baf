// @main returns results of several ranks and dtypes: a 0-d sum, a 4-d
// reshape, an i1 comparison, an f16 conversion, an i64 conversion, a
// constant returned directly, and a result whose size depends on the
// input's dynamic dim. No llvm.emit_c_interface: the executor adds it.
#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> ()>
func.func @main(%a: tensor<2x3xf32>, %d: tensor<?xf32>) -> (tensor<f32>, tensor<1x2x1x3xf32>, tensor<2x3xi1>, tensor<2x3xf16>, tensor<2x3xi64>, tensor<2xi32>, tensor<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.5 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]}
      ins(%a : tensor<2x3xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %r4 = tensor.expand_shape %a [[0, 1], [2, 3]] output_shape [1, 2, 1, 3] : tensor<2x3xf32> into tensor<1x2x1x3xf32>
  %eb = tensor.empty() : tensor<2x3xi1>
  %gt = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x3xf32>) outs(%eb : tensor<2x3xi1>) {
  ^bb0(%x: f32, %o: i1):
    %c = arith.cmpf ogt, %x, %one : f32
    linalg.yield %c : i1
  } -> tensor<2x3xi1>
  %eh = tensor.empty() : tensor<2x3xf16>
  %half = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x3xf32>) outs(%eh : tensor<2x3xf16>) {
  ^bb0(%x: f32, %o: f16):
    %h = arith.truncf %x : f32 to f16
    linalg.yield %h : f16
  } -> tensor<2x3xf16>
  %ei = tensor.empty() : tensor<2x3xi64>
  %int = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<2x3xf32>) outs(%ei : tensor<2x3xi64>) {
  ^bb0(%x: f32, %o: i64):
    %n = arith.negf %x : f32
    %i = arith.fptosi %n : f32 to i64
    linalg.yield %i : i64
  } -> tensor<2x3xi64>
  %k = arith.constant dense<[7, -8]> : tensor<2xi32>
  %twice = tensor.concat dim(0) %d, %d : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %sum, %r4, %gt, %half, %int, %k, %twice : tensor<f32>, tensor<1x2x1x3xf32>, tensor<2x3xi1>, tensor<2x3xf16>, tensor<2x3xi64>, tensor<2xi32>, tensor<?xf32>
}
