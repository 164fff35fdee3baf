#!/usr/bin/env bash
# import_bench.sh - speed and memory of `onnx2mlir info` and `import` against
# the first step of torch-mlir's importer (onnx.load + infer_shapes in
# Python) and against `cp` of the same files, measured in one run; the
# import in both as-written forms (torch, onnx).
# Prints wall time and peak RSS of each, then the ratios.
#   usage: bench/import_bench.sh [BUILD_DIR]   (models go to bench/out)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
out=bench/out
[ -f "$out/inline_100m.onnx" ] || /usr/bin/python3 bench/make_models.py "$out"
tool="$build/onnx2mlir"
measure() { # measure REPS CMD... -> prints "best_seconds max_rss_kib"
  local reps=$1 best="" rss=0
  shift
  for _ in $(seq "$reps"); do
    local t0 t1 m t
    t0=$(date +%s%N)
    m=$(/usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -n 1)
    t1=$(date +%s%N)
    t=$(echo "scale=4; ($t1 - $t0) / 1000000000" | bc)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
    [ "$m" -gt "$rss" ] && rss=$m
  done
  echo "$best $rss"
}
ratio() { echo "scale=1; $1 / $2" | bc; }
report() { # report NAME MODEL WEIGHT_BYTES FILES...
  local name=$1 model=$2 weights=$3
  shift 3
  sync
  local base info imp cp_
  base=$(measure 2 /usr/bin/python3 -c "import onnx,sys; m=onnx.load(sys.argv[1]); onnx.shape_inference.infer_shapes(m)" "$model")
  info=$(measure 5 "$tool" info "$model")
  imp=$(measure 3 "$tool" import "$model" -o "$out/x.mlirbc")
  rm -f "$out/x.mlirbc" && sync # the pages of the last output must not slow the next one
  imp_onnx=$(measure 3 "$tool" import --to onnx "$model" -o "$out/x.mlirbc")
  rm -rf "$out/cp" && mkdir -p "$out/cp"
  cp_=$(measure 3 cp "$@" "$out/cp/")
  rm -rf "$out/cp" "$out/x.mlirbc"
  local mib=$((weights / 1048576))
  echo "== $name ($mib MiB of weights)"
  printf '  %-28s %8ss %10s KiB\n' "python onnx.load+infer" ${base% *} ${base#* }
  printf '  %-28s %8ss %10s KiB\n' "onnx2mlir info" ${info% *} ${info#* }
  printf '  %-28s %8ss %10s KiB\n' "onnx2mlir import .mlirbc" ${imp% *} ${imp#* }
  printf '  %-28s %8ss %10s KiB\n' "import --to onnx .mlirbc" ${imp_onnx% *} ${imp_onnx#* }
  printf '  %-28s %8ss %10s KiB\n' "cp" ${cp_% *} ${cp_#* }
  echo "  info speedup vs baseline:     $(ratio ${base% *} ${info% *})x"
  echo "  info peak RSS / weight bytes: $(echo "scale=4; ${info#* } * 1024 / $weights" | bc)"
  echo "  import time / cp time:        $(echo "scale=2; ${imp% *} / ${cp_% *}" | bc)"
  echo "  import peak RSS / weights:    $(echo "scale=3; ${imp#* } * 1024 / $weights" | bc)"
  echo "  onnx form time / cp time:     $(echo "scale=2; ${imp_onnx% *} / ${cp_% *}" | bc)"
  echo "  onnx form peak RSS / weights: $(echo "scale=3; ${imp_onnx#* } * 1024 / $weights" | bc)"
}
report "1 GiB external data" "$out/big_external/model.onnx" $((64 * (2048 * 2048 + 2048) * 4)) \
  "$out/big_external/model.onnx" "$out/big_external/weights.bin"
report "100 MiB inline" "$out/inline_100m.onnx" $((25 * (1024 * 1024 + 1024) * 4)) "$out/inline_100m.onnx"
