#!/usr/bin/env bash
# run_fuzz.sh SECONDS [TARGET...] - builds the libFuzzer targets with
# clang-22, ASan and UBSan, seeds them with small models from the test
# suites and fuzzes each for SECONDS. Exits non-zero on any crash, leak,
# timeout or sanitizer report (the reproducer is left in the build dir).
# Targets (default: all three):
#   import  the reader and inference (build-fuzz, no MLIR)
#   lower   the five import forms (build-fuzz-mlir)
#   run     o2m_model_run on Linalg or TOSA
# All three mutate models as models (fuzz_mutator.c).
# Environment: FUZZ_BUILD_DIR (default build-fuzz) is the build without
# MLIR, FUZZ_MLIR_BUILD_DIR (default that dir with -mlir) the one with it
# (tests/run.sh passes the session suite's ASan build, configured alike);
# FUZZ_JOBS runs that many fuzzing processes per target (default 1);
# FUZZ_SEED fixes libFuzzer's seed (default 0: a new one each run; CI's
# short runs pass one, so a failure there reproduces).
set -eu
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
targets=${*:-import lower run}
build=${FUZZ_BUILD_DIR:-build-fuzz}
mlir_build=${FUZZ_MLIR_BUILD_DIR:-$build-mlir}
jobs=${FUZZ_JOBS:-1}
seed=${FUZZ_SEED:-0}

configure() { # configure DIR WITH_MLIR
  CC=clang-22 CXX=clang++-22 cmake -S . -B "$1" -DO2M_FUZZ=ON -DO2M_SANITIZE=ON \
    -DO2M_WITH_MLIR="$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$1.cmake.log" 2>&1 ||
    { tail -n 30 "$1.cmake.log"; exit 1; }
}

seed_corpus() { # seed_corpus DIR MAX: up to MAX small models of the suites
  mkdir -p "$1"
  local i=0 m
  for m in examples/*.onnx tests/lit/inputs/*.onnx ../shared/onnx-node-tests/*/model.onnx \
           /usr/share/libonnx-testdata/data/node/*/model.onnx; do
    [ -f "$m" ] || continue
    [ "$(stat -c %s "$m")" -le 4096 ] || continue
    cp "$m" "$1/seed_$i.onnx"
    i=$((i + 1))
    [ "$i" -ge "$2" ] && break
  done
}

fuzz() { # fuzz DIR TARGET
  local dir=$1 target=$2 parallel=()
  # several processes log to fuzz-N.log in the current folder; one logs here
  [ "$jobs" -gt 1 ] && parallel=(-jobs="$jobs" -workers="$jobs")
  cmake --build "$dir" --target "fuzz_$target" -j"$(nproc)" > "$dir.build.log" 2>&1 ||
    { tail -n 30 "$dir.build.log"; exit 1; }
  # a run compiles each model (~0.2 s): fewer seeds leave it time to mutate
  seed_corpus "$dir/corpus-$target" "$([ "$target" = run ] && echo 60 || echo 400)"
  echo "== fuzz_$target: $seconds s"
  # one kernel thread per run; no disk cache is involved (o2m_model_run has none)
  ONNX2MLIR_THREADS=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$dir/fuzz_$target" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 \
    -timeout=30 -seed="$seed" -print_final_stats=1 "${parallel[@]}" \
    -artifact_prefix="$dir/" "$dir/corpus-$target"
}

for t in $targets; do
  case "$t" in
    import) configure "$build" OFF; fuzz "$build" import ;;
    lower | run) configure "$mlir_build" ON; fuzz "$mlir_build" "$t" ;;
    *) echo "run_fuzz.sh: unknown target '$t' (import, lower, run)" >&2; exit 2 ;;
  esac
done
