#!/usr/bin/env python3
"""Writes the com.microsoft contrib-op test cases of tests/contrib: one
folder per case in the ONNX backend-test layout (model.onnx,
test_data_set_0/input_<i>.pb, output_<i>.pb), the expected outputs computed
by onnxruntime (ort_reference.mjs, onnxruntime-node with graph
optimizations off, so its contrib kernels run as written). Developer
tooling; the folders are committed and `onnx2mlir test` runs them.
Usage: /usr/bin/python3 tests/contrib/make_contrib_tests.py [CASE_PREFIX]
(ORT_NODE=path/to/node_modules/onnxruntime-node if bench/ lacks it)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
MS = "com.microsoft"
rng = np.random.default_rng(20261202)
CASES = []


def case(name, nodes, inputs, outputs, inits=(), ms_opset=1, opset=17):
    """inputs: (name, shape) float32 graph inputs fed at random; inits:
    (name, array) initializers; outputs: names (types left to inference)."""
    CASES.append((name, nodes, inputs, outputs, inits, ms_opset, opset))


def arr(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- FusedConv: Conv, then + Z, then the activation -----------------------------------
conv_in = [("x", (1, 2, 5, 5))]
conv_w = [("w", arr(3, 2, 3, 3)), ("b", arr(3))]
for act, params in [("Relu", []), ("Tanh", []), ("Sigmoid", []), ("LeakyRelu", [0.1]),
                    ("Clip", [-0.5, 0.5]), ("HardSigmoid", [0.3, 0.4])]:
    attrs = {"activation": act, "kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    if params:
        attrs["activation_params"] = params
    case("fused_conv_" + act.lower(), [helper.make_node("FusedConv", ["x", "w", "b"], ["y"], domain=MS, **attrs)],
         conv_in, ["y"], conv_w)
case("fused_conv_sum_relu", [helper.make_node("FusedConv", ["x", "w", "b", "z"], ["y"], domain=MS,
                                              activation="Relu", kernel_shape=[3, 3], strides=[2, 2])],
     conv_in + [("z", (1, 3, 2, 2))], ["y"], conv_w)
case("fused_conv_no_bias", [helper.make_node("FusedConv", ["x", "w"], ["y"], domain=MS, activation="Relu",
                                             kernel_shape=[3, 3], group=1, dilations=[2, 2])],
     conv_in, ["y"], conv_w[:1])

# ---- FusedGemm: Gemm, then the activation ----------------------------------------------
for act, extra in [("Relu", {}), ("LeakyRelu", {"activation_alpha": 0.2}), ("Tanh", {}),
                   ("Sigmoid", {}), ("HardSigmoid", {"activation_alpha": 0.3, "activation_beta": 0.6})]:
    case("fused_gemm_" + act.lower(), [helper.make_node("FusedGemm", ["a", "b", "c"], ["y"], domain=MS,
                                                        activation=act, **extra)],
         [("a", (3, 4))], ["y"], [("b", arr(4, 5)), ("c", arr(5))])
case("fused_gemm_trans_alpha_beta", [helper.make_node("FusedGemm", ["a", "b", "c"], ["y"], domain=MS,
                                                      activation="Relu", transA=1, transB=1, alpha=0.5,
                                                      beta=2.0)],
     [("a", (4, 3)), ("b", (5, 4))], ["y"], [("c", arr(3, 5))])

# ---- FusedMatMul: alpha * op(A) @ op(B), batched and broadcast ---------------------------
case("fused_matmul", [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, alpha=0.125)],
     [("a", (2, 3)), ("b", (3, 4))], ["y"])
case("fused_matmul_trans_b", [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, alpha=2.0,
                                               transB=1)],
     [("a", (2, 3)), ("b", (4, 3))], ["y"])
case("fused_matmul_trans_a", [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, transA=1)],
     [("a", (3, 2)), ("b", (3, 4))], ["y"])
case("fused_matmul_batch", [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, transA=1,
                                             transB=1, alpha=0.5)],
     [("a", (2, 5, 3)), ("b", (2, 4, 5))], ["y"])
case("fused_matmul_broadcast", [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS, transB=1)],
     [("a", (2, 2, 3, 4)), ("b", (5, 4))], ["y"])

# ---- the Gelu family ----------------------------------------------------------
case("gelu", [helper.make_node("Gelu", ["x"], ["y"], domain=MS)], [("x", (2, 3, 8))], ["y"])
case("fast_gelu", [helper.make_node("FastGelu", ["x"], ["y"], domain=MS)], [("x", (2, 3, 8))], ["y"])
case("fast_gelu_bias", [helper.make_node("FastGelu", ["x", "bias"], ["y"], domain=MS)], [("x", (2, 3, 8))],
     ["y"], [("bias", arr(8))])
case("bias_gelu", [helper.make_node("BiasGelu", ["x", "bias"], ["y"], domain=MS)], [("x", (2, 3, 8))],
     ["y"], [("bias", arr(8))])
case("quick_gelu", [helper.make_node("QuickGelu", ["x"], ["y"], domain=MS)], [("x", (2, 8))], ["y"])
case("quick_gelu_alpha", [helper.make_node("QuickGelu", ["x"], ["y"], domain=MS, alpha=1.0)],
     [("x", (2, 8))], ["y"])
# (BiasAdd has no CPU kernel in onnxruntime, so no reference here.)

# ---- layer normalizations ------------------------------------------------------------------
ln_x = [("x", (2, 3, 8)), ("skip", (2, 3, 8))]
gamma, beta, bias = ("gamma", arr(8)), ("beta", arr(8)), ("bias", arr(8))
case("skip_layer_norm", [helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta"], ["y"],
                                          domain=MS, epsilon=1e-5)], ln_x, ["y"], [gamma, beta])
case("skip_layer_norm_all_outputs",
     [helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
                       ["y", "mean", "inv_std", "sum"], domain=MS, epsilon=1e-6)],
     ln_x, ["y", "mean", "inv_std", "sum"], [gamma, beta, bias])
case("skip_layer_norm_no_beta", [helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma"], ["y"],
                                                  domain=MS)], ln_x, ["y"], [gamma])
case("skip_simplified_layer_norm",
     [helper.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma", "bias"],
                       ["y", "", "", "sum"], domain=MS, epsilon=1e-6)],
     ln_x, ["y", "sum"], [gamma, bias])
# onnxruntime's LayerNormalization of the ONNX domain before opset 17
case("layer_norm_opset13", [helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=-1,
                                             epsilon=1e-5)], ln_x[:1], ["y"], [gamma, beta], opset=13)
case("simplified_layer_norm", [helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["y"],
                                                axis=-1, epsilon=1e-6)], ln_x[:1], ["y"], [gamma])


def write_case(name, nodes, inputs, outputs, inits, ms_opset, opset):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "ref"))
    os.makedirs(os.path.join(d, "test_data_set_0"))
    for i, n in enumerate(nodes):
        n.name = n.name or "%s_%d" % (n.op_type, i)
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(n, F, list(s)) for n, s in inputs],
        [helper.make_tensor_value_info(n, F, None) for n in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid(MS, ms_opset)],
                              producer_name="make_contrib_tests")
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (n, s) in enumerate(inputs):
        a = arr(*s)
        np.save(os.path.join(d, "ref", "input_%d.npy" % i), a)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    return d


def main():
    prefix = sys.argv[1] if len(sys.argv) > 1 else ""
    dirs = [write_case(*c) for c in CASES if c[0].startswith(prefix)]
    env = dict(os.environ)
    env.setdefault("ORT_NODE", os.path.join(HERE, "..", "..", "bench", "node_modules", "onnxruntime-node"))
    subprocess.run(["node", os.path.join(HERE, "ort_reference.mjs")] + dirs, check=True, env=env)
    for d, c in zip(dirs, [c for c in CASES if c[0].startswith(prefix)]):
        for i, n in enumerate(c[3]):
            a = np.load(os.path.join(d, "ref", "output_%d.npy" % i))
            with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
        shutil.rmtree(os.path.join(d, "ref"))
    print("%d cases written" % len(dirs))


main()
