#!/usr/bin/env python3
"""Convolutions with a reflection Pad, a nearest Resize by scales and a
linear (half_pixel) Resize to given sizes between them, as a style-transfer
network's or a U-Net's decoder has them. Channels last
(layout_channels_last.c) the Pad's pads and the Resizes' scales and sizes move
to NHWC's order, so the values stay channels last from the first Conv to
the output. Writes layout_resize.onnx, x.npy and layout_resize_ref.npy
(NumPy's output) to DIR.

  make_layout_resize.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from numpy_conv import conv

C, H, W = 6, 7, 9


def linear_half_pixel(v, axis, size):
    """ONNX's linear Resize (half_pixel) of v along axis to size."""
    n = v.shape[axis]
    x = np.clip((np.arange(size) + 0.5) * n / size - 0.5, 0, n - 1)
    i0 = np.floor(x).astype(int)
    i1 = np.minimum(i0 + 1, n - 1)
    w = (x - i0).reshape([-1 if k == axis else 1 for k in range(v.ndim)])
    return np.take(v, i0, axis=axis) * (1 - w) + np.take(v, i1, axis=axis) * w


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(9)
    ws = [(rng.standard_normal((C, C, 3, 3)) * 0.3).astype(np.float32) for _ in range(4)]
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    inits = [numpy_helper.from_array(a, f"w{i}") for i, a in enumerate(ws)]
    inits += [numpy_helper.from_array(np.array([0, 0, 1, 2, 0, 0, 1, 2], np.int64), "pads"),
              numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
              numpy_helper.from_array(np.array([1, C, 20, 25], np.int64), "sizes")]
    nodes = [
        helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Pad", ["r0", "pads"], ["p"], mode="reflect"),
        helper.make_node("Conv", ["p", "w1"], ["c1"]),
        helper.make_node("Resize", ["c1", "", "scales"], ["u1"], mode="nearest"),
        helper.make_node("Conv", ["u1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Resize", ["c2", "", "", "sizes"], ["u2"], mode="linear",
                         coordinate_transformation_mode="half_pixel"),
        helper.make_node("Conv", ["u2", "w3"], ["y"], pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(nodes, "layout_resize",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C, 20, 25])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(out, "layout_resize.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    r0 = np.maximum(conv(x, ws[0], pads=(1, 1, 1, 1)), 0)
    p = np.pad(r0, ((0, 0), (0, 0), (1, 1), (2, 2)), mode="reflect")
    c1 = conv(p.astype(np.float32), ws[1])
    u1 = c1.repeat(2, axis=2).repeat(2, axis=3)
    c2 = conv(u1.astype(np.float32), ws[2], pads=(1, 1, 1, 1))
    u2 = linear_half_pixel(linear_half_pixel(c2, 2, 20), 3, 25)
    y = conv(u2.astype(np.float32), ws[3], pads=(1, 1, 1, 1))
    np.save(os.path.join(out, "layout_resize_ref.npy"), y.astype(np.float32))


if __name__ == "__main__":
    main()
