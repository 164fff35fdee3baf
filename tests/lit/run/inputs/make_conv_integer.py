#!/usr/bin/python3
"""make_conv_integer.py OUT - quant.test's dynamically quantized
convolutions: DynamicQuantizeLinear(x) -> ConvInteger (3x3, pads 1) and
ConvInteger (3x3, stride 2, two groups, a per-channel weight zero point
of zeros, no pads) -> Cast -> Mul by the scales, as onnxruntime's dynamic
quantization writes them; the int32 sums are outputs too. NumPy's results
(the quantization as ONNX defines it, the sums in int64) in expected_*.npy."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from numpy_conv import conv

out = sys.argv[1]
rng = np.random.default_rng(11)
x = rng.standard_normal((2, 8, 20, 20)).astype(np.float32)
w0 = rng.integers(-128, 128, (16, 8, 3, 3), dtype=np.int8)
w1 = rng.integers(-128, 128, (12, 4, 3, 3), dtype=np.int8)
w_scale = np.float32(0.02)
inits = [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(w1, "w1"),
         numpy_helper.from_array(np.zeros(12, np.int8), "w1_zp"),
         numpy_helper.from_array(np.array(w_scale, np.float32), "w_scale")]
nodes = [
    helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"]),
    helper.make_node("ConvInteger", ["xq", "w0", "xzp"], ["s0"], pads=[1, 1, 1, 1], name="same"),
    helper.make_node("ConvInteger", ["xq", "w1", "xzp", "w1_zp"], ["s1"], strides=[2, 2], group=2, name="strided"),
    helper.make_node("Mul", ["xs", "w_scale"], ["scale"]),
]
for i in (0, 1):
    nodes += [helper.make_node("Cast", [f"s{i}"], [f"f{i}"], to=TensorProto.FLOAT),
              helper.make_node("Mul", [f"f{i}", "scale"], [f"y{i}"])]
graph = helper.make_graph(nodes, "conv_integer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info("y0", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("y1", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("s0", TensorProto.INT32, None),
                           helper.make_tensor_value_info("s1", TensorProto.INT32, None)], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "conv_integer.onnx"))
np.save(os.path.join(out, "x.npy"), x)

# DynamicQuantizeLinear as ONNX defines it
lo, hi = min(x.min(), 0), max(x.max(), 0)
xs = np.float32((hi - lo) / np.float32(255))
xzp = np.clip(np.rint(-lo / xs), 0, 255)
xq = np.clip(np.rint(x / xs) + xzp, 0, 255).astype(np.int64) - int(xzp)


# the int32 sums (exact in float64 and in float32: below 2^24)
sums = (conv(xq, w0, pads=(1, 1, 1, 1)), conv(xq, w1, strides=(2, 2), group=2))
for i, s in enumerate(sums):
    np.save(os.path.join(out, f"expected_s{i}.npy"), s.astype(np.int32))
    np.save(os.path.join(out, f"expected_y{i}.npy"), (s.astype(np.float32) * (xs * w_scale)).astype(np.float32))
