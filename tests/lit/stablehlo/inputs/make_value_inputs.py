"""Models whose sizes come from small inputs at a distance (value_inputs.test):
a window whose integer size is cast to float before its Range (as ONNX's
expanded window functions do), an AffineGrid's size input, and a Range
expanded as a Loop whose trip count is computed from float start, limit
and delta and sizes its scan output. Writes DIR/<name>.onnx and
DIR/<name>/input_<i>.pb. Usage: DIR."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, nodes, inputs, outputs, values, inits=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    onnx.save(model, "%s/%s.onnx" % (out, name))
    os.makedirs("%s/%s" % (out, name), exist_ok=True)
    for i, v in enumerate(values):
        with open("%s/%s/input_%d.pb" % (out, name, i), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())


def const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.array(value, np.float32)))


# window: y = cos(Range(0, float(n), 1) * 2 pi / float(n))
save("window", [const("zero", 0.0), const("one", 1.0), const("tau", 2 * np.pi),
                helper.make_node("Cast", ["n"], ["n_f"], to=TensorProto.FLOAT),
                helper.make_node("Range", ["zero", "n_f", "one"], ["r"]),
                helper.make_node("Div", ["tau", "n_f"], ["step"]),
                helper.make_node("Mul", ["r", "step"], ["angle"]),
                helper.make_node("Cos", ["angle"], ["y"])],
     [helper.make_tensor_value_info("n", TensorProto.INT32, [])],
     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [np.array(6, np.int32)])

# AffineGrid(theta, size) with size an input
save("grid", [helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0)],
     [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [1, 2, 3]),
      helper.make_tensor_value_info("size", TensorProto.INT64, [4])],
     [helper.make_tensor_value_info("grid", TensorProto.FLOAT, None)],
     [np.array([[[1.0, 0.2, 0.1], [0.0, 0.9, -0.2]]], np.float32), np.array([1, 1, 3, 5], np.int64)])

# Range(start, limit, delta) as ONNX's function expands it: a Loop of
# ceil((limit - start) / delta) iterations whose scan output is the range
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Add", ["prev", "delta"], ["next"]),
     helper.make_node("Identity", ["prev"], ["scan"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("prev", TensorProto.FLOAT, [])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("next", TensorProto.FLOAT, []),
     helper.make_tensor_value_info("scan", TensorProto.FLOAT, [])])
save("range_loop", [helper.make_node("Sub", ["limit", "start"], ["span"]),
                    helper.make_node("Div", ["span", "delta"], ["steps"]),
                    helper.make_node("Ceil", ["steps"], ["up"]),
                    helper.make_node("Relu", ["up"], ["count"]),
                    helper.make_node("Cast", ["count"], ["trips"], to=TensorProto.INT64),
                    helper.make_node("Cast", ["count"], ["go"], to=TensorProto.BOOL),
                    helper.make_node("Loop", ["trips", "go", "start"], ["last", "y"], body=body)],
     [helper.make_tensor_value_info(n, TensorProto.FLOAT, []) for n in ("start", "limit", "delta")],
     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
     [np.array(1.0, np.float32), np.array(3.2, np.float32), np.array(0.5, np.float32)])
