#!/usr/bin/env bash
# compiled_bench.sh - a `compile`d library's call (bench/compiled_call.c,
# from C) against `onnx2mlir run --repeat`'s median on the same machine and
# input, in the same run, one thread: the bench models (make_run_models.py),
# the bundled CNN, and where Debian's PyTorch is installed the torchvision
# models (make_torchvision_models.py). Checks the outputs agree (rtol 1e-4)
# and prints the ratios and their geometric mean.
#   usage: bench/compiled_bench.sh [BUILD_DIR] [N]   (default: build 20; files in bench/out)
set -eu
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
runs=${2:-20}
out=bench/out
mkdir -p "$out"
[ -f "$out/resnet_small.onnx" ] || /usr/bin/python3 bench/make_run_models.py "$out"
models="resnet_small encoder_small"
if [ -z "${MODELS:-}" ] && /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  [ -f "$out/vit_small.onnx" ] || /usr/bin/python3 bench/make_torchvision_models.py "$out"
  models="$models resnet18 mobilenet_v2 squeezenet bert_encoder vit_small"
fi
models=${MODELS:-$models}
cc -O2 bench/compiled_call.c -ldl -o "$out/compiled_call"
results="$out/compiled_results.txt"
: > "$results"
for m in $models; do
  echo "== $m" >&2
  "$build/onnx2mlir" compile "$out/$m.onnx" -o "$out/lib_$m.so"
  lib=$("$out/compiled_call" "$out/lib_$m.so" "$out/${m}_x.npy" "$out/compiled_$m.npy" "$runs")
  rm -rf "$out/run_$m"
  "$build/onnx2mlir" run "$out/$m.onnx" --input "input=$out/${m}_x.npy" --no-cache --repeat "$runs" --npy \
    -o "$out/run_$m" 2> "$out/run_$m.err"
  run=$(grep -o 'median [0-9.]*' "$out/run_$m.err" | head -n 1)
  echo "$m|$lib|$run" >> "$results"
done
/usr/bin/python3 - "$results" "$out" <<'PY'
import sys
import numpy as np
rows, ok = [], True
for line in open(sys.argv[1]):
    m, lib, run = line.strip().split("|")
    lib_ms, run_ms = float(lib.split()[1]), float(run.split()[1])
    a = np.load("%s/compiled_%s.npy" % (sys.argv[2], m))
    b = np.load("%s/run_%s/output_0.npy" % (sys.argv[2], m))
    same = a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-5)
    ok &= same
    rows.append((m, lib_ms, run_ms, same))
print("| model | compiled library call ms | run --repeat ms | library / run | outputs agree |")
print("|---|---|---|---|---|")
for m, l, r, same in rows:
    print("| %s | %.3f | %.3f | %.2f | %s |" % (m, l, r, l / r, "yes" if same else "NO"))
print("geometric mean of library / run: %.2f over %d models"
      % (np.exp(np.mean([np.log(l / r) for _, l, r, _ in rows])), len(rows)))
sys.exit(0 if ok else 1)
PY
