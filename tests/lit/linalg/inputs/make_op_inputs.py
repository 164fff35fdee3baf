#!/usr/bin/python3
"""Writes the inputs of the Linalg op-family tests (elementwise.test,
reduce.test, nn.test, index.test): one small ONNX model per case, most with
a symbolic batch dim, and .npy inputs. Run from tests/lit/linalg/inputs with
Debian's python3-onnx:
    /usr/bin/python3 make_op_inputs.py
"""
import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

from lit_models import V, init, model, npy

F, H, I, I32, U8, B = T.FLOAT, T.FLOAT16, T.INT64, T.INT32, T.UINT8, T.BOOL


# elementwise: broadcasting over a symbolic dim, integer and f16 bodies
model("add_bcast", [h.make_node("Add", ["x", "y"], ["z"])],
      [V("x", F, ["N", 3]), V("y", F, [3])], [V("z", F, None)])
model("max_where", [h.make_node("Greater", ["a", "b"], ["g"]), h.make_node("Where", ["g", "a", "b"], ["m"])],
      [V("a", I32, ["N"]), V("b", I32, ["N"])], [V("m", I32, None)])
model("div_u8", [h.make_node("Div", ["a", "b"], ["q"])],
      [V("a", U8, ["N"]), V("b", U8, ["N"])], [V("q", U8, None)])
model("relu_f16", [h.make_node("Relu", ["x"], ["y"])], [V("x", H, ["N"])], [V("y", H, None)])
model("cast_f32_i32", [h.make_node("Cast", ["x"], ["y"], to=I32)], [V("x", F, ["N"])], [V("y", I32, None)])
# reductions over a symbolic dim
model("reduce_sum", [h.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)],
      [V("x", F, ["N", 4])], [V("y", F, None)], [init("a", np.array([1], np.int64))])
model("argmax", [h.make_node("ArgMax", ["x"], ["y"], axis=0, keepdims=1)],
      [V("x", F, ["N", 3])], [V("y", I, None)])
model("softmax", [h.make_node("Softmax", ["x"], ["y"], axis=-1)], [V("x", F, ["N", 3])], [V("y", F, None)])
model("cumsum", [h.make_node("CumSum", ["x", "a"], ["y"], reverse=1)],
      [V("x", F, ["N"])], [V("y", F, None)], [init("a", np.array(0, np.int64))])
# named ops: matmul, convolution, pooling
model("matmul", [h.make_node("MatMul", ["a", "b"], ["c"])],
      [V("a", F, ["B", 2, 3])], [V("c", F, None)], [init("b", np.arange(12, dtype=np.float32).reshape(3, 4))])
model("conv", [h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
      [V("x", F, ["N", 1, 3, 3])], [V("y", F, None)], [init("w", np.ones((1, 1, 3, 3), np.float32))])
model("maxpool", [h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
      [V("x", F, ["N", 1, 4, 4])], [V("y", F, None)])
model("gemm", [h.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1, alpha=2.0)],
      [V("a", F, ["N", 3])], [V("y", F, None)],
      [init("b", np.arange(6, dtype=np.float32).reshape(2, 3)), init("c", np.array([1, -1], np.float32))])
# indexing
model("gather_elements", [h.make_node("GatherElements", ["x", "i"], ["y"], axis=1)],
      [V("x", F, ["N", 3]), V("i", I, ["N", 2])], [V("y", F, None)])
model("scatter_nd", [h.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add")],
      [V("x", F, [4]), V("i", I, [3, 1]), V("u", F, [3])], [V("y", F, None)])
model("topk", [h.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1)],
      [V("x", F, ["N", 5])], [V("v", F, None), V("i", I, None)], [init("k", np.array([2], np.int64))])

npy("f23", np.arange(6, dtype=np.float32).reshape(2, 3))
npy("f3", np.array([10, 20, 30], np.float32))
npy("i4a", np.array([1, -5, 7, 0], np.int32))
npy("i4b", np.array([2, -6, 3, 0], np.int32))
npy("u8a", np.array([200, 7, 255], np.uint8))
npy("u8b", np.array([3, 2, 16], np.uint8))
npy("h4", np.array([-1.5, 0, 2.25, -0.0], np.float16))
npy("f4frac", np.array([-2.7, -0.5, 0.5, 2.7], np.float32))
npy("f24", np.arange(8, dtype=np.float32).reshape(2, 4))
npy("f33", np.array([[1, 9, 2], [8, 3, 7], [4, 5, 6]], np.float32))
npy("f23s", np.array([[1, 2, 3], [1, 1, 1]], np.float32))
npy("f4", np.array([1, 2, 3, 4], np.float32))
npy("f223", np.arange(12, dtype=np.float32).reshape(2, 2, 3))
npy("f1133", np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3))
npy("f1144", np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
npy("i22", np.array([[2, 0], [1, 1]], np.int64))
npy("f4z", np.zeros(4, np.float32))
npy("i31", np.array([[1], [3], [1]], np.int64))
npy("f3u", np.array([1, 2, 4], np.float32))
npy("f25", np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], np.float32))
