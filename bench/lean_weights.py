"""lean_weights.py - a copy of a model whose large float weights carry two
bits each: every float initializer of 4096 values or more becomes its own
standard deviation times one of four levels (-1.5, -0.5, 0.5, 1.5)/1.118
(unit variance), so that activations keep their scale while the file packs
to a tenth under xz. For moving bench models to a machine with a small
transfer budget (pack_threads_bench.sh); the time of a call does not depend
on the weights' values (none is zero, none denormal).
  usage: python3 bench/lean_weights.py IN.onnx OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def main(src, dst):
    model = onnx.load(src)
    rng = np.random.default_rng(0)
    levels = np.array([-1.5, -0.5, 0.5, 1.5], np.float32) / np.float32(1.118)
    for i, t in enumerate(model.graph.initializer):
        if t.data_type != onnx.TensorProto.FLOAT:
            continue
        w = numpy_helper.to_array(t)
        if w.size < 4096:
            continue
        std = np.float32(w.std() or 1.0)
        lean = (levels[rng.integers(0, 4, w.shape)] * std).astype(np.float32)
        model.graph.initializer[i].CopyFrom(numpy_helper.from_array(lean, t.name))
    onnx.save(model, dst)


if __name__ == "__main__":
    main(*sys.argv[1:])
