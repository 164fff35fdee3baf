#!/usr/bin/env python3
"""Writes the run benchmark's models and inputs (see run_bench.sh), shaped the
way a PyTorch export (opset 17, eval mode, BatchNormalization kept) writes them:

  resnet_small.onnx    input [1,3,64,64]: Conv7x7/2-BN-Relu-MaxPool stem, four
                       stages of one basic block each (32, 64, 128, 256 channels;
                       stride 2 with a Conv1x1-BN shortcut from stage 2 on),
                       GlobalAveragePool, Flatten, Gemm to 10 classes
  encoder_small.onnx   input [1,128,256]: two post-LN encoder layers, 4 heads:
                       MatMul+Add projections, Reshape/Transpose to heads,
                       MatMul, Div by sqrt(64), Softmax, LayerNormalization,
                       FFN 1024 with Gelu as Erf (what opset 17 exports), residuals
  resnet_small_x.npy, encoder_small_x.npy   the inputs

Random weights from a fixed seed. Usage: make_run_models.py OUTDIR
Needs only Debian's python3-onnx and numpy (run it with /usr/bin/python3).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


class Builder:
    """Collects nodes and initializers; names values like an exporter would."""

    def __init__(self, rng):
        self.rng, self.nodes, self.inits, self.count = rng, [], [], 0

    def fresh(self, stem):
        self.count += 1
        return f"/{stem}_{self.count}"

    def const(self, stem, array):
        name = self.fresh(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, stem=None, out=None, **attrs):
        out = out or self.fresh(stem or op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out + "/" + op, **attrs))
        return out

    def normal(self, shape, std):
        return (self.rng.standard_normal(shape) * std).astype(np.float32)


# ---- ResNet-style CNN ---------------------------------------------------------

def conv_bn(b, x, cin, cout, k, stride, relu):
    w = b.const("conv.weight", b.normal((cout, cin, k, k), np.sqrt(2.0 / (cin * k * k))))
    y = b.node("Conv", [x, w], "conv", kernel_shape=[k, k], strides=[stride, stride],
               pads=[k // 2] * 4, dilations=[1, 1], group=1)
    scale = b.const("bn.weight", (1.0 + 0.1 * b.rng.standard_normal(cout)).astype(np.float32))
    bias = b.const("bn.bias", b.normal((cout,), 0.1))
    mean = b.const("bn.running_mean", b.normal((cout,), 0.1))
    var = b.const("bn.running_var", b.rng.uniform(0.5, 1.5, cout).astype(np.float32))
    y = b.node("BatchNormalization", [y, scale, bias, mean, var], "bn", epsilon=1e-5, momentum=0.9)
    return b.node("Relu", [y]) if relu else y


def basic_block(b, x, cin, cout, stride):
    y = conv_bn(b, x, cin, cout, 3, stride, relu=True)
    y = conv_bn(b, y, cout, cout, 3, 1, relu=False)
    shortcut = x if stride == 1 and cin == cout else conv_bn(b, x, cin, cout, 1, stride, relu=False)
    return b.node("Relu", [b.node("Add", [y, shortcut])])


def resnet(rng):
    b = Builder(rng)
    x = conv_bn(b, "input", 3, 32, 7, 2, relu=True)
    x = b.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 32
    for cout, stride in ((32, 1), (64, 2), (128, 2), (256, 2)):
        x = basic_block(b, x, cin, cout, stride)
        cin = cout
    x = b.node("GlobalAveragePool", [x], "avgpool")
    x = b.node("Flatten", [x], "flatten", axis=1)
    w = b.const("fc.weight", b.normal((10, cin), np.sqrt(1.0 / cin)))
    bias = b.const("fc.bias", b.normal((10,), 0.1))
    y = b.node("Gemm", [x, w, bias], "fc", out="output", alpha=1.0, beta=1.0, transB=1)
    graph = helper.make_graph(
        b.nodes, "resnet_small",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, [1, 10])], initializer=b.inits)
    return graph, rng.standard_normal((1, 3, 64, 64)).astype(np.float32)


# ---- transformer encoder ------------------------------------------------------

SEQ, HIDDEN, HEADS, FFN, LAYERS = 128, 256, 4, 1024, 2


def linear(b, x, cin, cout, stem):
    w = b.const(stem + ".weight", b.normal((cin, cout), np.sqrt(1.0 / cin)))  # already transposed
    bias = b.const(stem + ".bias", b.normal((cout,), 0.02))
    return b.node("Add", [b.node("MatMul", [x, w], stem + "/MatMul"), bias], stem + "/Add")


def layer_norm(b, x, stem, out=None):
    scale = b.const(stem + ".weight", (1.0 + 0.1 * b.rng.standard_normal(HIDDEN)).astype(np.float32))
    bias = b.const(stem + ".bias", b.normal((HIDDEN,), 0.02))
    return b.node("LayerNormalization", [x, scale, bias], stem, out, axis=-1, epsilon=1e-5)


def encoder_layer(b, x, i, out=None):
    d = HIDDEN // HEADS
    heads_shape = b.const("shape", np.array([1, SEQ, HEADS, d], dtype=np.int64))
    def heads(stem, perm):
        y = b.node("Reshape", [linear(b, x, HIDDEN, HIDDEN, f"layer{i}.attn.{stem}"), heads_shape])
        return b.node("Transpose", [y], perm=perm)
    q = heads("q", [0, 2, 1, 3])
    k = heads("k", [0, 2, 3, 1])  # K^T directly, as torch exports k.transpose(-2, -1)
    v = heads("v", [0, 2, 1, 3])
    scores = b.node("Div", [b.node("MatMul", [q, k]), b.const("scale", np.array(np.sqrt(d), dtype=np.float32))])
    probs = b.node("Softmax", [scores], axis=-1)
    ctx = b.node("Transpose", [b.node("MatMul", [probs, v])], perm=[0, 2, 1, 3])
    ctx = b.node("Reshape", [ctx, b.const("shape", np.array([1, SEQ, HIDDEN], dtype=np.int64))])
    x = layer_norm(b, b.node("Add", [x, linear(b, ctx, HIDDEN, HIDDEN, f"layer{i}.attn.out")]), f"layer{i}.ln1")
    h = linear(b, x, HIDDEN, FFN, f"layer{i}.ffn.up")
    # Gelu(h) = h * 0.5 * (1 + erf(h / sqrt(2))), the opset-17 export of nn.GELU()
    erf = b.node("Erf", [b.node("Div", [h, b.const("sqrt2", np.array(1.4142135, dtype=np.float32))])])
    g = b.node("Mul", [b.node("Mul", [h, b.node("Add", [erf, b.const("one", np.array(1.0, dtype=np.float32))])]),
                       b.const("half", np.array(0.5, dtype=np.float32))])
    h = linear(b, g, FFN, HIDDEN, f"layer{i}.ffn.down")
    return layer_norm(b, b.node("Add", [x, h]), f"layer{i}.ln2", out)


def encoder(rng):
    b = Builder(rng)
    x = "input"
    for i in range(LAYERS):
        x = encoder_layer(b, x, i, "output" if i == LAYERS - 1 else None)
    graph = helper.make_graph(
        b.nodes, "encoder_small",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, SEQ, HIDDEN])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, SEQ, HIDDEN])], initializer=b.inits)
    return graph, rng.standard_normal((1, SEQ, HIDDEN)).astype(np.float32)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in (("resnet_small", resnet), ("encoder_small", encoder)):
        graph, x = make(np.random.default_rng(20240601))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="onnx2mlir bench")
        model.ir_version = 8
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, os.path.join(out, name + ".onnx"))
        np.save(os.path.join(out, name + "_x.npy"), x)
        print(f"wrote {out}/{name}.onnx ({len(graph.node)} nodes) and {name}_x.npy {list(x.shape)}")


if __name__ == "__main__":
    main()
