#!/usr/bin/env python3
"""An iterative refinement model (RAFT's update loop in small): a hidden
state and a flow, updated 6 times by the same block with the same weights,
two convolutional GRUs as RAFT's SepConvGRU (a 1x5 one, then a 5x1 one),
each: m = Concat(h, flow), z = Sigmoid(Conv(m)), r = Sigmoid(Conv(m)),
q = Tanh(Conv(Concat(r h, flow))), h = (1 - z) h + z q; then
flow = flow + Conv(h). Each Add of the flow is written by bufferization
into the next block's Concat buffer, which is then allocated in the block
before: the last block lacks that buffer.
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


# the two GRUs: kernel and pads (top, left, bottom, right)
GRUS = (((1, 5), (0, 2, 0, 2)), ((5, 1), (2, 0, 2, 0)))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    wc = (rng.standard_normal((C, C, 1, 1)) * 0.3).astype(np.float32)
    gates = [[(rng.standard_normal((C, C + F) + k) * 0.15).astype(np.float32) for _ in range(3)] for k, _ in GRUS]
    wd = (rng.standard_normal((F, C, 3, 3)) * 0.1).astype(np.float32)
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    inits = [numpy_helper.from_array(a, n) for a, n in ((wc, "wc"), (wd, "wd"))]
    for g, ws in enumerate(gates):
        inits += [numpy_helper.from_array(a, f"w{n}{g}") for a, n in zip(ws, "zrq")]
    inits.append(numpy_helper.from_array(np.ones((1,), np.float32), "one"))
    inits.append(numpy_helper.from_array(np.zeros((1, F, H, W), np.float32), "flow0"))
    nodes = [helper.make_node("Conv", ["x", "wc"], ["c"]), helper.make_node("Tanh", ["c"], ["h0"])]
    h, flow = "h0", "flow0"
    for i in range(STEPS):
        for g, (_, pads) in enumerate(GRUS):
            t = f"{i}_{g}"
            nodes += [
                helper.make_node("Concat", [h, flow], [f"m{t}"], axis=1),
                helper.make_node("Conv", [f"m{t}", f"wz{g}"], [f"zc{t}"], pads=pads),
                helper.make_node("Sigmoid", [f"zc{t}"], [f"z{t}"]),
                helper.make_node("Conv", [f"m{t}", f"wr{g}"], [f"rc{t}"], pads=pads),
                helper.make_node("Sigmoid", [f"rc{t}"], [f"r{t}"]),
                helper.make_node("Mul", [f"r{t}", h], [f"rh{t}"]),
                helper.make_node("Concat", [f"rh{t}", flow], [f"n{t}"], axis=1),
                helper.make_node("Conv", [f"n{t}", f"wq{g}"], [f"qc{t}"], pads=pads),
                helper.make_node("Tanh", [f"qc{t}"], [f"q{t}"]),
                helper.make_node("Sub", ["one", f"z{t}"], [f"nz{t}"]),
                helper.make_node("Mul", [f"nz{t}", h], [f"kh{t}"]),
                helper.make_node("Mul", [f"z{t}", f"q{t}"], [f"zq{t}"]),
                helper.make_node("Add", [f"kh{t}", f"zq{t}"], [f"h{t}"]),
            ]
            h = f"h{t}"
        nodes += [
            helper.make_node("Conv", [h, "wd"], [f"d{i}"], pads=[1, 1, 1, 1]),
            helper.make_node("Add", [flow, f"d{i}"], [f"flow{i + 1}"]),
        ]
        flow = f"flow{i + 1}"
    graph = helper.make_graph(nodes, "refine", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                              [helper.make_tensor_value_info(flow, TensorProto.FLOAT, [1, F, H, W])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "refine.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    hv, fv = np.tanh(conv(x, wc)), np.zeros((1, F, H, W), np.float32)
    for _ in range(STEPS):
        for (_, pads), (wz, wr, wq) in zip(GRUS, gates):
            m = np.concatenate([hv, fv], axis=1)
            z = 1 / (1 + np.exp(-conv(m, wz, pads=pads)))
            r = 1 / (1 + np.exp(-conv(m, wr, pads=pads)))
            q = np.tanh(conv(np.concatenate([r * hv, fv], axis=1), wq, pads=pads))
            hv = (1 - z) * hv + z * q
        fv = fv + conv(hv, wd, pads=(1, 1, 1, 1))
    np.save(os.path.join(out, "refine_ref.npy"), fv.astype(np.float32))


if __name__ == "__main__":
    main()
