#!/usr/bin/env bash
# run_fuzz.sh SECONDS - builds the libFuzzer target with clang-22, ASan and
# UBSan, seeds it with small models from the test suites and fuzzes for
# SECONDS. Exits non-zero on any crash, leak or sanitizer report.
set -eu
cd "$(dirname "$0")/../.."
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
CC=clang-22 CXX=clang++-22 cmake -S . -B "$build" -DO2M_FUZZ=ON -DO2M_SANITIZE=ON \
  -DO2M_WITH_MLIR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build "$build" --target fuzz_import -j"$(nproc)" > /dev/null
corpus="$build/corpus"
mkdir -p "$corpus"
i=0
for m in examples/*.onnx tests/lit/inputs/*.onnx ../shared/onnx-node-tests/*/model.onnx \
         /usr/share/libonnx-testdata/data/node/*/model.onnx; do
  [ -f "$m" ] || continue
  [ "$(stat -c %s "$m")" -le 4096 ] || continue
  cp "$m" "$corpus/seed_$i.onnx"
  i=$((i + 1))
  [ "$i" -ge 400 ] && break
done
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$build/fuzz_import" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 \
  -timeout=10 -print_final_stats=1 -artifact_prefix="$build/" "$corpus"
