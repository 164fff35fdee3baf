#!/usr/bin/env python3
"""Writes the import benchmark's models: a chain of MatMul+Add+Relu layers.
  big_external/model.onnx   ~1 GiB of weights in one external data file
  inline_100m.onnx          ~100 MiB of weights as inline raw_data
Weights are written from a small repeating pattern (the content does not
matter to an importer, only the bytes). Usage: make_models.py OUTDIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def chain(width, layers, external_file=None, outdir=None):
    nodes, inits = [], []
    pattern = (np.arange(width * width, dtype=np.float32) % 7 - 3) * 0.01
    weight = pattern.reshape(width, width)
    bias = np.zeros(width, dtype=np.float32)
    data = None
    if external_file:
        data = open(os.path.join(outdir, external_file), "wb")
    offset = 0
    x = "x"
    for i in range(layers):
        w, b = f"w{i}", f"b{i}"
        for name, arr in ((w, weight), (b, bias)):
            t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=arr.shape)
            if data:
                raw = arr.tobytes()
                data.write(raw)
                t.data_location = TensorProto.EXTERNAL
                for k, v in (("location", external_file), ("offset", str(offset)), ("length", str(len(raw)))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
                offset += len(raw)
            else:
                t.raw_data = arr.tobytes()
            inits.append(t)
        nodes += [helper.make_node("MatMul", [x, w], [f"m{i}"], name=f"matmul{i}"),
                  helper.make_node("Add", [f"m{i}", b], [f"a{i}"], name=f"add{i}"),
                  helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}")]
        x = f"r{i}"
    if data:
        data.close()
    graph = helper.make_graph(
        nodes, "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", width])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", width])],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


outdir = sys.argv[1] if len(sys.argv) > 1 else "bench/out"
os.makedirs(os.path.join(outdir, "big_external"), exist_ok=True)
# 1 GiB: 64 layers of 2048x2048 float32 (16 MiB each)
big = chain(2048, 64, "weights.bin", os.path.join(outdir, "big_external"))
onnx.save(big, os.path.join(outdir, "big_external", "model.onnx"))
# ~100 MiB inline: 25 layers of 1024x1024 float32 (4 MiB each)
small = chain(1024, 25)
onnx.save(small, os.path.join(outdir, "inline_100m.onnx"))
