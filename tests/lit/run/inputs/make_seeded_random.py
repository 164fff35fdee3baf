"""make_seeded_random.py OUT - seeded random ops, and what NumPy's legacy
RandomState (the ONNX reference implementation's generator, re-seeded at
each evaluation) draws for them: RandomUniform, RandomUniformLike, and a training-mode Dropout with its mask. Writes random.onnx,
x.npy and expected_<i>.npy; unseeded.onnx has a RandomUniform without a
seed."""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
x = np.arange(24, dtype=np.float32).reshape(4, 6) - 7
nodes = [helper.make_node("RandomUniform", [], ["u"], shape=[3, 4], seed=7.0, low=-2.0, high=3.0),
         helper.make_node("RandomUniformLike", ["x"], ["ul"], seed=3.0),
         helper.make_node("Dropout", ["x", "ratio", "training"], ["y", "mask"], seed=11)]
graph = helper.make_graph(
    nodes, "seeded", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
    [helper.make_tensor_value_info("u", TensorProto.FLOAT, [3, 4]),
     helper.make_tensor_value_info("ul", TensorProto.FLOAT, [4, 6]),
     helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6]),
     helper.make_tensor_value_info("mask", TensorProto.BOOL, [4, 6])],
    [numpy_helper.from_array(np.array(0.3, np.float32), "ratio"),
     numpy_helper.from_array(np.array(True), "training")])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/random.onnx")
np.save(f"{out}/x.npy", x)

u = np.random.RandomState(7).rand(3, 4).astype(np.float32)
u *= np.float32(3.0 - -2.0)
u += np.float32(-2.0)
np.save(f"{out}/expected_0.npy", u)
np.save(f"{out}/expected_1.npy", np.random.RandomState(3).rand(4, 6).astype(np.float32))
keep = np.random.RandomState(11).uniform(0, 1.0, x.shape) >= np.float32(0.3)
np.save(f"{out}/expected_2.npy", (keep * x * (1.0 / (1.0 - np.float32(0.3)))).astype(np.float32))
np.save(f"{out}/expected_3.npy", keep)

graph = helper.make_graph([helper.make_node("RandomUniform", [], ["u"], shape=[2])], "unseeded", [],
                          [helper.make_tensor_value_info("u", TensorProto.FLOAT, [2])])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/unseeded.onnx")
