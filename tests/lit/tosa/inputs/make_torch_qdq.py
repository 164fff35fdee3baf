#!/usr/bin/python3
"""Writes torch_qdq_cnn.onnx, torch_ptq_cnn.onnx and xt13.npy for
tests/lit/tosa/quant.test: a small CNN (Conv+ReLU, MaxPool, a residual
Conv+ReLU with an Add, a strided Conv+ReLU, global average pooling,
Linear) quantized by PyTorch's own quantizer, both ways PyTorch models
reach ONNX as QuantizeLinear/DequantizeLinear pairs (opset 13):
- torch_qdq_cnn: FX graph mode quantization-aware preparation (per-tensor
  uint8 activations, per-channel symmetric int8 weights, moving-average
  min/max observers calibrated on 32 random batches), exported with its
  fake-quantize modules;
- torch_ptq_cnn: FX post-training static quantization (the fbgemm default
  mapping, calibrated on the same batches), converted to quantized
  modules and exported: int8 weights stored as such, the quantized
  modules written as Q/DQ around float ops. Needs Debian's
python3-torch (1.13); the outputs are committed, so the tests do not.
Run from tests/lit/tosa/inputs:
    /usr/bin/python3 make_torch_qdq.py
"""
import numpy as np
import torch
import torch.nn as nn
from torch.ao.quantization import (FakeQuantize, MovingAverageMinMaxObserver,
                                   MovingAveragePerChannelMinMaxObserver, QConfig, QConfigMapping,
                                   disable_observer)
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx, prepare_qat_fx

torch.manual_seed(0)


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.r1 = nn.Conv2d(3, 8, 3, padding=1), nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.c2, self.r2 = nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()
        self.c3, self.r3 = nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU()
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(self.r1(self.c1(x)))
        x = x + self.r2(self.c2(x))
        x = self.r3(self.c3(x))
        return self.fc(torch.flatten(self.gap(x), 1))


# FakeQuantize exports as QuantizeLinear + DequantizeLinear (the fused
# default QAT modules have no ONNX export); ONNX takes int8 as [-128, 127]
qconfig = QConfig(
    activation=FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                      dtype=torch.quint8),
    weight=FakeQuantize.with_args(observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128,
                                  quant_max=127, dtype=torch.qint8, qscheme=torch.per_channel_symmetric,
                                  ch_axis=0))
example = (torch.randn(1, 3, 16, 16),)
calibration = [torch.randn(4, 3, 16, 16) for _ in range(32)]
model = SmallCnn()
float_state = {k: v.clone() for k, v in model.state_dict().items()}
prepared = prepare_qat_fx(model.train(), QConfigMapping().set_global(qconfig), example)
with torch.no_grad():
    for batch in calibration:
        prepared(batch)
prepared.apply(disable_observer)
prepared.eval()
torch.onnx.export(prepared, example, "torch_qdq_cnn.onnx", opset_version=13, input_names=["x"],
                  output_names=["y"])

ptq = SmallCnn()
ptq.load_state_dict(float_state)
ptq = prepare_fx(ptq.eval(), get_default_qconfig_mapping("fbgemm"), example)
with torch.no_grad():
    for batch in calibration:
        ptq(batch)
torch.onnx.export(convert_fx(ptq), example, "torch_ptq_cnn.onnx", opset_version=13, input_names=["x"],
                  output_names=["y"])
np.random.seed(1)
np.save("xt13.npy", np.random.randn(1, 3, 16, 16).astype(np.float32))
