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
import onnx.mapping
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
MS = "com.microsoft"
rng = np.random.default_rng(20261202)
CASES = []


def case(name, nodes, inputs, outputs, inits=(), ms_opset=1, opset=17, optimize=False, reference=None):
    """inputs: (name, shape[, numpy dtype]) graph inputs fed at random
    (float32 unless given); inits: (name, array) initializers; outputs:
    names (types left to inference)."""
    CASES.append((name, nodes, inputs, outputs, inits, ms_opset, opset, optimize, reference))


def random_of(shape, dtype=np.float32):
    if dtype == np.float32:
        return arr(*shape)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(dtype)


def scalar(v, dtype=np.float32):
    return np.array(v, dtype=dtype)


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
case("fused_conv_identity", [helper.make_node("FusedConv", ["x", "w", "b"], ["y"], domain=MS, kernel_shape=[3, 3])],
     conv_in, ["y"], conv_w)
case("fused_conv_no_bias", [helper.make_node("FusedConv", ["x", "w"], ["y"], domain=MS, activation="Relu",
                                             kernel_shape=[3, 3], group=1, dilations=[2, 2])],
     conv_in, ["y"], conv_w[:1])

# ---- FusedGemm: Gemm, then the activation ----------------------------------------------
for act, extra in [("Relu", {}), ("LeakyRelu", {"activation_alpha": 0.2}), ("Tanh", {}),
                   ("Sigmoid", {}), ("HardSigmoid", {"activation_alpha": 0.3, "activation_beta": 0.6})]:
    case("fused_gemm_" + act.lower(), [helper.make_node("FusedGemm", ["a", "b", "c"], ["y"], domain=MS,
                                                        activation=act, **extra)],
         [("a", (3, 4))], ["y"], [("b", arr(4, 5)), ("c", arr(5))])
for act, extra in [("Elu", {"activation_alpha": 0.7}), ("Selu", {"activation_alpha": 1.5, "activation_gamma": 1.1}),
                   ("Softplus", {}), ("Softsign", {}), ("ThresholdedRelu", {"activation_alpha": 0.2}),
                   ("ScaledTanh", {"activation_alpha": 2.0, "activation_beta": 0.5}),
                   ("ParametricSoftplus", {"activation_alpha": 0.5, "activation_beta": 2.0})]:
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

case("fused_matmul_trans_batch_a", [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS,
                                                   transBatchA=1)],
     [("a", (2, 3, 4)), ("b", (3, 4, 5))], ["y"])
case("fused_matmul_trans_batch_b_trans_b", [helper.make_node("FusedMatMul", ["a", "b"], ["y"], domain=MS,
                                                            transBatchB=1, transB=1)],
     [("a", (3, 2, 4)), ("b", (5, 3, 4))], ["y"])

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


case("skip_simplified_layer_norm_mean",
     [helper.make_node("SkipSimplifiedLayerNormalization", ["x", "skip", "gamma"], ["y", "mean", "inv_std"],
                       domain=MS)], ln_x, ["y", "mean", "inv_std"], [gamma])

# NhwcConv, NhwcFusedConv: no CPU kernel in onnxruntime; the reference is
# onnxruntime running the documented equivalent, Conv / FusedConv between
# transposes; BiasAdd likewise, X + bias + skip.
case("bias_add", [helper.make_node("BiasAdd", ["x", "bias", "skip"], ["y"], domain=MS)],
     [("x", (2, 3, 8)), ("skip", (2, 3, 8))], ["y"], [("bias", arr(8))],
     reference=[helper.make_node("Add", ["x", "bias"], ["xb"]), helper.make_node("Add", ["xb", "skip"], ["y"])])
to_nchw, to_nhwc = [0, 3, 1, 2], [0, 2, 3, 1]
case("nhwc_conv", [helper.make_node("NhwcConv", ["x", "w", "b"], ["y"], domain=MS, kernel_shape=[3, 3],
                                    pads=[1, 1, 1, 1], strides=[2, 2])],
     [("x", (1, 5, 5, 2))], ["y"], conv_w,
     reference=[helper.make_node("Transpose", ["x"], ["xt"], perm=to_nchw),
                helper.make_node("Conv", ["xt", "w", "b"], ["yt"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                 strides=[2, 2]),
                helper.make_node("Transpose", ["yt"], ["y"], perm=to_nhwc)])
case("nhwc_fused_conv", [helper.make_node("NhwcFusedConv", ["x", "w", "b", "z"], ["y"], domain=MS,
                                          kernel_shape=[3, 3], pads=[1, 1, 1, 1], activation="Relu")],
     [("x", (1, 5, 5, 2)), ("z", (1, 5, 5, 3))], ["y"], conv_w,
     reference=[helper.make_node("Transpose", ["x"], ["xt"], perm=to_nchw),
                helper.make_node("Transpose", ["z"], ["zt"], perm=to_nchw),
                helper.make_node("FusedConv", ["xt", "w", "b", "zt"], ["yt"], domain=MS, kernel_shape=[3, 3],
                                 pads=[1, 1, 1, 1], activation="Relu"),
                helper.make_node("Transpose", ["yt"], ["y"], perm=to_nhwc)])

# ---- Attention ---------------------------------------------------------------------------
att_w = [("w", arr(8, 24, scale=0.3)), ("b", arr(24, scale=0.1))]
att_in = [("x", (2, 4, 8))]


def attention(name, ins, outputs, inits, extra_inputs=(), **attrs):
    case(name, [helper.make_node("Attention", ins, [o if isinstance(o, str) else o[0] for o in outputs], domain=MS,
                                 num_heads=2, **attrs)], att_in + list(extra_inputs), outputs, att_w + inits)


attention("attention", ["x", "w", "b"], ["y"], [])
attention("attention_mask_raw", ["x", "w", "b", "mask"], ["y"],
          [("mask", np.array([[1, 1, 1, 0], [1, 1, 0, 0]], np.int32))])
attention("attention_mask_lengths", ["x", "w", "b", "mask"], ["y"], [("mask", np.array([3, 2], np.int32))])
attention("attention_unidirectional", ["x", "w", "b"], ["y"], [], unidirectional=1)
attention("attention_scale_bias", ["x", "w", "b", "", "", "abias"], ["y"], [], [("abias", (1, 2, 4, 4))], scale=0.3)
attention("attention_past_present", ["x", "w", "b", "", "past"], ["y", "present"], [], [("past", (2, 2, 2, 3, 4))],
          unidirectional=1)
case("attention_qkv_sizes", [helper.make_node("Attention", ["x", "w", "b"], ["y"], domain=MS, num_heads=2,
                                              qkv_hidden_sizes=[8, 8, 4])],
     att_in, ["y"], [("w", arr(8, 20, scale=0.3)), ("b", arr(20, scale=0.1))])

mha_in = [("q", (2, 4, 8)), ("k", (2, 5, 8)), ("v", (2, 5, 8))]
mha_b = [("bias", arr(24, scale=0.1))]
case("multihead_attention", [helper.make_node("MultiHeadAttention", ["q", "k", "v", "bias"], ["y"], domain=MS,
                                              num_heads=2)], mha_in, ["y"], mha_b)
case("multihead_attention_mask", [helper.make_node("MultiHeadAttention", ["q", "k", "v", "", "mask"], ["y"],
                                                   domain=MS, num_heads=2)],
     mha_in, ["y"], [("mask", np.array([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], np.int32))])
case("multihead_attention_past", [helper.make_node("MultiHeadAttention",
                                                   ["q", "k", "v", "bias", "", "", "pk", "pv"], ["y", "pres_k", "pres_v"],
                                                   domain=MS, num_heads=2, unidirectional=1)],
     [("q", (2, 4, 8)), ("k", (2, 4, 8)), ("v", (2, 4, 8)), ("pk", (2, 2, 3, 4)), ("pv", (2, 2, 3, 4))],
     ["y", "pres_k", "pres_v"], mha_b)

# GroupQueryAttention: a prompt (no past) and a decoding step over a cache, grouped heads
def gqa(name, s_len, past, extra_attrs=None, rotary=False):
    ins = ["q", "k", "v", "pk" if past else "", "pv" if past else "", "seqlens", "total"]
    total = past + s_len
    inits = [("seqlens", np.full(2, total - 1, np.int32)), ("total", np.array(total, np.int32))]
    if rotary:  # head size 16: onnxruntime's CPU kernel rotates multiples of 16 only
        ins += ["cos", "sin"]
        th = np.outer(np.arange(16), 1.0 / (10000 ** (np.arange(0, 16, 2) / 16))).astype(np.float32)
        inits += [("cos", np.cos(th)), ("sin", np.sin(th))]
    feeds = [("q", (2, s_len, 32)), ("k", (2, s_len, 16)), ("v", (2, s_len, 16))]
    if past:
        feeds += [("pk", (2, 1, past, 16)), ("pv", (2, 1, past, 16))]
    case(name, [helper.make_node("GroupQueryAttention", ins, ["y", "pres_k", "pres_v"], domain=MS, num_heads=2,
                                 kv_num_heads=1, do_rotary=int(rotary), **(extra_attrs or {}))],
         feeds, ["y", "pres_k", "pres_v"], inits)


# ---- EmbedLayerNormalization (ids and mask fixed, the embeddings fed) ------------------------
emb_ids = [("ids", rng.integers(0, 10, size=(2, 5)).astype(np.int32)),
           ("seg", rng.integers(0, 2, size=(2, 5)).astype(np.int32)),
           ("mask", np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)),
           ("gamma", (rng.random(8) + 0.5).astype(np.float32)), ("beta", arr(8, scale=0.1))]
emb_in = [("word", (10, 8)), ("posemb", (5, 8)), ("segemb", (2, 8))]
case("embed_layer_norm", [helper.make_node("EmbedLayerNormalization",
                                           ["ids", "seg", "word", "posemb", "segemb", "gamma", "beta", "mask"],
                                           ["y", "mask_index"], domain=MS, epsilon=1e-5)],
     emb_in, ["y", ("mask_index", TensorProto.INT32)], emb_ids)
case("embed_layer_norm_sum", [helper.make_node("EmbedLayerNormalization",
                                               ["ids", "", "word", "posemb", "", "gamma", "beta"],
                                               ["y", "mask_index", "sum"], domain=MS)],
     emb_in[:2], ["y", ("mask_index", TensorProto.INT32), "sum"], emb_ids)

# ---- Inverse ------------------------------------------------------------------------------
case("inverse", [helper.make_node("Inverse", ["x"], ["y"], domain=MS)], [("x", (3, 3))], ["y"])
case("inverse_batched", [helper.make_node("Inverse", ["x"], ["y"], domain=MS)], [("x", (2, 2, 4, 4))], ["y"])

# ---- RotaryEmbedding ---------------------------------------------------------------------
theta = np.outer(np.arange(16), 1.0 / (10000 ** (np.arange(0, 4, 2) / 4))).astype(np.float32)
rot_cache = [("cos", np.cos(theta)), ("sin", np.sin(theta))]
pos = ("pos", rng.integers(0, 16, size=(2, 3)).astype(np.int64))
for inter in (0, 1):
    case("rotary_embedding_3d_interleaved%d" % inter,
         [helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS, interleaved=inter,
                           num_heads=2)], [("x", (2, 3, 8))], ["y"], [pos] + rot_cache)
case("rotary_embedding_4d", [helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS)],
     [("x", (2, 2, 3, 4))], ["y"], [pos] + rot_cache)
case("rotary_embedding_offset", [helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS,
                                                  num_heads=2)],
     [("x", (2, 3, 8))], ["y"], [("pos", np.array([5], np.int64))] + rot_cache)
case("rotary_embedding_partial", [helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS,
                                                   num_heads=1, rotary_embedding_dim=4)],
     [("x", (2, 3, 8))], ["y"], [pos] + rot_cache)

gqa("group_query_attention_prompt", 3, 0)
gqa("group_query_attention_decode", 1, 3)
gqa("group_query_attention_rotary", 1, 3, rotary=True)
gqa("group_query_attention_rotary_prompt", 3, 0, {"rotary_interleaved": 1}, rotary=True)
gqa("group_query_attention_softcap", 1, 2, {"softcap": 2.0, "scale": 0.4})

# ---- quantized ops ------------------------------------------------------------------
U8, I8 = np.uint8, np.int8
QY = [("y", TensorProto.UINT8)]
qa = [("a", (2, 3, 4), U8)]
q_scales = [("a_s", scalar(0.05)), ("a_zp", scalar(128, U8)), ("b_s", scalar(0.04)), ("b_zp", scalar(120, U8)),
            ("c_s", scalar(0.1)), ("c_zp", scalar(125, U8))]
for op in ["QLinearAdd", "QLinearMul"]:
    case(op.lower(), [helper.make_node(op, ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "c_s", "c_zp"], ["y"], domain=MS)],
         qa + [("b", (4,), U8)], [("y", TensorProto.UINT8)], q_scales)
case("qlinear_add_int8", [helper.make_node("QLinearAdd", ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "c_s", "c_zp"],
                                          ["y"], domain=MS)],
     [("a", (2, 4), I8), ("b", (2, 4), I8)], [("y", TensorProto.INT8)],
     [("a_s", scalar(0.05)), ("a_zp", scalar(-3, I8)), ("b_s", scalar(0.04)), ("b_zp", scalar(5, I8)),
      ("c_s", scalar(0.1)), ("c_zp", scalar(1, I8))])
un = [("x_s", scalar(0.05)), ("x_zp", scalar(128, U8)), ("y_s", scalar(0.004)), ("y_zp", scalar(0, U8))]
un_names = ["x", "x_s", "x_zp", "y_s", "y_zp"]
case("qlinear_sigmoid", [helper.make_node("QLinearSigmoid", un_names, ["y"], domain=MS)], [("x", (2, 8), U8)],
     QY, un)
case("qlinear_leaky_relu", [helper.make_node("QLinearLeakyRelu", un_names, ["y"], domain=MS, alpha=0.1)],
     [("x", (2, 8), U8)], QY, un[:2] + [("y_s", scalar(0.05)), ("y_zp", scalar(100, U8))])
case("qlinear_softmax", [helper.make_node("QLinearSoftmax", un_names, ["y"], domain=MS, axis=-1, opset=13)],
     [("x", (2, 8), U8)], QY, un[:2] + [("y_s", scalar(1.0 / 256)), ("y_zp", scalar(0, U8))])
pool_q = un[:2] + [("y_s", scalar(0.05)), ("y_zp", scalar(128, U8))]
case("qlinear_global_average_pool", [helper.make_node("QLinearGlobalAveragePool", un_names, ["y"], domain=MS)],
     [("x", (1, 3, 4, 4), U8)], QY, pool_q)
case("qlinear_global_average_pool_nhwc", [helper.make_node("QLinearGlobalAveragePool", un_names, ["y"], domain=MS,
                                                           channels_last=1)],
     [("x", (1, 4, 4, 3), U8)], QY, pool_q)
case("qlinear_average_pool", [helper.make_node("QLinearAveragePool", un_names, ["y"], domain=MS,
                                               kernel_shape=[2, 2], strides=[2, 2])],
     [("x", (1, 2, 4, 4), U8)], QY, pool_q)
case("qlinear_concat", [helper.make_node("QLinearConcat", ["y_s", "y_zp", "a", "a_s", "a_zp", "b", "b_s", "b_zp"],
                                         ["y"], domain=MS, axis=1)],
     [("a", (2, 3), U8), ("b", (2, 2), U8)], QY,
     [("y_s", scalar(0.06)), ("y_zp", scalar(127, U8)), ("a_s", scalar(0.05)), ("a_zp", scalar(128, U8)),
      ("b_s", scalar(0.04)), ("b_zp", scalar(120, U8))])
gemm_q = [("a_s", scalar(0.05)), ("a_zp", scalar(128, U8)), ("b", random_of((4, 5), U8)), ("b_s", scalar(0.02)),
          ("b_zp", scalar(126, U8)), ("c", rng.integers(-500, 500, size=(5,)).astype(np.int32)),
          ("y_s", scalar(0.5)), ("y_zp", scalar(128, U8))]
case("qgemm", [helper.make_node("QGemm", ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "c", "y_s", "y_zp"], ["y"],
                                domain=MS, alpha=1.0)], [("a", (3, 4), U8)], QY, gemm_q)
case("qgemm_float_alpha", [helper.make_node("QGemm", ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "c"], ["y"], domain=MS,
                                            alpha=0.5)], [("a", (3, 4), U8)], ["y"], gemm_q[:6])
case("qgemm_trans_b", [helper.make_node("QGemm", ["a", "a_s", "a_zp", "b", "b_s", "b_zp"], ["y"], domain=MS,
                                        transB=1)], [("a", (3, 4), U8)], ["y"],
     gemm_q[:2] + [("b", random_of((5, 4), U8))] + gemm_q[3:5])
# int8 weights of zero point 0: the JIT's integer route (MatMulInteger on
# oneDNN's int8 product; transB's weights taken transposed)
case("qgemm_int8_trans_b", [helper.make_node("QGemm", ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "c", "y_s", "y_zp"],
                                             ["y"], domain=MS, transB=1)], [("a", (6, 64), U8)], QY,
     [("a_s", scalar(0.02)), ("a_zp", scalar(121, U8)), ("b", random_of((32, 64), I8)),
      ("b_s", (rng.random(32) * 0.004 + 0.001).astype(np.float32)), ("b_zp", np.zeros(32, np.int8)),
      ("c", rng.integers(-3000, 3000, 32).astype(np.int32)), ("y_s", scalar(0.05)), ("y_zp", scalar(128, U8))])
case("qgemm_int8_float_alpha", [helper.make_node("QGemm", ["a", "a_s", "a_zp", "b", "b_s", "b_zp", "c"], ["y"],
                                                 domain=MS, alpha=0.5)], [("a", (6, 64), U8)], ["y"],
     [("a_s", scalar(0.02)), ("a_zp", scalar(121, U8)), ("b", random_of((64, 32), I8)), ("b_s", scalar(0.003)),
      ("b_zp", scalar(0, I8)), ("c", rng.integers(-3000, 3000, 32).astype(np.int32))])
case("matmul_integer_to_float", [helper.make_node("MatMulIntegerToFloat",
                                                  ["a", "b", "a_s", "b_s", "a_zp", "b_zp", "bias"], ["y"], domain=MS)],
     [("a", (2, 3, 4), U8)], ["y"],
     [("b", random_of((4, 5), I8)), ("a_s", scalar(0.05)), ("b_s", (rng.random(5) * 0.05 + 0.01).astype(np.float32)),
      ("a_zp", scalar(128, U8)), ("b_zp", np.zeros(5, np.int8)), ("bias", arr(5))])
case("dynamic_quantize_matmul", [helper.make_node("DynamicQuantizeMatMul", ["a", "b", "b_s", "b_zp", "bias"], ["y"],
                                                  domain=MS)],
     [("a", (3, 4))], ["y"],
     [("b", random_of((4, 5), I8)), ("b_s", scalar(0.02)), ("b_zp", scalar(0, I8)), ("bias", arr(5))])


# onnxruntime's own QuantizeLinear / DequantizeLinear: 16-bit, per axis
case("ms_quantize_linear_uint16", [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], domain=MS)],
     [("x", (2, 6))], [("y", TensorProto.UINT16)], [("s", scalar(0.001)), ("zp", scalar(30000, np.uint16))])
case("ms_dequantize_linear_per_axis", [helper.make_node("DequantizeLinear", ["x", "s", "zp"], ["y"], domain=MS, axis=1)],
     [("x", (2, 3, 4), I8)], ["y"], [("s", np.array([0.1, 0.2, 0.3], np.float32)), ("zp", np.array([0, 1, -2], np.int8))])


def nbits_case(name, bits, k, n, block, with_zp, zp_float=False, g_idx=False, a_shape=None, bias=False):
    n_blocks = (k + block - 1) // block
    blob = block * bits // 8
    inits = [("b", random_of((n, n_blocks, blob), U8)), ("scales", (rng.random(n * n_blocks) * 0.1).astype(np.float32))]
    names = ["a", "b", "scales"]
    if with_zp:
        inits.append(("zp", (rng.random(n * n_blocks) * 8).astype(np.float32) if zp_float
                      else random_of((n * ((n_blocks * bits + 7) // 8),), U8)))
        names.append("zp")
    if g_idx:  # each row of K in a block of its own choosing
        inits.append(("g_idx", rng.integers(0, n_blocks, size=k).astype(np.int32)))
        names += ["g_idx"] if with_zp else ["", "g_idx"]
    if bias:
        inits.append(("bias", arr(n)))
        names += [""] * (5 - len(names)) + ["bias"]
    case(name, [helper.make_node("MatMulNBits", names, ["y"], domain=MS, K=k, N=n, bits=bits, block_size=block)],
         [("a", a_shape or (2, k))], ["y"], inits)


nbits_case("matmul_nbits_4bit", 4, 32, 5, 16, False)
nbits_case("matmul_nbits_4bit_zp", 4, 64, 3, 32, True)
nbits_case("matmul_nbits_4bit_partial_block", 4, 40, 3, 16, True)
nbits_case("matmul_nbits_8bit_zp", 8, 32, 4, 16, True)
nbits_case("matmul_nbits_4bit_float_zp", 4, 32, 3, 16, True, zp_float=True)
nbits_case("matmul_nbits_4bit_g_idx", 4, 64, 3, 16, True, zp_float=True, g_idx=True)
nbits_case("matmul_nbits_4bit_g_idx_no_zp", 4, 32, 4, 16, False, g_idx=True)  # (onnxruntime refuses 8-bit with g_idx)


# ---- whole models, saved by onnxruntime after its 'extended' graph optimizations -------------
N = helper.make_node


def conv_block(prefix, x, cin, cout, stride, relu=True, extra=None):
    w, b = prefix + "_w", prefix + "_b"
    nodes = [N("Conv", [x, w, b], [prefix + "_c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride] * 2)]
    inits = [(w, arr(cout, cin, 3, 3, scale=0.3)), (b, arr(cout, scale=0.1))]
    out = prefix + "_c"
    if extra:
        nodes.append(N("Add", [out, extra], [prefix + "_sum"]))
        out = prefix + "_sum"
    if relu:
        nodes.append(N("Relu", [out], [prefix + "_r"]))
        out = prefix + "_r"
    return nodes, inits, out


# CNN: Conv+BatchNormalization+Relu, a residual Add+Relu, Gemm+Relu (FusedConv, FusedGemm)
n1, i1, o1 = conv_block("c1", "x", 3, 8, 1, relu=False)
n1 += [N("BatchNormalization", [o1, "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"]), N("Relu", ["bn"], ["r1"])]
i1 += [("bn_s", (rng.random(8) + 0.5).astype(np.float32)), ("bn_b", arr(8, scale=0.1)),
       ("bn_m", arr(8, scale=0.1)), ("bn_v", (rng.random(8) + 0.5).astype(np.float32))]
n2, i2, o2 = conv_block("c2", "r1", 8, 8, 1, extra="r1")
n3, i3, o3 = conv_block("c3", o2, 8, 16, 2)
tail = [N("GlobalAveragePool", [o3], ["gap"]), N("Flatten", ["gap"], ["flat"]),
        N("Gemm", ["flat", "fc_w", "fc_b"], ["fc"], transB=1), N("Relu", ["fc"], ["fc_r"]),
        N("Gemm", ["fc_r", "out_w", "out_b"], ["logits"], transB=1)]
case("model_cnn_ort_optimized", n1 + n2 + n3 + tail, [("x", (1, 3, 16, 16))], ["logits"],
     i1 + i2 + i3 + [("fc_w", arr(12, 16, scale=0.3)), ("fc_b", arr(12)), ("out_w", arr(10, 12, scale=0.3)),
                     ("out_b", arr(10))], opset=13, optimize=True)

# transformer encoder layer: attention with a scaled MatMul, residual + LayerNormalization
# pattern, a GELU (erf) feed-forward (SkipLayerNormalization, BiasGelu/Gelu, FusedMatMul)
S, H, HEADS = 6, 16, 2
D = H // HEADS


def linear(name, x, k, n):
    return ([N("MatMul", [x, name + "_w"], [name + "_mm"]), N("Add", [name + "_mm", name + "_b"], [name])],
            [(name + "_w", arr(k, n, scale=0.3)), (name + "_b", arr(n, scale=0.1))])


def layer_norm(name, x):
    ln = [N("ReduceMean", [x], [name + "_mean"], axes=[-1]), N("Sub", [x, name + "_mean"], [name + "_d"]),
          N("Pow", [name + "_d", "two"], [name + "_sq"]), N("ReduceMean", [name + "_sq"], [name + "_var"], axes=[-1]),
          N("Add", [name + "_var", "eps"], [name + "_ve"]), N("Sqrt", [name + "_ve"], [name + "_std"]),
          N("Div", [name + "_d", name + "_std"], [name + "_n"]), N("Mul", [name + "_n", name + "_g"], [name + "_ng"]),
          N("Add", [name + "_ng", name + "_beta"], [name])]
    return ln, [(name + "_g", (rng.random(H) + 0.5).astype(np.float32)), (name + "_beta", arr(H, scale=0.1))]


enc, einit = [], [("two", scalar(2.0)), ("eps", scalar(1e-5)), ("sqrt_d", scalar(np.sqrt(D))),
                  ("sqrt2", scalar(np.sqrt(2.0))), ("one", scalar(1.0)), ("half", scalar(0.5)),
                  ("heads_shape", np.array([1, S, HEADS, D], np.int64)), ("merge_shape", np.array([1, S, H], np.int64))]
for nm in ["q", "k", "v"]:
    nn_, ii = linear(nm, "x", H, H)
    enc += nn_ + [N("Reshape", [nm, "heads_shape"], [nm + "_h"]),
                  N("Transpose", [nm + "_h"], [nm + "_t"], perm=[0, 2, 3, 1] if nm == "k" else [0, 2, 1, 3])]
    einit += ii
enc += [N("MatMul", ["q_t", "k_t"], ["scores"]), N("Div", ["scores", "sqrt_d"], ["scaled"]),
        N("Softmax", ["scaled"], ["probs"], axis=-1), N("MatMul", ["probs", "v_t"], ["ctx"]),
        N("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]), N("Reshape", ["ctx_t", "merge_shape"], ["ctx_m"])]
nn_, ii = linear("o", "ctx_m", H, H)
enc += nn_ + [N("Add", ["o", "x"], ["res1"])]
einit += ii
nn_, ii = layer_norm("ln1", "res1")
enc += nn_
einit += ii
nn_, ii = linear("ff1", "ln1", H, 2 * H)
enc += nn_ + [N("Div", ["ff1", "sqrt2"], ["g_d"]), N("Erf", ["g_d"], ["g_e"]), N("Add", ["g_e", "one"], ["g_a"]),
              N("Mul", ["ff1", "g_a"], ["g_m"]), N("Mul", ["g_m", "half"], ["gelu"])]
einit += ii
nn_, ii = linear("ff2", "gelu", 2 * H, H)
enc += nn_ + [N("Add", ["ff2", "ln1"], ["res2"])]
einit += ii
nn_, ii = layer_norm("ln2", "res2")
enc += nn_
einit += ii
case("model_encoder_ort_optimized", enc, [("x", (1, S, H))], ["ln2"], einit, opset=13, optimize=True)

# QDQ CNN: QuantizeLinear/DequantizeLinear around every Conv, Add, GlobalAveragePool
# (QLinearConv, QLinearAdd, QLinearGlobalAveragePool, QGemm after the optimizations)
qd, qinit = [], [("s_act", scalar(0.05)), ("zp_act", scalar(128, np.uint8))]


def qdq(name, x):
    return [N("QuantizeLinear", [x, "s_act", "zp_act"], [name + "_q"]),
            N("DequantizeLinear", [name + "_q", "s_act", "zp_act"], [name])]


def qweight(name, w):
    scale = np.float32(np.abs(w).max() / 127)
    q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
    qinit.extend([(name + "_q", q), (name + "_s", scalar(scale)), (name + "_zp", scalar(0, np.int8))])
    return [N("DequantizeLinear", [name + "_q", name + "_s", name + "_zp"], [name])]


qd += qdq("xq", "x") + qweight("w1", arr(8, 3, 3, 3, scale=0.3))
qd += [N("Conv", ["xq", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), N("Relu", ["c1"], ["r1"])]
qd += qdq("r1q", "r1") + qweight("w2", arr(8, 8, 3, 3, scale=0.2))
qd += [N("Conv", ["r1q", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])] + qdq("c2q", "c2")
qd += [N("Add", ["c2q", "r1q"], ["sum"])] + qdq("sumq", "sum")
qd += [N("GlobalAveragePool", ["sumq"], ["gap"])] + qdq("gapq", "gap")
qd += [N("Flatten", ["gapq"], ["flat"])] + qweight("fw", arr(10, 8, scale=0.3))
qd += [N("Gemm", ["flat", "fw", "fb"], ["logits"], transB=1)]
qinit += [("b1", arr(8, scale=0.1)), ("b2", arr(8, scale=0.1)), ("fb", arr(10, scale=0.1))]
case("model_qdq_cnn_ort_optimized", qd, [("x", (1, 3, 8, 8))], ["logits"], qinit, opset=13, optimize=True)


# a decoder block in onnxruntime-genai's form: SimplifiedLayerNormalization,
# MatMulNBits projections, GroupQueryAttention with rotary over a KV cache,
# SkipSimplifiedLayerNormalization, a SiLU-gated MLP
dec, dinit = [], []


def nbits_weight(name, k, n, block=16):
    n_blocks = (k + block - 1) // block
    dinit.extend([(name + "_q", random_of((n, n_blocks, block // 2), U8)),
                  (name + "_s", (rng.random(n * n_blocks) * 0.05 + 0.01).astype(np.float32)),
                  (name + "_zp", random_of((n * ((n_blocks * 4 + 7) // 8),), U8))])
    return [name + "_q", name + "_s", name + "_zp"], dict(K=k, N=n, bits=4, block_size=block)


def nbits(out, x, name, k, n):
    ins, attrs = nbits_weight(name, k, n)
    dec.append(N("MatMulNBits", [x] + ins, [out], domain=MS, **attrs))


th = np.outer(np.arange(16), 1.0 / (10000 ** (np.arange(0, 16, 2) / 16))).astype(np.float32)
dinit += [("g1", (rng.random(32) + 0.5).astype(np.float32)), ("g2", (rng.random(32) + 0.5).astype(np.float32)),
          ("cos", np.cos(th)), ("sin", np.sin(th)), ("seqlens", np.array([3], np.int32)), ("total", np.array(4, np.int32))]
dec.append(N("SimplifiedLayerNormalization", ["x", "g1"], ["n1"], epsilon=1e-5))
nbits("q", "n1", "wq", 32, 32)
nbits("k", "n1", "wk", 32, 16)
nbits("v", "n1", "wv", 32, 16)
dec.append(N("GroupQueryAttention", ["q", "k", "v", "past_k", "past_v", "seqlens", "total", "cos", "sin"],
             ["attn", "present_k", "present_v"], domain=MS, num_heads=2, kv_num_heads=1, do_rotary=1))
nbits("o", "attn", "wo", 32, 32)
dec.append(N("SkipSimplifiedLayerNormalization", ["o", "x", "g2"], ["n2", "", "", "res"], domain=MS, epsilon=1e-5))
nbits("gate", "n2", "wg", 32, 64)
nbits("up", "n2", "wu", 32, 64)
dec += [N("Sigmoid", ["gate"], ["gate_s"]), N("Mul", ["gate", "gate_s"], ["silu"]), N("Mul", ["silu", "up"], ["act"])]
nbits("down", "act", "wd", 64, 32)
dec.append(N("Add", ["down", "res"], ["out"]))
case("model_genai_decoder_block", dec, [("x", (1, 4, 32)), ("past_k", (1, 1, 0, 16)), ("past_v", (1, 1, 0, 16))],
     ["out", "present_k", "present_v"], dinit)


def write_case(name, nodes, inputs, outputs, inits, ms_opset, opset, optimize, reference):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "ref"))
    os.makedirs(os.path.join(d, "test_data_set_0"))
    for i, n in enumerate(nodes):
        n.name = n.name or "%s_%d" % (n.op_type, i)
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(
            i[0], onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(i[2] if len(i) > 2 else np.float32)], list(i[1]))
            for i in inputs],
        [helper.make_tensor_value_info(*((o, F) if isinstance(o, str) else o), None) for o in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset),
                                                    helper.make_opsetid(MS, ms_opset)],
                              producer_name="make_contrib_tests")
    model.ir_version = 8
    # a whole model: onnxruntime's 'extended' optimizations write model.onnx
    onnx.save(model, os.path.join(d, "ref", "source.onnx") if optimize else os.path.join(d, "model.onnx"))
    if reference:  # the same computation in ops onnxruntime's CPU provider has
        graph = helper.make_graph(reference, name, list(graph.input), list(graph.output), list(graph.initializer))
        ref = helper.make_model(graph, opset_imports=list(model.opset_import))
        ref.ir_version = 8
        onnx.save(ref, os.path.join(d, "ref", "reference.onnx"))
    for i, inp in enumerate(inputs):
        n, s = inp[0], inp[1]
        a = random_of(s, inp[2] if len(inp) > 2 else np.float32)
        np.save(os.path.join(d, "ref", "input_%d.npy" % i), a)
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    return d


# ---- MatMulNBits through the runtime's kernel (rt_nbits.c): blocks of 16-byte
# multiples (its vector loop), one row and a few (dot products on the packed
# values), many rows (dequantized tiles and BLAS); a partial last block, bias
nbits_case("matmul_nbits_kernel_2bit_row_zp", 2, 256, 24, 64, True, a_shape=(1, 256))
nbits_case("matmul_nbits_kernel_2bit_rows", 2, 128, 8, 64, False, a_shape=(3, 5, 128))
nbits_case("matmul_nbits_kernel_4bit_row_bias", 4, 96, 40, 64, True, a_shape=(1, 1, 96), bias=True)
nbits_case("matmul_nbits_kernel_4bit_3rows", 4, 64, 24, 32, True, a_shape=(3, 64))
nbits_case("matmul_nbits_kernel_4bit_rows_bias", 4, 128, 40, 32, True, a_shape=(2, 33, 128), bias=True)
nbits_case("matmul_nbits_kernel_4bit_rows_float_zp", 4, 64, 24, 32, True, zp_float=True, a_shape=(6, 64))
nbits_case("matmul_nbits_kernel_8bit_row", 8, 64, 16, 16, False, a_shape=(1, 64))
nbits_case("matmul_nbits_kernel_8bit_rows_zp", 8, 80, 16, 32, True, a_shape=(8, 80))


# ---- a QDQ CNN in the form PyTorch's and onnxruntime's quantizers write: uint8
# activations, int8 weights per output channel (zero points 0), float biases;
# a strided convolution with Relu, a depthwise one, a residual Add, a 1x1 one.
# The JIT runs each Conv as the runtime's 8-bit kernel (rt_qconv.c); the
# outputs: a quantized tensor as it is, and the last one dequantized
def qdq_cnn_int8():
    nodes, inits = [], [("x_s", scalar(0.04)), ("x_zp", scalar(120, U8))]

    def qdq(x, name, scale, zp):
        inits.extend([(name + "_s", scalar(scale)), (name + "_zp", scalar(zp, U8))])
        return [N("QuantizeLinear", [x, name + "_s", name + "_zp"], [name + "_q"]),
                N("DequantizeLinear", [name + "_q", name + "_s", name + "_zp"], [name])]

    def weight(name, w):
        scale = (np.abs(w).reshape(w.shape[0], -1).max(1) / 127).astype(np.float32)
        q = np.clip(np.round(w / scale[:, None, None, None]), -127, 127).astype(I8)
        inits.extend([(name + "_q", q), (name + "_s", scale), (name + "_zp", np.zeros(w.shape[0], I8))])
        return [N("DequantizeLinear", [name + "_q", name + "_s", name + "_zp"], [name], axis=0)]

    nodes += [N("QuantizeLinear", ["x", "x_s", "x_zp"], ["x_q"]), N("DequantizeLinear", ["x_q", "x_s", "x_zp"], ["xd"])]
    nodes += weight("wa", arr(16, 8, 3, 3, scale=0.3))
    nodes += [N("Conv", ["xd", "wa", "ba"], ["ca"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
              N("Relu", ["ca"], ["ra"])] + qdq("ra", "a", 0.03, 0)
    nodes += weight("wb", arr(16, 1, 3, 3, scale=0.5))
    nodes += [N("Conv", ["a", "wb", "bb"], ["cb"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16)]
    nodes += qdq("cb", "b", 0.05, 128) + [N("Add", ["a", "b"], ["sum"])] + qdq("sum", "s", 0.06, 100)
    nodes += weight("wc", arr(8, 16, 1, 1, scale=0.4))
    nodes += [N("Conv", ["s", "wc"], ["cc"], kernel_shape=[1, 1])] + qdq("cc", "y", 0.05, 130)
    inits += [("ba", arr(16, scale=0.1)), ("bb", arr(16, scale=0.1))]
    case("model_qdq_cnn_int8", nodes, [("x", (1, 8, 12, 12))], [("a_q", TensorProto.UINT8), "y"], inits, opset=13)


qdq_cnn_int8()


# ---- dynamic quantization as onnxruntime's quantize_dynamic writes it: A quantized
# at run time (DynamicQuantizeLinear), MatMulInteger against int8 weights (zero
# point 0) or uint8 ones (zero point 128), the int32 sums scaled back to float;
# 2-D and 3-D A. The JIT runs the quantization and the products as the runtime's
# kernels (rt_dynquant.c, rt_qmatmul.c)
def dynamic_quant_mlp():
    nodes, inits = [], []
    x = "x"
    for i, (k, n, dtype) in enumerate([(32, 48, I8), (48, 32, U8)]):
        w = arr(k, n, scale=1 / np.sqrt(k))
        scale = np.float32(np.abs(w).max() / 127)
        q = np.clip(np.round(w / scale), -127, 127)
        zp = 0 if dtype == I8 else 128
        inits += [("w%d" % i, (q + zp).astype(dtype)), ("wzp%d" % i, scalar(zp, dtype)), ("ws%d" % i, scalar(scale)),
                  ("b%d" % i, arr(n, scale=0.1))]
        nodes += [N("DynamicQuantizeLinear", [x], ["xq%d" % i, "xs%d" % i, "xzp%d" % i]),
                  N("MatMulInteger", ["xq%d" % i, "w%d" % i, "xzp%d" % i, "wzp%d" % i], ["mi%d" % i]),
                  N("Cast", ["mi%d" % i], ["mf%d" % i], to=TensorProto.FLOAT),
                  N("Mul", ["xs%d" % i, "ws%d" % i], ["sc%d" % i]), N("Mul", ["mf%d" % i, "sc%d" % i], ["mm%d" % i]),
                  N("Add", ["mm%d" % i, "b%d" % i], ["o%d" % i])]
        x = "o%d" % i
        if i == 0:
            nodes.append(N("Relu", [x], ["r0"]))
            x = "r0"
    case("model_dynamic_quant_mlp", nodes, [("x", (2, 5, 32))], [x], inits, opset=13)


dynamic_quant_mlp()


# ---- dynamically quantized convolutions: DynamicQuantizeLinear, ConvInteger
# against int8 weights (a 3x3 with pads, then a strided one of two groups with
# a zero point given as 0), the int32 sums scaled back to float. The
# JIT runs the convolutions as the runtime's kernel (rt_qconv.c: oneDNN's int8
# convolution with a runtime source zero point)
def dynamic_quant_conv():
    nodes, inits = [], []
    x = "x"
    for i, (c, f, group, stride, pad) in enumerate([(4, 8, 1, 1, 1), (8, 6, 2, 2, 0)]):
        w = arr(f, c // group, 3, 3, scale=1 / np.sqrt(9 * c // group))
        scale = np.float32(np.abs(w).max() / 127)
        inits += [("w%d" % i, np.clip(np.round(w / scale), -127, 127).astype(I8)), ("ws%d" % i, scalar(scale))]
        ins = ["xq%d" % i, "w%d" % i, "xzp%d" % i]
        if i == 1:
            inits.append(("wzp1", scalar(0, I8)))
            ins.append("wzp1")
        nodes += [N("DynamicQuantizeLinear", [x], ["xq%d" % i, "xs%d" % i, "xzp%d" % i]),
                  N("ConvInteger", ins, ["ci%d" % i], strides=[stride, stride], pads=[pad] * 4, group=group),
                  N("Cast", ["ci%d" % i], ["cf%d" % i], to=TensorProto.FLOAT),
                  N("Mul", ["xs%d" % i, "ws%d" % i], ["sc%d" % i]), N("Mul", ["cf%d" % i, "sc%d" % i], ["o%d" % i])]
        x = "o%d" % i
        if i == 0:
            nodes.append(N("Relu", [x], ["r0"]))
            x = "r0"
    case("model_dynamic_quant_conv", nodes, [("x", (2, 4, 9, 9))], [x], inits, opset=13)


dynamic_quant_conv()


# ---- a QDQ transformer block (self-attention, one head): the projections'
# MatMuls against int8 weights between QuantizeLinear/DequantizeLinear pairs
# (the JIT: QLinearMatMul, then MatMulInteger on the runtime's kernel and the
# requantization), the attention's activation products in float
def qdq_attention_int8():
    nodes, inits, d = [], [], 32

    def qdq(x, name, scale, zp):
        inits.extend([(name + "_s", scalar(scale)), (name + "_zp", scalar(zp, U8))])
        return [N("QuantizeLinear", [x, name + "_s", name + "_zp"], [name + "_q"]),
                N("DequantizeLinear", [name + "_q", name + "_s", name + "_zp"], [name])]

    def proj(x, name, scale, zp):
        w = arr(d, d, scale=1 / np.sqrt(d))
        ws = np.float32(np.abs(w).max() / 127)
        inits.extend([(name + "_wq", np.clip(np.round(w / ws), -127, 127).astype(I8)), (name + "_ws", scalar(ws)),
                      (name + "_wzp", scalar(0, I8))])
        return [N("DequantizeLinear", [name + "_wq", name + "_ws", name + "_wzp"], [name + "_w"]),
                N("MatMul", [x, name + "_w"], [name + "_mm"])] + qdq(name + "_mm", name, scale, zp)

    nodes += qdq("x", "xd", 0.03, 128)
    nodes += proj("xd", "q", 0.04, 128) + proj("xd", "k", 0.04, 128) + proj("xd", "v", 0.04, 128)
    inits.append(("inv_sqrt_d", scalar(1 / np.sqrt(d))))
    nodes += [N("Transpose", ["k"], ["kt"], perm=[0, 2, 1]), N("MatMul", ["q", "kt"], ["qk"]),
              N("Mul", ["qk", "inv_sqrt_d"], ["scores"]), N("Softmax", ["scores"], ["p"], axis=-1),
              N("MatMul", ["p", "v"], ["ctx"])]
    nodes += qdq("ctx", "ctxd", 0.04, 128) + proj("ctxd", "o", 0.04, 128) + [N("Add", ["o", "xd"], ["y"])]
    case("model_qdq_attention_int8", nodes, [("x", (1, 8, d))], ["y"], inits, opset=13)


qdq_attention_int8()


def main():
    prefix = sys.argv[1] if len(sys.argv) > 1 else ""
    dirs = [write_case(*c) for c in CASES if c[0].startswith(prefix)]
    env = dict(os.environ)
    env.setdefault("ORT_NODE", os.path.join(HERE, "..", "..", "bench", "node_modules", "onnxruntime-node"))
    subprocess.run(["node", os.path.join(HERE, "ort_reference.mjs")] + dirs, check=True, env=env)
    for d, c in zip(dirs, [c for c in CASES if c[0].startswith(prefix)]):
        for i, o in enumerate(c[3]):
            n = o if isinstance(o, str) else o[0]
            a = np.load(os.path.join(d, "ref", "output_%d.npy" % i))
            with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % i), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
        shutil.rmtree(os.path.join(d, "ref"))
    print("%d cases written" % len(dirs))


main()
