#!/usr/bin/python3
"""make_inverse_trig.py OUT - inverse_trig.test's model: Atan of x (every
magnitude from 1e-30 to 1e30, both signs, 0, +-inf, NaN) and Asin, Acos of
u (a fine grid of [-1, 1] with the ends, and values beyond); NumPy's
results (float64 rounded to float32) in expected_<k>.npy."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
mags = np.logspace(-30, 30, 6001)
x = np.concatenate([mags, -mags, [0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.41421356, 2.41421356]]).astype(np.float32)
u = np.concatenate([np.linspace(-1, 1, 20001), 1 - np.logspace(-7, -1, 200), -1 + np.logspace(-7, -1, 200),
                    [1.5, -1.5, np.nan]]).astype(np.float32)
nodes = [helper.make_node("Atan", ["x"], ["atan"]), helper.make_node("Asin", ["u"], ["asin"]),
         helper.make_node("Acos", ["u"], ["acos"])]
graph = helper.make_graph(nodes, "inverse_trig",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)]),
                           helper.make_tensor_value_info("u", TensorProto.FLOAT, [len(u)])],
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("atan", "asin", "acos")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
open(os.path.join(out, "inverse_trig.onnx"), "wb").write(model.SerializeToString())
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "u.npy"), u)
with np.errstate(invalid="ignore"):
    expected = [np.arctan(x.astype(np.float64)), np.arcsin(u.astype(np.float64)), np.arccos(u.astype(np.float64))]
for k, e in enumerate(expected):
    np.save(os.path.join(out, "expected_%d.npy" % k), e.astype(np.float32))
