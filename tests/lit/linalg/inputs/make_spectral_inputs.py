#!/usr/bin/python3
"""Writes the inputs of spectral.test (DFT, STFT, Col2Im and Det on the
Linalg target): one small ONNX model per case, parameters as constants,
and .npy inputs. Run from tests/lit/linalg/inputs with Debian's
python3-onnx:
    /usr/bin/python3 make_spectral_inputs.py
It prints the expected values of spectral.test, computed with numpy as
ONNX's reference does (onnx/reference/ops/op_dft.py, op_stft.py,
op_col2im.py, op_det.py).
"""
import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

import lit_models
from lit_models import V, init, npy

F, I = T.FLOAT, T.INT64


def model(*args, opset=20, **kw):
    lit_models.model(*args, opset=opset, **kw)


def show(name, a):
    print(name, a.shape, " ".join(f"{v:.6g}" for v in np.asarray(a, np.float32).ravel()))


def i64(v):
    return np.array(v, np.int64)


# forward one-sided DFT of a real signal truncated to dft_length 4 (opset 20:
# axis as an input), over a symbolic batch
model("dft_rfft", [h.make_node("DFT", ["x", "n", "a"], ["y"], onesided=1)],
      [V("x", F, ["N", 6, 1])], [V("y", F, None)], [init("n", i64(4)), init("a", i64(1))])
x = np.array([1, 2, -1, 3, 5, 7], np.float32).reshape(1, 6, 1)
npy("sp_x161", x)
r = np.fft.rfft(x[..., 0], n=4, axis=1)
show("RFFT", np.stack([r.real, r.imag], -1))

# inverse DFT of a complex signal zero-padded to dft_length 5 (opset 17: the
# axis attribute)
model("dft_inverse", [h.make_node("DFT", ["x", "n"], ["y"], inverse=1, axis=1)],
      [V("x", F, [1, 3, 2])], [V("y", F, None)], [init("n", i64(5))], opset=17)
c = np.array([[[1, 0.5], [2, -1], [0, 3]]], np.float32)
npy("sp_c132", c)
r = np.fft.ifft(c[..., 0] + 1j * c[..., 1], n=5, axis=1)
show("INVERSE", np.stack([r.real, r.imag], -1))

# one-sided inverse (irfft): real output of length 2 * (3 - 1)
model("dft_irfft", [h.make_node("DFT", ["x"], ["y"], inverse=1, onesided=1)],
      [V("x", F, [1, 3, 2])], [V("y", F, None)])
r = np.fft.irfft(c[..., 0] + 1j * c[..., 1], n=4, axis=1)
show("IRFFT", r[..., np.newaxis])

# STFT with a Hann window: 3 frames of 4 samples, step 2, one-sided
model("stft", [h.make_node("STFT", ["x", "s", "w", "l"], ["y"])],
      [V("x", F, [1, 8, 1])], [V("y", F, None)],
      [init("s", i64(2)), init("w", (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(4) / 4)).astype(np.float32)),
       init("l", i64(4))], opset=17)
sig = np.array([0, 1, 4, 9, 2, -3, 1, 5], np.float32).reshape(1, 8, 1)
npy("sp_x181", sig)
win = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(4) / 4)).astype(np.float32)
frames = np.stack([sig[0, f * 2:f * 2 + 4, 0] * win for f in range(3)])
r = np.fft.rfft(frames, axis=-1)[np.newaxis]
show("STFT", np.stack([r.real, r.imag], -1))

# Col2Im: a 3x3 image from 2x2 blocks, stride 2, pads 1 (2x2 blocks of columns)
model("col2im", [h.make_node("Col2Im", ["x", "i", "b"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])],
      [V("x", F, ["N", 4, 4])], [V("y", F, None)], [init("i", i64([3, 3])), init("b", i64([2, 2]))],
      opset=18)
cols = np.arange(1, 17, dtype=np.float32).reshape(1, 4, 4)
npy("sp_x144", cols)
img = np.zeros((1, 1, 3, 3), np.float32)
for bi in range(2):
    for bj in range(2):
        for li in range(2):
            for lj in range(2):
                hi, wi = li * 2 - 1 + bi, lj * 2 - 1 + bj
                if 0 <= hi < 3 and 0 <= wi < 3:
                    img[0, 0, hi, wi] += cols[0, bi * 2 + bj, li * 2 + lj]
show("COL2IM", img)

# Det of a symbolic batch of 3x3 matrices (the second needs a row swap)
model("det", [h.make_node("Det", ["x"], ["y"])], [V("x", F, ["N", 3, 3])], [V("y", F, None)], opset=11)
m = np.array([[[2, 1, 0], [1, 3, 1], [0, 1, 4]], [[0, 1, 2], [1, 0, 3], [4, -3, 8]]], np.float32)
npy("sp_m233", m)
show("DET", np.linalg.det(m))

# dft_length only known at run time: refused by import
model("dft_runtime_length", [h.make_node("DFT", ["x", "n"], ["y"])],
      [V("x", F, [1, 4, 1]), V("n", I, [])], [V("y", F, None)])
