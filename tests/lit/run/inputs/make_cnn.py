"""make_cnn.py OUT - a small CNN for the JIT's channels-last convolutions
(oneDNN): Conv+Relu, a ceil-mode MaxPool with uneven pads, a depthwise Conv
with Clip, a 1x1 Conv without bias added to a residual (then Relu), a
dilated Conv, Concat on the channels, a strided Conv with asymmetric pads
that is itself a graph output, Sigmoid-weighted GlobalAveragePool, and the
weighted map's 36 pixels as rows through a Gemm with transB and a MatMul
of constant weights (oneDNN's matmul). Writes cnn.onnx, x.npy and the
outputs NumPy computes (y0.npy, y1.npy, y2.npy)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from numpy_conv import conv

out = sys.argv[1]
rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def max_pool_ceil(x, k, s, pads):
    n, c, h, w = x.shape
    oh = -(-(h + pads[0] + pads[2] - k) // s) + 1
    ow = -(-(w + pads[1] + pads[3] - k) // s) + 1
    xp = np.full((n, c, (oh - 1) * s + k, (ow - 1) * s + k), -np.inf, np.float32)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    y = np.full((n, c, oh, ow), -np.inf, np.float32)
    for u in range(k):
        for v in range(k):
            y = np.maximum(y, xp[:, :, u:u + s * (oh - 1) + 1:s, v:v + s * (ow - 1) + 1:s])
    return y


relu = lambda a: np.maximum(a, 0)
w = {"w1": rand(8, 4, 3, 3), "b1": rand(8), "wd": rand(8, 1, 3, 3), "bd": rand(8), "we": rand(8, 8, 1, 1),
     "wf1": rand(4, 8, 1, 1), "bf1": rand(4), "wf2": rand(4, 8, 3, 3), "bf2": rand(4), "ws": rand(6, 8, 3, 3),
     "bs": rand(6), "wg": rand(5, 8), "bg": rand(5), "wm": rand(5, 3), "rows": np.array([8, 36], np.int64), "lo": np.array(0, np.float32), "hi": np.array(6, np.float32)}
x = rand(1, 4, 12, 12)

r1 = relu(conv(x, w["w1"], w["b1"], pads=(1, 1, 1, 1)))
p1 = max_pool_ceil(r1, 3, 2, (1, 1, 0, 0))
dc = np.clip(conv(p1, w["wd"], w["bd"], pads=(1, 1, 1, 1), group=8), 0, 6)
r2 = relu(conv(dc, w["we"]) + p1)
cat = np.concatenate([relu(conv(r2, w["wf1"], w["bf1"])),
                      relu(conv(r2, w["wf2"], w["bf2"], pads=(2, 2, 2, 2), dilations=(2, 2)))], axis=1)
y0 = conv(cat, w["ws"], w["bs"], strides=(2, 2), pads=(0, 1, 1, 0))
sig = cat * (1 / (1 + np.exp(-cat)))
y1 = sig.mean(axis=(2, 3)).reshape(1, 8)
y2 = (sig.reshape(8, 36).T @ w["wg"].T + w["bg"]) @ w["wm"]

N = helper.make_node
nodes = [
    N("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
    N("Relu", ["c1"], ["r1"]),
    N("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 0], ceil_mode=1),
    N("Conv", ["p1", "wd", "bd"], ["d"], pads=[1, 1, 1, 1], group=8),
    N("Clip", ["d", "lo", "hi"], ["dc"]),
    N("Conv", ["dc", "we"], ["e"]),
    N("Add", ["e", "p1"], ["a"]),
    N("Relu", ["a"], ["r2"]),
    N("Conv", ["r2", "wf1", "bf1"], ["f1"]),
    N("Relu", ["f1"], ["f1r"]),
    N("Conv", ["r2", "wf2", "bf2"], ["f2"], pads=[2, 2, 2, 2], dilations=[2, 2]),
    N("Relu", ["f2"], ["f2r"]),
    N("Concat", ["f1r", "f2r"], ["cat"], axis=1),
    N("Conv", ["cat", "ws", "bs"], ["y0"], strides=[2, 2], pads=[0, 1, 1, 0]),
    N("Sigmoid", ["cat"], ["sg"]),
    N("Mul", ["cat", "sg"], ["m"]),
    N("GlobalAveragePool", ["m"], ["g"]),
    N("Flatten", ["g"], ["y1"]),
    N("Reshape", ["m", "rows"], ["mr"]),
    N("Transpose", ["mr"], ["pixels"], perm=[1, 0]),
    N("Gemm", ["pixels", "wg", "bg"], ["gm"], transB=1),
    N("MatMul", ["gm", "wm"], ["y2"]),
]
graph = helper.make_graph(
    nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 12, 12])],
    [helper.make_tensor_value_info("y0", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("y1", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("y2", TensorProto.FLOAT, None)],
    [numpy_helper.from_array(v, k) for k, v in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
open(os.path.join(out, "cnn.onnx"), "wb").write(model.SerializeToString())
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y0.npy"), y0)
np.save(os.path.join(out, "y1.npy"), y1)
np.save(os.path.join(out, "y2.npy"), y2)
