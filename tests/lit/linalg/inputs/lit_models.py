"""Helpers shared by the generators of the Linalg lit tests' inputs (the
make_*_inputs.py scripts beside this file): build and save a one-graph
model, save a .npy, make an initializer."""
import numpy as np
import onnx
from onnx import helper as h
from onnx import numpy_helper as nh

V = h.make_tensor_value_info


def model(name, nodes, inputs, outputs, inits=(), opset=23):
    """Writes NAME.onnx: one graph of `nodes`, default domain at `opset`."""
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, f"{name}.onnx")


def npy(name, a):
    np.save(f"{name}.npy", a)


def init(name, a):
    return nh.from_array(a, name)
