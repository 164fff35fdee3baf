#!/usr/bin/env bash
# run_session_tests.sh BUILD - the session API's suite (tests/run.sh calls it):
#   c        session_test (the C API: sizes, threads, TOSA, bytes, errors,
#            parameter inputs) from BUILD
#   tsan     the same program built with clang-22 -fsanitize=thread in
#            BUILD-tsan (library and test instrumented), 8 threads: no report;
#            every loop of the generated code that can be split across a
#            call's threads is (ONNX2MLIR_PARALLEL_GRAIN=1), here and in asan
#   asan     the same built with AddressSanitizer+UBSan in BUILD-asan-session
#   python   test_session.py (InferenceSession, the decoder's generation loop)
#            on BUILD's library
# Prints "PASS name" / "FAIL name" per check, then "session: N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
check() { # check NAME CMD...: runs CMD, logging to $work/NAME.log
  if "${@:2}" > "$work/$1.log" 2>&1; then
    echo "PASS $1"
    passed=$((passed + 1))
  else
    echo "FAIL $1"
    tail -n 40 "$work/$1.log" | sed 's/^/  /'
    failed=$((failed + 1))
  fi
}

models="$work/models"
/usr/bin/python3 tests/session/make_session_models.py "$models" &&
  /usr/bin/python3 tests/session/make_decoder.py "$models/decoder.onnx" &&
  /usr/bin/python3 bench/make_run_models.py "$models/bench" > /dev/null &&
  "$build/onnx2mlir" run examples/small_cnn.onnx --inputs examples/small_cnn_inputs -o "$models/run" --no-cache \
    > /dev/null || { echo "FAIL models"; echo "session: 0 passed, 1 failed"; exit 1; }
# `run`'s outputs for the whole models the Python test compares sessions with:
# the bench models and the contrib suite's whole models
for m in resnet_small encoder_small; do
  "$build/onnx2mlir" run "$models/bench/$m.onnx" --input "input=$models/bench/${m}_x.npy" --no-cache \
    -o "$models/run_$m" > /dev/null || { echo "FAIL run $m"; echo "session: 0 passed, 1 failed"; exit 1; }
done
for d in tests/contrib/model_*/; do
  m=$(basename "$d")
  "$build/onnx2mlir" run "$d/model.onnx" --inputs "$d/test_data_set_0" --no-cache -o "$models/run_$m" > /dev/null ||
    { echo "FAIL run $m"; echo "session: 0 passed, 1 failed"; exit 1; }
done
# every program here keeps its compiled code out of the user's cache
export XDG_CACHE_HOME="$work/cache"

check c "$build/session_test" examples/small_cnn.onnx "$models"

# a sanitizer build of the library and the test: sanitize_build NAME DIR FLAGS...
sanitize_build() {
  local dir="$2"
  CC=clang-22 CXX=clang++-22 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${@:3}" > "$dir.cmake.log" 2>&1 &&
    cmake --build "$dir" -j"$(nproc)" --target session_test > "$dir.build.log" 2>&1 ||
    { tail -n 30 "$dir.cmake.log" "$dir.build.log"; return 1; }
}
tsan_run() {
  sanitize_build tsan "$build-tsan" -DO2M_TSAN=ON &&
    ONNX2MLIR_PARALLEL_GRAIN=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$build-tsan/session_test" examples/small_cnn.onnx "$models" 8 10
}
asan_run() {
  # with the fuzzers' coverage flag too, so that tests/fuzz/run_fuzz.sh
  # (tests/run.sh's fuzz step) builds its targets in this tree, not anew
  sanitize_build asan "$build-asan-session" -DO2M_SANITIZE=ON -DO2M_FUZZ=ON &&
    ONNX2MLIR_PARALLEL_GRAIN=1 ASAN_OPTIONS="detect_leaks=1" "$build-asan-session/session_test" examples/small_cnn.onnx "$models" 4 10
}
check tsan tsan_run
check asan asan_run

pymod="$work/python/onnx2mlir"
mkdir -p "$pymod" && cp python/onnx2mlir/*.py "$build/python/_config.py" "$pymod/"
check python env PYTHONPATH="$work/python" ONNX2MLIR_LIBRARY="$build/libonnx2mlir.so" \
  /usr/bin/python3 tests/session/test_session.py "$build" "$models"

echo "session: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
