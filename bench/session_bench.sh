#!/usr/bin/env bash
# session_bench.sh - a session's cost from Python against the CLI's and
# onnxruntime's (bench/session_bench.py says what is measured): per-call
# overhead of InferenceSession.run, creation on a warm disk cache, and a
# decoder's generation loop against onnxruntime-node's.
#   usage: bench/session_bench.sh [BUILD_DIR] [N]   (default: build 50; files in bench/out)
set -eu
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
runs=${2:-50}
out=bench/out
mkdir -p "$out"
[ -f "$out/resnet_small.onnx" ] || /usr/bin/python3 bench/make_run_models.py "$out"
/usr/bin/python3 tests/session/make_decoder.py "$out/decoder.onnx"
# the bundled example as a third, tiny model (its first image)
/usr/bin/python3 - "$out" <<'PY'
import shutil, sys
import numpy as np
from onnx import TensorProto, numpy_helper
t = TensorProto()
t.ParseFromString(open("examples/small_cnn_inputs/input_0.pb", "rb").read())
np.save(sys.argv[1] + "/small_cnn_x.npy", numpy_helper.to_array(t)[:1].astype(np.float32))
shutil.copy("examples/small_cnn.onnx", sys.argv[1] + "/small_cnn.onnx")
PY
if [ ! -f bench/node_modules/onnxruntime-node/package.json ]; then
  (cd bench && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
pymod="$out/pymod/onnx2mlir"
mkdir -p "$pymod" && cp python/onnx2mlir/*.py "$build/python/_config.py" "$pymod/"
models="$out/small_cnn.onnx $out/resnet_small.onnx $out/encoder_small.onnx"
# the torchvision models too where Debian's PyTorch made them (make_torchvision_models.py)
for m in resnet18 mobilenet_v2 squeezenet bert_encoder vit_small; do
  [ -f "$out/$m.onnx" ] && models="$models $out/$m.onnx"
done
PYTHONPATH="$out/pymod" ONNX2MLIR_LIBRARY="$build/libonnx2mlir.so" /usr/bin/python3 bench/session_bench.py \
  "$build" "$out" "$runs" $models
