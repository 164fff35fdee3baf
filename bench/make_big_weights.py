#!/usr/bin/env python3
"""Writes the weight-size benchmark's models (see big_weights.sh): one graph,
y = ((x W1) W2) W3 with x [1, N], twice:

  big/model.onnx     N = 16384: three float32 16384x16384 weights, 3 GiB, in
                     one external data file big/weights.bin
  small/model.onnx   N = 256: the same graph with 768 KiB of weights, inline
  big_x.npy, small_x.npy   the inputs

The weights are written a row block at a time (the 3 GiB never sit in
memory). Usage: make_big_weights.py OUTDIR [N] (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def write(outdir, name, n, external):
    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(0)
    inits, nodes, offset = [], [], 0
    data = open(os.path.join(d, "weights.bin"), "wb") if external else None
    for i in range(3):
        wname = f"w{i}"
        if external:
            t = TensorProto(name=wname, data_type=TensorProto.FLOAT, dims=[n, n])
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", "weights.bin"), ("offset", str(offset)), ("length", str(n * n * 4))):
                e = t.external_data.add()
                e.key, e.value = k, v
            for r in range(0, n, 1024):  # scaled so that activations stay near 1
                data.write((rng.standard_normal((min(1024, n - r), n), dtype=np.float32) / np.sqrt(n)).tobytes())
            offset += n * n * 4
        else:
            t = numpy_helper.from_array(rng.standard_normal((n, n), dtype=np.float32) / np.sqrt(n), wname)
        inits.append(t)
        nodes.append(helper.make_node("MatMul", ["x" if i == 0 else f"h{i}", wname], [f"h{i + 1}" if i < 2 else "y"]))
    if data:
        data.close()
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(d, "model.onnx"))
    np.save(os.path.join(outdir, f"{name}_x.npy"), rng.standard_normal((1, n), dtype=np.float32))
    print(f"wrote {d}/model.onnx: N = {n}, {3 * n * n * 4 / 2**20:.1f} MiB of weights"
          f"{' in weights.bin' if external else ''}")


out = sys.argv[1] if len(sys.argv) > 1 else "bench/out"
write(out, "big", int(sys.argv[2]) if len(sys.argv) > 2 else 16384, True)
write(out, "small", 256, False)
