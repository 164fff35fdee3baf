#!/usr/bin/python3
"""make_sequence_io.py OUT - a model taking a sequence of tensors (SequenceAt
of position 1 of it) with its input as a SequenceProto in OUT/data/input_0.pb,
and one taking an optional (OptionalHasElement), its input an
OptionalProto in OUT/opt_data/input_0.pb."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
elem = helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3])
seq = helper.make_graph(
    [helper.make_node("SequenceAt", ["s", "one"], ["y"])], "seq_at",
    [helper.make_value_info("s", helper.make_sequence_type_proto(elem))],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
    [numpy_helper.from_array(np.array(1, np.int64), "one")])
opt = helper.make_graph(
    [helper.make_node("OptionalHasElement", ["o"], ["y"])], "has",
    [helper.make_value_info("o", helper.make_optional_type_proto(elem))],
    [helper.make_tensor_value_info("y", TensorProto.BOOL, [])])
for name, graph in (("sequence_input", seq), ("optional_input", opt)):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))
os.makedirs(os.path.join(out, "data"), exist_ok=True)
os.makedirs(os.path.join(out, "opt_data"), exist_ok=True)
values = [np.full((2, 3), k, np.float32) for k in range(3)]
open(os.path.join(out, "data", "input_0.pb"), "wb").write(numpy_helper.from_list(values, "s").SerializeToString())
open(os.path.join(out, "opt_data", "input_0.pb"), "wb").write(
    numpy_helper.from_optional(values[0], "o").SerializeToString())
