#!/usr/bin/env python3
"""Writes the small models that tests/lit/torch checks the torch form with
(torch_*.onnx, plus torch_external.bin for external data). Test-data
tooling only; the outputs are committed. Works with Debian's onnx 1.12:
newer element types (float8, int4, float4, int2) are written by number.
Usage: /usr/bin/python3 make_models.py [OUTDIR]"""
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


def floats(*xs):
    return struct.pack("<%df" % len(xs), *xs)


def save(name, graph, opsets=(("", 17),), ir_version=8):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="make_models", producer_version="1.0")
    m.ir_version = ir_version
    onnx.save(m, os.path.join(out, name))


# basic: arguments, meta attributes, an initializer also listed as an input
# (not an argument), a blob name that needs sanitising, node names.
w = raw("onnx::Add_w", F, [2, 3], floats(1, 2, 3, 4, 5, 6))
save("torch_basic.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "onnx::Add_w"], ["s"], name="add0"),
     helper.make_node("Relu", ["s"], ["y"])],
    "basic", [vi("x", F, [2, 3]), vi("onnx::Add_w", F, [2, 3])], [vi("y", F, [2, 3])],
    initializer=[w]), opsets=(("", 17), ("com.microsoft", 1)))

# every attribute type on an op of a custom domain (its output type is
# declared, since nothing can infer it).
t_int = raw("tconst", I64, [2], struct.pack("<2q", 1, 2))
t_f1 = raw("", F, [1], floats(7))
t_f2 = raw("", F, [2], floats(8, 9))
sparse = helper.make_sparse_tensor(raw("sv", F, [2], floats(1.5, 2.5)),
                                   raw("si", I64, [2], struct.pack("<2q", 1, 3)), [2, 2])
sparse2d = helper.make_sparse_tensor(raw("sv2", F, [1], floats(4)),
                                     raw("si2", I64, [1, 2], struct.pack("<2q", 1, 0)), [2, 2])


def const_graph(name, value):
    return helper.make_graph(
        [helper.make_node("Constant", [], ["c_" + name], value_float=value, name="k_" + name)],
        name, [], [vi("c_" + name, F, [])])


attrs = dict(
    f=0.5, i=-3, s="hello", t=t_int, floats=[1.0, 2.5], ints=[1, 2, 3], strings=["a", "b"],
    tensors=[t_f1, t_f2], sp=sparse, sps=[sparse, sparse2d],
    tp=helper.make_tensor_type_proto(F, [2, "N"]),
    tps=[helper.make_tensor_type_proto(I64, []), helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(F, None))],
    graphs=[const_graph("g0", 1.0), const_graph("g1", 2.0)])
save("torch_attrs.onnx", helper.make_graph(
    [helper.make_node("AllAttrs", ["x"], ["y"], name="all", domain="test.custom", **attrs)],
    "attrs", [vi("x", F, [2])], [vi("y", F, [2])]),
    opsets=(("", 17), ("test.custom", 3)))

# If: regions in attribute-name order (else_branch, then_branch); the
# branches use the outer input and an outer initializer directly.
then_g = helper.make_graph([helper.make_node("Add", ["x", "c"], ["t_out"], name="then_add")],
                           "then_body", [], [vi("t_out", F, [2])])
else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e_out"], name="else_neg")],
                           "else_body", [], [vi("e_out", F, [2])])
save("torch_if.onnx", helper.make_graph(
    [helper.make_node("If", ["cond"], ["y"], name="if0", then_branch=then_g, else_branch=else_g)],
    "if_graph", [vi("cond", BOOL, []), vi("x", F, [2])], [vi("y", F, [2])],
    initializer=[raw("c", F, [2], floats(10, 20))]))

# Loop: a missing trip count (one torch.constant.none in the function
# block) and, in the body, a Clip with a missing min (the body block's own
# none); body inputs become block arguments.
body = helper.make_graph(
    [helper.make_node("Add", ["v_in", "x"], ["v_sum"], name="body_add"),
     helper.make_node("Clip", ["v_sum", "", "hi"], ["v_out"], name="body_clip"),
     helper.make_node("Identity", ["cond_in"], ["cond_out"], name="body_cond")],
    "loop_body", [vi("iter", I64, []), vi("cond_in", BOOL, []), vi("v_in", F, [2])],
    [vi("cond_out", BOOL, []), vi("v_out", F, [2])])
save("torch_loop.onnx", helper.make_graph(
    [helper.make_node("Loop", ["", "cond", "v0"], ["v_final"], name="loop0", body=body)],
    "loop_graph", [vi("cond", BOOL, []), vi("v0", F, [2]), vi("x", F, [2])],
    [vi("v_final", F, [2])], initializer=[raw("hi", F, [], floats(100))]))

# Scan: state and scan input as block arguments.
scan_body = helper.make_graph(
    [helper.make_node("Add", ["sum_in", "next"], ["sum_out"], name="scan_add"),
     helper.make_node("Identity", ["sum_out"], ["scan_out"], name="scan_id")],
    "scan_body", [vi("sum_in", F, [2]), vi("next", F, [2])],
    [vi("sum_out", F, [2]), vi("scan_out", F, [2])])
save("torch_scan.onnx", helper.make_graph(
    [helper.make_node("Scan", ["init", "xs"], ["final", "ys"], name="scan0", body=scan_body,
                      num_scan_inputs=1)],
    "scan_graph", [vi("init", F, [2]), vi("xs", F, [3, 2])],
    [vi("final", F, [2]), vi("ys", F, [3, 2])]), opsets=(("", 16),))

# Missing optional inputs share one none per block; a missing optional
# output in the middle is a !torch.none result.
save("torch_optional.onnx", helper.make_graph(
    [helper.make_node("Clip", ["x", "", "hi"], ["a"], name="clip_max"),
     helper.make_node("Clip", ["a", "lo", ""], ["b"], name="clip_min"),
     helper.make_node("TwoOut", ["b"], ["", "c"], name="two", domain="test.custom")],
    "optional_inputs", [vi("x", F, [4])], [vi("b", F, [4]), vi("c", F, [4])],
    initializer=[raw("hi", F, [], floats(6)), raw("lo", F, [], floats(0))]),
    opsets=(("", 17), ("test.custom", 1)))

# Initializers: raw data (dense_resource), typed fields (dense), strings,
# an empty tensor, a scalar, names that sanitise alike, a Constant node and
# a sparse initializer.
typed_f = helper.make_tensor("typed_f", F, [3], [1.0, 2.0, 3.0])
typed_i = helper.make_tensor("typed_i", I64, [2], [-1, 5])
typed_b = helper.make_tensor("typed_b", BOOL, [3], [True, False, True])
strings = helper.make_tensor("strs", TensorProto.STRING, [2], [b"ab", b"cd"])
empty = raw("empty", F, [0], b"")
scalar = raw("scalar", I64, [], struct.pack("<q", 42))
dup1 = raw("w:1", F, [1], floats(1))
dup2 = raw("w;1", F, [1], floats(2))
sparse_init = helper.make_sparse_tensor(raw("sp_init", F, [1], floats(3)),
                                        raw("sp_idx", I64, [1], struct.pack("<q", 2)), [4])
inits = [typed_f, typed_i, typed_b, strings, empty, scalar, dup1, dup2]
names = ["typed_f", "typed_i", "typed_b", "strs", "empty", "scalar", "w:1", "w;1", "sp_init"]
types = [vi("o%d" % i, e, s) for i, (e, s) in enumerate([
    (F, [3]), (I64, [2]), (BOOL, [3]), (TensorProto.STRING, [2]), (F, [0]), (I64, []),
    (F, [1]), (F, [1]), (F, [4])])]
nodes = [helper.make_node("Identity", [n], [t.name], name="id_" + t.name) for n, t in zip(names, types)]
nodes.append(helper.make_node("Constant", [], ["k"], name="const_node",
                              value=raw("", F, [2], floats(0.25, 0.5))))
g = helper.make_graph(nodes, "initializers", [], types + [vi("k", F, [2])], initializer=inits)
g.sparse_initializer.extend([sparse_init])
save("torch_initializers.onnx", g)

# External data: two tensors in torch_external.bin (offsets 0 and 16).
with open(os.path.join(out, "torch_external.bin"), "wb") as f:
    f.write(floats(1, 2, 3, 4) + floats(5, 6))


def external(name, dims, offset, length):
    t = TensorProto(name=name, data_type=F, dims=dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "torch_external.bin"), ("offset", str(offset)),
                 ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


save("torch_external.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "ext_a"], ["s"], name="add_a"),
     helper.make_node("Mul", ["s", "ext_b"], ["y"], name="mul_b")],
    "external", [vi("x", F, [2, 2])], [vi("y", F, [2, 2])],
    initializer=[external("ext_a", [2, 2], 0, 16), external("ext_b", [2], 16, 8)]))

# Dims: a named dim, an unknown dim, a scalar, an unranked tensor; an
# unnamed graph.
unranked = onnx.ValueInfoProto(name="d")
unranked.type.tensor_type.elem_type = F
save("torch_dims.onnx", helper.make_graph(
    [helper.make_node("Identity", [n], ["o" + n], name="id_" + n) for n in "abcd"],
    "", [vi("a", F, ["N", 3]), vi("b", F, [None]), vi("c", F, []), unranked],
    [vi("oa", F, ["N", 3]), vi("ob", F, [None]), vi("oc", F, []), vi("od", F, None)]))

# Every element type: an input through Identity, and a raw initializer.
DTYPES = [  # (ONNX number, name, element bytes per 2 elements)
    (1, "float", floats(1, 2)), (2, "uint8", bytes([1, 2])), (3, "int8", bytes([1, 0xFE])),
    (4, "uint16", struct.pack("<2H", 1, 2)), (5, "int16", struct.pack("<2h", 1, -2)),
    (6, "int32", struct.pack("<2i", 1, -2)), (7, "int64", struct.pack("<2q", 1, -2)),
    (9, "bool", bytes([1, 0])), (10, "float16", struct.pack("<2e", 1, 2)),
    (11, "double", struct.pack("<2d", 1, 2)), (12, "uint32", struct.pack("<2I", 1, 2)),
    (13, "uint64", struct.pack("<2Q", 1, 2)), (14, "complex64", floats(1, 2, 3, 4)),
    (15, "complex128", struct.pack("<4d", 1, 2, 3, 4)), (16, "bfloat16", bytes([0x80, 0x3F, 0, 0x40])),
    (17, "float8e4m3fn", bytes([0x38, 0x40])), (18, "float8e4m3fnuz", bytes([0x40, 0x48])),
    (19, "float8e5m2", bytes([0x3C, 0x40])), (20, "float8e5m2fnuz", bytes([0x40, 0x44])),
    (21, "uint4", bytes([0x21])), (22, "int4", bytes([0xF1])), (23, "float4e2m1", bytes([0x42])),
    (24, "float8e8m0", bytes([0x7F, 0x80])), (25, "uint2", bytes([0x09])), (26, "int2", bytes([0x0D])),
]
nodes, inputs, outputs, inits = [], [], [], []
for num, name, data in DTYPES:
    inputs.append(vi("in_" + name, num, [2]))
    outputs.append(vi("out_" + name, num, [2]))
    outputs.append(vi("cout_" + name, num, [2]))
    inits.append(raw("c_" + name, num, [2], data))
    nodes.append(helper.make_node("Identity", ["in_" + name], ["out_" + name], name="id_" + name))
    nodes.append(helper.make_node("Identity", ["c_" + name], ["cout_" + name], name="cid_" + name))
inputs.append(vi("in_string", TensorProto.STRING, [2]))
outputs.append(vi("out_string", TensorProto.STRING, [2]))
nodes.append(helper.make_node("Identity", ["in_string"], ["out_string"], name="id_string"))
save("torch_dtypes.onnx", helper.make_graph(nodes, "dtypes", inputs, outputs, initializer=inits),
     opsets=(("", 25),), ir_version=11)

# Sequences and optionals.
seq_t = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2]))
save("torch_sequences.onnx", helper.make_graph(
    [helper.make_node("SequenceConstruct", ["x", "y"], ["seq"], name="make_seq"),
     helper.make_node("SequenceAt", ["seq", "pos"], ["at"], name="seq_at"),
     helper.make_node("Optional", ["x"], ["opt"], name="make_opt"),
     helper.make_node("OptionalHasElement", ["opt"], ["has"], name="has_opt"),
     helper.make_node("Optional", ["seq"], ["opt_seq"], name="make_opt_seq")],
    "sequences", [vi("x", F, [2]), vi("y", F, [2]), vi("pos", I64, [])],
    [helper.make_value_info("seq", seq_t), vi("at", F, [2]),
     helper.make_value_info("opt", helper.make_optional_type_proto(
         helper.make_tensor_type_proto(F, [2]))),
     vi("has", BOOL, []),
     helper.make_value_info("opt_seq", helper.make_optional_type_proto(seq_t))]),
    opsets=(("", 18),))

# Maps (ONNX-ML) are !torch.dict<KEY, VALUE>; their types come from the
# declared graph outputs of a custom op.
def map_type(key, value):
    t = onnx.TypeProto()
    t.map_type.key_type = key
    t.map_type.value_type.CopyFrom(value)
    return t


str_map = map_type(TensorProto.STRING, helper.make_tensor_type_proto(F, [1]))
int_map_seq = helper.make_sequence_type_proto(map_type(I64, helper.make_tensor_type_proto(F, [])))
save("torch_maps.onnx", helper.make_graph(
    [helper.make_node("MakeMaps", ["x"], ["m", "ms"], name="make_maps", domain="test.custom")],
    "maps", [vi("x", F, [2])],
    [helper.make_value_info("m", str_map), helper.make_value_info("ms", int_map_seq)]),
    opsets=(("", 17), ("test.custom", 1)))

# An op nobody can type: the error names the node.
save("torch_untyped.onnx", helper.make_graph(
    [helper.make_node("Mystery", ["x"], ["h"], name="mystery", domain="test.custom"),
     helper.make_node("Identity", ["h"], ["y"], name="after")],
    "untyped", [vi("x", F, [2])], [vi("y", F, [2])]),
    opsets=(("", 17), ("test.custom", 1)))
