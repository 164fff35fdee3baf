// @main uses the ops the Linalg emitter produces, to check that the lowering
// pipeline handles them: tensor.pad/concat/collapse_shape/extract_slice,
// linalg conv/pooling/reduce/transpose/matmul/fill, scf.for on tensors,
// math erf/tanh/powf on f16 and exp/atan on bf16 (computed in f32, erf
// through libm), math.ipowi and arith.ceildivsi/floordivsi on i64.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<2x3xf32>, %h: tensor<2x3xf16>, %b16: tensor<2x3xbf16>, %i: tensor<2x3xi64>, %img: tensor<1x1x4x4xf32>) -> (tensor<4x5xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xi64>, tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<2xf32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>, tensor<6xf32>, tensor<1x3xf32>) attributes {llvm.emit_c_interface} {
  %cst = arith.constant 0.0 : f32
  %pad = tensor.pad %a low[1, 1] high[1, 1] { ^bb0(%x: index, %y: index): tensor.yield %cst : f32 } : tensor<2x3xf32> to tensor<4x5xf32>
  %eh = tensor.empty() : tensor<2x3xf16>
  %hh = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<2x3xf16>) outs(%eh : tensor<2x3xf16>) {
  ^bb0(%x: f16, %o: f16):
    %e = math.erf %x : f16
    %t = math.tanh %e : f16
    %p = math.powf %t, %x : f16
    %s = arith.addf %p, %x : f16
    linalg.yield %s : f16
  } -> tensor<2x3xf16>
  %eb = tensor.empty() : tensor<2x3xbf16>
  %bb = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b16 : tensor<2x3xbf16>) outs(%eb : tensor<2x3xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    %s = arith.mulf %x, %x : bf16
    %e = math.exp %s : bf16
    %q = math.atan %e : bf16
    linalg.yield %q : bf16
  } -> tensor<2x3xbf16>
  %ei = tensor.empty() : tensor<2x3xi64>
  %ii = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%i : tensor<2x3xi64>) outs(%ei : tensor<2x3xi64>) {
  ^bb0(%x: i64, %o: i64):
    %c3 = arith.constant 3 : i64
    %d = arith.ceildivsi %x, %c3 : i64
    %f = arith.floordivsi %x, %c3 : i64
    %p = math.ipowi %d, %c3 : i64
    %s = arith.addi %p, %f : i64
    linalg.yield %s : i64
  } -> tensor<2x3xi64>
  %w = arith.constant dense<1.0> : tensor<1x1x2x2xf32>
  %z = arith.constant dense<0.0> : tensor<1x1x3x3xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%img, %w : tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) outs(%z : tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %pe = tensor.empty() : tensor<1x1x2x2xf32>
  %pf = linalg.fill ins(%ninf : f32) outs(%pe : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%img, %k : tensor<1x1x4x4xf32>, tensor<2x2xf32>) outs(%pf : tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %re = tensor.empty() : tensor<2xf32>
  %rz = linalg.fill ins(%cst : f32) outs(%re : tensor<2xf32>) -> tensor<2xf32>
  %red = linalg.reduce ins(%a : tensor<2x3xf32>) outs(%rz : tensor<2xf32>) dimensions = [1] (%x: f32, %acc: f32) { %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32 }
  %cat = tensor.concat dim(0) %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %te = tensor.empty() : tensor<3x2xf32>
  %tr = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%te : tensor<3x2xf32>) permutation = [1, 0]
  %me = tensor.empty() : tensor<2x2xf32>
  %mz = linalg.fill ins(%cst : f32) outs(%me : tensor<2x2xf32>) -> tensor<2x2xf32>
  %mm = linalg.matmul ins(%a, %tr : tensor<2x3xf32>, tensor<3x2xf32>) outs(%mz : tensor<2x2xf32>) -> tensor<2x2xf32>
  %flat = tensor.collapse_shape %a [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %sl = tensor.extract_slice %cat[1, 0] [1, 3] [2, 1] : tensor<4x3xf32> to tensor<1x3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %loop = scf.for %iv = %c0 to %c4 step %c1 iter_args(%acc = %sl) -> tensor<1x3xf32> {
    %v = tensor.extract %acc[%c0, %c0] : tensor<1x3xf32>
    %v2 = arith.addf %v, %v : f32
    %n = tensor.insert %v2 into %acc[%c0, %c0] : tensor<1x3xf32>
    scf.yield %n : tensor<1x3xf32>
  }
  return %pad, %hh, %bb, %ii, %conv, %pool, %red, %cat, %tr, %mm, %flat, %loop : tensor<4x5xf32>, tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xi64>, tensor<1x1x3x3xf32>, tensor<1x1x2x2xf32>, tensor<2xf32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<2x2xf32>, tensor<6xf32>, tensor<1x3xf32>
}
