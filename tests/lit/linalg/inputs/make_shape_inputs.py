#!/usr/bin/python3
"""Writes the inputs of the shape/index-family Linalg tests (shape.test):
small ONNX models with symbolic dims and runtime shape operands, and .npy
inputs for them. Run from tests/lit/linalg/inputs with Debian's python3-onnx:
    /usr/bin/python3 make_shape_inputs.py
"""
import numpy as np
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from lit_models import V, model, npy

F, I = T.FLOAT, T.INT64


# re-shaping with symbolic dims and runtime shapes
model("reshape_rt", [h.make_node("Reshape", ["x", "s"], ["y"])],
      [V("x", F, ["N", 3, 4]), V("s", I, [2])], [V("y", F, None)])
model("flatten", [h.make_node("Flatten", ["x"], ["y"], axis=2)],
      [V("x", F, ["N", "C", 4, 5])], [V("y", F, None)])
model("unsqueeze", [h.make_node("Unsqueeze", ["x", "a"], ["y"])],
      [V("x", F, ["N", "M"])], [V("y", F, None)], [nh.from_array(np.array([0, 3], np.int64), "a")])
# slicing and splitting with runtime operands
model("slice_rt", [h.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])],
      [V("x", F, ["N", "M"]), V("s", I, [1]), V("e", I, [1]), V("a", I, [1]), V("t", I, [1])],
      [V("y", F, None)])
model("split", [h.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)],
      [V("x", F, ["N", "M"])], [V("a", F, None), V("b", F, None), V("c", F, None)], opset=18)
# broadcasts, pads, gathers
model("expand", [h.make_node("Expand", ["x", "s"], ["y"])],
      [V("x", F, ["N", 1]), V("s", I, [3])], [V("y", F, None)])
model("pad_reflect", [h.make_node("Pad", ["x", "p"], ["y"], mode="reflect")],
      [V("x", F, ["N"]), V("p", I, [2])], [V("y", F, None)])
model("gather", [h.make_node("Gather", ["x", "i"], ["y"], axis=1)],
      [V("x", F, ["N", "M"]), V("i", I, ["K"])], [V("y", F, None)])
# data-dependent sizes
model("unique", [h.make_node("Unique", ["x"], ["y", "i", "v", "c"], sorted=0)],
      [V("x", F, ["N"])], [V("y", F, None), V("i", I, None), V("v", I, None), V("c", I, None)])
model("nonzero", [h.make_node("NonZero", ["x"], ["y"])], [V("x", F, ["N", "M"])], [V("y", I, None)])

npy("x243", np.arange(24, dtype=np.float32).reshape(2, 3, 4))
npy("s_m1_4", np.array([-1, 4], np.int64))
npy("x2345", np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5))
npy("x23", np.arange(6, dtype=np.float32).reshape(2, 3))
npy("x45", np.arange(20, dtype=np.float32).reshape(4, 5))
for name, v in [("m2", -2), ("m100", -100), ("one", 1), ("m1", -1)]:
    npy(name, np.array([v], np.int64))
npy("x31", np.array([[1], [2], [3]], np.float32))
npy("s_2_1_2", np.array([2, 1, 2], np.int64))
npy("x3", np.array([1, 2, 3], np.float32))
npy("p_4_2", np.array([4, 2], np.int64))
npy("i_m1_0", np.array([-1, 0], np.int64))
npy("u6", np.array([3, 1, 3, 2, 1, 7], np.float32))
npy("nz23", np.array([[0, 1.5, 0], [2, 0, np.nan]], np.float32))
