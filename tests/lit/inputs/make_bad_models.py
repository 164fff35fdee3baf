#!/usr/bin/env python3
"""Writes the malformed and invalid models that tests/lit/errors checks
(each must give a clear error and exit status 1, never a crash).
Test-data tooling only. Usage: /usr/bin/python3 make_bad_models.py [OUTDIR]"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def model(nodes, inputs=("x",), outputs=("y",), inits=(), opsets=(("", 17),), value_info=()):
    g = helper.make_graph(
        list(nodes), "g",
        [helper.make_tensor_value_info(n, F, [2, 3]) for n in inputs],
        [helper.make_tensor_value_info(n, F, [2, 3]) for n in outputs],
        initializer=list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    m.ir_version = 8
    return m


def save(name, m):
    onnx.save(m, os.path.join(out, name))


def save_bytes(name, data):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def external(name, location, offset=0, length=None):
    t = TensorProto(name="w", data_type=F, dims=[2, 3])
    t.data_location = TensorProto.EXTERNAL
    entries = [("location", location), ("offset", str(offset))]
    if length is not None:
        entries.append(("length", str(length)))
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    save(name, model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], inits=[t]))


relu = helper.make_node("Relu", ["x"], ["y"], name="relu")
good = model([relu]).SerializeToString()
save_bytes("bad_truncated.onnx", good[: len(good) - 7])
# field 7 (graph) with wire type 0 (varint) where a message (type 2) belongs
save_bytes("bad_wiretype.onnx", bytes([0x08, 0x08, 0x38, 0x01]))
# field 7 (graph) claiming 100 bytes when 2 follow
save_bytes("bad_length.onnx", bytes([0x08, 0x08, 0x3A, 100, 0x0A, 0x00]))
# a varint of 11 bytes
save_bytes("bad_varint.onnx", bytes([0x08] + [0xFF] * 10 + [0x01]))

huge = TensorProto(name="w", data_type=F, dims=[1 << 40, 1 << 40], raw_data=b"")
save("bad_dims_overflow.onnx", model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], inits=[huge]))
short = numpy_helper.from_array(np.zeros((2, 3), np.float32), "w")
short.raw_data = short.raw_data[:-4]
save("bad_raw_size.onnx", model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], inits=[short]))

save("bad_missing_input.onnx", model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add_missing")]))
save("bad_duplicate.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="first"),
                                  helper.make_node("Neg", ["x"], ["y"], name="second")]))
save("bad_cycle.onnx", model([helper.make_node("Add", ["x", "b"], ["a"], name="loop_a"),
                              helper.make_node("Relu", ["a"], ["b"], name="loop_b"),
                              helper.make_node("Identity", ["a"], ["y"], name="out")]))
save("bad_no_output.onnx", model([helper.make_node("Relu", ["x"], ["z"], name="relu")]))
save("bad_domain.onnx", model([helper.make_node("Frob", ["x"], ["y"], name="frob", domain="com.example")]))
save("bad_attr.onnx", model([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=7)]))

external("bad_external_absolute.onnx", "/etc/hostname")
external("bad_external_dotdot.onnx", "../outside.bin")
external("bad_external_eof.onnx", "small.bin", offset=16)
external("bad_external_length.onnx", "small.bin", length=8)
external("external_symlink.onnx", "link.bin")
save_bytes("small.bin", bytes(24))

# value_info that contradicts the inferred type: a warning, not an error
vi = helper.make_tensor_value_info("h", F, [2, 4])
save("warn_value_info.onnx", model([helper.make_node("Relu", ["x"], ["h"], name="relu"),
                                    helper.make_node("Neg", ["h"], ["y"], name="neg")], value_info=[vi]))
