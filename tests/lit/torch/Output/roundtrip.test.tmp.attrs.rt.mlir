module {
  func.func @attrs(%arg0: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.opset_versions = {test.custom = 3 : si64}, torch.onnx_meta.producer_name = "make_models", torch.onnx_meta.producer_version = "1.0"} {
    %0 = "torch.operator"(%arg0) ({
      %1 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value_float = 1.000000e+00 : f32} : () -> !torch.vtensor<[],f32>
      "torch.operator_terminator"(%1) : (!torch.vtensor<[],f32>) -> ()
    }, {
      %1 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value_float = 2.000000e+00 : f32} : () -> !torch.vtensor<[],f32>
      "torch.operator_terminator"(%1) : (!torch.vtensor<[],f32>) -> ()
    }) {name = "onnx.AllAttrs", torch.onnx.f = 5.000000e-01 : f32, torch.onnx.floats = [1.000000e+00 : f32, 2.500000e+00 : f32], torch.onnx.i = -3 : si64, torch.onnx.ints = [1 : si64, 2 : si64, 3 : si64], torch.onnx.s = "hello", torch.onnx.sp = sparse<[[0, 1], [1, 1]], [1.500000e+00, 2.500000e+00]> : tensor<2x2xf32>, torch.onnx.sps = [sparse<[[0, 1], [1, 1]], [1.500000e+00, 2.500000e+00]> : tensor<2x2xf32>, sparse<[[1, 0]], 4.000000e+00> : tensor<2x2xf32>], torch.onnx.strings = ["a", "b"], torch.onnx.t = dense_resource<tconst> : tensor<2xsi64>, torch.onnx.tensors = [dense_resource<y> : tensor<1xf32>, dense_resource<y_1> : tensor<2xf32>], torch.onnx.tp = !torch.vtensor<[2,?],f32>, torch.onnx.tps = [!torch.vtensor<[],si64>, !torch.list<vtensor<*,f32>>]} : (!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
    return %0 : !torch.vtensor<[2],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      tconst: "0x0800000001000000000000000200000000000000",
      y: "0x080000000000E040",
      y_1: "0x080000000000004100001041"
    }
  }
#-}

