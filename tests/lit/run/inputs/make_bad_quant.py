#!/usr/bin/python3
"""make_bad_quant.py OUT - models with bad quantization parameters, one
per file, for quant.test: MatMulNBits with a block size not a power of two
(block24.onnx), with A's last dim not K (k_mismatch.onnx), with B's size
not the attributes' (b_size.onnx); QuantizeLinear with a scale of 0
(scale0.onnx), DequantizeLinear with a NaN scale (scale_nan.onnx)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
MS = "com.microsoft"


def save(name, nodes, x_shape, inits, x_type=TensorProto.FLOAT, y_type=TensorProto.FLOAT):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", x_type, x_shape)],
                              [helper.make_tensor_value_info("y", y_type, None)],
                              [numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    onnx.save(model, os.path.join(out, name + ".onnx"))


def nbits(name, k, block, a_k, b_blocks=None):
    blocks = b_blocks or (k + block - 1) // block
    inits = [("b", np.zeros((8, blocks, block // 2), np.uint8)), ("s", np.ones(8 * blocks, np.float32))]
    save(name, [helper.make_node("MatMulNBits", ["x", "b", "s"], ["y"], domain=MS, K=k, N=8, bits=4,
                                 block_size=block, name="proj")], [2, a_k], inits)


nbits("block24", 48, 24, 48)
nbits("k_mismatch", 64, 32, 48)
nbits("b_size", 64, 32, 64, b_blocks=3)
save("g_idx_range", [helper.make_node("MatMulNBits", ["x", "b", "s", "", "g"], ["y"], domain=MS, K=64, N=8, bits=4,
                                      block_size=32, name="proj")], [2, 64],
     [("b", np.zeros((8, 2, 16), np.uint8)), ("s", np.ones(16, np.float32)),
      ("g", np.concatenate([np.zeros(63), [2]]).astype(np.int32))])
save("scale0", [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], name="quant")], [4],
     [("s", np.float32(0)), ("zp", np.uint8(0))], y_type=TensorProto.UINT8)
save("scale_nan", [helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dequant")], [4],
     [("s", np.float32(np.nan))], x_type=TensorProto.UINT8)
