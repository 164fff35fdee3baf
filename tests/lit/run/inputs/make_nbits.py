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

# nbits_unaligned.onnx: MatMulNBits of 4-bit weights with float scales and
# float zero points (2048 each, so that both are weight arguments) on four
# rows (tiles) and on one (dot products), and a MatMul of a float weight;
# the file puts every float weight at an address that is not a multiple of
# 4 (doc strings of the tensors before them pad it), so that the kernel
# reads the scales and zero points where they lie and the MatMul's weight
# is copied to align it.
KU, NU, BU = 256, 128, 16
packed = rng.integers(0, 256, (NU, KU // BU, BU // 2), dtype=np.uint8)
scales = (rng.random((NU, KU // BU)) * 0.1 + 0.01).astype(np.float32)
zeros = (rng.random((NU, KU // BU)) * 15).astype(np.float32)
weight = rng.standard_normal((KU, 8)).astype(np.float32)
q = np.stack([(packed >> (4 * t)) & 15 for t in range(2)], -1).reshape(NU, KU // BU, BU)
wu = ((q - zeros[:, :, None].astype(np.float64)) * scales[:, :, None]).reshape(NU, KU)
inits = [numpy_helper.from_array(packed, "wu"), numpy_helper.from_array(scales.reshape(-1), "wu_s"),
         numpy_helper.from_array(zeros.reshape(-1), "wu_zp"), numpy_helper.from_array(weight, "b"),
         numpy_helper.from_array(np.array([0], np.int64), "zero"), numpy_helper.from_array(np.array([1], np.int64), "one")]
nodes = [helper.make_node("MatMulNBits", ["x", "wu", "wu_s", "wu_zp"], ["y"], domain=MS, K=KU, N=NU, bits=4,
                          block_size=BU, name="rows"),
         helper.make_node("Slice", ["x", "zero", "one", "zero"], ["x1"]),
         helper.make_node("MatMulNBits", ["x1", "wu", "wu_s", "wu_zp"], ["y1"], domain=MS, K=KU, N=NU, bits=4,
                          block_size=BU, name="row"),
         helper.make_node("MatMul", ["x", "b"], ["z"], name="float_weight")]
graph = helper.make_graph(nodes, "unaligned", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, KU])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, NU]),
                           helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, NU]),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 8])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
model.ir_version = 8
for i in (1, 2, 3):  # misalign each float weight by padding the tensor before it
    while True:
        data = model.SerializeToString()
        at = data.find(graph.initializer[i].raw_data)
        if at % 4:
            break
        model.graph.initializer[i - 1].doc_string += "."
        graph = model.graph
data = model.SerializeToString()
assert all(data.find(model.graph.initializer[i].raw_data) % 4 for i in (1, 2, 3))
open(os.path.join(out, "nbits_unaligned.onnx"), "wb").write(data)
xu = rng.standard_normal((4, KU)).astype(np.float32)
np.save(os.path.join(out, "xu.npy"), xu)
np.save(os.path.join(out, "yu.npy"), (xu.astype(np.float64) @ wu.T).astype(np.float32))
np.save(os.path.join(out, "zu.npy"), (xu.astype(np.float64) @ weight).astype(np.float32))

# nbits_gidx.onnx: MatMulNBits with g_idx (each k's scale and zero point
# those of a block it names: act-order GPTQ models), float zero points, on
# six rows and on one; and the same weights with g_idx = k / block_size,
# which is the plain layout.
KG, NG, BG = 256, 80, 32
packed = rng.integers(0, 256, (NG, KG // BG, BG // 2), dtype=np.uint8)
scales = (rng.random((NG, KG // BG)) * 0.1 + 0.01).astype(np.float32)
zeros = (rng.random((NG, KG // BG)) * 15).astype(np.float32)
groups = rng.integers(0, KG // BG, KG).astype(np.int32)
plain = (np.arange(KG) // BG).astype(np.int32)
q = np.stack([(packed >> (4 * t)) & 15 for t in range(2)], -1).reshape(NG, KG).astype(np.float64)


def grouped(g):
    return (q - zeros[:, g]) * scales[:, g].astype(np.float64)


inits = [numpy_helper.from_array(packed, "wg"), numpy_helper.from_array(scales.reshape(-1), "wg_s"),
         numpy_helper.from_array(zeros.reshape(-1), "wg_zp"), numpy_helper.from_array(groups, "groups"),
         numpy_helper.from_array(plain, "plain"),
         numpy_helper.from_array(np.array([0], np.int64), "zero"), numpy_helper.from_array(np.array([1], np.int64), "one")]
nodes = [helper.make_node("MatMulNBits", ["x", "wg", "wg_s", "wg_zp", "groups"], ["y"], domain=MS, K=KG, N=NG,
                          bits=4, block_size=BG, name="rows"),
         helper.make_node("Slice", ["x", "zero", "one", "zero"], ["x1"]),
         helper.make_node("MatMulNBits", ["x1", "wg", "wg_s", "wg_zp", "groups"], ["y1"], domain=MS, K=KG, N=NG,
                          bits=4, block_size=BG, name="row"),
         helper.make_node("MatMulNBits", ["x1", "wg", "wg_s", "wg_zp", "plain"], ["y2"], domain=MS, K=KG, N=NG,
                          bits=4, block_size=BG, name="plain_row")]
graph = helper.make_graph(nodes, "gidx", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, KG])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, NG]),
                           helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, NG]),
                           helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, NG])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "nbits_gidx.onnx"))
xg = rng.standard_normal((6, KG)).astype(np.float32)
np.save(os.path.join(out, "xg.npy"), xg)
np.save(os.path.join(out, "yg.npy"), (xg.astype(np.float64) @ grouped(groups).T).astype(np.float32))
np.save(os.path.join(out, "yg_plain.npy"), (xg[:1].astype(np.float64) @ grouped(plain).T).astype(np.float32))
