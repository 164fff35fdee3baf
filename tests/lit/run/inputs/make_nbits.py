#!/usr/bin/python3
"""make_nbits.py OUT - quant.test's model: onnxruntime's MatMulNBits twice,
x [6, 200] (K 200: a partial last block of 32) against 4-bit weights with
packed zero points and a bias (six rows: the kernel's dequantized tiles),
and its first two rows against 2-bit weights without zero points (the
dot products on the packed values); NumPy's results in y0.npy, y1.npy,
from the weights dequantized in float64 as the operator defines them."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)
MS = "com.microsoft"
K = 200


def weights(name, bits, n, block, zp):
    blocks = (K + block - 1) // block
    packed = rng.integers(0, 256, (n, blocks, block * bits // 8), dtype=np.uint8)
    scales = (rng.random(n * blocks) * 0.1 + 0.01).astype(np.float32)
    inits = [numpy_helper.from_array(packed, name), numpy_helper.from_array(scales, name + "_s")]
    per = 8 // bits
    q = np.stack([(packed >> (t * bits)) & ((1 << bits) - 1) for t in range(per)], -1).reshape(n, -1)
    z = np.full((n, blocks), 1 << (bits - 1), np.float64)
    if zp:
        zbytes = rng.integers(0, 256, (n, (blocks * bits + 7) // 8), dtype=np.uint8)
        inits.append(numpy_helper.from_array(zbytes.reshape(-1), name + "_zp"))
        zq = np.stack([(zbytes >> (t * bits)) & ((1 << bits) - 1) for t in range(per)], -1).reshape(n, -1)
        z = zq[:, :blocks].astype(np.float64)
    w = (q[:, :blocks * block].astype(np.float64).reshape(n, blocks, block) - z[:, :, None]) * \
        scales.reshape(n, blocks)[:, :, None].astype(np.float64)
    return inits, w.reshape(n, -1)[:, :K]


w0_inits, w0 = weights("w0", 4, 40, 32, True)
bias = rng.standard_normal(40).astype(np.float32)
w1_inits, w1 = weights("w1", 2, 24, 64, False)
nodes = [
    helper.make_node("MatMulNBits", ["x", "w0", "w0_s", "w0_zp", "", "bias"], ["y0"], domain=MS, K=K, N=40, bits=4,
                     block_size=32, name="tiles"),
    helper.make_node("Slice", ["x", "zero", "two", "zero"], ["x2"]),
    helper.make_node("MatMulNBits", ["x2", "w1", "w1_s"], ["y1"], domain=MS, K=K, N=24, bits=2, block_size=64,
                     name="dots"),
]
inits = w0_inits + w1_inits + [numpy_helper.from_array(bias, "bias"),
                               numpy_helper.from_array(np.array([0], np.int64), "zero"),
                               numpy_helper.from_array(np.array([2], np.int64), "two")]
graph = helper.make_graph(nodes, "nbits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, K])],
                          [helper.make_tensor_value_info("y0", TensorProto.FLOAT, [6, 40]),
                           helper.make_tensor_value_info("y1", TensorProto.FLOAT, [2, 24])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "nbits.onnx"))
x = rng.standard_normal((6, K)).astype(np.float32)
np.save(os.path.join(out, "x.npy"), x)
np.save(os.path.join(out, "y0.npy"), (x.astype(np.float64) @ w0.T + bias).astype(np.float32))
np.save(os.path.join(out, "y1.npy"), (x[:2].astype(np.float64) @ w1.T).astype(np.float32))
