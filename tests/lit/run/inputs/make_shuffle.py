#!/usr/bin/env python3
"""Writes a ShuffleNet-style block as PyTorch exports it and its NumPy
output (layout_channels_last.c runs it channels last):

  shuffle.onnx   x [1, 8, 10, 12] -> Conv 1x1 (8 -> 16) -> Relu ->
                 channel shuffle in 2 groups (Reshape [1, 2, 8, 10, 12],
                 Transpose [0, 2, 1, 3, 4], Reshape [1, 16, 10, 12]) ->
                 Slice of channels [0, 8) and [8, 16) -> the second half
                 through a Conv 1x1 -> Concat with the first -> a Slice of
                 rows and columns with steps (axes 2 and 3) -> y
  shuffle_ref.npy, x.npy

Usage: make_shuffle.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv1x1(x, w):
    return np.einsum("fc,nchw->nfhw", w[:, :, 0, 0], x)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 8, 10, 12)).astype(np.float32)
    w1 = (rng.standard_normal((16, 8, 1, 1)) / 3).astype(np.float32)
    w2 = (rng.standard_normal((8, 8, 1, 1)) / 3).astype(np.float32)
    ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
             ints("split", [1, 2, 8, 10, 12]), ints("whole", [1, 16, 10, 12]),
             ints("s0", [0]), ints("e0", [8]), ints("s1", [8]), ints("e1", [16]), ints("c", [1]),
             ints("rs", [1, 0]), ints("re", [10, 12]), ints("ra", [2, 3]), ints("rk", [2, 3])]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"]), helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Reshape", ["r", "split"], ["g"]),
             helper.make_node("Transpose", ["g"], ["t"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["t", "whole"], ["s"]),
             helper.make_node("Slice", ["s", "s0", "e0", "c"], ["h0"]),
             helper.make_node("Slice", ["s", "s1", "e1", "c"], ["h1"]),
             helper.make_node("Conv", ["h1", "w2"], ["b"]),
             helper.make_node("Concat", ["h0", "b"], ["cat"], axis=1),
             helper.make_node("Slice", ["cat", "rs", "re", "ra", "rk"], ["y"])]
    r = np.maximum(conv1x1(x, w1), 0)
    s = r.reshape(1, 2, 8, 10, 12).transpose(0, 2, 1, 3, 4).reshape(1, 16, 10, 12)
    cat = np.concatenate([s[:, :8], conv1x1(s[:, 8:], w2)], axis=1)
    y = cat[:, :, 1:10:2, 0:12:3]
    graph = helper.make_graph(nodes, "shuffle", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "shuffle.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "shuffle_ref.npy"), y.astype(np.float32))


if __name__ == "__main__":
    main()
