#!/usr/bin/python3
"""make_softmax.py OUT - softmax.test's models: Softmax and LogSoftmax
along the last axis of x [3, 5, N] for N in 1, 15, 16, 17, 197 (the
kernel's vector passes and their tails), x with rows holding a NaN, an
infinity, -infinity (among numbers, and a whole row of it) and values far
below the row's max; and Softmax along axis 1 (the Linalg form). NumPy's
results (float64, as the reference computes them) in expected_*.npy."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
rng = np.random.default_rng(5)
nodes, outputs, inputs, expected = [], [], [], []


def softmax(x, axis, log):
    with np.errstate(all="ignore"):
        m = x.max(axis, keepdims=True)
        e = np.exp(x - m)
        s = e.sum(axis, keepdims=True)
        return x - m - np.log(s) if log else e / s


for n in (1, 15, 16, 17, 197):
    x = (rng.standard_normal((3, 5, n)) * 8).astype(np.float32)
    if n >= 16:
        x[0, 0, 3] = np.nan
        x[0, 1, 2] = np.inf
        x[0, 2, 1] = -np.inf
        x[0, 3, :] = -np.inf
        x[1, 0, 0] = 200.0  # the others are far below it: exps under 2^-126
    name = f"x{n}"
    inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(x.shape)))
    np.save(os.path.join(out, name + ".npy"), x)
    for op, log in (("Softmax", 0), ("LogSoftmax", 1)):
        y = f"{op.lower()}{n}"
        nodes.append(helper.make_node(op, [name], [y]))
        outputs.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, list(x.shape)))
        expected.append(softmax(x.astype(np.float64), -1, log))
nodes.append(helper.make_node("Softmax", ["x17"], ["axis1"], axis=1))
outputs.append(helper.make_tensor_value_info("axis1", TensorProto.FLOAT, [3, 5, 17]))
expected.append(softmax(np.load(os.path.join(out, "x17.npy")).astype(np.float64), 1, 0))
model = helper.make_model(helper.make_graph(nodes, "softmax", inputs, outputs),
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "softmax.onnx"))
for k, e in enumerate(expected):
    np.save(os.path.join(out, f"expected_{k}.npy"), e.astype(np.float32))
print(len(expected))
