#!/usr/bin/python3
"""make_blocked_int4.py OUT - quant.test's ONNX-21 blocked 4-bit weights:
MatMul(x, DequantizeLinear(W, scale, zero point?, axis 0, block_size)) with
W [K, N] int4 with zero points, int4 without, uint4 with and uint4 without
(K 200: a partial last block of 32), on six rows and on one (a
DequantizeLinear each); NumPy's
results from the weights dequantized as ONNX defines it, in expected_*.npy.
The 4-bit tensors are written by hand (data types 21, 22: two values a
byte, low nibble first), which this onnx's helpers predate."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(21)
K, N, BS = 200, 48, 32
BLOCKS = (K + BS - 1) // BS
UINT4, INT4 = 21, 22


def packed4(name, values, signed):
    t = TensorProto()
    t.name = name
    t.data_type = INT4 if signed else UINT4
    t.dims.extend(values.shape)
    flat = (values.reshape(-1).astype(np.int64) & 15).astype(np.uint8)
    if flat.size % 2:
        flat = np.append(flat, 0)
    t.raw_data = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8).tobytes()
    return t


inits, nodes, outputs, expected = [], [], [], []
x = rng.standard_normal((6, K)).astype(np.float32)
inits += [numpy_helper.from_array(np.array([0], np.int64), "zero"), numpy_helper.from_array(np.array([1], np.int64), "one")]
nodes.append(helper.make_node("Slice", ["x", "zero", "one", "zero"], ["x1"]))
for i, (signed, with_zp) in enumerate([(True, True), (True, False), (False, True), (False, False)]):
    lo, hi = (-8, 8) if signed else (0, 16)
    q = rng.integers(lo, hi, (K, N))
    z = rng.integers(lo, hi, (BLOCKS, N)) if with_zp else np.zeros((BLOCKS, N), np.int64)
    s = (rng.random((BLOCKS, N)) * 0.05 + 0.01).astype(np.float32)
    inits += [packed4(f"w{i}", q, signed), numpy_helper.from_array(s, f"s{i}")]
    ins = [f"w{i}", f"s{i}"]
    if with_zp:
        inits.append(packed4(f"z{i}", z, signed))
        ins.append(f"z{i}")
    nodes += [helper.make_node("DequantizeLinear", ins, [f"d{i}"], axis=0, block_size=BS),
              helper.make_node("MatMul", ["x", f"d{i}"], [f"y{i}"]),
              helper.make_node("DequantizeLinear", ins, [f"e{i}"], axis=0, block_size=BS),
              helper.make_node("MatMul", ["x1", f"e{i}"], [f"r{i}"])]
    outputs += [f"y{i}", f"r{i}"]
    w = (q - np.repeat(z, BS, 0)[:K]) * np.repeat(s, BS, 0)[:K].astype(np.float64)
    expected += [x.astype(np.float64) @ w, x[:1].astype(np.float64) @ w]
graph = helper.make_graph(nodes, "blocked_int4", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, K])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
model.ir_version = 10
open(os.path.join(out, "blocked_int4.onnx"), "wb").write(model.SerializeToString())
np.save(os.path.join(out, "x.npy"), x)
for k, e in enumerate(expected):
    np.save(os.path.join(out, f"expected_{k}.npy"), e.astype(np.float32))
