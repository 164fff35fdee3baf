#!/usr/bin/env python3
"""Writes the small models that tests/lit/onnx checks onnx-mlir's form with
(om_*.onnx). Test-data tooling only; the outputs are committed. Works with
Debian's onnx 1.12 (ops newer than it are written by name, unchecked).
Usage: /usr/bin/python3 make_onnx_models.py [OUTDIR]"""
import os
import struct
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def raw(name, elem, dims, data):
    return TensorProto(name=name, data_type=elem, dims=dims, raw_data=data)


def save(name, graph, opset=17, extra=()):
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="make_onnx_models")
    m.ir_version = 8
    onnx.save(m, os.path.join(out, name))


def one_node(name, opset, node, inputs, outputs, inits=(), extra=()):
    save(name, helper.make_graph([node], name[:-5], inputs, outputs, initializer=list(inits)),
         opset, extra)


# Versions: the op names onnx-mlir gives older versions it keeps.
one_node("om_upsample7.onnx", 7,
         helper.make_node("Upsample", ["x"], ["y"], name="up", mode="nearest",
                          scales=[1.0, 1.0, 2.0, 2.0]),
         [vi("x", F, [1, 1, 2, 2])], [vi("y", F, [1, 1, 4, 4])])
one_node("om_upsample9.onnx", 9,
         helper.make_node("Upsample", ["x", "s"], ["y"], name="up", mode="nearest"),
         [vi("x", F, [1, 1, 2, 2]), vi("s", F, [4])], [vi("y", F, None)])
one_node("om_pad2.onnx", 2,
         helper.make_node("Pad", ["x"], ["y"], name="pad", pads=[0, 1, 0, 1], value=2.0),
         [vi("x", F, [2, 2])], [vi("y", F, [2, 4])])
one_node("om_softmax1.onnx", 1,
         helper.make_node("Softmax", ["x"], ["y"], name="sm"), [vi("x", F, [2, 3])],
         [vi("y", F, [2, 3])])
one_node("om_reducesum11.onnx", 11,
         helper.make_node("ReduceSum", ["x"], ["y"], name="rs", axes=[1], keepdims=0),
         [vi("x", F, [2, 3])], [vi("y", F, [2])])
one_node("om_resize11.onnx", 11,
         helper.make_node("Resize", ["x", "roi", "scales"], ["y"], name="rz", mode="nearest"),
         [vi("x", F, [1, 1, 2, 2]), vi("roi", F, [0]), vi("scales", F, [4])], [vi("y", F, None)])
one_node("om_clip6.onnx", 6,
         helper.make_node("Clip", ["x"], ["y"], name="clip", min=0.0), [vi("x", F, [3])],
         [vi("y", F, [3])])

# The importer's special cases.
save("om_special.onnx", helper.make_graph([
    helper.make_node("MaxPool", ["x"], ["p1"], name="pool1", kernel_shape=[2, 2]),
    helper.make_node("MaxPool", ["x"], ["p2", "idx"], name="pool2", kernel_shape=[2, 2]),
    helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"], name="bn"),
    helper.make_node("Dropout", ["bn"], ["d"], name="drop"),
    helper.make_node("Pad", ["x", "pads"], ["padded"], name="pad")],
    "special", [vi("x", F, [1, 1, 4, 4])],
    [vi("p1", F, [1, 1, 3, 3]), vi("p2", F, [1, 1, 3, 3]), vi("idx", I64, [1, 1, 3, 3]),
     vi("d", F, [1, 1, 4, 4]), vi("padded", F, [1, 1, 4, 6])],
    initializer=[raw(n, F, [1], struct.pack("<f", 1)) for n in "sbmv"] +
                [raw("pads", I64, [8], struct.pack("<8q", 0, 0, 0, 1, 0, 0, 0, 1))]), 21)
one_node("om_dropout7.onnx", 7,
         helper.make_node("Dropout", ["x"], ["y"], name="drop", ratio=0.25), [vi("x", F, [3])],
         [vi("y", F, [3])])
one_node("om_slice1.onnx", 1,
         helper.make_node("Slice", ["x"], ["y"], name="slice", starts=[1], ends=[3], axes=[0]),
         [vi("x", F, [4, 2])], [vi("y", F, [2, 2])])

# Attributes: kinds, defaults filled in, Cast's type, an attribute the
# table does not know, a required one missing.
save("om_attrs.onnx", helper.make_graph([
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv", kernel_shape=[1, 1],
                     strides=[1, 1]),
    helper.make_node("Cast", ["c"], ["i"], name="cast", to=TensorProto.INT32),
    helper.make_node("LeakyRelu", ["c"], ["l"], name="leaky", alpha=0.5),
    helper.make_node("Identity", ["l"], ["e"], name="extra", note="kept"),
    helper.make_node("Constant", [], ["k"], name="const",
                     value=helper.make_tensor("kv", F, [2], [0.5, 1.5]))],
    "attrs", [vi("x", F, [1, 1, 2, 2])],
    [vi("i", TensorProto.INT32, [1, 1, 2, 2]), vi("e", F, [1, 1, 2, 2]), vi("k", F, [2])],
    initializer=[raw("w", F, [1, 1, 1, 1], struct.pack("<f", 2))]), 17)
one_node("om_missing_attr.onnx", 17, helper.make_node("Cast", ["x"], ["y"], name="cast"),
         [vi("x", F, [2])], [vi("y", I64, [2])])

# Other domains and ops onnx-mlir lacks: com.microsoft stays a Custom; an
# ONNX op without an onnx-mlir op (Swish, opset 24) is written in ops it
# has by the shared layer.
one_node("om_custom.onnx", 17,
         helper.make_node("FusedMatMul", ["a", "b"], ["y"], name="fmm", domain="com.microsoft",
                          alpha=0.125, transA=0, transB=1),
         [vi("a", F, [2, 3]), vi("b", F, [4, 3])], [vi("y", F, [2, 4])],
         extra=(("com.microsoft", 1),))
one_node("om_swish.onnx", 24, helper.make_node("Swish", ["x"], ["y"], name="swish", alpha=2.0),
         [vi("x", F, [3])], [vi("y", F, [3])])

# ai.onnx.ml: onnx-mlir's ML ops keep their names.
one_node("om_ml.onnx", 17,
         helper.make_node("Binarizer", ["x"], ["y"], name="bin", domain="ai.onnx.ml",
                          threshold=0.5),
         [vi("x", F, [3])], [vi("y", F, [3])], extra=(("ai.onnx.ml", 3),))

# Types onnx-mlir has: every element type it represents, and a float4e2m1
# value it cannot.
DTYPES = [(2, "uint8", [2]), (3, "int8", [2]), (5, "int16", [2]), (6, "int32", [2]),
          (7, "int64", [2]), (9, "bool", [2]), (10, "float16", [2]), (16, "bfloat16", [2]),
          (17, "float8e4m3fn", [2]), (21, "uint4", [2]), (22, "int4", [2]),
          (8, "string", [2])]
save("om_dtypes.onnx", helper.make_graph(
    [helper.make_node("Identity", ["in_" + n], ["out_" + n], name="id_" + n) for _, n, _ in DTYPES],
    "dtypes", [vi("in_" + n, t, s) for t, n, s in DTYPES],
    [vi("out_" + n, t, s) for t, n, s in DTYPES]), 21)
one_node("om_float4.onnx", 23, helper.make_node("Identity", ["x"], ["y"], name="id4"),
         [vi("x", 23, [2])], [vi("y", 23, [2])])

# A model-local function is inlined: its body's ops, not a call.
double = helper.make_function("local", "Double", ["a"], ["b"],
                              [helper.make_node("Add", ["a", "a"], ["b"], name="twice")],
                              [helper.make_opsetid("", 17)])
m = helper.make_model(helper.make_graph(
    [helper.make_node("Double", ["x"], ["y"], name="call", domain="local")],
    "functions", [vi("x", F, [2])], [vi("y", F, [2])]),
    opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)],
    producer_name="make_onnx_models", functions=[double])
m.ir_version = 8
onnx.save(m, os.path.join(out, "om_function.onnx"))

# An attribute of the wrong kind for onnx-mlir's op is refused on its node.
one_node("om_bad_attr.onnx", 17, helper.make_node("LeakyRelu", ["x"], ["y"], name="leaky", alpha=1),
         [vi("x", F, [2])], [vi("y", F, [2])])

# contrib ops the shared layer does not write (an unknown op, an option
# onnxruntime rejects) next to one it does: all reported at once.
save("om_contrib_unsupported.onnx", helper.make_graph([
    helper.make_node("Frobnicate", ["x"], ["a"], name="frob", domain="com.microsoft"),
    helper.make_node("FusedMatMul", ["x", "x"], ["b"], name="fmm_bad", domain="com.microsoft", transBatchA=1),
    helper.make_node("FusedMatMul", ["x", "x"], ["c"], name="fmm_ok", domain="com.microsoft", alpha=0.5)],
    "contrib", [vi("x", F, [2, 2])], [vi("a", F, [2, 2]), vi("b", F, None), vi("c", F, None)]),
    17, (("com.microsoft", 1),))
