module {
  func.func @loop_graph(%arg0: !torch.vtensor<[],i1>, %arg1: !torch.vtensor<[2],f32>, %arg2: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "make_models", torch.onnx_meta.producer_version = "1.0"} {
    %0 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<hi> : tensor<f32>} : () -> !torch.vtensor<[],f32>
    %1 = "torch.constant.none"() : () -> !torch.none
    %2 = "torch.operator"(%1, %arg0, %arg1) ({
    ^bb0(%arg3: !torch.vtensor<[],si64>, %arg4: !torch.vtensor<[],i1>, %arg5: !torch.vtensor<[2],f32>):
      %3 = "torch.operator"(%arg5, %arg2) {name = "onnx.Add"} : (!torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
      %4 = "torch.constant.none"() : () -> !torch.none
      %5 = "torch.operator"(%3, %4, %0) {name = "onnx.Clip"} : (!torch.vtensor<[2],f32>, !torch.none, !torch.vtensor<[],f32>) -> !torch.vtensor<[2],f32>
      %6 = "torch.operator"(%arg4) {name = "onnx.Identity"} : (!torch.vtensor<[],i1>) -> !torch.vtensor<[],i1>
      "torch.operator_terminator"(%6, %5) : (!torch.vtensor<[],i1>, !torch.vtensor<[2],f32>) -> ()
    }) {name = "onnx.Loop"} : (!torch.none, !torch.vtensor<[],i1>, !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
    return %2 : !torch.vtensor<[2],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      hi: "0x080000000000C842"
    }
  }
#-}

