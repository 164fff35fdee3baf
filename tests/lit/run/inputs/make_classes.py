#!/usr/bin/env python3
"""Writes a detector's per-class post-processing (the structure of
torchvision's SSD and RetinaNet heads: one block of ops per class that
differs from the others only in the class index), and its NumPy outputs:

  classes.onnx   inputs scores [N, C] and boxes [N, 4]; for each class c
                 in 1..C-1: s = scores[:, c], keep = s > 0.5 (NonZero),
                 the kept scores and boxes (GatherND) and a label c for
                 each; outputs the three concatenated over the classes
  scores.npy, boxes.npy, classes_ref_{0,1,2}.npy

Usage: make_classes.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

N, C = 64, 9


def main():
    out = sys.argv[1]
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    thr = const("thr", np.float32(0.5))
    outs = {"s": [], "b": [], "l": []}
    for c in range(1, C):
        def n(op, inputs, **attrs):
            name = f"{op.lower()}_{c}_{len(nodes)}"
            nodes.append(helper.make_node(op, inputs, [name], **attrs))
            return name
        s = n("Gather", ["scores", const(f"class_{c}", np.int64(c))], axis=1)
        keep = n("Transpose", [n("NonZero", [n("Greater", [s, thr])])], perm=[1, 0])
        outs["s"].append(n("GatherND", [s, keep]))
        outs["b"].append(n("GatherND", ["boxes", keep]))
        label = helper.make_tensor("v", TensorProto.INT64, [1], [c])
        outs["l"].append(n("ConstantOfShape", [n("Shape", [outs["s"][-1]])], value=label))
    for key, name in (("s", "out_scores"), ("b", "out_boxes"), ("l", "out_labels")):
        nodes.append(helper.make_node("Concat", outs[key], [name], axis=0))
    graph = helper.make_graph(
        nodes, "classes",
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [N, C]),
         helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [N, 4])],
        [helper.make_tensor_value_info("out_scores", TensorProto.FLOAT, ["k"]),
         helper.make_tensor_value_info("out_boxes", TensorProto.FLOAT, ["k", 4]),
         helper.make_tensor_value_info("out_labels", TensorProto.INT64, ["k"])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, "classes.onnx"))

    rng = np.random.default_rng(11)
    scores = rng.random((N, C), dtype=np.float32)
    boxes = rng.standard_normal((N, 4)).astype(np.float32)
    np.save(os.path.join(out, "scores.npy"), scores)
    np.save(os.path.join(out, "boxes.npy"), boxes)
    kept = [np.nonzero(scores[:, c] > 0.5)[0] for c in range(1, C)]
    refs = (np.concatenate([scores[k, c] for c, k in zip(range(1, C), kept)]),
            np.concatenate([boxes[k] for k in kept]),
            np.concatenate([np.full(len(k), c, np.int64) for c, k in zip(range(1, C), kept)]))
    for i, r in enumerate(refs):
        np.save(os.path.join(out, f"classes_ref_{i}.npy"), r)


if __name__ == "__main__":
    main()
