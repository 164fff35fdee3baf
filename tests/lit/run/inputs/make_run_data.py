#!/usr/bin/env python3
"""Writes the inputs and expected outputs that tests/lit/run uses (.npy
and ONNX TensorProto .pb files, a few deliberately broken ones, and two
ONNX backend-test style folders). Test-data tooling only; the outputs are
committed. Usage: /usr/bin/python3 make_run_data.py [OUTDIR]"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(out, name)


def save_pb(name, array, tensor_name=""):
    with open(path(name), "wb") as f:
        f.write(numpy_helper.from_array(array, tensor_name).SerializeToString())


a23 = np.arange(6, dtype=np.float32).reshape(2, 3)
b23 = np.array([[10, 20, 30], [40, 50, 60]], dtype=np.float32)
a43 = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
np.save(path("a23.npy"), a23)
np.save(path("b23.npy"), b23)
np.save(path("a43.npy"), a43)
np.save(path("d5.npy"), np.array([1, -2, 3.5, np.inf, np.nan], dtype=np.float32))
save_pb("a23.pb", a23, "a")
save_pb("b23.pb", b23, "b")
np.save(path("sum23.npy"), a23 + b23)
save_pb("sum23.pb", a23 + b23, "result0")
np.save(path("bool4.npy"), np.array([True, False, True, False]))
np.save(path("u8_4.npy"), np.array([0, 1, 200, 255], dtype=np.uint8))
# bf16 1.5 and -3 as raw bits (NumPy has no bfloat16)
bf = TensorProto(data_type=TensorProto.BFLOAT16, dims=[2], raw_data=bytes([0xC0, 0x3F, 0x40, 0xC0]))
with open(path("bf16_2.pb"), "wb") as f:
    f.write(bf.SerializeToString())
np.save(path("i64_23.npy"), np.arange(6, dtype=np.int64).reshape(2, 3))
np.save(path("a33.npy"), np.zeros((3, 3), dtype=np.float32))
with open(path("a23.npy"), "rb") as f:
    whole = f.read()
with open(path("truncated.npy"), "wb") as f:
    f.write(whole[:-5])
with open(path("truncated.pb"), "wb") as f:
    f.write(numpy_helper.from_array(a23).SerializeToString()[:-7])
np.save(path("big_endian.npy"), a23.astype(">f4"))
np.save(path("fortran.npy"), np.asfortranarray(a23.T))

# ONNX backend-test folders: Shape (whose output is a constant, so it runs
# whatever the emitter lowers), a wrong expected output, a missing input
# file, an op of an unknown domain and a training-only model.
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])
s = helper.make_tensor_value_info("s", TensorProto.INT64, [2])


def backend_test(folder, nodes, inputs, outputs, data, opsets=(("", 17),)):
    d = path(os.path.join("suite", folder))
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    graph = helper.make_graph(nodes, folder, inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(dm, v) for dm, v in opsets])
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, arrays in data.items():
        for i, arr in enumerate(arrays):
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(numpy_helper.from_array(arr).SerializeToString())


shape = [helper.make_node("Shape", ["x"], ["s"])]
backend_test("test_shape_ok", shape, [x], [s], {"input": [a23], "output": [np.array([2, 3], dtype=np.int64)]})
backend_test("test_shape_wrong", shape, [x], [s], {"input": [a23], "output": [np.array([3, 2], dtype=np.int64)]})
backend_test("test_missing_input", [helper.make_node("Add", ["x", "y"], ["z"])], [x, y], [z],
             {"input": [a23], "output": [a23 + b23]})
backend_test("test_unknown_domain", [helper.make_node("Frob", ["x"], ["z"], domain="com.example")], [x], [z],
             {"input": [a23], "output": [a23]}, opsets=(("", 17), ("com.example", 1)))
backend_test("test_training",
             [helper.make_node("Momentum", ["r", "t", "x", "y", "v"], ["x_new", "v_new"],
                               domain="ai.onnx.preview.training", alpha=0.9, beta=0.1, mode="standard",
                               norm_coefficient=0.0)],
             [helper.make_tensor_value_info("r", TensorProto.FLOAT, []),
              helper.make_tensor_value_info("t", TensorProto.INT64, []), x, y,
              helper.make_tensor_value_info("v", TensorProto.FLOAT, [2, 3])],
             [helper.make_tensor_value_info("x_new", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("v_new", TensorProto.FLOAT, [2, 3])],
             {}, opsets=(("", 17), ("ai.onnx.preview.training", 1)))

# inputs of ops.mlir
np.save(path("h23.npy"), (np.arange(6, dtype=np.float16).reshape(2, 3) - 2) / 4)
bf6 = TensorProto(data_type=TensorProto.BFLOAT16, dims=[2, 3],
                  raw_data=(np.arange(6, dtype=np.float32).reshape(2, 3) / 2).view(np.uint32).__rshift__(16)
                  .astype(np.uint16).tobytes())
with open(path("bf16_23.pb"), "wb") as f:
    f.write(bf6.SerializeToString())
np.save(path("i64_m.npy"), np.array([[-7, -3, -1], [0, 4, 8]], dtype=np.int64))
np.save(path("img.npy"), np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))

# run with values: a model taking a sequence and an optional, giving a
# sequence and an optional (seq_model.onnx), its input files as protos
seq_f = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
opt_f = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
g = helper.make_graph(
    [helper.make_node("SequenceInsert", ["seq", "x"], ["seq_out"]),
     helper.make_node("OptionalHasElement", ["opt"], ["has"]),
     helper.make_node("Optional", ["x"], ["opt_out"])],
    "values", [helper.make_value_info("seq", seq_f), helper.make_value_info("opt", opt_f),
               helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_value_info("seq_out", seq_f), helper.make_tensor_value_info("has", TensorProto.BOOL, []),
     helper.make_value_info("opt_out", opt_f)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
m.ir_version = 8
onnx.save(m, path("seq_model.onnx"))
with open(path("seq_in.pb"), "wb") as f:
    f.write(numpy_helper.from_list([np.array([1, 2], np.float32), np.array([3, 4, 5], np.float32)], "seq")
            .SerializeToString())
with open(path("opt_empty.pb"), "wb") as f:
    f.write(numpy_helper.from_optional(None, "opt").SerializeToString())
save_pb("x2.pb", np.array([7, 8], np.float32), "x")

# An If whose branches serve different input shapes (branch_model.onnx):
# the then branch squeezes dim 1, which only fits inputs [N, 1]; the else
# branch sums over dim 1. A Loop (cond_loop) whose body squeezes too, so
# that it fits only when it is never entered (trip count 0).
xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", "M"])
flag = helper.make_tensor_value_info("squeeze", TensorProto.BOOL, [])
ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N"])
axes1 = helper.make_tensor("axes1", TensorProto.INT64, [1], [1])
then_g = helper.make_graph([helper.make_node("Squeeze", ["x", "axes1"], ["t"], name="squeeze_dim1")],
                           "then", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
else_g = helper.make_graph([helper.make_node("ReduceSum", ["x", "axes1"], ["e"], name="sum_dim1", keepdims=0)],
                           "else", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
g = helper.make_graph([helper.make_node("If", ["squeeze"], ["b"], name="by_shape",
                                        then_branch=then_g, else_branch=else_g),
                       helper.make_node("Neg", ["b"], ["y"], name="neg")],
                      "branch_model", [flag, xs], [ys], initializer=[axes1])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, path("branch_model.onnx"))
save_pb("true.pb", np.array(True), "squeeze")
save_pb("false.pb", np.array(False), "squeeze")

# A Loop whose body squeezes dim 1 of its carried value (loop_model.onnx):
# it fits only inputs [N, 1], unless the loop is never entered: its
# condition is t > 0, computed at run time (M is the constant 2).
t_in = helper.make_tensor_value_info("t", TensorProto.FLOAT, [])
body = helper.make_graph(
    [helper.make_node("Squeeze", ["v_in", "axes1"], ["sq"], name="body_squeeze"),
     helper.make_node("Add", ["sq", "one"], ["inc"], name="body_add"),
     helper.make_node("Unsqueeze", ["inc", "axes1"], ["v_out"], name="body_unsqueeze"),
     helper.make_node("Identity", ["c_in"], ["c_out"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v_in", TensorProto.FLOAT, None)],
    [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v_out", TensorProto.FLOAT, None)])
g = helper.make_graph([helper.make_node("Greater", ["t", "zero"], ["go"], name="positive"),
                       helper.make_node("Loop", ["M", "go", "x"], ["v"], name="add_loop", body=body)],
                      "loop_model", [t_in, xs], [helper.make_tensor_value_info("v", TensorProto.FLOAT, ["N", "M"])],
                      initializer=[axes1, helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
                                   helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0]),
                                   helper.make_tensor("M", TensorProto.INT64, [], [2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, path("loop_model.onnx"))
save_pb("x21.pb", np.array([[4], [5]], np.float32), "x")
save_pb("t1.pb", np.array(1, np.float32), "t")
save_pb("t0.pb", np.array(0, np.float32), "t")

# A Scan whose body squeezes dim 1 of each element (scan_model.onnx): it
# fits only elements [N, 1], unless the scan is empty; x0.pb is [0, 2, 3].
sbody = helper.make_graph(
    [helper.make_node("Squeeze", ["e", "axes1"], ["se"], name="scan_squeeze"),
     helper.make_node("Add", ["s_in", "se"], ["s_out"], name="scan_add"),
     helper.make_node("Identity", ["s_out"], ["y_out"])],
    "sbody",
    [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
    [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("y_out", TensorProto.FLOAT, ["N"])])
g = helper.make_graph([helper.make_node("Scan", ["s0", "x"], ["s", "ys"], name="sum_scan", body=sbody,
                                        num_scan_inputs=1)],
                      "scan_model",
                      [helper.make_tensor_value_info("s0", TensorProto.FLOAT, ["N"]),
                       helper.make_tensor_value_info("x", TensorProto.FLOAT, ["L", "N", "M"])],
                      [helper.make_tensor_value_info("s", TensorProto.FLOAT, ["N"]),
                       helper.make_tensor_value_info("ys", TensorProto.FLOAT, ["L", "N"])],
                      initializer=[axes1])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, path("scan_model.onnx"))
save_pb("x0.pb", np.zeros((0, 2, 3), np.float32), "x")
save_pb("x221.pb", np.array([[[1], [2]], [[3], [4]]], np.float32), "x")
save_pb("s0.pb", np.array([10, 20], np.float32), "s0")

# Float32 products that `run` hands to BLAS when it finds it (blas_model.onnx):
# a strided, dilated, padded Conv with a bias, then a 3-D x 2-D MatMul and a
# 4-D x 4-D MatMul; the expected outputs computed here with NumPy.
rng = np.random.default_rng(7)
img = rng.standard_normal((1, 3, 9, 8)).astype(np.float32)
cw = rng.standard_normal((4, 3, 3, 2)).astype(np.float32)
cb = rng.standard_normal(4).astype(np.float32)
mw = rng.standard_normal((7, 5)).astype(np.float32)
q4 = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
k4 = rng.standard_normal((2, 3, 6, 5)).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("Conv", ["img", "cw", "cb"], ["conv"], strides=[2, 1], dilations=[1, 2], pads=[1, 0, 1, 1]),
     helper.make_node("MatMul", ["conv", "mw"], ["proj"]),
     helper.make_node("MatMul", ["q4", "k4"], ["attn"])],
    "blas_model",
    [helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, 9, 8]),
     helper.make_tensor_value_info("q4", TensorProto.FLOAT, [2, 3, 4, 6])],
    [helper.make_tensor_value_info("proj", TensorProto.FLOAT, [1, 4, 5, 5]),
     helper.make_tensor_value_info("attn", TensorProto.FLOAT, [2, 3, 4, 5])],
    initializer=[numpy_helper.from_array(cw, "cw"), numpy_helper.from_array(cb, "cb"),
                 numpy_helper.from_array(mw, "mw"), numpy_helper.from_array(k4, "k4")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, path("blas_model.onnx"))
padded = np.pad(img, ((0, 0), (0, 0), (1, 1), (0, 1)))
oh, ow = (padded.shape[2] - 3) // 2 + 1, padded.shape[3] - 2 * (2 - 1) - 1 + 1
conv = np.zeros((1, 4, oh, ow), np.float64)
for f in range(4):
    for y in range(oh):
        for x in range(ow):
            conv[0, f, y, x] = cb[f] + np.sum(padded[0, :, 2 * y:2 * y + 3, x:x + 3:2] * cw[f])
np.save(path("blas_img.npy"), img)
np.save(path("blas_q4.npy"), q4)
np.save(path("blas_proj.npy"), (conv @ mw).astype(np.float32))
np.save(path("blas_attn.npy"), (q4.astype(np.float64) @ k4).astype(np.float32))
