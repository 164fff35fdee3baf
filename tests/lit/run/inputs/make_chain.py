"""make_chain.py OUT_DIR: a model of 80 blocks y = Relu(x W_i + b_i) on a
[16, 64] input (big enough for `run` to cut into units that compile on
threads of their own), its input, and the output NumPy computes."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)
x = rng.standard_normal((16, 64)).astype(np.float32)
nodes, inits, y, v = [], [], x, "x"
for i in range(80):
    w = (rng.standard_normal((64, 64)) / 8).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32) / 4
    inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
    nodes += [helper.make_node("MatMul", [v, f"w{i}"], [f"m{i}"]),
              helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
              helper.make_node("Relu", [f"a{i}"], [f"r{i}"])]
    v = f"r{i}"
    y = np.maximum(y.astype(np.float64) @ w + b, 0)
graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])],
                          [helper.make_tensor_value_info(v, TensorProto.FLOAT, [16, 64])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/chain.onnx")
np.save(f"{out}/x.npy", x)
np.save(f"{out}/expected.npy", y.astype(np.float32))
