#!/usr/bin/env python3
"""Writes models made of repeated layers (the structure `run` compiles
once, exec_repeats.c) and their NumPy outputs:

  layers.onnx        six identical post-LN encoder layers, weights of their
                     own: single-head attention (MatMul+Add projections,
                     Softmax), residual, LayerNormalization, FFN 128 with GELU
                     written as Erf, residual, LayerNormalization
  layers_eps.onnx    the same with layer 4's second LayerNormalization at
                     epsilon 0.5 (an attribute differs)
  layers_ffn.onnx    the same with layer 4's FFN 96 wide (a shape differs)
  x.npy              the input [1, 32, 64]
  <model>_ref.npy    NumPy's output of each

Usage: make_layers.py OUTDIR   (with /usr/bin/python3)
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEQ, HIDDEN, LAYERS = 32, 64, 6


def erf(x):
    return np.vectorize(math.erf)(x.astype(np.float64)).astype(np.float32)


def layer_norm(x, scale, bias, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class Model:
    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.n = rng, [], [], 0

    def name(self, stem):
        self.n += 1
        return f"{stem}_{self.n}"

    def const(self, array):
        name = self.name("w")
        self.inits.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), name))
        return name

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def linear(self, x, cin, cout):
        w = self.rng.normal(0, 1 / np.sqrt(cin), (cin, cout)).astype(np.float32)
        b = self.rng.normal(0, 0.02, cout).astype(np.float32)
        y = self.node("Add", [self.node("MatMul", [x, self.const(w)]), self.const(b)])
        return y, lambda v: v @ w + b

    def norm(self, x, eps):
        s = (1 + 0.1 * self.rng.standard_normal(HIDDEN)).astype(np.float32)
        b = self.rng.normal(0, 0.02, HIDDEN).astype(np.float32)
        y = self.node("LayerNormalization", [x, self.const(s), self.const(b)], axis=-1, epsilon=eps)
        return y, lambda v: layer_norm(v, s, b, eps)

    def layer(self, x, ffn, eps):
        q, fq = self.linear(x, HIDDEN, HIDDEN)
        k, fk = self.linear(x, HIDDEN, HIDDEN)
        v, fv = self.linear(x, HIDDEN, HIDDEN)
        kt = self.node("Transpose", [k], perm=[0, 2, 1])
        scale = self.const(np.float32(np.sqrt(HIDDEN)))
        p = self.node("Softmax", [self.node("Div", [self.node("MatMul", [q, kt]), scale])], axis=-1)
        o, fo = self.linear(self.node("MatMul", [p, v]), HIDDEN, HIDDEN)
        h, f1 = self.norm(self.node("Add", [x, o]), 1e-5)
        u, fu = self.linear(h, HIDDEN, ffn)
        sqrt2, one, half = self.const(np.float32(np.sqrt(2))), self.const(np.float32(1)), self.const(np.float32(0.5))
        erf_u = self.node("Erf", [self.node("Div", [u, sqrt2])])
        g = self.node("Mul", [self.node("Mul", [u, self.node("Add", [erf_u, one])]), half])
        d, fd = self.linear(g, ffn, HIDDEN)
        y, f2 = self.norm(self.node("Add", [h, d]), eps)

        def ref(xv):
            a = softmax(fq(xv) @ fk(xv).transpose(0, 2, 1) / np.float32(np.sqrt(HIDDEN))) @ fv(xv)
            hv = f1(xv + fo(a))
            uv = fu(hv)
            return f2(hv + fd(uv * (erf(uv / np.float32(np.sqrt(2))) + 1) * 0.5))

        return y, ref


def build(out, name, x, odd_layer):
    m = Model(np.random.default_rng(7))
    v, refs = "x", []
    for i in range(LAYERS):
        ffn, eps = odd_layer if i == 3 else (128, 1e-5)
        v, ref = m.layer(v, ffn, eps)
        refs.append(ref)
    m.nodes.append(helper.make_node("Identity", [v], ["y"]))
    graph = helper.make_graph(m.nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, SEQ, HIDDEN])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, SEQ, HIDDEN])],
                              initializer=m.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(out, name + ".onnx"))
    y = x
    for ref in refs:
        y = ref(y)
    np.save(os.path.join(out, name + "_ref.npy"), y.astype(np.float32))


def main():
    out = sys.argv[1]
    x = np.random.default_rng(3).standard_normal((1, SEQ, HIDDEN)).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    build(out, "layers", x, (128, 1e-5))
    build(out, "layers_eps", x, (128, 0.5))
    build(out, "layers_ffn", x, (96, 1e-5))


if __name__ == "__main__":
    main()
