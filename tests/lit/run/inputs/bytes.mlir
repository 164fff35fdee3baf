// @main takes one-byte types: bool (i1) negated, an 8-bit integer plus
// one (wrapping), and a bf16 doubled.
#id = affine_map<(d0) -> (d0)>
func.func @main(%b: tensor<4xi1>, %u: tensor<4xi8>, %h: tensor<2xbf16>) -> (tensor<4xi1>, tensor<4xi8>, tensor<2xbf16>) attributes {llvm.emit_c_interface} {
  %true = arith.constant true
  %c1 = arith.constant 1 : i8
  %eb = tensor.empty() : tensor<4xi1>
  %not = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%b : tensor<4xi1>) outs(%eb : tensor<4xi1>) {
  ^bb0(%x: i1, %o: i1):
    %n = arith.xori %x, %true : i1
    linalg.yield %n : i1
  } -> tensor<4xi1>
  %eu = tensor.empty() : tensor<4xi8>
  %inc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%u : tensor<4xi8>) outs(%eu : tensor<4xi8>) {
  ^bb0(%x: i8, %o: i8):
    %n = arith.addi %x, %c1 : i8
    linalg.yield %n : i8
  } -> tensor<4xi8>
  %eh = tensor.empty() : tensor<2xbf16>
  %dbl = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%h : tensor<2xbf16>) outs(%eh : tensor<2xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %n = arith.addf %x, %x : bf16
    linalg.yield %n : bf16
  } -> tensor<2xbf16>
  return %not, %inc, %dbl : tensor<4xi1>, tensor<4xi8>, tensor<2xbf16>
}
