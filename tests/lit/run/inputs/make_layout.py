#!/usr/bin/env python3
"""A CNN whose values between convolutions pass through reductions: Conv,
InstanceNormalization (the shared layer writes it with two ReduceMeans over
H and W), Relu, Conv, then a ReduceMax over the channels (keepdims)
subtracted from it. Channels last (layout_channels_last.c), every op
between the first Conv and the output runs on the NHWC values: one
Transpose in, one out. Writes layout.onnx, x.npy and layout_ref.npy
(NumPy's output) to DIR.

  make_layout.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from numpy_conv import conv

C, H, W = 8, 12, 10


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(3)
    w1 = (rng.standard_normal((16, C, 3, 3)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((16, 16, 3, 3)) * 0.1).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, 16).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (w2, "w2"), (scale, "scale"), (bias, "bias"))]
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
        helper.make_node("InstanceNormalization", ["a", "scale", "bias"], ["n"], epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("Conv", ["r", "w2"], ["b"], pads=[1, 1, 1, 1]),
        helper.make_node("ReduceMax", ["b"], ["m"], axes=[1], keepdims=1),
        helper.make_node("Sub", ["b", "m"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "layout", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, H, W])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "layout.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    a = conv(x, w1, pads=(1, 1, 1, 1)).astype(np.float64)
    mean = a.mean(axis=(2, 3), keepdims=True)
    var = ((a - mean) ** 2).mean(axis=(2, 3), keepdims=True)
    n = (a - mean) / np.sqrt(var + 1e-5) * scale.reshape(1, -1, 1, 1) + bias.reshape(1, -1, 1, 1)
    b = conv(np.maximum(n, 0).astype(np.float32), w2, pads=(1, 1, 1, 1))
    np.save(os.path.join(out, "layout_ref.npy"), (b - b.max(axis=1, keepdims=True)).astype(np.float32))


if __name__ == "__main__":
    main()
