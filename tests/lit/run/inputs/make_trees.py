#!/usr/bin/env python3
"""Writes ai.onnx.ml TreeEnsemble models (random trees, every comparison
mode, set membership, NaN inputs tracked to the true branch or not, a tree
that is a single leaf) and NumPy's outputs, walked node by node as ONNX's
operator spec describes:

  trees_<aggregate>.onnx   X [16, 5] float32 -> Y [16, 3], for SUM, AVERAGE,
                           MIN and MAX
  x.npy, trees_<aggregate>_ref.npy

Usage: make_trees.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

FEATURES, TARGETS, ROWS = 5, 3, 16
AGGREGATES = {"average": 0, "sum": 1, "min": 2, "max": 3}


def build_forest(rng):
    """Nodes and leaves of 6 trees of depth up to 4, and one single-leaf tree."""
    nodes = []  # dicts: feature, split, mode, members, missing_true, true (kind, id), false (kind, id)
    leaves = []  # (target, weight)

    def leaf():
        leaves.append((int(rng.integers(TARGETS)), float(np.float32(rng.normal()))))
        return ("leaf", len(leaves) - 1)

    def grow(depth):
        if depth == 0 or (depth < 3 and rng.random() < 0.3):
            return leaf()
        i = len(nodes)
        mode = int(rng.integers(7))
        node = {"feature": int(rng.integers(FEATURES)), "split": float(np.float32(rng.normal())), "mode": mode,
                "members": [], "missing_true": int(rng.integers(2))}
        if mode == 6:
            node["members"] = sorted(set(float(v) for v in rng.integers(-2, 3, size=3)))
        if mode in (4, 5):
            node["split"] = float(rng.integers(-2, 3))
        nodes.append(node)
        node["true"] = grow(depth - 1)
        node["false"] = grow(depth - 1)
        return ("node", i)

    roots = [grow(4)[1] for _ in range(6)]
    # a tree that is one leaf: a node whose branches are the same leaf
    single = leaf()[1]
    nodes.append({"feature": 0, "split": 0.0, "mode": 0, "members": [], "missing_true": 0,
                  "true": ("leaf", single), "false": ("leaf", single)})
    roots.append(len(nodes) - 1)
    return nodes, leaves, roots


def walk(nodes, leaves, root, x):
    n = nodes[root]
    if n["true"] == n["false"] and n["true"][0] == "leaf":
        return leaves[n["true"][1]]
    kind, i = "node", root
    while kind == "node":
        n = nodes[i]
        v = x[n["feature"]]
        s = n["split"]
        go = [v <= s, v < s, v >= s, v > s, v == s, v != s, v in n["members"]][n["mode"]]
        go = go or (bool(n["missing_true"]) and np.isnan(v))
        kind, i = n["true"] if go else n["false"]
    return leaves[i]


def predict(nodes, leaves, roots, x, aggregate):
    init = {"sum": 0.0, "average": 0.0, "min": np.finfo(np.float32).max, "max": np.finfo(np.float32).min}[aggregate]
    y = np.full((x.shape[0], TARGETS), init, dtype=np.float64)
    for r in range(x.shape[0]):
        for root in roots:
            t, w = walk(nodes, leaves, root, x[r])
            if aggregate == "sum":
                y[r, t] += w
            elif aggregate == "average":
                y[r, t] += w / len(roots)
            elif aggregate == "min":
                y[r, t] = min(y[r, t], w)
            else:
                y[r, t] = max(y[r, t], w)
    return y.astype(np.float32)


def model(nodes, leaves, roots, aggregate):
    members = []
    for n in nodes:
        if n["mode"] == 6:
            members += n["members"] + [float("nan")]
    attrs = dict(
        nodes_featureids=[n["feature"] for n in nodes],
        nodes_splits=numpy_helper.from_array(np.array([n["split"] for n in nodes], dtype=np.float32)),
        nodes_modes=numpy_helper.from_array(np.array([n["mode"] for n in nodes], dtype=np.uint8)),
        nodes_truenodeids=[n["true"][1] for n in nodes], nodes_trueleafs=[int(n["true"][0] == "leaf") for n in nodes],
        nodes_falsenodeids=[n["false"][1] for n in nodes], nodes_falseleafs=[int(n["false"][0] == "leaf") for n in nodes],
        nodes_missing_value_tracks_true=[n["missing_true"] for n in nodes],
        leaf_targetids=[t for t, _ in leaves],
        leaf_weights=numpy_helper.from_array(np.array([w for _, w in leaves], dtype=np.float32)),
        tree_roots=roots, n_targets=TARGETS, aggregate_function=AGGREGATES[aggregate], post_transform=0)
    if members:
        attrs["membership_values"] = numpy_helper.from_array(np.array(members, dtype=np.float32))
    node = helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", **attrs)
    graph = helper.make_graph([node], "trees", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [ROWS, FEATURES])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [ROWS, TARGETS])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 5)])
    m.ir_version = 10
    return m


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    nodes, leaves, roots = build_forest(rng)
    x = rng.integers(-2, 3, size=(ROWS, FEATURES)).astype(np.float32)  # ties with EQ/NEQ splits and the sets
    x[::3] += rng.normal(size=(len(x[::3]), FEATURES)).astype(np.float32)
    x[1, 2] = x[5, 0] = x[7, 4] = np.nan
    np.save(os.path.join(out, "x.npy"), x)
    for aggregate in AGGREGATES:
        save(model(nodes, leaves, roots, aggregate), os.path.join(out, f"trees_{aggregate}.onnx"))
        np.save(os.path.join(out, f"trees_{aggregate}_ref.npy"), predict(nodes, leaves, roots, x, aggregate))


if __name__ == "__main__":
    main()
