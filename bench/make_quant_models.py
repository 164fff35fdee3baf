"""make_quant_models.py - the quantized models of bench/quant_bench.sh.

  nbits_decode   8 layers of onnxruntime-genai's int4 MatMulNBits, 2048 x
                 2048 weights in blocks of 32, float scales, packed uint8 zero
                 points (how onnxruntime-genai ships LLMs), a Mul between
                 layers; input [1, 1, 2048]: one decode step
  nbits_prefill  the same model on a 64-row prompt: input [1, 64, 2048]
  nbits_tiny, nbits_tiny_prefill   one 64 x 64 layer on one row and on
                 64 rows: the baselines of peak memory (the same code
                 paths, tiny weights)
  dynamic_mlp    dynamic quantization as onnxruntime's quantize_dynamic
                 writes it, on a BERT-base-sized feed-forward stack: 4
                 layers (768 -> 3072 -> 768, twice), each DynamicQuantizeLinear
                 -> MatMulInteger (int8 weights, zero point 0) -> Cast -> Mul
                 by the scales -> Add the bias (Relu after the wide ones);
                 input [128, 768]
  dynamic_conv   the same for convolutions: 4 layers of DynamicQuantizeLinear
                 -> ConvInteger (64 -> 64 channels, 3x3, pads 1, int8
                 weights) -> Cast -> Mul by the scales, then Relu; input
                 [1, 64, 56, 56] (a ResNet stage's size)
  qdq_resnet18   where Debian's PyTorch is installed (python3-torch,
                 python3-torchvision): torchvision's ResNet18 (random
                 weights) quantized by PyTorch (static post-training
                 quantization, FX graph mode, the x86 backend's defaults,
                 calibrated on random images) and exported as QDQ
Each is written as OUT/NAME.onnx with its input OUT/NAME_x.npy (the input
is named "input", as run_bench.sh feeds it).
  usage: make_quant_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def nbits_model(name, layers, size, rows, block=32, bits=4):
    rng = np.random.default_rng(20261205)
    n_blocks = (size + block - 1) // block
    blob = block * bits // 8
    nodes, inits = [], []
    x = "input"
    for i in range(layers):
        w = f"w{i}"
        inits += [
            numpy_helper.from_array(rng.integers(0, 256, (size, n_blocks, blob), dtype=np.uint8), w),
            # scales of a unit-variance layer: |q - z| is about 4, K terms
            numpy_helper.from_array((rng.random(size * n_blocks) * 0.5 / np.sqrt(size)).astype(np.float32), w + "_s"),
            numpy_helper.from_array(rng.integers(0, 256, (size * ((n_blocks * bits + 7) // 8),), dtype=np.uint8),
                                    w + "_zp"),
        ]
        nodes.append(helper.make_node("MatMulNBits", [x, w, w + "_s", w + "_zp"], [f"h{i}"], domain=MS,
                                      K=size, N=size, bits=bits, block_size=block, name=f"layer{i}"))
        x = f"h{i}"
        if i + 1 < layers:  # something between the products, as a real layer has
            inits.append(numpy_helper.from_array(np.float32(0.5), f"half{i}"))
            nodes.append(helper.make_node("Mul", [x, f"half{i}"], [f"m{i}"]))
            x = f"m{i}"
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, rows, size])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
                              producer_name="make_quant_models")
    model.ir_version = 8
    x = rng.standard_normal((1, rows, size)).astype(np.float32)
    return model, x


def dynamic_mlp(out):
    rng = np.random.default_rng(20261205)
    nodes, inits, x, hidden, wide = [], [], "input", 768, 3072
    for i, (k, n) in enumerate([(hidden, wide), (wide, hidden), (hidden, wide), (wide, hidden)]):
        w = rng.standard_normal((k, n)).astype(np.float32) / np.sqrt(k)
        scale = np.float32(np.abs(w).max() / 127)
        inits += [numpy_helper.from_array(np.clip(np.round(w / scale), -127, 127).astype(np.int8), f"w{i}"),
                  numpy_helper.from_array(np.int8(0), f"wzp{i}"), numpy_helper.from_array(scale, f"ws{i}"),
                  numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), f"b{i}")]
        nodes += [helper.make_node("DynamicQuantizeLinear", [x], [f"xq{i}", f"xs{i}", f"xzp{i}"]),
                  helper.make_node("MatMulInteger", [f"xq{i}", f"w{i}", f"xzp{i}", f"wzp{i}"], [f"mi{i}"]),
                  helper.make_node("Cast", [f"mi{i}"], [f"mf{i}"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", [f"xs{i}", f"ws{i}"], [f"sc{i}"]),
                  helper.make_node("Mul", [f"mf{i}", f"sc{i}"], [f"mm{i}"]),
                  helper.make_node("Add", [f"mm{i}", f"b{i}"], [f"o{i}"])]
        x = f"o{i}"
        if n == wide:
            nodes.append(helper.make_node("Relu", [x], [f"r{i}"]))
            x = f"r{i}"
    graph = helper.make_graph(nodes, "dynamic_mlp",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [128, hidden])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_quant_models")
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "dynamic_mlp.onnx"))
    np.save(os.path.join(out, "dynamic_mlp_x.npy"), rng.standard_normal((128, hidden)).astype(np.float32))


def dynamic_conv(out):
    rng = np.random.default_rng(20261206)
    nodes, inits, x, c = [], [], "input", 64
    for i in range(4):
        w = rng.standard_normal((c, c, 3, 3)).astype(np.float32) / np.sqrt(9 * c)
        scale = np.float32(np.abs(w).max() / 127)
        inits += [numpy_helper.from_array(np.clip(np.round(w / scale), -127, 127).astype(np.int8), f"w{i}"),
                  numpy_helper.from_array(scale, f"ws{i}")]
        nodes += [helper.make_node("DynamicQuantizeLinear", [x], [f"xq{i}", f"xs{i}", f"xzp{i}"]),
                  helper.make_node("ConvInteger", [f"xq{i}", f"w{i}", f"xzp{i}"], [f"ci{i}"], pads=[1, 1, 1, 1]),
                  helper.make_node("Cast", [f"ci{i}"], [f"cf{i}"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", [f"xs{i}", f"ws{i}"], [f"sc{i}"]),
                  helper.make_node("Mul", [f"cf{i}", f"sc{i}"], [f"cm{i}"]),
                  helper.make_node("Relu", [f"cm{i}"], [f"r{i}"])]
        x = f"r{i}"
    graph = helper.make_graph(nodes, "dynamic_conv",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, 56, 56])],
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_quant_models")
    model.ir_version = 8
    onnx.save(model, os.path.join(out, "dynamic_conv.onnx"))
    np.save(os.path.join(out, "dynamic_conv_x.npy"), rng.standard_normal((1, c, 56, 56)).astype(np.float32))


def qdq_resnet18(out):
    try:
        import torch
        import torchvision
        from torch.ao.quantization import get_default_qconfig_mapping
        from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx
    except ImportError:
        print("no PyTorch: qdq_resnet18 skipped", file=sys.stderr)
        return
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    x = torch.randn(1, 3, 224, 224)
    prepared = prepare_fx(model, get_default_qconfig_mapping("x86"), example_inputs=(x,))
    with torch.no_grad():
        for _ in range(4):
            prepared(torch.randn(1, 3, 224, 224))
        torch.onnx.export(convert_fx(prepared), x, os.path.join(out, "qdq_resnet18.onnx"), opset_version=13,
                          input_names=["input"])
    np.save(os.path.join(out, "qdq_resnet18_x.npy"), x.numpy())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, layers, size, rows in [("nbits_decode", 8, 2048, 1), ("nbits_prefill", 8, 2048, 64),
                                     ("nbits_tiny", 1, 64, 1), ("nbits_tiny_prefill", 1, 64, 64)]:
        model, x = nbits_model(name, layers, size, rows)
        onnx.save(model, os.path.join(out, name + ".onnx"))
        np.save(os.path.join(out, name + "_x.npy"), x)
    dynamic_mlp(out)
    dynamic_conv(out)
    qdq_resnet18(out)


main()
