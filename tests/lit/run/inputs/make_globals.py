#!/usr/bin/env python3
"""Writes a model whose layers each read constants of their own (a
DenseNet's normalisations before its convolutions, not foldable into them)
and its NumPy output:

  globals.onnx     x [1, 8, 16, 16]; LAYERS layers, layer i:
                   Conv 1x1 (Relu(x * s_i + b_i)) from C_i to C_{i+1}
                   channels, the widths varying so that no two layers are
                   copies (exec_repeats.c would make them one function)
  x.npy            the input
  globals_ref.npy

Each s_i, b_i becomes a global buffer of the compiled module; before the
fix in exec_outline.c, @main's first part held every layer's and returned
them all to the later parts.

Usage: make_globals.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

LAYERS = 32


def width(i):
    return 8 + 3 * (i % 5)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, width(0), 16, 16)).astype(np.float32)
    nodes, inits, y, name = [], [], x, "x"
    for i in range(LAYERS):
        c, f = width(i), width(i + 1)
        s = rng.uniform(0.5, 1.5, (1, c, 1, 1)).astype(np.float32)
        b = rng.uniform(-0.5, 0.5, (1, c, 1, 1)).astype(np.float32)
        w = (rng.standard_normal((f, c, 1, 1)) / np.sqrt(c)).astype(np.float32)
        inits += [numpy_helper.from_array(s, f"s{i}"), numpy_helper.from_array(b, f"b{i}"),
                  numpy_helper.from_array(w, f"w{i}")]
        nodes += [helper.make_node("Mul", [name, f"s{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"]),
                  helper.make_node("Conv", [f"r{i}", f"w{i}"], [f"y{i}"])]
        r = np.maximum(y * s + b, 0)
        y = np.einsum("fc,nchw->nfhw", w[:, :, 0, 0], r).astype(np.float32)
        name = f"y{i}"
    graph = helper.make_graph(nodes, "globals",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(y.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "globals.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "globals_ref.npy"), y)


if __name__ == "__main__":
    main()
