#!/usr/bin/env python3
"""Writes the one-node models that check the normalize/decompose rules
(src/transform), mostly in the old opsets the normalizations are for, as
ONNX backend-test folders: transform/<case>/model.onnx, plus
test_data_set_0/ (input_<i>.pb, output_<i>.pb) where the case has a numpy
reference here. tests/unit/test_transform.c checks the op sequences the
rules make; tests/lit/transform/run.test runs the cases with `onnx2mlir
test`. Test-data tooling only; the outputs are committed. Works with
Debian's onnx 1.12 (ops newer than it are written without its checker).
Usage: /usr/bin/python3 make_transform_models.py [OUTDIR]"""
import math
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

base = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
out = os.path.join(base, "transform")
rng = np.random.default_rng(0)
ELEM = {np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3,
        np.dtype(np.int32): 6, np.dtype(np.int64): 7, np.dtype(np.bool_): 9,
        np.dtype(np.float16): 10, np.dtype(np.float64): 11}


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, name=op.lower(), **attrs)


def case(name, opset, op_node, inputs, outputs, ref=None, inits=()):
    """inputs: name -> array (runtime inputs); outputs: (name, elem, shape);
    inits: name -> array; ref(**inputs and inits) -> list of outputs."""
    graph = helper.make_graph(
        [op_node], name,
        [helper.make_tensor_value_info(n, ELEM[a.dtype], a.shape) for n, a in inputs],
        [helper.make_tensor_value_info(n, e, s) for n, e, s in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="make_transform_models")
    m.ir_version = 8
    d = os.path.join(out, name)
    os.makedirs(d)
    onnx.save(m, os.path.join(d, "model.onnx"))
    if ref is None:
        return
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data)
    args = dict(inputs)
    args.update(inits)
    for i, (n, a) in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(data, "input_%d.pb" % i))
    for i, ((n, _, _), a) in enumerate(zip(outputs, ref(**args))):
        onnx.save_tensor(numpy_helper.from_array(np.asarray(a), n), os.path.join(data, "output_%d.pb" % i))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def linear_1d(x, axis, scale):
    """Asymmetric linear resampling along one axis (Upsample, Resize-10)."""
    n_in = x.shape[axis]
    n_out = int(n_in * scale)
    pos = np.minimum(np.arange(n_out) / scale, n_in - 1)
    lo = np.floor(pos).astype(int)
    hi = np.minimum(lo + 1, n_in - 1)
    f = (pos - lo).reshape([-1 if k == axis else 1 for k in range(x.ndim)])
    return (np.take(x, lo, axis) * (1 - f) + np.take(x, hi, axis) * f).astype(x.dtype)


def quantize(x, scale, zp, lo, hi, dtype):
    return np.clip(np.rint(x / scale) + zp, lo, hi).astype(dtype)


if os.path.isdir(out):
    shutil.rmtree(out)
F, I64 = 1, 7

# ---- attributes that became inputs -------------------------------------------
case("reduce_mean_11", 11, node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0),
     [("x", f32(2, 3, 4))], [("y", F, [2, 4])], lambda x: [x.mean(axis=1)])
case("reduce_sum_11", 11, node("ReduceSum", ["x"], ["y"], axes=[0, 2]),
     [("x", f32(2, 3, 4))], [("y", F, [1, 3, 1])], lambda x: [x.sum(axis=(0, 2), keepdims=True)])
case("squeeze_11", 11, node("Squeeze", ["x"], ["y"], axes=[1]),
     [("x", f32(2, 1, 4))], [("y", F, [2, 4])], lambda x: [x.reshape(2, 4)])
case("unsqueeze_11", 11, node("Unsqueeze", ["x"], ["y"], axes=[0, 3]),
     [("x", f32(2, 4))], [("y", F, [1, 2, 4, 1])], lambda x: [x.reshape(1, 2, 4, 1)])
case("split_11", 11, node("Split", ["x"], ["a", "b"], axis=1, split=[1, 3]),
     [("x", f32(2, 4))], [("a", F, [2, 1]), ("b", F, [2, 3])], lambda x: np.split(x, [1], axis=1))
case("split_equal_13", 13, node("Split", ["x"], ["a", "b"], axis=1),
     [("x", f32(2, 4))], [("a", F, [2, 2]), ("b", F, [2, 2])], lambda x: np.split(x, 2, axis=1))
case("clip_6", 6, node("Clip", ["x"], ["y"], min=-1.0, max=1.5),
     [("x", f32(3, 4) * 2)], [("y", F, [3, 4])], lambda x: [np.clip(x, -1.0, 1.5)])
case("pad_2", 2, node("Pad", ["x"], ["y"], pads=[0, 1, 0, 2], value=1.5),
     [("x", f32(2, 3))], [("y", F, [2, 6])],
     lambda x: [np.pad(x, ((0, 0), (1, 2)), constant_values=1.5)])
case("slice_9", 9, node("Slice", ["x"], ["y"], starts=[1], ends=[3], axes=[1]),
     [("x", f32(2, 4))], [("y", F, [2, 2])], lambda x: [x[:, 1:3]])
case("topk_9", 9, node("TopK", ["x"], ["v", "i"], k=2),
     [("x", f32(3, 5))], [("v", F, [3, 2]), ("i", I64, [3, 2])],
     lambda x: [np.take_along_axis(x, np.argsort(-x, axis=1)[:, :2], 1),
                np.argsort(-x, axis=1)[:, :2].astype(np.int64)])
case("reshape_4", 4, node("Reshape", ["x"], ["y"], shape=[4, -1]),
     [("x", f32(2, 3, 2))], [("y", F, [4, 3])], lambda x: [x.reshape(4, 3)])

# ---- old semantics -----------------------------------------------------------------
case("softmax_11_axis1", 11, node("Softmax", ["x"], ["y"], axis=1),
     [("x", f32(2, 3, 4))], [("y", F, [2, 3, 4])],
     lambda x: [softmax(x.reshape(2, 12), 1).reshape(2, 3, 4)])
case("softmax_11_last", 11, node("LogSoftmax", ["x"], ["y"], axis=2),
     [("x", f32(2, 3, 4))], [("y", F, [2, 3, 4])], lambda x: [np.log(softmax(x, 2))])
case("add_6_axis", 6, node("Add", ["a", "b"], ["y"], broadcast=1, axis=1),
     [("a", f32(2, 3, 4, 5)), ("b", f32(3, 4))], [("y", F, [2, 3, 4, 5])],
     lambda a, b: [a + b[None, :, :, None]])
case("prelu_6", 6, node("PRelu", ["x", "slope"], ["y"]),
     [("x", f32(2, 3, 4)), ("slope", f32(3))], [("y", F, [2, 3, 4])],
     lambda x, slope: [np.where(x < 0, x * slope[None, :, None], x)])
case("lp_pool_1", 1, node("LpPool", ["x"], ["y"], kernel_shape=[2], p=3.0),
     [("x", f32(1, 2, 4))], [("y", F, [1, 2, 3])],
     lambda x: [np.power(np.abs(x[..., :-1]) ** 3 + np.abs(x[..., 1:]) ** 3, 1 / 3).astype(np.float32)])
case("cast_1", 1, node("Cast", ["x"], ["y"], to="INT32"),
     [("x", np.array([1.7, -2.3, 3.0], np.float32))], [("y", 6, [3])],
     lambda x: [x.astype(np.int32)])
case("castlike_15", 15, node("CastLike", ["x", "t"], ["y"]),
     [("x", f32(3)), ("t", np.zeros([1], np.float16))], [("y", 10, [3])],
     lambda x, t: [x.astype(np.float16)])
case("concat_1", 1, node("Concat", ["a", "b"], ["y"]),
     [("a", f32(2, 3)), ("b", f32(2, 1))], [("y", F, [2, 4])],
     lambda a, b: [np.concatenate([a, b], axis=1)])
case("upsample_7", 7, node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 3.0]),
     [("x", f32(1, 1, 2, 2))], [("y", F, [1, 1, 4, 6])],
     lambda x: [np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)])
case("upsample_9", 9, node("Upsample", ["x", "s"], ["y"], mode="linear"),
     [("x", f32(1, 1, 2, 3))], [("y", F, [1, 1, 4, 6])],
     lambda x, s: [linear_1d(linear_1d(x, 2, 2.0), 3, 2.0)],
     [("s", np.array([1, 1, 2, 2], np.float32))])
case("resize_10", 10, node("Resize", ["x", "s"], ["y"]),
     [("x", f32(1, 1, 4, 4))], [("y", F, [1, 1, 2, 2])], lambda x, s: [x[:, :, ::2, ::2]],
     [("s", np.array([1, 1, 0.5, 0.5], np.float32))])
case("resize_11_sizes", 11, node("Resize", ["x", "roi", "s", "sz"], ["y"]),
     [("x", f32(1, 1, 4, 4))], [("y", F, [1, 1, 3, 5])], None,
     [("roi", np.zeros([0], np.float32)), ("s", np.zeros([0], np.float32)),
      ("sz", np.array([1, 1, 3, 5], np.int64))])
case("dropout_10_mask", 10, node("Dropout", ["x"], ["y", "m"], ratio=0.3),
     [("x", f32(2, 3))], [("y", F, [2, 3]), ("m", 9, [2, 3])],
     lambda x: [x, np.ones(x.shape, np.bool_)])

# ---- decompositions -------------------------------------------------------------------
case("gemm", 13, node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transA=1, transB=1),
     [("a", f32(4, 3)), ("b", f32(5, 4)), ("c", f32(5))], [("y", F, [3, 5])],
     lambda a, b, c: [0.5 * a.T @ b.T + 2.0 * c])
case("gemm_plain", 11, node("Gemm", ["a", "b"], ["y"]),
     [("a", f32(3, 4)), ("b", f32(4, 5))], [("y", F, [3, 5])], lambda a, b: [a @ b])
bn = [("s", f32(3)), ("b", f32(3)), ("m", f32(3)), ("v", np.abs(f32(3)) + 0.5)]
case("batchnorm_9", 9, node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3),
     [("x", f32(2, 3, 4, 5))], [("y", F, [2, 3, 4, 5])],
     lambda x, s, b, m, v: [(s[:, None, None] * (x - m[:, None, None]) / np.sqrt(v[:, None, None] + 1e-3)
                            + b[:, None, None]).astype(np.float32)], bn)
case("batchnorm_15_training", 15,
     node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1),
     [("x", f32(2, 3, 4)), ("s", f32(3)), ("b", f32(3)), ("m", f32(3)), ("v", f32(3))],
     [("y", F, [2, 3, 4]), ("rm", F, [3]), ("rv", F, [3])])
case("instancenorm", 6, node("InstanceNormalization", ["x", "s", "b"], ["y"]),
     [("x", f32(2, 3, 4, 5)), ("s", f32(3)), ("b", f32(3))], [("y", F, [2, 3, 4, 5])],
     lambda x, s, b: [(s[:, None, None] * (x - x.mean(axis=(2, 3), keepdims=True))
                       / np.sqrt(x.var(axis=(2, 3), keepdims=True) + 1e-5) + b[:, None, None]).astype(np.float32)])
case("layernorm", 17, node("LayerNormalization", ["x", "s", "b"], ["y", "mean", "inv"], axis=1),
     [("x", f32(2, 3, 4)), ("s", f32(3, 4)), ("b", f32(3, 4))],
     [("y", F, [2, 3, 4]), ("mean", F, [2, 1, 1]), ("inv", F, [2, 1, 1])],
     lambda x, s, b: [((x - x.mean(axis=(1, 2), keepdims=True))
                       / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-5) * s + b).astype(np.float32),
                      x.mean(axis=(1, 2), keepdims=True),
                      (1 / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-5)).astype(np.float32)])


def group_norm_18(x, s, b):
    g = x.reshape(2, 2, -1)
    n = (g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + 1e-5)
    return [(n * s[None, :, None] + b[None, :, None]).reshape(x.shape).astype(np.float32)]


case("groupnorm_18", 18, node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2),
     [("x", f32(2, 4, 3)), ("s", f32(2)), ("b", f32(2))], [("y", F, [2, 4, 3])], group_norm_18)
case("groupnorm_21", 21, node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2),
     [("x", f32(2, 4, 3)), ("s", f32(4)), ("b", f32(4))], [("y", F, [2, 4, 3])])
case("rmsnorm", 23, node("RMSNormalization", ["x", "s"], ["y"], axis=-1),
     [("x", f32(3, 4)), ("s", f32(4))], [("y", F, [3, 4])],
     lambda x, s: [(x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + 1e-5) * s).astype(np.float32)])
case("mvn", 13, node("MeanVarianceNormalization", ["x"], ["y"]),
     [("x", f32(2, 3, 4, 5))], [("y", F, [2, 3, 4, 5])],
     lambda x: [((x - x.mean(axis=(0, 2, 3), keepdims=True)) / (x.std(axis=(0, 2, 3), keepdims=True) + 1e-9))
                .astype(np.float32)])
case("lpnorm", 1, node("LpNormalization", ["x"], ["y"], axis=0, p=1),
     [("x", f32(2, 3))], [("y", F, [2, 3])], lambda x: [x / np.abs(x).sum(axis=0, keepdims=True)])


def lrn(x, size=3, alpha=1e-4, beta=0.75, bias=1.0):
    sq = np.pad(x * x, ((0, 0), ((size - 1) // 2, size // 2), (0, 0), (0, 0)))
    window = sum(sq[:, i:i + x.shape[1]] for i in range(size))
    return [(x / (bias + alpha / size * window) ** beta).astype(np.float32)]


case("lrn", 13, node("LRN", ["x"], ["y"], size=3),
     [("x", f32(1, 5, 2, 2))], [("y", F, [1, 5, 2, 2])], lrn)
case("global_average_pool", 1, node("GlobalAveragePool", ["x"], ["y"]),
     [("x", f32(1, 3, 4, 5))], [("y", F, [1, 3, 1, 1])], lambda x: [x.mean(axis=(2, 3), keepdims=True)])
case("global_lp_pool", 2, node("GlobalLpPool", ["x"], ["y"], p=3),
     [("x", f32(1, 3, 4))], [("y", F, [1, 3, 1])],
     lambda x: [np.power(np.power(np.abs(x), 3).sum(axis=2, keepdims=True), 1 / 3).astype(np.float32)])
case("einsum_batch_matmul", 12, node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik"),
     [("a", f32(2, 3, 4)), ("b", f32(2, 4, 5))], [("y", F, [2, 3, 5])],
     lambda a, b: [np.einsum("bij,bjk->bik", a, b)])
case("einsum_groups", 12, node("Einsum", ["a", "b"], ["y"], equation="...ij,kjl->lik..."),
     [("a", f32(2, 3, 4)), ("b", f32(6, 4, 5))], [("y", F, [5, 3, 6, 2])],
     lambda a, b: [np.einsum("...ij,kjl->lik...", a, b)])
case("einsum_transpose", 12, node("Einsum", ["x"], ["y"], equation="ij->ji"),
     [("x", f32(2, 3))], [("y", F, [3, 2])], lambda x: [x.T])
case("einsum_diagonal", 12, node("Einsum", ["x"], ["y"], equation="ii->i"),
     [("x", f32(3, 3))], [("y", F, [3])])
case("einsum_inner", 12, node("Einsum", ["a", "b"], ["y"], equation="i,i"),
     [("a", f32(5)), ("b", f32(5))], [("y", F, [])], lambda a, b: [np.array(a @ b, np.float32)])

# ---- quantization ------------------------------------------------------------------------
case("quantize_10", 10, node("QuantizeLinear", ["x", "s", "z"], ["y"]),
     [("x", f32(2, 3) * 3)], [("y", 2, [2, 3])],
     lambda x, s, z: [quantize(x, s, z, 0, 255, np.uint8)],
     [("s", np.array(0.05, np.float32)), ("z", np.array(128, np.uint8))])
case("quantize_13_axis", 13, node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1),
     [("x", f32(2, 3) * 3)], [("y", 3, [2, 3])],
     lambda x, s, z: [quantize(x, s[None, :], z[None, :], -128, 127, np.int8)],
     [("s", np.array([0.05, 0.1, 0.02], np.float32)), ("z", np.array([0, 3, -2], np.int8))])
case("dequantize_13_axis", 13, node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=0),
     [("x", np.array([[1, 200, 3], [4, 5, 255]], np.uint8))], [("y", F, [2, 3])],
     lambda x, s, z: [((x.astype(np.float32) - z[:, None]) * s[:, None]).astype(np.float32)],
     [("s", np.array([0.5, 0.25], np.float32)), ("z", np.array([2, 100], np.uint8))])
case("matmulinteger", 10, node("MatMulInteger", ["a", "b", "az", "bz"], ["y"]),
     [("a", np.array([[11, 7, 3], [10, 6, 2]], np.uint8)), ("b", np.array([[1, 4], [2, 5], [3, 6]], np.uint8))],
     [("y", 6, [2, 2])],
     lambda a, b, az, bz: [((a.astype(np.int32) - 12) @ (b.astype(np.int32) - bz)).astype(np.int32)],
     [("az", np.array(12, np.uint8)), ("bz", np.array([0, 1], np.uint8))])
case("qlinearmatmul", 10, node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"]),
     [("a", np.array([[208, 236, 0, 238], [3, 214, 255, 29]], np.uint8)),
      ("b", np.array([[152, 51, 244], [60, 26, 255], [0, 127, 246], [127, 254, 247]], np.uint8))],
     [("y", 2, [2, 3])],
     lambda a, b, **q: [np.clip(np.rint((a.astype(np.int32) - q["az"]) @ (b.astype(np.int32) - q["bz"])
                                        * (q["as"] * q["bs"] / q["ys"])) + q["yz"], 0, 255).astype(np.uint8)],
     [("as", np.array(0.0066, np.float32)), ("az", np.array(113, np.uint8)),
      ("bs", np.array(0.00705, np.float32)), ("bz", np.array(114, np.uint8)),
      ("ys", np.array(0.0107, np.float32)), ("yz", np.array(118, np.uint8))])


def dynamic_quantize(x):
    lo, hi = min(x.min(), 0), max(x.max(), 0)
    scale = np.float32((hi - lo) / 255)
    zp = np.rint(np.clip(-lo / scale, 0, 255))
    return [quantize(x, scale, zp, 0, 255, np.uint8), scale, zp.astype(np.uint8)]


case("dynamicquantize", 11, node("DynamicQuantizeLinear", ["x"], ["y", "ys", "yz"]),
     [("x", np.array([0, 2, -3, -2.5, 1.34, 0.5], np.float32))],
     [("y", 2, [6]), ("ys", F, []), ("yz", 2, [])], dynamic_quantize)
case("convinteger", 10, node("ConvInteger", ["x", "w", "xz"], ["y"]),
     [("x", np.arange(2, 11, dtype=np.uint8).reshape(1, 1, 3, 3)), ("w", np.ones([1, 1, 2, 2], np.uint8))],
     [("y", 6, [1, 1, 2, 2])],
     lambda x, w, xz: [np.array([[[[12, 16], [24, 28]]]], np.int32)],  # windows of x - 1
     [("xz", np.array(1, np.uint8))])

# ---- losses, index ops, transformer blocks ------------------------------------------------
case("nllloss_ii", 12, node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"], ignore_index=1),
     [("x", f32(3, 4, 2)), ("t", np.array([[0, 1], [3, 2], [1, 1]], np.int64)), ("w", np.abs(f32(4)))],
     [("y", F, [])])
case("sce_sum_logprob", 13, node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"], reduction="sum"),
     [("x", f32(3, 5)), ("t", np.array([0, 4, 2], np.int64))], [("y", F, []), ("lp", F, [3, 5])])
case("attention_gqa_causal", 23,
     node("Attention", ["q", "k", "v"], ["y"], is_causal=1, q_num_heads=4, kv_num_heads=2),
     [("q", f32(1, 3, 8)), ("k", f32(1, 3, 4)), ("v", f32(1, 3, 4))], [("y", F, [1, 3, 8])])
case("rotary_interleaved", 23,
     node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"], interleaved=1, num_heads=2),
     [("x", f32(1, 3, 8)), ("c", f32(4, 2)), ("s", f32(4, 2)), ("p", np.array([[0, 1, 3]], np.int64))],
     [("y", F, [1, 3, 8])])
case("hann_window", 17, node("HannWindow", ["n"], ["y"], periodic=0),
     [], [("y", F, [5])], lambda n: [np.sin(np.arange(5) * math.pi / 4).astype(np.float32) ** 2],
     [("n", np.array(5, np.int64))])
