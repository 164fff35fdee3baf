#!/usr/bin/python3
"""within_one_step.py MODEL A.npy B.npy - exits 0 when A and B have one
shape and differ by at most one step of the quantization scale of MODEL's
output (the scale of the DequantizeLinear that produces graph output 0);
prints the largest difference in steps."""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

model = onnx.load(sys.argv[1])
out = model.graph.output[0].name
dq = next(n for n in model.graph.node if n.output[0] == out and n.op_type == "DequantizeLinear")
consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
for n in model.graph.node:  # PyTorch's converted models keep scales in Constant nodes
    if n.op_type == "Constant" and n.attribute and n.attribute[0].name == "value":
        consts[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
scale = float(consts[dq.input[1]].reshape(-1)[0])
a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
steps = float(np.max(np.abs(a - b))) / scale if a.shape == b.shape else float("inf")
print("scale %g, largest difference %.3f steps" % (scale, steps))
sys.exit(0 if steps <= 1.0001 else 1)
