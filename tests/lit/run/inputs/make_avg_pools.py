#!/usr/bin/env python3
"""Writes models where an AveragePool reads a oneDNN convolution's output
(so the JIT runs it channels last as a depthwise convolution,
layout_channels_last.c) and their NumPy outputs:

  avg_<case>.onnx   x [1, 6, 13, 11] -> Conv 3x3 pad 1 (6 -> 8) -> pool -> y
  avg_<case>_ref.npy
  x.npy

Cases: include (3x3, pads 1, count_include_pad 1), exclude (the same,
count_include_pad 0: the border windows divide by what they cover), the
asymmetric pads [0, 1, 2, 1] stride 2 excluded, no_pads (2x2 stride 2, an
odd height), torch (a Pad of zeros then a 3x3 pool without pads, as
PyTorch exports avg_pool2d(padding=1)), ceil (2x2 stride 2, ceil_mode 1:
the last row's and column's windows hang past the input, so it is not
converted and runs as the JIT's own loops) and reflect (a reflect Pad: not
absorbed).

Usage: make_avg_pools.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def conv(x, w):
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd), np.float64)
    for u in range(3):
        for v in range(3):
            y += np.einsum("fc,nchw->nfhw", w[:, :, u, v], xp[:, :, u:u + h, v:v + wd])
    return y


def avg_pool(x, k, s, pads, include, ceil=False):
    n, c, h, w = x.shape
    t, l, b, r = pads
    def size(i, k, s, lo, hi):
        span = i + lo + hi - k
        return (-(-span // s) if ceil else span // s) + 1
    oh, ow = size(h, k[0], s[0], t, b), size(w, k[1], s[1], l, r)
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * s[0] - t, j * s[1] - l
            r1, c1 = r0 + k[0], c0 + k[1]
            win = x[:, :, max(r0, 0):min(r1, h), max(c0, 0):min(c1, w)]
            if include:  # the pads count, the part past them (ceil mode) does not
                count = (min(r1, h + b) - r0) * (min(c1, w + r) - c0)
            else:
                count = win.shape[2] * win.shape[3]
            y[:, :, i, j] = win.sum(axis=(2, 3)) / count
    return y


def save(out, name, nodes, inits, y_shape):
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 13, 11])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, name + ".onnx"))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 6, 13, 11)).astype(np.float32)
    w = (rng.standard_normal((8, 6, 3, 3)) / 5).astype(np.float32)
    c = conv(x.astype(np.float64), w.astype(np.float64))
    np.save(os.path.join(out, "x.npy"), x)
    first = helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])
    cases = {
        "include": dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
        "exclude": dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0),
        "asymmetric": dict(kernel_shape=[3, 3], pads=[0, 1, 2, 1], strides=[2, 2]),
        "no_pads": dict(kernel_shape=[2, 2], strides=[2, 2]),
        "ceil": dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
    }
    for name, attrs in cases.items():
        pads = attrs.get("pads", [0, 0, 0, 0])
        ref = avg_pool(c, attrs["kernel_shape"], attrs.get("strides", [1, 1]), pads,
                       attrs.get("count_include_pad", 0), attrs.get("ceil_mode", 0))
        nodes = [first, helper.make_node("AveragePool", ["c"], ["y"], **attrs)]
        save(out, "avg_" + name, nodes, [numpy_helper.from_array(w, "w")], ref.shape)
        np.save(os.path.join(out, f"avg_{name}_ref.npy"), ref.astype(np.float32))
    for name, mode in (("torch", "constant"), ("reflect", "reflect")):
        pads = numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads")
        nodes = [first, helper.make_node("Pad", ["c", "pads"], ["p"], mode=mode),
                 helper.make_node("AveragePool", ["p"], ["y"], kernel_shape=[3, 3])]
        padded = np.pad(c, ((0, 0), (0, 0), (1, 1), (1, 1)), mode=mode)
        ref = avg_pool(padded, [3, 3], [1, 1], [0, 0, 0, 0], 0)
        save(out, "avg_" + name, nodes, [numpy_helper.from_array(w, "w"), pads], ref.shape)
        np.save(os.path.join(out, f"avg_{name}_ref.npy"), ref.astype(np.float32))


if __name__ == "__main__":
    main()
