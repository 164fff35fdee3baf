#!/usr/bin/env python3
"""Writes examples/small_cnn.onnx: a small image classifier (two conv blocks,
global pooling, a dense layer, softmax) with a symbolic batch dimension and
deterministic weights, and examples/small_cnn_inputs/input_0.pb: a batch of
two 28x28 images (a vertical bar, a ring). Test-data tooling only; the
product never runs Python.
Usage: /usr/bin/python3 examples/make_small_cnn.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(20261130)


def weight(name, *shape):
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    data = rng.standard_normal(shape).astype(np.float32) / np.sqrt(fan_in)
    return numpy_helper.from_array(data, name)


nodes = [
    helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["c1"], name="conv1",
                     kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Conv", ["p1", "conv2.w", "conv2.b"], ["c2"], name="conv2",
                     kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
    helper.make_node("Flatten", ["g"], ["f"], name="flatten", axis=1),
    helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
]
inits = [weight("conv1.w", 8, 1, 3, 3), weight("conv1.b", 8), weight("conv2.w", 16, 8, 3, 3),
         weight("conv2.b", 16), weight("fc.w", 10, 16), weight("fc.b", 10)]
graph = helper.make_graph(
    nodes, "small_cnn",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 1, 28, 28])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
    initializer=inits)
model = helper.make_model(graph, producer_name="onnx2mlir-examples",
                          opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, "examples/small_cnn.onnx")

yy, xx = np.mgrid[0:28, 0:28]
bar = (abs(xx - 14) < 3).astype(np.float32)
ring = (abs(np.hypot(yy - 13.5, xx - 13.5) - 8) < 2).astype(np.float32)
images = np.stack([bar, ring])[:, None]
os.makedirs("examples/small_cnn_inputs", exist_ok=True)
with open("examples/small_cnn_inputs/input_0.pb", "wb") as f:
    f.write(numpy_helper.from_array(images, "image").SerializeToString())
