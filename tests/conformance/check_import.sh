#!/usr/bin/env bash
# check_import.sh - imports every model of the ONNX test suites to an
# import-only target and checks that mlir-opt-22 parses the output.
# Compares the passing set with the target's ratchet (a listed test that
# fails is a regression). Prints a line per failure with its reason class,
# then "N passed, N failed, N skipped".
#   TARGET=torch (default): the torch form, ratchet torch-import.pass
#   TARGET=stablehlo: StableHLO (the import itself runs the spec checker,
#                     src/emit/stablehlo/shlo_check.c), ratchet stablehlo.pass
#   TARGET=onnx: onnx-mlir's ONNX dialect (the import itself runs the check
#                against onnx-mlir's op table, src/emit/onnx/om_check.c),
#                ratchet onnx-import.pass
#   usage: [TARGET=T] check_import.sh BUILD_DIR [--update]
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: check_import.sh BUILD_DIR [--update]}" && pwd)
update=${2:-}
target=${TARGET:-torch}
case "$target" in
  torch) passfile="$here/torch-import.pass" ;;
  stablehlo) passfile="$here/stablehlo.pass" ;;
  onnx) passfile="$here/onnx-import.pass" ;;
  *) echo "check_import.sh: unknown TARGET '$target' (torch, stablehlo, onnx)" >&2; exit 2 ;;
esac
mlir_opt=${MLIR_OPT:-/usr/lib/llvm-22/bin/mlir-opt}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

node_tests=${O2M_NODE_TESTS:-$here/../../../shared/onnx-node-tests}
suites=()
[ -d "$node_tests" ] && suites+=("node-tests=$node_tests")
for s in node pytorch-converted pytorch-operator simple; do
  [ -d "/usr/share/libonnx-testdata/data/$s" ] && suites+=("libonnx-$s=/usr/share/libonnx-testdata/data/$s")
done
suites+=("contrib=$here/../contrib") # com.microsoft contrib ops (tests/contrib)
[ -d "$node_tests" ] || echo "note: ../shared/onnx-node-tests is absent; checking the Debian suites only"

for entry in "${suites[@]}"; do
  label=${entry%%=*}
  dir=${entry#*=}
  for m in "$dir"/*/model.onnx; do
    t=$(basename "$(dirname "$m")")
    printf '%s\t%s\n' "$label/$t" "$m"
  done
done > "$work/list"

# Each model is imported on its own; the modules are then parsed by
# mlir-opt in batches (--split-input-file: one process per batch instead of
# one per module, whose start-up cost dominated the suite), each error
# mapped back to its module by line number.
mkdir -p "$work/out"
import_one() {
  local name=$1 model=$2 out="$work/out/$(echo "$1" | tr / _)"
  if ! timeout 120 "$build/onnx2mlir" import --to "$target" "$model" -o "$out.mlir" 2>"$out.err"; then
    printf 'FAIL %s import: %s\n' "$name" "$(grep -m1 error "$out.err" | cut -c1-300)"
    rm -f "$out.mlir"
  else
    printf 'IMPORTED %s\t%s\n' "$name" "$out.mlir"
  fi
  rm -f "$out.err"
}
# verify_batch FILE...: the names of FILE's lines (NAME<tab>MLIR), parsed as one split file
verify_batch() {
  local batch=$1 joined="$1.mlir" index="$1.index" line=1 name file n
  : > "$joined"
  : > "$index"
  while IFS=$'\t' read -r name file; do
    printf '%s\t%s\t%s\n' "$line" "$name" "$file" >> "$index"
    cat "$file" >> "$joined"
    printf '\n// -----\n' >> "$joined"
    n=$(wc -l < "$file")
    line=$((line + n + 2))
  done < "$batch"
  timeout 600 "$mlir_opt" --allow-unregistered-dialect --split-input-file "$joined" -o /dev/null 2> "$joined.err"
  local rc=$?
  if [ "$rc" -ne 0 ] && ! grep -q ': error: ' "$joined.err"; then
    # a crash or a timeout names no module: check each one alone
    while IFS=$'\t' read -r name file; do
      if timeout 120 "$mlir_opt" --allow-unregistered-dialect "$file" -o /dev/null 2> "$file.err"; then
        printf 'PASS %s\n' "$name"
      else
        printf 'FAIL %s verify: %s\n' "$name" "$(head -c 300 "$file.err" | tr '\n' ' ')"
      fi
    done < "$batch"
    return
  fi
  # each error's line -> the module whose first line is the last one at or before it
  awk -F'\t' -v errs="$joined.err" -v joined="$joined" '
    NR == FNR { start[NR] = $1; name[NR] = $2; n = NR; next }
    index($0, joined ":") == 1 && index($0, ": error: ") > 0 {
      rest = substr($0, length(joined) + 2); split(rest, parts, ":"); l = parts[1] + 0
      for (i = n; i >= 1; i--) if (start[i] <= l) break
      if (i >= 1 && !(i in msg)) { m = $0; sub(/^[^ ]* /, "", m); msg[i] = substr(m, 1, 300) }
    }
    END { for (i = 1; i <= n; i++) if (i in msg) printf "FAIL %s verify: %s\n", name[i], msg[i]; else printf "PASS %s\n", name[i] }
  ' "$index" "$joined.err"
  rm -f "$joined" "$joined.err"
}
export -f import_one verify_batch
export build work mlir_opt target

jobs=${JOBS:-$(nproc)}
tr '\t' '\n' < "$work/list" | xargs -d '\n' -n 2 -P "$jobs" bash -c 'import_one "$0" "$1"' > "$work/imported"
grep '^FAIL ' "$work/imported" > "$work/results"
grep '^IMPORTED ' "$work/imported" | cut -d' ' -f2- | split -l 150 - "$work/batch."
# each batch's verdicts to a file of its own: awk writes its lines in
# blocks, and blocks of batches verified at once interleave mid-line in a
# shared file (a name cut in two: a pass lost, a garbled one counted)
ls "$work"/batch.* 2>/dev/null | xargs -r -n 1 -P "$jobs" bash -c 'verify_batch "$0" > "$0.verdicts"'
cat "$work"/batch.*.verdicts >> "$work/results" 2>/dev/null || true

grep '^PASS ' "$work/results" | cut -d' ' -f2 | sort > "$work/passed"
grep '^FAIL ' "$work/results" | sort
total=$(wc -l < "$work/list")
passed=$(wc -l < "$work/passed")
regressions=0
if [ -f "$passfile" ]; then
  # only tests whose suite is present can regress
  present=$(cut -f1 "$work/list" | sort)
  comm -12 <(sort "$passfile") <(echo "$present") | comm -23 - "$work/passed" > "$work/regressed"
  regressions=$(wc -l < "$work/regressed")
  if [ "$regressions" -gt 0 ]; then
    echo "REGRESSIONS (listed in $(basename "$passfile") but failing):"
    sed 's/^/  /' "$work/regressed"
  fi
  new=$(comm -13 <(sort "$passfile") "$work/passed" | wc -l)
  [ "$new" -gt 0 ] && echo "note: $new tests pass that $(basename "$passfile") does not list (run with --update)"
fi
if [ "$update" = "--update" ]; then
  { [ -f "$passfile" ] && cat "$passfile"; cat "$work/passed"; } | sort -u > "$passfile.new"
  mv "$passfile.new" "$passfile"
fi
echo "$target import: $passed passed, $((total - passed)) failed, 0 skipped"
[ "$regressions" -eq 0 ]
