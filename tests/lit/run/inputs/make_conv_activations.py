#!/usr/bin/env python3
"""A chain of convolutions, each followed by an activation the channels-last
pass (layout_channels_last.c) folds into oneDNN's convolution as a post-op:
HardSwish, SiLU as PyTorch exports it (x * Sigmoid(x)), Hardswish as it
exports it before opset 14 (x * HardSigmoid(x) of alpha 1/6, beta 1/2),
LeakyRelu, Tanh, a residual Add then SiLU, and Sigmoid. Writes
conv_activations.onnx, x.npy and conv_activations_ref.npy (NumPy's output)
to DIR.

  make_conv_activations.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from numpy_conv import conv

C, H, W = 8, 10, 9


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def hard_sigmoid(v):
    return np.clip(v / 6.0 + 0.5, 0.0, 1.0)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    ws = [(rng.standard_normal((C, C, 3, 3)) * 0.4).astype(np.float32) for _ in range(7)]
    bs = [(rng.standard_normal(C) * 0.5).astype(np.float32) for _ in range(7)]
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    inits = [numpy_helper.from_array(a, f"w{i}") for i, a in enumerate(ws)]
    inits += [numpy_helper.from_array(a, f"b{i}") for i, a in enumerate(bs)]

    def conv_node(i, src):
        return helper.make_node("Conv", [src, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1, 1, 1, 1])

    nodes = [
        conv_node(0, "x"), helper.make_node("HardSwish", ["c0"], ["a0"]),
        conv_node(1, "a0"), helper.make_node("Sigmoid", ["c1"], ["g1"]), helper.make_node("Mul", ["c1", "g1"], ["a1"]),
        conv_node(2, "a1"), helper.make_node("HardSigmoid", ["c2"], ["g2"], alpha=1.0 / 6.0, beta=0.5),
        helper.make_node("Mul", ["g2", "c2"], ["a2"]),
        conv_node(3, "a2"), helper.make_node("LeakyRelu", ["c3"], ["a3"], alpha=0.1),
        conv_node(4, "a3"), helper.make_node("Tanh", ["c4"], ["a4"]),
        conv_node(5, "a4"), helper.make_node("Add", ["c5", "a3"], ["s5"]),
        helper.make_node("Sigmoid", ["s5"], ["g5"]), helper.make_node("Mul", ["s5", "g5"], ["a5"]),
        conv_node(6, "a5"), helper.make_node("Sigmoid", ["c6"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "conv_activations",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C, H, W])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, "conv_activations.onnx"))
    np.save(os.path.join(out, "x.npy"), x)

    def c(i, v):
        return conv(v.astype(np.float32), ws[i], pads=(1, 1, 1, 1)).astype(np.float64) + bs[i].reshape(1, -1, 1, 1)

    a0 = c(0, x) * hard_sigmoid(c(0, x))
    a1 = c(1, a0) * sigmoid(c(1, a0))
    a2 = c(2, a1) * hard_sigmoid(c(2, a1))
    t3 = c(3, a2)
    a3 = np.where(t3 < 0, 0.1 * t3, t3)
    a4 = np.tanh(c(4, a3))
    s5 = c(5, a4) + a3
    a5 = s5 * sigmoid(s5)
    y = sigmoid(c(6, a5))
    np.save(os.path.join(out, "conv_activations_ref.npy"), y.astype(np.float32))


if __name__ == "__main__":
    main()
