#!/usr/bin/env python3
"""Writes models whose nodes have too few or too many inputs or outputs, or
leave a required input empty (arity.test), and one with a version of an op
newer than the schemas the check knows (left to the later layers).
  usage: make_arity_models.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 4])


def write(out, name, nodes, opset=17, inits=(), outputs=("y",)):
    graph = helper.make_graph(nodes, "g", [X], [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                                               for o in outputs], initializer=list(inits))
    # no onnx.checker here: it would refuse these models, which is the point
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(out, name + ".onnx"))


def main():
    out = sys.argv[1]
    write(out, "conv_one_input", [helper.make_node("Conv", ["x"], ["y"], name="conv")])
    write(out, "where_two_inputs", [helper.make_node("Where", ["x", "x"], ["y"], name="where")])
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales")
    write(out, "resize_no_x", [helper.make_node("Resize", ["", "", "scales"], ["y"], name="resize")],
          inits=[scales])
    k = numpy_helper.from_array(np.array([2], dtype=np.int64), "k")
    write(out, "topk_three_outputs", [helper.make_node("TopK", ["x", "k"], ["y", "i", "z"], name="topk")],
          inits=[k], outputs=("y", "i", "z"))
    # inside an If branch: the graph is named
    cond = numpy_helper.from_array(np.array(True), "cond")
    branch = lambda name, nodes: helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(
        "b", TensorProto.FLOAT, None)])
    then_g = branch("then_branch", [helper.make_node("Add", ["x"], ["b"], name="add_in_branch")])
    else_g = branch("else_branch", [helper.make_node("Identity", ["x"], ["b"], name="same")])
    write(out, "branch_add_one_input", [helper.make_node("If", ["cond"], ["y"], then_branch=then_g,
                                                         else_branch=else_g, name="if")], inits=[cond])
    # ReduceMean-18 takes its axes as an input: newer than the check's schemas, not refused
    axes = numpy_helper.from_array(np.array([2, 3], dtype=np.int64), "axes")
    write(out, "reduce_mean_18", [helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean")], opset=18,
          inits=[axes])


if __name__ == "__main__":
    main()
