#!/usr/bin/env bash
# build_matrix.sh BUILD [TYPES] [COMPILERS] - builds onnx2mlir (every target,
# warnings as errors) for each CMake build type with each compiler, each in
# BUILD-<type>-<compiler>, and removes the folder after. Defaults: every
# type (Release Debug RelWithDebInfo MinSizeRel) with gcc and clang-22;
# tests/run.sh builds "Release" with "gcc" (its main build is
# RelWithDebInfo with gcc, the session suite's TSan build clang-22).
# Prints "PASS type/compiler" or "FAIL ..." with the first errors, then
# "builds: N passed, M failed".
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
types=${2:-Release Debug RelWithDebInfo MinSizeRel}
compilers=${3:-gcc clang-22}
passed=0
failed=0
for type in $types; do
  for cc in $compilers; do
    dir="$build-$type-$cc"
    cxx=g++
    [ "$cc" = gcc ] || cxx=clang++-${cc#clang-}
    if CC=$cc CXX=$cxx cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE="$type" -DO2M_WERROR=ON > "$dir.log" 2>&1 &&
       cmake --build "$dir" -j"$(nproc)" >> "$dir.log" 2>&1; then
      echo "PASS $type/$cc"
      passed=$((passed + 1))
    else
      echo "FAIL $type/$cc"
      grep -E 'error|Error' "$dir.log" | head -n 15 | sed 's/^/  /'
      failed=$((failed + 1))
    fi
    rm -rf "$dir"
  done
done
echo "builds: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
