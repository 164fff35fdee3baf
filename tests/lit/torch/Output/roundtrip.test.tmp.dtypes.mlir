module {
  func.func @dtypes(%arg0: !torch.vtensor<[2],f32>, %arg1: !torch.vtensor<[2],ui8>, %arg2: !torch.vtensor<[2],si8>, %arg3: !torch.vtensor<[2],ui16>, %arg4: !torch.vtensor<[2],si16>, %arg5: !torch.vtensor<[2],si32>, %arg6: !torch.vtensor<[2],si64>, %arg7: !torch.vtensor<[2],i1>, %arg8: !torch.vtensor<[2],f16>, %arg9: !torch.vtensor<[2],f64>, %arg10: !torch.vtensor<[2],ui32>, %arg11: !torch.vtensor<[2],ui64>, %arg12: !torch.vtensor<[2],complex<f32>>, %arg13: !torch.vtensor<[2],complex<f64>>, %arg14: !torch.vtensor<[2],bf16>, %arg15: !torch.vtensor<[2],f8E4M3FN>, %arg16: !torch.vtensor<[2],f8E4M3FNUZ>, %arg17: !torch.vtensor<[2],f8E5M2>, %arg18: !torch.vtensor<[2],f8E5M2FNUZ>, %arg19: !torch.vtensor<[2],ui4>, %arg20: !torch.vtensor<[2],si4>, %arg21: !torch.vtensor<[2],f4E2M1FN>, %arg22: !torch.vtensor<[2],f8E8M0FNU>, %arg23: !torch.vtensor<[2],ui2>, %arg24: !torch.vtensor<[2],si2>, %arg25: !torch.vtensor<[2],!torch.str>) -> (!torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],ui8>, !torch.vtensor<[2],ui8>, !torch.vtensor<[2],si8>, !torch.vtensor<[2],si8>, !torch.vtensor<[2],ui16>, !torch.vtensor<[2],ui16>, !torch.vtensor<[2],si16>, !torch.vtensor<[2],si16>, !torch.vtensor<[2],si32>, !torch.vtensor<[2],si32>, !torch.vtensor<[2],si64>, !torch.vtensor<[2],si64>, !torch.vtensor<[2],i1>, !torch.vtensor<[2],i1>, !torch.vtensor<[2],f16>, !torch.vtensor<[2],f16>, !torch.vtensor<[2],f64>, !torch.vtensor<[2],f64>, !torch.vtensor<[2],ui32>, !torch.vtensor<[2],ui32>, !torch.vtensor<[2],ui64>, !torch.vtensor<[2],ui64>, !torch.vtensor<[2],complex<f32>>, !torch.vtensor<[2],complex<f32>>, !torch.vtensor<[2],complex<f64>>, !torch.vtensor<[2],complex<f64>>, !torch.vtensor<[2],bf16>, !torch.vtensor<[2],bf16>, !torch.vtensor<[2],f8E4M3FN>, !torch.vtensor<[2],f8E4M3FN>, !torch.vtensor<[2],f8E4M3FNUZ>, !torch.vtensor<[2],f8E4M3FNUZ>, !torch.vtensor<[2],f8E5M2>, !torch.vtensor<[2],f8E5M2>, !torch.vtensor<[2],f8E5M2FNUZ>, !torch.vtensor<[2],f8E5M2FNUZ>, !torch.vtensor<[2],ui4>, !torch.vtensor<[2],ui4>, !torch.vtensor<[2],si4>, !torch.vtensor<[2],si4>, !torch.vtensor<[2],f4E2M1FN>, !torch.vtensor<[2],f4E2M1FN>, !torch.vtensor<[2],f8E8M0FNU>, !torch.vtensor<[2],f8E8M0FNU>, !torch.vtensor<[2],ui2>, !torch.vtensor<[2],ui2>, !torch.vtensor<[2],si2>, !torch.vtensor<[2],si2>, !torch.vtensor<[2],!torch.str>) attributes {torch.onnx_meta.ir_version = 11 : si64, torch.onnx_meta.opset_version = 25 : si64, torch.onnx_meta.producer_name = "make_models", torch.onnx_meta.producer_version = "1.0"} {
    %0 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_float> : tensor<2xf32>} : () -> !torch.vtensor<[2],f32>
    %1 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_uint8> : tensor<2xui8>} : () -> !torch.vtensor<[2],ui8>
    %2 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_int8> : tensor<2xsi8>} : () -> !torch.vtensor<[2],si8>
    %3 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_uint16> : tensor<2xui16>} : () -> !torch.vtensor<[2],ui16>
    %4 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_int16> : tensor<2xsi16>} : () -> !torch.vtensor<[2],si16>
    %5 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_int32> : tensor<2xsi32>} : () -> !torch.vtensor<[2],si32>
    %6 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_int64> : tensor<2xsi64>} : () -> !torch.vtensor<[2],si64>
    %7 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_bool> : tensor<2xi1>} : () -> !torch.vtensor<[2],i1>
    %8 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_float16> : tensor<2xf16>} : () -> !torch.vtensor<[2],f16>
    %9 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_double> : tensor<2xf64>} : () -> !torch.vtensor<[2],f64>
    %10 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_uint32> : tensor<2xui32>} : () -> !torch.vtensor<[2],ui32>
    %11 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_uint64> : tensor<2xui64>} : () -> !torch.vtensor<[2],ui64>
    %12 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_complex64> : tensor<2xcomplex<f32>>} : () -> !torch.vtensor<[2],complex<f32>>
    %13 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_complex128> : tensor<2xcomplex<f64>>} : () -> !torch.vtensor<[2],complex<f64>>
    %14 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_bfloat16> : tensor<2xbf16>} : () -> !torch.vtensor<[2],bf16>
    %15 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_float8e4m3fn> : tensor<2xf8E4M3FN>} : () -> !torch.vtensor<[2],f8E4M3FN>
    %16 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_float8e4m3fnuz> : tensor<2xf8E4M3FNUZ>} : () -> !torch.vtensor<[2],f8E4M3FNUZ>
    %17 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_float8e5m2> : tensor<2xf8E5M2>} : () -> !torch.vtensor<[2],f8E5M2>
    %18 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_float8e5m2fnuz> : tensor<2xf8E5M2FNUZ>} : () -> !torch.vtensor<[2],f8E5M2FNUZ>
    %19 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_uint4> : tensor<2xui4>} : () -> !torch.vtensor<[2],ui4>
    %20 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_int4> : tensor<2xsi4>} : () -> !torch.vtensor<[2],si4>
    %21 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_float4e2m1> : tensor<2xf4E2M1FN>} : () -> !torch.vtensor<[2],f4E2M1FN>
    %22 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_float8e8m0> : tensor<2xf8E8M0FNU>} : () -> !torch.vtensor<[2],f8E8M0FNU>
    %23 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_uint2> : tensor<2xui2>} : () -> !torch.vtensor<[2],ui2>
    %24 = "torch.operator"() {name = "onnx.Constant", torch.onnx.value = dense_resource<c_int2> : tensor<2xsi2>} : () -> !torch.vtensor<[2],si2>
    %25 = "torch.operator"(%arg0) {name = "onnx.Identity"} : (!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
    %26 = "torch.operator"(%0) {name = "onnx.Identity"} : (!torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32>
    %27 = "torch.operator"(%arg1) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui8>) -> !torch.vtensor<[2],ui8>
    %28 = "torch.operator"(%1) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui8>) -> !torch.vtensor<[2],ui8>
    %29 = "torch.operator"(%arg2) {name = "onnx.Identity"} : (!torch.vtensor<[2],si8>) -> !torch.vtensor<[2],si8>
    %30 = "torch.operator"(%2) {name = "onnx.Identity"} : (!torch.vtensor<[2],si8>) -> !torch.vtensor<[2],si8>
    %31 = "torch.operator"(%arg3) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui16>) -> !torch.vtensor<[2],ui16>
    %32 = "torch.operator"(%3) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui16>) -> !torch.vtensor<[2],ui16>
    %33 = "torch.operator"(%arg4) {name = "onnx.Identity"} : (!torch.vtensor<[2],si16>) -> !torch.vtensor<[2],si16>
    %34 = "torch.operator"(%4) {name = "onnx.Identity"} : (!torch.vtensor<[2],si16>) -> !torch.vtensor<[2],si16>
    %35 = "torch.operator"(%arg5) {name = "onnx.Identity"} : (!torch.vtensor<[2],si32>) -> !torch.vtensor<[2],si32>
    %36 = "torch.operator"(%5) {name = "onnx.Identity"} : (!torch.vtensor<[2],si32>) -> !torch.vtensor<[2],si32>
    %37 = "torch.operator"(%arg6) {name = "onnx.Identity"} : (!torch.vtensor<[2],si64>) -> !torch.vtensor<[2],si64>
    %38 = "torch.operator"(%6) {name = "onnx.Identity"} : (!torch.vtensor<[2],si64>) -> !torch.vtensor<[2],si64>
    %39 = "torch.operator"(%arg7) {name = "onnx.Identity"} : (!torch.vtensor<[2],i1>) -> !torch.vtensor<[2],i1>
    %40 = "torch.operator"(%7) {name = "onnx.Identity"} : (!torch.vtensor<[2],i1>) -> !torch.vtensor<[2],i1>
    %41 = "torch.operator"(%arg8) {name = "onnx.Identity"} : (!torch.vtensor<[2],f16>) -> !torch.vtensor<[2],f16>
    %42 = "torch.operator"(%8) {name = "onnx.Identity"} : (!torch.vtensor<[2],f16>) -> !torch.vtensor<[2],f16>
    %43 = "torch.operator"(%arg9) {name = "onnx.Identity"} : (!torch.vtensor<[2],f64>) -> !torch.vtensor<[2],f64>
    %44 = "torch.operator"(%9) {name = "onnx.Identity"} : (!torch.vtensor<[2],f64>) -> !torch.vtensor<[2],f64>
    %45 = "torch.operator"(%arg10) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui32>) -> !torch.vtensor<[2],ui32>
    %46 = "torch.operator"(%10) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui32>) -> !torch.vtensor<[2],ui32>
    %47 = "torch.operator"(%arg11) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui64>) -> !torch.vtensor<[2],ui64>
    %48 = "torch.operator"(%11) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui64>) -> !torch.vtensor<[2],ui64>
    %49 = "torch.operator"(%arg12) {name = "onnx.Identity"} : (!torch.vtensor<[2],complex<f32>>) -> !torch.vtensor<[2],complex<f32>>
    %50 = "torch.operator"(%12) {name = "onnx.Identity"} : (!torch.vtensor<[2],complex<f32>>) -> !torch.vtensor<[2],complex<f32>>
    %51 = "torch.operator"(%arg13) {name = "onnx.Identity"} : (!torch.vtensor<[2],complex<f64>>) -> !torch.vtensor<[2],complex<f64>>
    %52 = "torch.operator"(%13) {name = "onnx.Identity"} : (!torch.vtensor<[2],complex<f64>>) -> !torch.vtensor<[2],complex<f64>>
    %53 = "torch.operator"(%arg14) {name = "onnx.Identity"} : (!torch.vtensor<[2],bf16>) -> !torch.vtensor<[2],bf16>
    %54 = "torch.operator"(%14) {name = "onnx.Identity"} : (!torch.vtensor<[2],bf16>) -> !torch.vtensor<[2],bf16>
    %55 = "torch.operator"(%arg15) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E4M3FN>) -> !torch.vtensor<[2],f8E4M3FN>
    %56 = "torch.operator"(%15) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E4M3FN>) -> !torch.vtensor<[2],f8E4M3FN>
    %57 = "torch.operator"(%arg16) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E4M3FNUZ>) -> !torch.vtensor<[2],f8E4M3FNUZ>
    %58 = "torch.operator"(%16) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E4M3FNUZ>) -> !torch.vtensor<[2],f8E4M3FNUZ>
    %59 = "torch.operator"(%arg17) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E5M2>) -> !torch.vtensor<[2],f8E5M2>
    %60 = "torch.operator"(%17) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E5M2>) -> !torch.vtensor<[2],f8E5M2>
    %61 = "torch.operator"(%arg18) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E5M2FNUZ>) -> !torch.vtensor<[2],f8E5M2FNUZ>
    %62 = "torch.operator"(%18) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E5M2FNUZ>) -> !torch.vtensor<[2],f8E5M2FNUZ>
    %63 = "torch.operator"(%arg19) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui4>) -> !torch.vtensor<[2],ui4>
    %64 = "torch.operator"(%19) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui4>) -> !torch.vtensor<[2],ui4>
    %65 = "torch.operator"(%arg20) {name = "onnx.Identity"} : (!torch.vtensor<[2],si4>) -> !torch.vtensor<[2],si4>
    %66 = "torch.operator"(%20) {name = "onnx.Identity"} : (!torch.vtensor<[2],si4>) -> !torch.vtensor<[2],si4>
    %67 = "torch.operator"(%arg21) {name = "onnx.Identity"} : (!torch.vtensor<[2],f4E2M1FN>) -> !torch.vtensor<[2],f4E2M1FN>
    %68 = "torch.operator"(%21) {name = "onnx.Identity"} : (!torch.vtensor<[2],f4E2M1FN>) -> !torch.vtensor<[2],f4E2M1FN>
    %69 = "torch.operator"(%arg22) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E8M0FNU>) -> !torch.vtensor<[2],f8E8M0FNU>
    %70 = "torch.operator"(%22) {name = "onnx.Identity"} : (!torch.vtensor<[2],f8E8M0FNU>) -> !torch.vtensor<[2],f8E8M0FNU>
    %71 = "torch.operator"(%arg23) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui2>) -> !torch.vtensor<[2],ui2>
    %72 = "torch.operator"(%23) {name = "onnx.Identity"} : (!torch.vtensor<[2],ui2>) -> !torch.vtensor<[2],ui2>
    %73 = "torch.operator"(%arg24) {name = "onnx.Identity"} : (!torch.vtensor<[2],si2>) -> !torch.vtensor<[2],si2>
    %74 = "torch.operator"(%24) {name = "onnx.Identity"} : (!torch.vtensor<[2],si2>) -> !torch.vtensor<[2],si2>
    %75 = "torch.operator"(%arg25) {name = "onnx.Identity"} : (!torch.vtensor<[2],!torch.str>) -> !torch.vtensor<[2],!torch.str>
    return %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75 : !torch.vtensor<[2],f32>, !torch.vtensor<[2],f32>, !torch.vtensor<[2],ui8>, !torch.vtensor<[2],ui8>, !torch.vtensor<[2],si8>, !torch.vtensor<[2],si8>, !torch.vtensor<[2],ui16>, !torch.vtensor<[2],ui16>, !torch.vtensor<[2],si16>, !torch.vtensor<[2],si16>, !torch.vtensor<[2],si32>, !torch.vtensor<[2],si32>, !torch.vtensor<[2],si64>, !torch.vtensor<[2],si64>, !torch.vtensor<[2],i1>, !torch.vtensor<[2],i1>, !torch.vtensor<[2],f16>, !torch.vtensor<[2],f16>, !torch.vtensor<[2],f64>, !torch.vtensor<[2],f64>, !torch.vtensor<[2],ui32>, !torch.vtensor<[2],ui32>, !torch.vtensor<[2],ui64>, !torch.vtensor<[2],ui64>, !torch.vtensor<[2],complex<f32>>, !torch.vtensor<[2],complex<f32>>, !torch.vtensor<[2],complex<f64>>, !torch.vtensor<[2],complex<f64>>, !torch.vtensor<[2],bf16>, !torch.vtensor<[2],bf16>, !torch.vtensor<[2],f8E4M3FN>, !torch.vtensor<[2],f8E4M3FN>, !torch.vtensor<[2],f8E4M3FNUZ>, !torch.vtensor<[2],f8E4M3FNUZ>, !torch.vtensor<[2],f8E5M2>, !torch.vtensor<[2],f8E5M2>, !torch.vtensor<[2],f8E5M2FNUZ>, !torch.vtensor<[2],f8E5M2FNUZ>, !torch.vtensor<[2],ui4>, !torch.vtensor<[2],ui4>, !torch.vtensor<[2],si4>, !torch.vtensor<[2],si4>, !torch.vtensor<[2],f4E2M1FN>, !torch.vtensor<[2],f4E2M1FN>, !torch.vtensor<[2],f8E8M0FNU>, !torch.vtensor<[2],f8E8M0FNU>, !torch.vtensor<[2],ui2>, !torch.vtensor<[2],ui2>, !torch.vtensor<[2],si2>, !torch.vtensor<[2],si2>, !torch.vtensor<[2],!torch.str>
  }
}

{-#
  dialect_resources: {
    builtin: {
      c_float: "0x080000000000803F00000040",
      c_uint8: "0x080000000102",
      c_int8: "0x0800000001FE",
      c_uint16: "0x0800000001000200",
      c_int16: "0x080000000100FEFF",
      c_int32: "0x0800000001000000FEFFFFFF",
      c_int64: "0x080000000100000000000000FEFFFFFFFFFFFFFF",
      c_bool: "0x080000000100",
      c_float16: "0x08000000003C0040",
      c_double: "0x08000000000000000000F03F0000000000000040",
      c_uint32: "0x080000000100000002000000",
      c_uint64: "0x0800000001000000000000000200000000000000",
      c_complex64: "0x080000000000803F000000400000404000008040",
      c_complex128: "0x08000000000000000000F03F000000000000004000000000000008400000000000001040",
      c_bfloat16: "0x08000000803F0040",
      c_float8e4m3fn: "0x080000003840",
      c_float8e4m3fnuz: "0x080000004048",
      c_float8e5m2: "0x080000003C40",
      c_float8e5m2fnuz: "0x080000004044",
      c_uint4: "0x080000000102",
      c_int4: "0x08000000010F",
      c_float4e2m1: "0x080000000204",
      c_float8e8m0: "0x080000007F80",
      c_uint2: "0x080000000102",
      c_int2: "0x080000000103"
    }
  }
#-}

