#!/usr/bin/env bash
# threads_bundle_run.sh - the far side of pack_threads_bench.sh: for each
# packed model and thread count (1, 2, 4, ... and every core), the
# compiled library's median call (compiled_call, ONNX2MLIR_THREADS=N) and
# onnxruntime's (ort_time.py, ORT_THREADS=N intra-op threads), in
# alternation, then each model's ratio and the geometric mean per thread
# count; checks that both give the same outputs (rtol 1e-3: onnxruntime
# fuses differently). Also our call with every core at two other grains
# (ONNX2MLIR_PARALLEL_GRAIN) to see the split loops' share.
#   usage: threads_bundle_run.sh [N]   (N runs per measurement, default 30)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-30}
py=${PYTHON:-python3}
export LD_LIBRARY_PATH="$here/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cores=$(nproc)
counts=1
t=2
while [ "$t" -lt "$cores" ]; do counts="$counts $t"; t=$((t * 2)); done
[ "$cores" -gt 1 ] && counts="$counts $cores"
grep -m1 'model name' /proc/cpuinfo || true
for lib in "$here"/libs/*; do   # a library that cannot load leaves the runtime on its loops: say so
  $py -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" "$lib" 2>/dev/null || echo "WARNING: $lib does not load here"
done
echo "cores: $cores; onnxruntime $($py -c 'import onnxruntime; print(onnxruntime.__version__)')"
rows=$(mktemp)
for m in $(cat "$here/models.txt"); do
  d="$here/models"
  for t in $counts; do
    ours=$(ONNX2MLIR_THREADS=$t "$here/compiled_call" "$d/lib_$m.so" "$d/${m}_x.npy" "$d/ours_$m.npy" "$runs" | awk '{print $2}')
    ort=$(ORT_THREADS=$t $py "$here/ort_time.py" "$d/$m.onnx" "$d/${m}_x.npy" "$d/ort_$m.npy" "$runs" |
      $py -c "import json, sys; print(json.load(sys.stdin)['median_ms'])")
    same=$($py -c "import numpy as np, sys; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); \
print('yes' if a.shape == b.shape and np.allclose(a, b, rtol=1e-3, atol=1e-4) else 'NO')" "$d/ours_$m.npy" "$d/ort_$m.npy")
    echo "$m $t $ours $ort $same" | tee -a "$rows" >&2
  done
  for g in 8192 131072; do
    ours=$(ONNX2MLIR_PARALLEL_GRAIN=$g ONNX2MLIR_THREADS=$cores "$here/compiled_call" "$d/lib_$m.so" "$d/${m}_x.npy" \
      "$d/ours_$m.npy" "$runs" | awk '{print $2}')
    echo "grain $g: $m $cores threads $ours ms" >&2
  done
done
$py - "$rows" <<'PY'
import math, sys
rows = [l.split() for l in open(sys.argv[1])]
print("| model | threads | ours ms | onnxruntime ms | ours/ort | outputs agree |")
print("|---|---|---|---|---|---|")
for m, t, a, b, same in rows:
    print("| %s | %s | %.2f | %.2f | %.2f | %s |" % (m, t, float(a), float(b), float(a) / float(b), same))
for t in sorted({int(r[1]) for r in rows}):
    rs = [float(r[2]) / float(r[3]) for r in rows if int(r[1]) == t]
    print("geometric mean ours/ort with %d threads: %.2f over %d models" % (t, math.exp(sum(map(math.log, rs)) / len(rs)), len(rs)))
one = {r[0]: float(r[2]) for r in rows if r[1] == "1"}
top = max(int(r[1]) for r in rows)
print("speed-up of ours, %d threads against 1: " % top +
      ", ".join("%s %.2fx" % (r[0], one[r[0]] / float(r[2])) for r in rows if int(r[1]) == top))
PY
