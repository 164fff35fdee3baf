#!/usr/bin/env python3
"""Matrix products in each form the runtime's kernels take, with NumPy's
outputs: a MatMul with a weight B after a zero fill (oneDNN's packed
matmul, overwriting C: no fill, no sum), the same with K = 0 (C must come
out zero without a fill), a Gemm whose C starts as its bias (C added to),
and attention's batched MatMuls of two activations, Q K^T and P V, one of
them on a transposed view (oneDNN's batched matmul, a primitive per
shape). Writes products.onnx, x.npy, e.npy and products_ref_<i>.npy to DIR.

  make_products.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

T, D, HEADS, HD = 40, 48, 4, 12


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(11)
    x = rng.standard_normal((T, D)).astype(np.float32)
    e = np.zeros((T, 0), np.float32)
    w = rng.standard_normal((D, 3 * D)).astype(np.float32)
    w0 = np.zeros((0, 5), np.float32)
    g = rng.standard_normal((D, D)).astype(np.float32)
    bias = rng.standard_normal((D,)).astype(np.float32)
    f = helper.make_tensor_value_info
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["qkv"]),
        helper.make_node("Split", ["qkv"], ["q", "k", "v"], axis=1),
        helper.make_node("Reshape", ["q", "heads"], ["q3"]),
        helper.make_node("Reshape", ["k", "heads"], ["k3"]),
        helper.make_node("Reshape", ["v", "heads"], ["v3"]),
        helper.make_node("Transpose", ["q3"], ["qh"], perm=[1, 0, 2]),
        helper.make_node("Transpose", ["k3"], ["kt"], perm=[1, 2, 0]),
        helper.make_node("Transpose", ["v3"], ["vh"], perm=[1, 0, 2]),
        helper.make_node("MatMul", ["qh", "kt"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("MatMul", ["p", "vh"], ["o"]),
        helper.make_node("Transpose", ["o"], ["ot"], perm=[1, 0, 2]),
        helper.make_node("Reshape", ["ot", "flat"], ["of"]),
        helper.make_node("Gemm", ["of", "g", "bias"], ["y"]),
        helper.make_node("MatMul", ["e", "w0"], ["z"]),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(g, "g"),
             numpy_helper.from_array(bias, "bias"),
             numpy_helper.from_array(np.array([T, HEADS, HD], np.int64), "heads"),
             numpy_helper.from_array(np.array([T, D], np.int64), "flat")]
    graph = helper.make_graph(nodes, "products", [f("x", TensorProto.FLOAT, [T, D]), f("e", TensorProto.FLOAT, [T, 0])],
                              [f("y", TensorProto.FLOAT, [T, D]), f("s", TensorProto.FLOAT, [HEADS, T, T]),
                               f("z", TensorProto.FLOAT, [T, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "products.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "e.npy"), e)
    q, k, v = np.split(x @ w, 3, axis=1)
    qh, kh, vh = (t.reshape(T, HEADS, HD).transpose(1, 0, 2) for t in (q, k, v))
    s = qh @ kh.transpose(0, 2, 1)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = (p @ vh).transpose(1, 0, 2).reshape(T, D)
    for i, ref in enumerate((o @ g + bias, s, np.zeros((T, 5), np.float32))):
        np.save(os.path.join(out, "products_ref_%d.npy" % i), ref.astype(np.float32))


if __name__ == "__main__":
    main()
