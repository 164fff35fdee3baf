#!/usr/bin/env python3
"""Two models whose leading dims are left dynamic, as PyTorch exports them
with dynamic_axes, for `compile` (which keeps them dynamic):

  cnn_dyn.onnx  [N, 3, H, W]: Conv + Relu, MaxPool, Conv added to the
                pool's output then Relu, GlobalAveragePool, Flatten, Gemm
  enc_dyn.onnx  [B, S, 16]: a projection MatMul, heads split by Reshape and
                Transpose, Q K^T and P V as batched MatMuls, Softmax

  conv1d_dyn.onnx [B, 2, T]: two 1-D convolutions (strided and padded,
                then grouped) with a Relu between

  convt_dyn.onnx [B, 4, 5, 6]: a 2x2 stride-2 ConvTranspose (a U-Net
                decoder's upsampling) with bias

with inputs of two batch sizes (and two image sizes, two sequence lengths)
and NumPy's outputs for each. Writes them to DIR.

  make_dynamic_batch.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from numpy_conv import conv

rng = np.random.default_rng(5)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def cnn(out):
    w1, b1, w2, b2 = rand(8, 3, 3, 3, scale=0.3), rand(8), rand(8, 8, 3, 3, scale=0.2), rand(8)
    wg, bg = rand(5, 8), rand(5)
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"),
                                                        (wg, "wg"), (bg, "bg"))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "p"], ["s"]),
        helper.make_node("Relu", ["s"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"]),
        helper.make_node("Flatten", ["g"], ["f"]),
        helper.make_node("Gemm", ["f", "wg", "bg"], ["y"], transB=1),
    ]
    graph = helper.make_graph(nodes, "cnn_dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "cnn_dyn.onnx"))
    for n, h, w in ((3, 12, 12), (1, 10, 14)):
        x = rand(n, 3, h, w)
        r1 = np.maximum(conv(x, w1, b1, pads=(1, 1, 1, 1)), 0)
        p = r1.reshape(n, 8, h // 2, 2, w // 2, 2).max(axis=(3, 5))
        r2 = np.maximum(conv(p.astype(np.float32), w2, b2, pads=(1, 1, 1, 1)) + p, 0)
        y = r2.mean(axis=(2, 3)) @ wg.T.astype(np.float64) + bg
        np.save(os.path.join(out, f"cnn_x{n}.npy"), x)
        np.save(os.path.join(out, f"cnn_y{n}.npy"), y.astype(np.float32))


def enc(out):
    heads, d = 2, 8
    wp = rand(16, 16, scale=0.3)
    inits = [numpy_helper.from_array(wp, "wp"),
             numpy_helper.from_array(np.array([0, 0, heads, d], np.int64), "split"),
             numpy_helper.from_array(np.array([0, 0, 16], np.int64), "merge")]
    nodes = [
        helper.make_node("MatMul", ["x", "wp"], ["q"]),
        helper.make_node("Reshape", ["q", "split"], ["qs"]),
        helper.make_node("Transpose", ["qs"], ["qh"], perm=[0, 2, 1, 3]),
        helper.make_node("Transpose", ["qh"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["qh", "kt"], ["sc"]),
        helper.make_node("Softmax", ["sc"], ["pr"], axis=-1),
        helper.make_node("MatMul", ["pr", "qh"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ot", "merge"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "enc_dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S", 16])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "enc_dyn.onnx"))
    for b, s in ((3, 7), (1, 12)):
        x = rand(b, s, 16)
        q = (x.astype(np.float64) @ wp).reshape(b, s, heads, d).transpose(0, 2, 1, 3)
        sc = q @ q.transpose(0, 1, 3, 2)
        pr = np.exp(sc - sc.max(axis=-1, keepdims=True))
        pr /= pr.sum(axis=-1, keepdims=True)
        y = (pr @ q).transpose(0, 2, 1, 3).reshape(b, s, 16)
        np.save(os.path.join(out, f"enc_x{b}.npy"), x)
        np.save(os.path.join(out, f"enc_y{b}.npy"), y.astype(np.float32))


def conv1d(out):
    w1, b1, w2 = rand(4, 2, 3, scale=0.5), rand(4), rand(6, 2, 2, scale=0.5)
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"))]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1], strides=[2]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2"], ["y"], group=2),
    ]
    graph = helper.make_graph(nodes, "conv1d_dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 2, "T"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 6, "T2"])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "conv1d_dyn.onnx"))
    for b, t in ((3, 40), (1, 27)):
        x = rand(b, 2, t)
        r1 = np.maximum(conv(x[:, :, None], w1[:, :, None], b1, strides=(1, 2), pads=(0, 1, 0, 1)), 0)
        y = conv(r1.astype(np.float32), w2[:, :, None], group=2)[:, :, 0]
        np.save(os.path.join(out, f"conv1d_x{b}.npy"), x)
        np.save(os.path.join(out, f"conv1d_y{b}.npy"), y.astype(np.float32))


def convt(out):
    w, b = rand(4, 3, 2, 2, scale=0.5), rand(3)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2])]
    graph = helper.make_graph(nodes, "convt_dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 4, 5, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 3, 10, 12])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "convt_dyn.onnx"))
    for n in (3, 1):
        x = rand(n, 4, 5, 6)
        # kernel = stride: each input pixel writes its own 2x2 block
        y = np.einsum("ncij,cfuv->nfiujv", x.astype(np.float64), w).reshape(n, 3, 10, 12) + b.reshape(1, 3, 1, 1)
        np.save(os.path.join(out, f"convt_x{n}.npy"), x)
        np.save(os.path.join(out, f"convt_y{n}.npy"), y.astype(np.float32))


if __name__ == "__main__":
    cnn(sys.argv[1])
    enc(sys.argv[1])
    conv1d(sys.argv[1])
    convt(sys.argv[1])
