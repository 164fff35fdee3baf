#!/usr/bin/python3
"""Writes the inputs of the TOSA lit tests (tests/lit/tosa/*.test): small
static-shape ONNX models and .npy inputs; prints the expected results,
computed with numpy, that the tests check. Run from tests/lit/tosa/inputs
with Debian's python3-onnx:
    /usr/bin/python3 make_tosa_inputs.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../linalg/inputs"))
from lit_models import V, init, model, npy  # noqa: E402

F, I, B, I8, U8 = T.FLOAT, T.INT64, T.BOOL, T.INT8, T.UINT8


def show(what, a):
    print(what, a.dtype, list(a.shape), " ".join(f"{v:g}" for v in a.ravel()))


# Broadcasting across ranks: [2,3] + [3] and a uint8 comparison.
model("tosa_bcast", [h.make_node("Add", ["a", "b"], ["y"]),
                     h.make_node("Greater", ["u", "v"], ["g"])],
      [V("a", F, [2, 3]), V("b", F, [3]), V("u", U8, [3]), V("v", U8, [3])],
      [V("y", F, [2, 3]), V("g", B, [3])])
a = np.arange(6, dtype=np.float32).reshape(2, 3)
b = np.array([10, 20, 30], np.float32)
u = np.array([200, 3, 128], np.uint8)
v = np.array([100, 250, 128], np.uint8)
for name, arr in (("a23", a), ("b3", b), ("u3a", u), ("u3b", v)):
    npy(name, arr)
show("BCAST y:", a + b)
show("BCAST g:", u > v)

# An NCHW convolution with constant weights and pads, then Relu and a
# MaxPool (ceil mode): NHWC transposes around conv2d, weights laid out
# OHWI at import.
w = np.arange(2 * 1 * 3 * 3, dtype=np.float32).reshape(2, 1, 3, 3) / 8 - 1
bias = np.array([0.5, -0.25], np.float32)
model("tosa_conv", [h.make_node("Conv", ["x", "w", "bias"], ["c"], pads=[1, 1, 1, 1]),
                    h.make_node("Relu", ["c"], ["r"]),
                    h.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)],
      [V("x", F, [1, 1, 3, 3])], [V("y", F, [1, 2, 2, 2])], [init("w", w), init("bias", bias)])
x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3) - 4
npy("x1133", x)
xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
conv = np.zeros((1, 2, 3, 3), np.float32)
for o in range(2):
    for i in range(3):
        for j in range(3):
            conv[0, o, i, j] = (xp[0, 0, i:i + 3, j:j + 3] * w[o, 0]).sum() + bias[o]
relu = np.maximum(conv, 0)
pool = np.full((1, 2, 2, 2), -np.inf, np.float32)
for i in range(2):
    for j in range(2):
        pool[0, :, i, j] = relu[0, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max(axis=(1, 2))
show("CONV y:", pool)

# Batched MatMul [2,2,3] x [3,2] and a ReduceMean + Softmax over the last axis.
m = np.array([[1, 0], [0, 1], [1, 1]], np.float32)
model("tosa_matmul", [h.make_node("MatMul", ["x", "m"], ["p"]),
                      h.make_node("Softmax", ["p"], ["s"], axis=-1),
                      h.make_node("ReduceMean", ["p", "axes"], ["r"], keepdims=0)],
      [V("x", F, [2, 2, 3])], [V("s", F, [2, 2, 2]), V("r", F, [2, 2])],
      [init("m", m), init("axes", np.array([-1], np.int64))])
x = np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 4
npy("x223", x)
p = x @ m
e = np.exp(p - p.max(-1, keepdims=True))
show("MATMUL s:", e / e.sum(-1, keepdims=True))
show("MATMUL r:", p.mean(-1))

# If with a runtime condition whose branches read outer values (isolated
# regions: the values become operands), and a Loop carrying a tensor.
then_g = h.make_graph([h.make_node("Mul", ["x", "k"], ["t"])], "then", [], [V("t", F, [3])])
else_g = h.make_graph([h.make_node("Sub", ["x", "k"], ["e"])], "else", [], [V("e", F, [3])])
body = h.make_graph([h.make_node("Add", ["acc", "x"], ["acc2"]),
                     h.make_node("Identity", ["c"], ["c2"])],
                    "body", [V("i", I, []), V("c", B, []), V("acc", F, [3])],
                    [V("c2", B, []), V("acc2", F, [3])])
model("tosa_control", [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
                       h.make_node("Loop", ["n", "", "x"], ["z"], body=body)],
      [V("c", B, []), V("x", F, [3]), V("n", I, [])], [V("y", F, [3]), V("z", F, [3])],
      [init("k", np.array([2, 3, 4], np.float32))])
x3 = np.array([1, 2, 3], np.float32)
npy("x3", x3)
npy("t", np.array(True))
npy("f", np.array(False))
npy("n4", np.array(4, np.int64))
show("IF true:", x3 * [2, 3, 4])
show("IF false:", x3 - [2, 3, 4])
show("LOOP 4:", x3 * 5)

# Gather of rows with negative indices, then a strided Slice.
model("tosa_gather", [h.make_node("Gather", ["d", "idx"], ["g"], axis=0),
                      h.make_node("Slice", ["g", "st", "en", "ax", "sp"], ["y"])],
      [V("d", F, [4, 3])], [V("y", F, [3, 2])],
      [init("idx", np.array([3, -4, 1], np.int64)), init("st", np.array([0], np.int64)),
       init("en", np.array([3], np.int64)), init("ax", np.array([1], np.int64)),
       init("sp", np.array([2], np.int64))])
d = np.arange(12, dtype=np.float32).reshape(4, 3)
npy("d43", d)
show("GATHER y:", d[[3, 0, 1]][:, 0:3:2])

# int64 data: valid TOSA 1.1.draft (int64 extension), not TOSA 1.0.
model("tosa_int64", [h.make_node("Add", ["a", "a"], ["s"], name="Add"),
                     h.make_node("Mul", ["s", "a"], ["y"], name="Mul")],
      [V("a", I, [2])], [V("y", I, [2])])
a2 = np.array([5, -7], np.int64)
npy("i2", a2)
show("INT64 y:", (a2 + a2) * a2)

# A QDQ-quantized CNN as a quantizer exports it: Q/DQ pairs around a Conv
# (int8 weights per output channel, int32 bias), Relu, MaxPool and a
# MatMul head. On the tosa target the Conv and MatMul become integer TOSA;
# the test checks the outputs against the float QDQ computation (the
# linalg target) to one quantization step.
rng = np.random.default_rng(7)
xs, ys, hs = np.float32(0.05), np.float32(0.1), np.float32(0.2)
wq = rng.integers(-100, 100, size=(4, 2, 3, 3)).astype(np.int8)
ws = (rng.random(4).astype(np.float32) * 0.01 + 0.005).astype(np.float32)
bq = rng.integers(-500, 500, size=4).astype(np.int32)
mq = rng.integers(-100, 100, size=(16, 3)).astype(np.int8)
ms = np.float32(0.02)
u8, i8 = np.uint8, np.int8
model("tosa_qdq_cnn", [
    h.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
    h.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
    h.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
    h.make_node("DequantizeLinear", ["bq", "bs"], ["bd"], axis=0),
    h.make_node("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1]),
    h.make_node("Relu", ["c"], ["r"]),
    h.make_node("QuantizeLinear", ["r", "ys", "yz"], ["rq"]),
    h.make_node("DequantizeLinear", ["rq", "ys", "yz"], ["rd"]),
    h.make_node("MaxPool", ["rd"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
    h.make_node("QuantizeLinear", ["p", "ys", "yz"], ["pq"]),
    h.make_node("DequantizeLinear", ["pq", "ys", "yz"], ["pd"]),
    h.make_node("Reshape", ["pd", "shape"], ["f"]),
    h.make_node("DequantizeLinear", ["mq", "ms"], ["md"]),
    h.make_node("MatMul", ["f", "md"], ["m"]),
    h.make_node("QuantizeLinear", ["m", "hs", "hz"], ["mqo"]),
    h.make_node("DequantizeLinear", ["mqo", "hs", "hz"], ["y"])],
    [V("x", F, [1, 2, 4, 4])], [V("y", F, [1, 3])],
    [init("xs", np.array(xs)), init("xz", np.array(128, u8)), init("wq", wq), init("ws", ws),
     init("wz", np.zeros(4, i8)), init("bq", bq), init("bs", (xs * ws).astype(np.float32)),
     init("ys", np.array(ys)), init("yz", np.array(0, u8)), init("shape", np.array([1, 16], np.int64)),
     init("mq", mq), init("ms", np.array(ms)), init("hs", np.array(hs)), init("hz", np.array(128, u8))])
npy("xq1244", (rng.random((1, 2, 4, 4)).astype(np.float32) * 6 - 3))

# float8 (the fp8e4m3 extension): Cast to FLOAT8E4M3FN saturates (a clamp
# to +-448 first) and rounds to nearest even; the way back is exact.
model("tosa_fp8", [h.make_node("Cast", ["x"], ["q"], to=17),  # FLOAT8E4M3FN (newer than this onnx)
                   h.make_node("Cast", ["q"], ["y"], to=F)],
      [V("x", F, [4])], [V("y", F, [4])])
npy("f8in", np.array([1.3, -300.7, 1000, 0.01], np.float32))
print("FP8 y: float32 [4] 1.25 -288 448 0.00976562 (by hand: e4m3fn steps 0.125 near 1, 32 near 300, "
      "max 448, subnormal step 2^-9)")
