#!/usr/bin/env bash
# check_run.sh - runs the ONNX backend tests end to end (`onnx2mlir test`:
# emit for the target, JIT-compile, run, compare with the expected
# outputs) on every suite present, and compares the passing set with
# tests/conformance/<target>.pass (a ratchet: a listed test that fails is a
# regression). Test names are "<suite>/<test>". Prints the FAIL/SKIP lines
# of every suite, REGRESSIONS, then "<target> run: N passed, N failed,
# N skipped"; exits non-zero on a regression.
#   usage: check_run.sh BUILD_DIR [--update]
#   environment: TARGET (linalg), JOBS (nproc), TIMEOUT (seconds per test,
#   120), O2M_NODE_TESTS and O2M_LIBONNX_DATA (the suites' folders)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: check_run.sh BUILD_DIR [--update]}" && pwd)
update=${2:-}
target=${TARGET:-linalg}
passfile="$here/$target.pass"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

node_tests=${O2M_NODE_TESTS:-$here/../../../shared/onnx-node-tests}
libonnx=${O2M_LIBONNX_DATA:-/usr/share/libonnx-testdata/data}
suites=()
[ -d "$node_tests" ] && suites+=("node-tests=$node_tests")
for s in node pytorch-converted pytorch-operator simple; do
  [ -d "$libonnx/$s" ] && suites+=("libonnx-$s=$libonnx/$s")
done
# com.microsoft contrib ops against onnxruntime's outputs (tests/contrib)
suites+=("contrib=$here/../contrib")
[ -d "$node_tests" ] || echo "note: ../shared/onnx-node-tests is absent; running the Debian suites only"

touch "$work/passed"
passed=0 failed=0 skipped=0 regressions=0
for entry in "${suites[@]}"; do
  label=${entry%%=*}
  dir=${entry#*=}
  list="$work/$label.list"
  { [ -f "$passfile" ] && grep "^$label/" "$passfile" | sed "s|^$label/||"; } > "$list"
  "$build/onnx2mlir" test "$dir" --target "$target" -j "${JOBS:-$(nproc)}" --timeout "${TIMEOUT:-120}" \
    --pass-list "$list" --write-pass-list "$work/$label.passed" > "$work/$label.out" 2>&1
  rc=$?
  # name every line after its suite
  sed -E "s#^(FAIL|SKIP|REGRESSION) #\\1 $label/#" "$work/$label.out" | grep -E '^(FAIL|SKIP) '
  grep '^REGRESSION ' "$work/$label.out" | sed "s|^REGRESSION |$label/|" >> "$work/regressed"
  sed "s|^|$label/|" "$work/$label.passed" >> "$work/passed"
  summary=$(tail -n 1 "$work/$label.out")
  if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    skipped=$((skipped + BASH_REMATCH[3]))
    [ "$rc" -ne 0 ] && ! grep -q '^REGRESSION ' "$work/$label.out" && echo "$label: exit status $rc" >> "$work/regressed"
  else
    echo "$label: onnx2mlir test did not finish (exit status $rc): $summary" >> "$work/regressed"
  fi
done

if [ -s "$work/regressed" ]; then
  regressions=$(wc -l < "$work/regressed")
  echo "REGRESSIONS (listed in $target.pass but failing):"
  sed 's/^/  /' "$work/regressed"
fi
sort -o "$work/passed" "$work/passed"
if [ -f "$passfile" ]; then
  new=$(comm -13 <(sort "$passfile") "$work/passed" | wc -l)
  [ "$new" -gt 0 ] && echo "note: $new tests pass that $target.pass does not list (run with --update)"
fi
if [ "$update" = "--update" ]; then
  { [ -f "$passfile" ] && cat "$passfile"; cat "$work/passed"; } | sort -u > "$passfile.new"
  mv "$passfile.new" "$passfile"
fi
echo "$target run: $passed passed, $failed failed, $skipped skipped"
[ "$regressions" -eq 0 ]
