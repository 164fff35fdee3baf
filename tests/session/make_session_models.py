#!/usr/bin/env python3
"""make_session_models.py OUT_DIR - the small models the session tests use
(Debian's python3-onnx; no weights drawn at random):
  unsupported.onnx    two nodes of an op no target knows (named first_unknown
                      and second_unknown): creation must list both
  shared_dim.onnx     a[n,3] + b[n,3]: dims that share a name
  reshape_param.onnx  Reshape(x[12], shape) * 2: an input read as a shape
  scalar.onnx         y = x * sr for a 0-d int64 `sr` (as a VAD model's
                      sample rate) and x float[n]: 0-d inputs from Python
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def save(model, out, name):
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    opset = [helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]

    g = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["t"], name="first_unknown", domain="com.example"),
         helper.make_node("Relu", ["t"], ["u"], name="relu"),
         helper.make_node("Twiddle", ["u"], ["y"], name="second_unknown", domain="com.example")],
        "unsupported", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        value_info=[helper.make_tensor_value_info("t", TensorProto.FLOAT, [4]),
                    helper.make_tensor_value_info("u", TensorProto.FLOAT, [4])])
    model = helper.make_model(g, opset_imports=opset)
    onnx.save(model, os.path.join(out, "unsupported.onnx"))  # the checker refuses unknown ops

    g = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["y"])], "shared_dim",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n", 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
    save(helper.make_model(g, opset_imports=opset[:1]), out, "shared_dim.onnx")

    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    g = helper.make_graph(
        [helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Mul", ["r", "two"], ["y"])],
        "reshape_param",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [12]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["r0", "r1"])], initializer=[two])
    save(helper.make_model(g, opset_imports=opset[:1]), out, "reshape_param.onnx")

    g = helper.make_graph(
        [helper.make_node("Cast", ["sr"], ["srf"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["x", "srf"], ["y"])], "scalar",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"]),
         helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"])])
    save(helper.make_model(g, opset_imports=opset[:1]), out, "scalar.onnx")


if __name__ == "__main__":
    main()
