#!/usr/bin/env python3
"""Writes mel.onnx (one MelWeightMatrix of five scalar inputs) and, for a few
parameter sets, the inputs (case<k>_<name>.npy) and NumPy's matrix
(case<k>_ref.npy), computed as ONNX's operator spec and reference describe
it (triangular filters between mel-spaced edges).
  usage: make_mel.py OUTDIR   (with /usr/bin/python3)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, save

NAMES = ["num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"]
CASES = [(8, 16, 8192, 0.0, 4096.0), (20, 512, 16000, 20.0, 7600.0), (40, 400, 16000, 0.0, 8000.0),
         (5, 64, 22050, 300.0, 3000.0)]


def mel_matrix(bins, dft, rate, lo, hi):
    lo_mel = np.float32(2595) * np.log10(np.float32(1) + np.float32(lo) / np.float32(700))
    hi_mel = np.float32(2595) * np.log10(np.float32(1) + np.float32(hi) / np.float32(700))
    step = (float(hi_mel) - float(lo_mel)) / (bins + 2)
    hz = 700.0 * (10.0 ** ((np.arange(bins + 2) * step + float(lo_mel)) / 2595.0) - 1.0)
    edge = np.floor((dft + 1) * hz / rate).astype(np.int64)
    out = np.zeros((dft // 2 + 1, bins))
    for i in range(bins):
        left, center, right = edge[i], edge[i + 1], edge[i + 2]
        if center == left:
            out[center, i] = 1
        else:
            for j in range(left, center + 1):
                out[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            out[j, i] = (right - j) / (right - center)
    return out.astype(np.float32)


def main():
    out = sys.argv[1]
    types = [TensorProto.INT32] * 3 + [TensorProto.FLOAT] * 2
    node = helper.make_node("MelWeightMatrix", NAMES, ["y"])
    graph = helper.make_graph([node], "mel", [helper.make_tensor_value_info(n, t, []) for n, t in zip(NAMES, types)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(out, "mel.onnx"))
    for k, case in enumerate(CASES):
        for name, value, t in zip(NAMES, case, types):
            np.save(os.path.join(out, f"case{k}_{name}.npy"),
                    np.array(value, dtype=np.int32 if t == TensorProto.INT32 else np.float32))
        np.save(os.path.join(out, f"case{k}_ref.npy"), mel_matrix(*case))


if __name__ == "__main__":
    main()
