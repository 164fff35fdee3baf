module {
  func.func @initializers() -> (!torch.vtensor<[3],f32>, !torch.vtensor<[2],si64>, !torch.vtensor<[3],i1>, !torch.vtensor<[2],!torch.str>, !torch.vtensor<[0],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[2],f32>) attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "make_models", torch.onnx_meta.producer_version = "1.0"} {
    %0 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>} : () -> !torch.vtensor<[3],f32>
    %1 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense<[-1, 5]> : tensor<2xsi64>} : () -> !torch.vtensor<[2],si64>
    %2 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense<[true, false, true]> : tensor<3xi1>} : () -> !torch.vtensor<[3],i1>
    %3 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense<["ab", "cd"]> : tensor<2x!torch.str>} : () -> !torch.vtensor<[2],!torch.str>
    %4 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense<> : tensor<0xf32>} : () -> !torch.vtensor<[0],f32>
    %5 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<scalar> : tensor<si64>} : () -> !torch.vtensor<[],si64>
    %6 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<_w_1> : tensor<1xf32>} : () -> !torch.vtensor<[1],f32>
    %7 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<_w_1_1> : tensor<1xf32>} : () -> !torch.vtensor<[1],f32>
    %8 = "torch.operator"() {name = "onnx.Constant", torch.onnx.sparse_value = sparse<2, 3.000000e+00> : tensor<4xf32>} : () -> !torch.vtensor<[4],f32>
    %9 = "torch.operator"(%0) {name = "onnx.Identity"} : (!torch.vtensor<[3],f32>) -> !torch.vtensor<[3],f32>
    %10 = "torch.operator"(%1) {name = "onnx.Identity"} : (!torch.vtensor<[2],si64>) -> !torch.vtensor<[2],si64>
    %11 = "torch.operator"(%2) {name = "onnx.Identity"} : (!torch.vtensor<[3],i1>) -> !torch.vtensor<[3],i1>
    %12 = "torch.operator"(%3) {name = "onnx.Identity"} : (!torch.vtensor<[2],!torch.str>) -> !torch.vtensor<[2],!torch.str>
    %13 = "torch.operator"(%4) {name = "onnx.Identity"} : (!torch.vtensor<[0],f32>) -> !torch.vtensor<[0],f32>
    %14 = "torch.operator"(%5) {name = "onnx.Identity"} : (!torch.vtensor<[],si64>) -> !torch.vtensor<[],si64>
    %15 = "torch.operator"(%6) {name = "onnx.Identity"} : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32>
    %16 = "torch.operator"(%7) {name = "onnx.Identity"} : (!torch.vtensor<[1],f32>) -> !torch.vtensor<[1],f32>
    %17 = "torch.operator"(%8) {name = "onnx.Identity"} : (!torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32>
    %18 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<k> : tensor<2xf32>} : () -> !torch.vtensor<[2],f32>
    return %9, %10, %11, %12, %13, %14, %15, %16, %17, %18 : !torch.vtensor<[3],f32>, !torch.vtensor<[2],si64>, !torch.vtensor<[3],i1>, !torch.vtensor<[2],!torch.str>, !torch.vtensor<[0],f32>, !torch.vtensor<[],si64>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[2],f32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      scalar: "0x080000002A00000000000000",
      _w_1: "0x080000000000803F",
      _w_1_1: "0x0800000000000040",
      k: "0x080000000000803E0000003F"
    }
  }
#-}

