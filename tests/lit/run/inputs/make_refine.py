#!/usr/bin/env python3
"""An iterative refinement model (RAFT's update loop in small): a hidden
state and a flow, updated 6 times by the same block with the same weights,
a convolutional GRU: m = Concat(h, flow), z = Sigmoid(Conv(m)),
r = Sigmoid(Conv(m)), q = Tanh(Conv(Concat(r h, flow))),
h = (1 - z) h + z q, flow = flow + Conv(h). Each Add of the flow
is written by bufferization into the next block's Concat buffer, which is
then allocated in the block before: the last block lacks that buffer.
Writes refine.onnx, x.npy and refine_ref.npy (NumPy's outputs) to DIR.

  make_refine.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from numpy_conv import conv

STEPS, C, F, H, W = 6, 8, 2, 12, 12


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    wc = (rng.standard_normal((C, C, 1, 1)) * 0.3).astype(np.float32)
    wz, wr, wq = ((rng.standard_normal((C, C + F, 3, 3)) * 0.1).astype(np.float32) for _ in range(3))
    wd = (rng.standard_normal((F, C, 3, 3)) * 0.1).astype(np.float32)
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((wc, "wc"), (wz, "wz"), (wr, "wr"), (wq, "wq"), (wd, "wd"))]
    inits.append(numpy_helper.from_array(np.ones((1,), np.float32), "one"))
    inits.append(numpy_helper.from_array(np.zeros((1, F, H, W), np.float32), "flow0"))
    nodes = [helper.make_node("Conv", ["x", "wc"], ["c"]), helper.make_node("Tanh", ["c"], ["h0"])]
    h, flow = "h0", "flow0"
    for i in range(STEPS):
        nodes += [
            helper.make_node("Concat", [h, flow], [f"m{i}"], axis=1),
            helper.make_node("Conv", [f"m{i}", "wz"], [f"zc{i}"], pads=[1, 1, 1, 1]),
            helper.make_node("Sigmoid", [f"zc{i}"], [f"z{i}"]),
            helper.make_node("Conv", [f"m{i}", "wr"], [f"rc{i}"], pads=[1, 1, 1, 1]),
            helper.make_node("Sigmoid", [f"rc{i}"], [f"r{i}"]),
            helper.make_node("Mul", [f"r{i}", h], [f"rh{i}"]),
            helper.make_node("Concat", [f"rh{i}", flow], [f"n{i}"], axis=1),
            helper.make_node("Conv", [f"n{i}", "wq"], [f"qc{i}"], pads=[1, 1, 1, 1]),
            helper.make_node("Tanh", [f"qc{i}"], [f"q{i}"]),
            helper.make_node("Sub", ["one", f"z{i}"], [f"nz{i}"]),
            helper.make_node("Mul", [f"nz{i}", h], [f"kh{i}"]),
            helper.make_node("Mul", [f"z{i}", f"q{i}"], [f"zq{i}"]),
            helper.make_node("Add", [f"kh{i}", f"zq{i}"], [f"h{i + 1}"]),
            helper.make_node("Conv", [f"h{i + 1}", "wd"], [f"d{i}"], pads=[1, 1, 1, 1]),
            helper.make_node("Add", [flow, f"d{i}"], [f"flow{i + 1}"]),
        ]
        h, flow = f"h{i + 1}", f"flow{i + 1}"
    graph = helper.make_graph(nodes, "refine", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                              [helper.make_tensor_value_info(flow, TensorProto.FLOAT, [1, F, H, W])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "refine.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    hv, fv = np.tanh(conv(x, wc)), np.zeros((1, F, H, W), np.float32)
    for _ in range(STEPS):
        m = np.concatenate([hv, fv], axis=1)
        z = 1 / (1 + np.exp(-conv(m, wz, pads=(1, 1, 1, 1))))
        r = 1 / (1 + np.exp(-conv(m, wr, pads=(1, 1, 1, 1))))
        q = np.tanh(conv(np.concatenate([r * hv, fv], axis=1), wq, pads=(1, 1, 1, 1)))
        hv = (1 - z) * hv + z * q
        fv = fv + conv(hv, wd, pads=(1, 1, 1, 1))
    np.save(os.path.join(out, "refine_ref.npy"), fv.astype(np.float32))


if __name__ == "__main__":
    main()
