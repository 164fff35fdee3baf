#!/usr/bin/env bash
# big_weights.sh - does `run` stay lean with large external weights? Runs one
# graph (three chained MatMuls, make_big_weights.py) with 3 GiB of weights in
# an external file and with 768 KiB inline, and prints for each the compile
# time (import to runnable code, --no-cache) and the peak memory (maximum
# resident set, GNU time), and the big model's peak over its weight bytes.
# The weights are arguments read in place from the mapping, so compile time
# should not grow with them and the peak should stay near the weight bytes.
#   usage: bench/big_weights.sh [BUILD_DIR] [N]   (default build 16384; files in bench/out)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
n=${2:-16384}
out=bench/out
tool="$build/onnx2mlir"
[ -x "$tool" ] || { echo "no $tool: build first" >&2; exit 2; }
mkdir -p "$out"
want=$((3 * n * n * 4))
have=$(stat -c %s "$out/big/weights.bin" 2>/dev/null || echo 0)
[ "$have" -eq "$want" ] && [ -f "$out/small/model.onnx" ] || /usr/bin/python3 bench/make_big_weights.py "$out" "$n"
for m in small big; do
  /usr/bin/time -f "peak_kb %M" "$tool" run "$out/$m/model.onnx" --input "x=$out/${m}_x.npy" --no-cache \
    --repeat 1 -o "$out/big_weights_$m" --npy 2>"$out/big_weights_$m.err" >/dev/null ||
    { cat "$out/big_weights_$m.err" >&2; exit 1; }
done
/usr/bin/python3 - "$out" "$want" <<'PY'
import re, sys
out, weight_bytes = sys.argv[1], int(sys.argv[2])
rows = {}
for m in ("small", "big"):
    text = open(f"{out}/big_weights_{m}.err").read()
    v = dict((k, float(x)) for k, x in re.findall(r"(load|emit|compile|median) ([0-9.]+)", text.replace(":", "")))
    peak = int(re.search(r"peak_kb (\d+)", text).group(1)) * 1024
    rows[m] = (v["load"] + v["emit"] + v["compile"], v["median"], peak)
    print(f"{m}: load+emit+compile {rows[m][0]:.0f} ms, call {v['median']:.1f} ms, peak RSS {peak / 2**20:.0f} MiB")
print(f"big/small compile time: {rows['big'][0] / rows['small'][0]:.2f}x; "
      f"big peak RSS / weight bytes: {rows['big'][2] / weight_bytes:.2f} ({weight_bytes / 2**30:.2f} GiB of weights)")
PY
