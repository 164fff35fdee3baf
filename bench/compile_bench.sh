#!/usr/bin/env bash
# compile_bench.sh - how long a model takes from file to runnable code: ours
# (`onnx2mlir run --no-cache`: load + emit + compile, the best of R runs)
# against onnxruntime's session creation (npm onnxruntime-node, graph
# optimizations on, one thread; the best of R), in the same run, per model and
# per node; then how compile time grows with repeated layers: the same
# encoder (hidden 128) with 24 layers against 2 (the issue's target: at most
# 3x), and each with the sharing of repeated layers off
# (ONNX2MLIR_NO_SHARED_LAYERS=1); and a detector with its post-processing
# (torchvision SSDlite320, ~3500 nodes; the issue's target: at most 5 s).
# Models: the run benchmark's (make_run_models.py) and, with Debian's PyTorch,
# the torchvision ones, the layered encoders, the detector, RAFT-small
# (GridSample, a recurrent update block), a CRNN-style OCR recognizer with a
# dynamic width (make_torchvision_models.py) and a
# PyTorch-quantized QDQ ResNet18 (make_quant_models.py). The issue's other
# target, none above 1.5 s, is the "over 1.5 s" line.
#   usage: bench/compile_bench.sh [BUILD_DIR] [R]   (default: build 3; files in bench/out)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${2:-3}
out=bench/out
tool="$build/onnx2mlir"
[ -x "$tool" ] || { echo "no $tool: build first (cmake --build $build)" >&2; exit 2; }
mkdir -p "$out"
models="resnet_small encoder_small"
[ -f "$out/encoder_small.onnx" ] || /usr/bin/python3 bench/make_run_models.py "$out" >/dev/null
if /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  [ -f "$out/ssdlite.onnx" ] && [ -f "$out/raft_small.onnx" ] && [ -f "$out/ocr_crnn.onnx" ] ||
    /usr/bin/python3 bench/make_torchvision_models.py "$out" >/dev/null
  [ -f "$out/qdq_resnet18.onnx" ] || /usr/bin/python3 bench/make_quant_models.py "$out" >/dev/null
  models="$models resnet18 mobilenet_v2 squeezenet bert_encoder vit_small encoder_l2 encoder_l24 ssdlite raft_small ocr_crnn qdq_resnet18"
fi
if [ ! -f bench/node_modules/onnxruntime-node/package.json ]; then
  (cd bench && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

# ours MODEL [ENV...] -> the best load+emit+compile ms of R runs
ours() {
  local m=$1 best=""
  shift
  for _ in $(seq "$reps"); do
    env "$@" "$tool" run "$out/$m.onnx" --input "input=$out/${m}_x.npy" --no-cache --threads 1 \
      -o "$out/compile_bench_out" --npy --repeat 1 2>"$out/compile_bench.err" || { cat "$out/compile_bench.err" >&2; exit 1; }
    local t
    t=$(sed -n 's/^load: \([0-9.]*\) ms, emit: \([0-9.]*\) ms, compile: \([0-9.]*\) ms.*/\1 \2 \3/p' "$out/compile_bench.err" |
      awk '{print $1 + $2 + $3}')
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}
ort() { # ort MODEL -> the best session-creation ms of R
  local best=""
  for _ in $(seq "$reps"); do
    local t
    t=$(node bench/ort_time.mjs "$out/$1.onnx" "$out/${1}_x.npy" "$out/compile_bench_ort.npy" 1 |
      sed 's/.*"create_ms":\([0-9.]*\).*/\1/')
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}

rows=""
for m in $models; do
  echo "== $m" >&2
  nodes=$(/usr/bin/python3 -c "import onnx, sys; print(len(onnx.load(sys.argv[1], load_external_data=False).graph.node))" "$out/$m.onnx")
  rows="$rows$m $nodes $(ours "$m") $(ort "$m")
"
done
scaling=""
if [ -f "$out/encoder_l24.onnx" ]; then
  for m in encoder_l2 encoder_l24; do
    scaling="$scaling$m $(ours "$m" ONNX2MLIR_NO_SHARED_LAYERS=1)
"
  done
fi
rm -rf "$out/compile_bench_out" "$out/compile_bench.err" "$out/compile_bench_ort.npy"

/usr/bin/python3 - "$rows" "$scaling" <<'EOF'
import math, sys
rows = [r.split() for r in sys.argv[1].strip().splitlines()]
print("| model | nodes | ours: load+emit+compile ms | onnxruntime: session ms | ratio | ours ms per node |")
print("|---|---:|---:|---:|---:|---:|")
ratios, ours = [], {}
for model, nodes, o, r in rows:
    o, r, nodes = float(o), float(r), int(nodes)
    ours[model] = o
    ratios.append(o / r)
    print(f"| {model} | {nodes} | {o:.0f} | {r:.0f} | {o / r:.2f} | {o / nodes:.2f} |")
print(f"geometric mean of the ratios: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")
slow = [f"{m} {t / 1000:.2f} s" for m, t in ours.items() if t > 1500 and m != "ssdlite"]
print("over 1.5 s (SSDlite aside, its own target below): " + (", ".join(slow) if slow else "none"))
if "ssdlite" in ours:
    print(f"SSDlite320 (a detector with its post-processing): {ours['ssdlite'] / 1000:.1f} s (the issue's target: at most 5 s)")
if "encoder_l24" in ours:
    off = dict((m, float(t)) for m, t in (r.split() for r in sys.argv[2].strip().splitlines()))
    print(f"encoder with 24 layers / with 2: {ours['encoder_l24'] / ours['encoder_l2']:.2f}x "
          f"({ours['encoder_l24']:.0f} / {ours['encoder_l2']:.0f} ms); with sharing off: "
          f"{off['encoder_l24'] / off['encoder_l2']:.2f}x ({off['encoder_l24']:.0f} / {off['encoder_l2']:.0f} ms)")
EOF
