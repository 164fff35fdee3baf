#!/usr/bin/env python3
"""Exports the issue's target models with Debian's PyTorch (python3-torch,
python3-torchvision): random weights from a fixed seed, eval mode, batch 1,
the exporter's constant folding on (so BatchNormalization is folded into the
convolutions, as deployed models have it).

  resnet18.onnx      torchvision ResNet18, input [1,3,224,224]
  mobilenet_v2.onnx  torchvision MobileNetV2, input [1,3,224,224]
  squeezenet.onnx    torchvision SqueezeNet 1.1, input [1,3,224,224]
  bert_encoder.onnx  a BERT-style encoder (torch.nn.TransformerEncoder, 4 post-LN
                     layers, hidden 384, 6 heads, FFN 1536, GELU), input [1,128,384]
  encoder_l2.onnx, encoder_l24.onnx   the same encoder at hidden 128, 4 heads,
                     with 2 and 24 layers, input [1,64,128] (compile_bench.sh: how
                     compile time grows with repeated layers)
  vit_small.onnx     a small ViT (torchvision's VisionTransformer: 224x224 in
                     16x16 patches, 6 pre-LN layers, hidden 384, 6 heads, MLP 1536,
                     1000 classes), input [1,3,224,224]
  ssdlite.onnx       torchvision SSDlite320 (MobileNetV3-Large, 91 classes) with
                     its post-processing (a block per class, NMS): about 3500
                     nodes, input [3,320,320]; outputs boxes, scores, labels
  raft_small.onnx    torchvision RAFT-small (optical flow: correlation pyramid,
                     GridSample lookups, a convolutional GRU) with 6 flow
                     updates, about 940 nodes; its two images side by side in
                     one input [1,6,128,128]; output the last flow [1,2,128,128]
  ocr_crnn.onnx      a CRNN-style text recognizer (convolutions over a line 32
                     pixels high, a bidirectional LSTM along its width, 97 class
                     scores per column), the width a dynamic dim; input
                     [1,3,32,256], output [1,64,97]
  <name>_x.npy       the inputs

Usage: make_torchvision_models.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
import torch
import torchvision

OPSET = 17


class Encoder(torch.nn.Module):
    def __init__(self, layers=4, hidden=384, heads=6):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=hidden, nhead=heads, dim_feedforward=4 * hidden,
                                                 activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        # the layers are copies of one: weights of their own, so that the
        # exporter does not share them
        with torch.no_grad():
            for name, p in self.named_parameters():
                if "norm" not in name:
                    p.normal_(0.0, 0.05)

    def forward(self, x):
        return self.encoder(x)


def export(model, shape, out, name, dynamic_axes=None):
    torch.manual_seed(0)
    model.eval()
    x = torch.from_numpy(np.random.default_rng(1).standard_normal(shape, dtype=np.float32))
    path = os.path.join(out, name + ".onnx")
    # with gradients on: PyTorch's fused inference kernel of the encoder layer
    # (taken under no_grad) has no ONNX export
    torch.onnx.export(model, (x,), path, input_names=["input"], output_names=["output"],
                      opset_version=OPSET, do_constant_folding=True, dynamic_axes=dynamic_axes)
    np.save(os.path.join(out, name + "_x.npy"), x.numpy())
    print(f"wrote {path} and {name}_x.npy {list(shape)}")


class Detector(torch.nn.Module):
    """torchvision's detectors take a list of images and give a list of dicts."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        r = self.model([x])[0]
        return r["boxes"], r["scores"], r["labels"]


class CRNN(torch.nn.Module):
    """A CRNN-style text recognizer (as OCR pipelines' recognition stage):
    convolutions over a line 32 pixels high, a bidirectional LSTM along its
    width, class scores per column."""

    def __init__(self, classes=97):
        super().__init__()
        c = torch.nn
        self.features = c.Sequential(
            c.Conv2d(3, 32, 3, padding=1), c.ReLU(), c.MaxPool2d(2),
            c.Conv2d(32, 64, 3, padding=1), c.ReLU(), c.MaxPool2d(2),
            c.Conv2d(64, 128, 3, padding=1), c.BatchNorm2d(128), c.ReLU(),
            c.Conv2d(128, 128, 3, padding=1), c.ReLU(), c.MaxPool2d((2, 1)),
            c.Conv2d(128, 192, 3, padding=1), c.BatchNorm2d(192), c.ReLU(), c.MaxPool2d((4, 1)))
        self.rnn = c.LSTM(192, 96, bidirectional=True, batch_first=True)
        self.head = c.Linear(192, classes)

    def forward(self, x):
        f = self.features(x).squeeze(2).permute(0, 2, 1)
        y, _ = self.rnn(f)
        return self.head(y).log_softmax(-1)


class FlowPair(torch.nn.Module):
    """RAFT takes two images: here one input holds both, in its channels."""

    def __init__(self, model, updates):
        super().__init__()
        self.model, self.updates = model, updates

    def forward(self, x):
        return self.model(x[:, :3], x[:, 3:], num_flow_updates=self.updates)[-1]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "bench/out"
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    export(torchvision.models.resnet18(), (1, 3, 224, 224), out, "resnet18")
    torch.manual_seed(0)
    export(torchvision.models.mobilenet_v2(), (1, 3, 224, 224), out, "mobilenet_v2")
    torch.manual_seed(0)
    export(torchvision.models.squeezenet1_1(), (1, 3, 224, 224), out, "squeezenet")
    torch.manual_seed(0)
    export(Encoder(), (1, 128, 384), out, "bert_encoder")
    for layers in (2, 24):
        torch.manual_seed(0)
        export(Encoder(layers, 128, 4), (1, 64, 128), out, f"encoder_l{layers}")
    torch.manual_seed(0)
    vit = torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=6, num_heads=6,
                                               hidden_dim=384, mlp_dim=1536)
    # torchvision starts the head at zero: every output would be 0 and the
    # benches' comparisons with onnxruntime would check nothing
    with torch.no_grad():
        vit.heads.head.weight.normal_(0.0, 0.02)
    export(vit, (1, 3, 224, 224), out, "vit_small")
    torch.manual_seed(0)
    ssd = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    export(Detector(ssd), (3, 320, 320), out, "ssdlite")
    torch.manual_seed(0)
    raft = torchvision.models.optical_flow.raft_small(weights=None)
    export(FlowPair(raft, 6), (1, 6, 128, 128), out, "raft_small")
    torch.manual_seed(0)
    export(CRNN(), (1, 3, 32, 256), out, "ocr_crnn", {"input": {3: "width"}, "output": {1: "steps"}})


if __name__ == "__main__":
    main()
