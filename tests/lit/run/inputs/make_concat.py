#!/usr/bin/python3
"""make_concat.py DIR - a Concat along the last axis (rows of each input
land strided in the output: the runtime's memrefCopy copies them run by
run) and along a middle axis, with its inputs and NumPy's outputs."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
rng = np.random.default_rng(7)
a = rng.standard_normal((6, 40, 300)).astype(np.float32)
b = rng.standard_normal((6, 40, 200)).astype(np.float32)
nodes = [helper.make_node("Concat", ["a", "b"], ["last"], axis=2),
         helper.make_node("Concat", ["a", "a"], ["middle"], axis=1)]
graph = helper.make_graph(
    nodes, "concat",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a.shape)),
     helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b.shape))],
    [helper.make_tensor_value_info("last", TensorProto.FLOAT, [6, 40, 500]),
     helper.make_tensor_value_info("middle", TensorProto.FLOAT, [6, 80, 300])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out + "/concat.onnx")
np.save(out + "/a.npy", a)
np.save(out + "/b.npy", b)
np.save(out + "/last.npy", np.concatenate([a, b], axis=2))
np.save(out + "/middle.npy", np.concatenate([a, a], axis=1))
