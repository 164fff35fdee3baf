#!/usr/bin/env python3
"""Writes a model whose big elementwise loops repeat (the loops `run` splits
across threads and compiles once per distinct loop, exec_parallel_share.c)
and its NumPy output:

  split_loops.onnx  x [1, 32, 64, 64]; BRANCHES branches, each
                    ReduceMax(Tanh(x * w_i + b_i), axis 3) followed by
                    ReduceMax(Sigmoid(x * v_i) - c, axis 2) with weights of
                    their own (per channel: the same loop, other buffers);
                    branch 1's c differs from the others' (a constant
                    inside the loop: a loop of its own); the branches'
                    results concatenated
  x.npy             the input
  split_loops_ref.npy

The two ops of a branch alternate, so that no two branches make one
repeated block (exec_repeats.c would compile those once already): the
loops must be found equal on their own, inside a part and across parts.

Usage: make_split_loops.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

C, H, W, BRANCHES = 32, 64, 64, 10


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, C, H, W)).astype(np.float32)
    nodes, inits, results, refs = [], [], [], []
    for i in range(BRANCHES):
        w = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
        b = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
        v = rng.standard_normal((1, C, 1, 1)).astype(np.float32)
        c = np.array(0.75 if i == 1 else 0.25, np.float32)
        inits += [numpy_helper.from_array(a, f"{n}{i}") for a, n in ((w, "w"), (b, "b"), (v, "v"), (c, "c"))]
        if i % 2 == 0:  # alternate the order of the two halves
            first, second = "t", "s"
        else:
            first, second = "s", "t"
        for half in (first, second):
            if half == "t":
                nodes += [helper.make_node("Mul", ["x", f"w{i}"], [f"tm{i}"]),
                          helper.make_node("Add", [f"tm{i}", f"b{i}"], [f"ta{i}"]),
                          helper.make_node("Tanh", [f"ta{i}"], [f"tt{i}"]),
                          helper.make_node("ReduceMax", [f"tt{i}"], [f"tr{i}"], axes=[3], keepdims=1)]
            else:
                nodes += [helper.make_node("Mul", ["x", f"v{i}"], [f"sm{i}"]),
                          helper.make_node("Sigmoid", [f"sm{i}"], [f"ss{i}"]),
                          helper.make_node("Sub", [f"ss{i}", f"c{i}"], [f"sc{i}"]),
                          helper.make_node("ReduceMax", [f"sc{i}"], [f"sr{i}"], axes=[2], keepdims=1)]
        nodes.append(helper.make_node("Transpose", [f"sr{i}"], [f"st{i}"], perm=[0, 1, 3, 2]))
        nodes.append(helper.make_node("Add", [f"tr{i}", f"st{i}"], [f"r{i}"]))
        results.append(f"r{i}")
        t = np.tanh(x * w + b).max(3, keepdims=True)
        s = (1 / (1 + np.exp(-(x * v))) - c).max(2, keepdims=True).transpose(0, 1, 3, 2)
        refs.append(t + s)
    nodes.append(helper.make_node("Concat", results, ["y"], axis=1))
    graph = helper.make_graph(nodes, "split_loops",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C * BRANCHES, H, 1])],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "split_loops.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "split_loops_ref.npy"), np.concatenate(refs, axis=1))


if __name__ == "__main__":
    main()
