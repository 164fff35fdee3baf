#!/usr/bin/env bash
# threads_bench.sh - the scaling table of issue 26: each model's median call
# with 1, 2, ... nproc threads, ours (`run --threads N --repeat`) and
# onnxruntime's (bench/ort_time.mjs with ORT_THREADS=N intra-op threads),
# in the same run, on the bench models and where Debian's PyTorch made them
# the torchvision models (bench/make_torchvision_models.py).
#   usage: bench/threads_bench.sh [BUILD_DIR] [N]   (default: build 20; files in bench/out)
set -eu
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
runs=${2:-20}
out=bench/out
mkdir -p "$out"
[ -f "$out/resnet_small.onnx" ] || /usr/bin/python3 bench/make_run_models.py "$out"
models=${MODELS:-resnet_small encoder_small}
if [ -z "${MODELS:-}" ] && /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  [ -f "$out/vit_small.onnx" ] || /usr/bin/python3 bench/make_torchvision_models.py "$out"
  models="$models resnet18 mobilenet_v2 squeezenet bert_encoder vit_small"
fi
[ -f bench/node_modules/onnxruntime-node/package.json ] ||
  (cd bench && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
cores=$(nproc)
printf "| model | threads | ours ms | onnxruntime ms | ours/ort |\n|---|---|---|---|---|\n"
for m in $models; do
  for t in $(seq 1 "$cores"); do
    ours=$("$build/onnx2mlir" run "$out/$m.onnx" --input "input=$out/${m}_x.npy" --no-cache --repeat "$runs" \
      --threads "$t" 2>&1 >/dev/null | grep -o 'median [0-9.]*' | head -n 1 | cut -d' ' -f2)
    ort=$(ORT_THREADS=$t node bench/ort_time.mjs "$out/$m.onnx" "$out/${m}_x.npy" "$out/ort_threads.npy" "$runs" |
      /usr/bin/python3 -c "import json, sys; print(json.load(sys.stdin)['median_ms'])")
    /usr/bin/python3 -c "import sys; m, t, a, b = sys.argv[1:]; print('| %s | %s | %.2f | %.2f | %.2f |' % (m, t, float(a), float(b), float(a) / float(b)))" \
      "$m" "$t" "$ours" "$ort"
  done
done
