"""make_fused.py OUT - a transformer-style block whose elementwise chains
the JIT fuses (exec_fusion.c) around four float32 products it hands to
BLAS: MatMul + bias, GELU written out as Div/Erf/Add/Mul/Mul, MatMul +
bias + residual, a layer norm written out (ReduceMean, Sub, Mul, Add,
Sqrt, Div, Mul, Add), then Reshape/Transpose into two heads, a batched
4-D MatMul, a scaled Softmax and a second batched MatMul. Writes
fused.onnx, x.npy and the outputs NumPy computes (y0.npy: the layer
norm, y1.npy: the attention)."""
import math
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

out = sys.argv[1]
rng = np.random.default_rng(11)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


x = rand(1, 12, 16)
w1, b1, w2, b2 = rand(16, 32, scale=0.25), rand(32), rand(32, 16, scale=0.25), rand(16)
gamma, beta = rand(16), rand(16)
consts = {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "gamma": gamma, "beta": beta,
          "sqrt2": np.array(math.sqrt(2), np.float32), "half": np.array(0.5, np.float32),
          "one": np.array(1, np.float32), "eps": np.array(1e-5, np.float32),
          "scale": np.array(0.35, np.float32), "heads": np.array([1, 12, 2, 8], np.int64),
          "back": np.array([1, 12, 16], np.int64)}
n = helper.make_node
nodes = [
    n("MatMul", ["x", "w1"], ["h0"]), n("Add", ["h0", "b1"], ["h"]),
    n("Div", ["h", "sqrt2"], ["g0"]), n("Erf", ["g0"], ["g1"]), n("Add", ["g1", "one"], ["g2"]),
    n("Mul", ["h", "g2"], ["g3"]), n("Mul", ["g3", "half"], ["g"]),
    n("MatMul", ["g", "w2"], ["o0"]), n("Add", ["o0", "b2"], ["o1"]), n("Add", ["o1", "x"], ["o"]),
    n("ReduceMean", ["o"], ["m"], axes=[-1]), n("Sub", ["o", "m"], ["d"]), n("Mul", ["d", "d"], ["d2"]),
    n("ReduceMean", ["d2"], ["v"], axes=[-1]), n("Add", ["v", "eps"], ["v1"]), n("Sqrt", ["v1"], ["s"]),
    n("Div", ["d", "s"], ["z"]), n("Mul", ["z", "gamma"], ["z1"]), n("Add", ["z1", "beta"], ["y0"]),
    n("Reshape", ["y0", "heads"], ["r"]), n("Transpose", ["r"], ["q"], perm=[0, 2, 1, 3]),
    n("Transpose", ["q"], ["k"], perm=[0, 1, 3, 2]), n("MatMul", ["q", "k"], ["a0"]),
    n("Mul", ["a0", "scale"], ["a1"]), n("Softmax", ["a1"], ["p"], axis=-1), n("MatMul", ["p", "q"], ["c"]),
    n("Transpose", ["c"], ["c1"], perm=[0, 2, 1, 3]), n("Reshape", ["c1", "back"], ["y1"]),
]
graph = helper.make_graph(nodes, "fused", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 16])],
                          [helper.make_tensor_value_info("y0", TensorProto.FLOAT, [1, 12, 16]),
                           helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 12, 16])],
                          [numpy_helper.from_array(v, k) for k, v in consts.items()])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), f"{out}/fused.onnx")
np.save(f"{out}/x.npy", x)

erf = np.vectorize(math.erf)
X = x.astype(np.float64)
h = X @ w1 + b1
g = h * (1 + erf(h / math.sqrt(2))) * 0.5
o = g @ w2 + b2 + X
d = o - o.mean(-1, keepdims=True)
y0 = d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-5) * gamma + beta
q = y0.reshape(1, 12, 2, 8).transpose(0, 2, 1, 3)
a = q @ q.transpose(0, 1, 3, 2) * 0.35
p = np.exp(a - a.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
y1 = (p @ q).transpose(0, 2, 1, 3).reshape(1, 12, 16)
np.save(f"{out}/y0.npy", y0.astype(np.float32))
np.save(f"{out}/y1.npy", y1.astype(np.float32))
