#!/usr/bin/env python3
"""Writes the models the structure-aware fuzzers (tests/fuzz) found
crashing or hanging the importer, each reduced to what triggered it
(fuzz_findings.test runs them through every form and `run`).
  usage: make_fuzz_models.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

F = TensorProto.FLOAT


def write(out, name, nodes, inputs, outputs, opsets=(("", 17),)):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    # no onnx.checker: some of these are what it would refuse
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    save(model, os.path.join(out, name + ".onnx"))


def value(name, dtype, dims):
    return helper.make_tensor_value_info(name, dtype, dims)


def main():
    out = sys.argv[1]
    # Momentum whose step count T has no type: building the constant "T > 0"
    # in an undefined dtype looped forever (tensor setters calling each other)
    t = helper.ValueInfoProto(name="T")
    t.type.SetInParent()
    write(out, "momentum_untyped_step",
          [helper.make_node("Momentum", ["R", "T", "X", "G", "V"], ["X_new", "V_new"], alpha=0.9, beta=0.1,
                            norm_coefficient=0.0, mode="nesterov", domain="ai.onnx.preview.training")],
          [value("R", F, []), t, value("X", F, [2]), value("G", F, [2]), value("V", F, [2])],
          [value("X_new", F, [2]), value("V_new", F, [2])],
          opsets=(("", 17), ("ai.onnx.preview.training", 1)))
    # an Add broadcasting an unknown dim against a named one and a 1: the
    # StableHLO broadcast read operand -1 once it gave up on a full operand
    write(out, "add_unknown_against_named",
          [helper.make_node("Add", ["x", "y"], ["sum"])],
          [value("x", TensorProto.INT8, [3, 4, None]), value("y", TensorProto.INT8, [3, 1, "N"])],
          [value("sum", TensorProto.INT8, [3, 4, 5])])

    # Attention whose keys have 0 heads against 3 query heads: the grouped
    # heads' index divided by q / kv = 0
    write(out, "attention_zero_kv_heads",
          [helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=1)],
          [value("Q", F, [2, 3, 4, 8]), value("K", F, [2, 0, 4, 8]), value("V", F, [2, 3, 4, 8])],
          [value("Y", F, [2, 3, 4, 8])], opsets=(("", 24),))
    # a Cast of a version newer than the arity schemas with no output: the
    # emitters read output 0's type
    write(out, "cast25_no_output",
          [helper.make_node("Cast", ["x"], [], to=TensorProto.FLOAT), helper.make_node("Identity", ["x"], ["y"])],
          [value("x", TensorProto.UINT32, [3])], [value("y", TensorProto.UINT32, [3])], opsets=(("", 25),))

    write(out, "conv22_one_input", [helper.make_node("Conv", ["x"], ["y"], name="conv")],
          [value("x", F, [1, 1, 4, 4])], [value("y", F, None)], opsets=(("", 22),))
    # a dilated MaxPool declared to give a rank-9 output: the decomposition
    # wrote the output's nine sizes into room for four
    write(out, "pool_output_rank",
          [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2])],
          [value("x", F, [1, 1, 6, 6])], [value("y", F, [1] * 9)])

    # a Conv bias of rank 4: the StableHLO broadcast of it read one dim for four
    write(out, "conv_bias_rank4", [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")],
          [value("x", F, [1, 1, 4, 4]), value("w", F, [2, 1, 3, 3]), value("b", F, [2, 1, 1, 1])],
          [value("y", F, None)])
    # a DeformConv offset of rank 5 for a 4-D X: the Linalg body extracted
    # from it with four indices
    write(out, "deform_offset_rank5",
          [helper.make_node("DeformConv", ["X", "W", "offset"], ["Y"], kernel_shape=[2, 2], pads=[1, 1, 1, 1])],
          [value("X", F, [1, 1, 3, 3]), value("W", F, [1, 1, 2, 2]), value("offset", F, [1, 8, 4, 4, 4])],
          [value("Y", F, [1, 1, 4, 4])], opsets=(("", 22),))

    # a contrib op with too few inputs (com.microsoft ops have an arity table
    # too now): its decomposition made a MatMul without B
    write(out, "fusedmatmul_one_input",
          [helper.make_node("FusedMatMul", ["b"], ["y"], name="fmm", domain="com.microsoft")],
          [value("b", F, [3])], [value("y", F, None)], opsets=(("", 17), ("com.microsoft", 1)))
    # a float8 cast of a tensor whose element count overflows int64
    e5m2fnuz = 20  # TensorProto.FLOAT8E5M2FNUZ, newer than Debian's onnx
    write(out, "cast_count_overflow", [helper.make_node("Cast", ["x"], ["y"], to=e5m2fnuz)],
          [value("x", F, [3, 2**63 - 1])], [value("y", e5m2fnuz, [3, 2**63 - 1])], opsets=(("", 25),))
    # a Range of 2^31 - 1 known elements: TOSA wrote them as a constant (16 GiB)
    limits = [numpy_helper.from_array(np.array(v, dtype=np.int64), n)
              for n, v in (("start", 0), ("limit", 2**31 - 1), ("delta", 1))]
    graph = helper.make_graph([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")],
                              "range_huge", [], [value("y", TensorProto.INT64, None)], initializer=limits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "range_huge.onnx"))

    # a dilated AveragePool declared to give a lower rank: the decomposition
    # read sizes past the output's rank (then overflowed on them)
    write(out, "pool_output_low_rank",
          [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[5, 5, 5], dilations=[2, 2, 1],
                            strides=[3, 3, 3])],
          [value("x", F, [1, 1, 32, 32, 32])], [value("y", F, [9, 3, 9, 1])], opsets=(("", 22),))

    # an empty initializer whose other dims are huge (2 * (2^63 - 1) before
    # the 0): folding the Sum multiplied the sizes past int64
    empty = helper.make_tensor("x", TensorProto.INT32, [2, 2**63 - 1, 2**20, 0, 1, 1], [])
    graph = helper.make_graph([helper.make_node("Sum", ["x"], ["y"], name="sum")], "sum_empty_huge_dims", [],
                              [value("y", TensorProto.INT32, None)], initializer=[empty])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         os.path.join(out, "sum_empty_huge_dims.onnx"))
    # a Reshape of a known tensor to sizes whose product overflows int64
    sizes = numpy_helper.from_array(np.array([2**56 + 1, 11004008487545], dtype=np.int64), "x")
    graph = helper.make_graph([helper.make_node("Reshape", ["x", "x"], ["y"], name="reshape")],
                              "reshape_count_overflow", [], [value("y", TensorProto.INT64, None)],
                              initializer=[sizes])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]),
         os.path.join(out, "reshape_count_overflow.onnx"))
    # an AveragePool of 1.3e10 output positions: StableHLO's divisor table
    # asked for 100 GiB
    write(out, "avgpool_huge_output",
          [helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[5, 5], strides=[3, 3])],
          [value("x", F, [1, 3, 32, 2**32])], [value("y", F, None)])

    # GatherElements (opset 11) in an opset 7 model, with one input: no
    # arity row applied, and StableHLO read the missing indices
    write(out, "gather_elements_opset7", [helper.make_node("GatherElements", ["x"], ["y"], name="gather")],
          [value("x", F, [1, 1, 2, 2])], [value("y", F, [1, 1, 64, 4])], opsets=(("", 7),))

    # a Flatten output declared with rank 4 (the declared type wins over
    # inference, with a warning): the Linalg reshape read 4 sizes of 2
    write(out, "flatten_declared_rank4", [helper.make_node("Flatten", ["x"], ["y"], name="flatten")],
          [value("x", F, [1, 3, 28, 28])], [value("y", F, [30, 3, 30, 0])], opsets=(("", 22),))


if __name__ == "__main__":
    main()
