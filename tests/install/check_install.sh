#!/usr/bin/env bash
# check_install.sh BUILD - installs onnx2mlir as a user would and uses it from
# the prefix alone: `cmake --install` into a temporary prefix, which is then
# moved elsewhere (nothing may point back to it) while BUILD is renamed
# (nothing may point back to the build tree either). From the moved prefix:
#   cli       the README's example with the installed CLI (its output equal
#             to the build tree's), `info` and a torch-form import
#   cmake     a C program built with find_package(onnx2mlir), its outputs
#             equal to `onnx2mlir run` on the same input
#   pkgconfig the same program built with pkg-config's flags
#   compiled  `compile` from the prefix, the library self-contained and with
#             the shared runtime shipped beside it (prefix moved away): the
#             same outputs as `run`
#   python    tests/install/test_python.py on the installed module (its run
#             against the build tree's `run -o` files)
#   deb       `cpack -G DEB`: dpkg-deb --contents lists every part, Depends
#             names libmlir-22 and libllvm22, and the package's files,
#             unpacked to a folder of their own, run the example
# Prints one "PASS name" / "FAIL name" line per check, then
# "install: N passed, M failed".
set -u
cd "$(dirname "$0")/../.."
root=$(pwd)
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
passed=0
failed=0
hidden="$build.hidden-by-check-install"
restore() {
  [ -d "$hidden" ] && mv "$hidden" "$build"
  rm -rf "$work"
}
trap restore EXIT
check() { # check NAME CMD...: runs CMD, logging to $work/NAME.log
  if "${@:2}" > "$work/$1.log" 2>&1; then
    echo "PASS $1"
    passed=$((passed + 1))
  else
    echo "FAIL $1"
    tail -n 25 "$work/$1.log" | sed 's/^/  /'
    failed=$((failed + 1))
  fi
}

example=(run examples/small_cnn.onnx --inputs examples/small_cnn_inputs)
"$build/onnx2mlir" "${example[@]}" > "$work/expected.txt" 2>&1
"$build/onnx2mlir" "${example[@]}" -o "$work/expected" > /dev/null 2>&1
# the first image of the example's inputs, for the C program and `run`
/usr/bin/python3 - "$work" <<'EOF'
import sys
import numpy as np
from onnx import TensorProto, numpy_helper
t = TensorProto()
t.ParseFromString(open("examples/small_cnn_inputs/input_0.pb", "rb").read())
first = numpy_helper.to_array(t)[:1].astype(np.float32)
first.tofile(sys.argv[1] + "/image.raw")
np.save(sys.argv[1] + "/image.npy", first)
EOF
"$build/onnx2mlir" run examples/small_cnn.onnx --input image="$work/image.npy" > "$work/run1.txt" 2>&1
"$build/onnx2mlir" run examples/small_cnn.onnx --input image="$work/image.npy" -o "$work/run1" --npy > /dev/null 2>&1

# the deb while the build tree is there (cpack installs from it)
(cd "$build" && cpack -G DEB > "$work/cpack.log" 2>&1)
deb=$(ls "$build"/onnx2mlir_*.deb 2>/dev/null | head -n 1)
[ -n "$deb" ] && mv "$deb" "$work/" && deb="$work/$(basename "$deb")"

cmake --install "$build" --prefix "$work/staged" > "$work/install.log" 2>&1 || {
  cat "$work/install.log"
  echo "install: 0 passed, 1 failed"
  exit 1
}
mv "$work/staged" "$work/prefix"
prefix="$work/prefix"
libdir=$(cd "$prefix" && ls -d lib*/pkgconfig lib/*/pkgconfig 2>/dev/null | head -n 1 | xargs dirname)
mv "$build" "$hidden"

cli() {
  "$prefix/bin/onnx2mlir" "${example[@]}" > "$work/cli.txt" 2>&1 &&
    cmp "$work/expected.txt" "$work/cli.txt" &&
    "$prefix/bin/onnx2mlir" info examples/small_cnn.onnx | grep -q 'Conv' &&
    "$prefix/bin/onnx2mlir" import examples/small_cnn.onnx | grep -q '"torch.operator".*name = "onnx.Conv"'
}
check cli cli

# the C program's "output ..." line against `run`'s values, to 5 digits
same_outputs() { # same_outputs PROGRAM_OUTPUT
  /usr/bin/python3 - "$1" "$work/run1.txt" <<'EOF'
import sys
prog = [l for l in open(sys.argv[1]) if l.startswith("output ")]
assert len(prog) == 1, "the program printed no output line"
got = [float(v) for v in prog[0].split(":", 1)[1].split()]
want = [float(v) for l in open(sys.argv[2]).readlines()[1:] for v in l.split()]
assert len(got) == len(want) == 10, (got, want)
assert all(abs(a - b) <= 1e-4 * max(1.0, abs(b)) for a, b in zip(got, want)), (got, want)
EOF
}
with_cmake() {
  cmake -S tests/install/consumer -B "$work/consumer-cmake" -DCMAKE_PREFIX_PATH="$prefix" &&
    cmake --build "$work/consumer-cmake" &&
    "$work/consumer-cmake/consumer" examples/small_cnn.onnx "$work/image.raw" > "$work/cmake.txt" &&
    cat "$work/cmake.txt" && grep -q "linalg: has @main" "$work/cmake.txt" && same_outputs "$work/cmake.txt"
}
check cmake with_cmake

with_pkgconfig() {
  export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
  pkg-config --modversion onnx2mlir &&
    cc -std=c11 -Wall -Werror tests/install/consumer/main.c $(pkg-config --cflags --libs onnx2mlir) \
      -o "$work/consumer-pc" &&
    LD_LIBRARY_PATH="$prefix/$libdir" "$work/consumer-pc" examples/small_cnn.onnx "$work/image.raw" \
      > "$work/pc.txt" && cat "$work/pc.txt" && same_outputs "$work/pc.txt"
}
check pkgconfig with_pkgconfig

# `compile` from the prefix: the runtime is found there (linked in, or
# libonnx2mlir_rt.so.0 shipped beside the library, found by $ORIGIN), and
# the library, moved with it to another folder, gives `run`'s outputs
with_compiled() {
  mkdir -p "$work/ship" "$work/ship-out" &&
    "$prefix/bin/onnx2mlir" compile examples/small_cnn.onnx -o "$work/libmodel.so" --header "$work/model.h" &&
    "$prefix/bin/onnx2mlir" compile examples/small_cnn.onnx -o "$work/ship/libmodel.so" --runtime shared &&
    cp "$prefix/$libdir/libonnx2mlir_rt.so.0" "$work/ship/" && mv "$prefix" "$prefix.away" &&
    ldd "$work/ship/libmodel.so" | tee "$work/ship-ldd.txt" | grep -q "ship/libonnx2mlir_rt.so.0" &&
    ! ldd "$work/libmodel.so" | grep -q "onnx2mlir_rt\|MLIR" &&
    cc -I"$work" examples/compiled/run_compiled.c -L"$work/ship" -lmodel -Wl,-rpath,"$work/ship" \
      -o "$work/run_shipped" &&
    "$work/run_shipped" "$work/ship-out" "$work/image.npy" > "$work/shipped.txt" && cat "$work/shipped.txt" &&
    /usr/bin/python3 -c "import numpy as np, sys; a, b = np.load(sys.argv[1]), np.load(sys.argv[2]); \
      assert a.shape == b.shape and np.allclose(a, b, rtol=1e-4, atol=1e-6), (a, b)" \
      "$work/ship-out/output_0.npy" "$work/run1/output_0.npy"
  local status=$?
  [ -d "$prefix.away" ] && mv "$prefix.away" "$prefix"
  return $status
}
check compiled with_compiled

check python env PYTHONPATH="$prefix/lib/python3/dist-packages" O2M_EXPECTED="$work/expected" \
  /usr/bin/python3 tests/install/test_python.py

check_deb() {
  [ -n "$deb" ] || { cat "$work/cpack.log"; return 1; }
  dpkg-deb --contents "$deb" > "$work/contents.txt" && cat "$work/contents.txt" &&
    for part in usr/bin/onnx2mlir onnx2mlir/libonnx2mlir-mlir.so onnx2mlir/libonnx2mlir-forms.so \
                libonnx2mlir.so.0 libonnx2mlir.a libonnx2mlir_rt.so.0 libonnx2mlir_rt.a \
                usr/include/onnx2mlir.h onnx2mlirConfig.cmake \
                pkgconfig/onnx2mlir.pc usr/lib/python3/dist-packages/onnx2mlir/__init__.py; do
      grep -q "$part" "$work/contents.txt" || { echo "the package lacks $part"; return 1; }
    done &&
    dpkg-deb --field "$deb" Depends | tee "$work/depends.txt" && grep -q 'libmlir-22' "$work/depends.txt" &&
    grep -q 'libllvm22' "$work/depends.txt" &&
    dpkg-deb -x "$deb" "$work/deb" &&
    "$work/deb/usr/bin/onnx2mlir" "${example[@]}" > "$work/deb.txt" 2>&1 && cmp "$work/expected.txt" "$work/deb.txt"
}
check deb check_deb

echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
