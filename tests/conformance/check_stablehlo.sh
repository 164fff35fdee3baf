#!/usr/bin/env bash
# check_stablehlo.sh - checks the stablehlo form against StableHLO itself.
#
# Imports every model of the ONNX node suite (../shared/onnx-node-tests, or
# $O2M_NODE_TESTS; with SUITES also libonnx-testdata's) with
# `BUILD_DIR/onnx2mlir import --to stablehlo --inputs DIR/test_data_set_0`
# (specialised to the first data set's inputs, as `onnx2mlir test` does for
# the lowering targets: static shapes, parameter inputs such as Resize's
# scales taken as constants), then runs StableHLO's own
# tools (openxla/stablehlo, built locally) on each output:
#   parse      stablehlo-opt OUT.mlir (the StableHLO dialect registered:
#              every op, type and attribute is verified)
#   serialize  stablehlo-translate --serialize --target=current OUT.mlir,
#              then --deserialize of that VHLO artifact (the module must be
#              expressible in the portable, versioned form)
#   interpret  for each test_data_set_N: stablehlo_oracle.py wrap makes a
#              module whose @main calls the model on the data set's inputs
#              (as constants: --args is limited to 128 KiB), run with
#              stablehlo-translate --interpret --interpreter-print-dense;
#              stablehlo_oracle.py compare checks the printed results
#              against output_K.pb (rtol 1e-3, atol 1e-7, as onnx2mlir test)
# Prints "stablehlo: VERSION", one line per failing test, "FAIL <test>
# <stage>: <reason>" (stage import, parse, serialize, wrap, interpret or
# mismatch), one per skipped test, "SKIP <test>: <reason>" (an input or
# output the oracle cannot express: a sequence, an optional, a string),
# then "N passed, N failed, N skipped". Exits 0 when none failed.
#
# A developer tool, not part of CI: the StableHLO tools are an oracle built
# locally (DESIGN.md section 5), so tests/run.sh does not call this script.
#
#   usage: check_stablehlo.sh BUILD_DIR STABLEHLO_BIN_DIR
#   env:   JOBS      parallel tests (default 2)
#          TIMEOUT   seconds per tool run (default 120)
#          O2M_NODE_TESTS  the node-test folder
#          SUITES    suites to run, space-separated (default "node"):
#                    node, and libonnx for libonnx-testdata's node,
#                    pytorch-converted, pytorch-operator and simple suites
#                    (tests named libonnx-<suite>/<test>)
#          LIBONNX_DATA  libonnx-testdata's data folder
#                    (default /usr/share/libonnx-testdata/data)
#          STABLEHLO_COMMIT  the stablehlo commit the tools were built
#                    from, printed with the version (the tools know only
#                    their VHLO version)
#          KEEP_DIR  keep each failing test's .mlir and stderr there
#          FILTER    only tests whose name matches this extended regular
#                    expression (bash =~), e.g. '^test_(add|conv)'
#          PYTHON    a python3 with onnx and numpy (default /usr/bin/python3)
set -u
here=$(cd "$(dirname "$0")" && pwd)
usage="usage: check_stablehlo.sh BUILD_DIR STABLEHLO_BIN_DIR"
build=$(cd "${1:?$usage}" && pwd)
shlo_bin=$(cd "${2:?$usage}" && pwd)
node_tests=${O2M_NODE_TESTS:-$here/../../../shared/onnx-node-tests}
libonnx=${LIBONNX_DATA:-/usr/share/libonnx-testdata/data}
timeout_s=${TIMEOUT:-120}
keep=${KEEP_DIR:-}
python=${PYTHON:-/usr/bin/python3}
oracle=$here/stablehlo_oracle.py
shlo_opt=$shlo_bin/stablehlo-opt
shlo_translate=$shlo_bin/stablehlo-translate
for tool in "$shlo_opt" "$shlo_translate"; do
  if [ ! -x "$tool" ]; then
    echo "check_stablehlo.sh: no ${tool##*/} in $shlo_bin" >&2
    exit 2
  fi
done
[ -n "$keep" ] && mkdir -p "$keep" && keep=$(cd "$keep" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The version: stablehlo-translate --version is LLVM's, but deserializing
# prints the VHLO version of an artifact written with --target=current.
printf 'module {\n}\n' > "$work/empty.mlir"
version=$("$shlo_translate" --serialize --target=current "$work/empty.mlir" 2>/dev/null |
  "$shlo_translate" --deserialize --print-stablehlo-version 2>/dev/null |
  sed -n 's/.*StableHLO version: *//p')
commit=${STABLEHLO_COMMIT:-}
if [ -n "$commit" ] || [ -n "$version" ]; then
  echo "stablehlo: ${commit:+$commit }${version:+(VHLO $version)}"
fi

# The test list: name and folder, a line each.
filter=${FILTER:-}
list_suite() { # PREFIX DIR
  local m t
  for m in "$2"/*/model.onnx; do
    [ -e "$m" ] || continue
    t=${m%/model.onnx}
    t=$1${t##*/}
    if [ -n "$filter" ] && ! [[ $t =~ $filter ]]; then continue; fi
    printf '%s\n%s\n' "$t" "${m%/model.onnx}"
  done
}
for s in ${SUITES:-node}; do
  case $s in
    node)
      if [ ! -d "$node_tests" ]; then
        echo "check_stablehlo.sh: no node tests at $node_tests" >&2
        exit 2
      fi
      list_suite "" "$(cd "$node_tests" && pwd)" ;;
    libonnx)
      for sub in node pytorch-converted pytorch-operator simple; do
        list_suite "libonnx-$sub/" "$libonnx/$sub"
      done ;;
    *) echo "check_stablehlo.sh: unknown suite '$s' (node, libonnx)" >&2
       exit 2 ;;
  esac
done > "$work/list"

# One-line reason from a tool's stderr: its first "error:" line (without
# the file:line:col prefix; joined with the next line when it ends in ":",
# as onnx2mlir's "N nodes cannot be lowered:" does); for a crash, the "LLVM
# ERROR" line or else the first mlir:: frame of the stack dump; else the
# first line.
first_error() {
  awk '
    more { t = $0; sub(/^ +/, "", t); first = first " " t; more = 0 }
    !first && /error:/ { first = $0; more = /:$/ }
    !fatal && /^LLVM ERROR/ { fatal = $0 }
    !frame && /^ *#[0-9]+ .*mlir::/ {
      frame = $0; sub(/^ *#[0-9]+ 0x[0-9a-f]+ /, "", frame)
    }
    NR == 1 { line1 = $0 }
    END {
      r = fatal ? fatal : first ? first : frame ? "in " frame : line1
      sub(/^[^ ]*:[0-9]+:[0-9]+: /, "", r)
      print substr(r, 1, 300)
    }' "$1"
}

# Runs one stage's command with the time limit, stderr to $err; on failure
# sets reason (a time-out, a crash, or the first error) and returns 1.
run_stage() {
  timeout "$timeout_s" "$@" 2>"$err"
  local rc=$?
  [ $rc -eq 0 ] && return 0
  case $rc in
    124|137) reason="timed out after ${timeout_s}s" ;;
    *) reason=$(first_error "$err")
       [ $rc -gt 128 ] && reason="crashed (signal $((rc - 128))) $reason" ;;
  esac
  return 1
}

check_one() {
  local name=$1 dir=$2 out="$work/${1//\//__}" stage="" reason="" rc ds
  local err="$out.err"
  exec 2>/dev/null # bash's own "Aborted" notes for a crashed tool
  local inputs=()
  [ -d "$dir/test_data_set_0" ] && inputs=(--inputs "$dir/test_data_set_0")
  if ! run_stage "$build/onnx2mlir" import --to stablehlo "$dir/model.onnx" "${inputs[@]}" -o "$out.mlir"; then
    stage=import
    reason=${reason#"onnx2mlir: error: $dir/model.onnx: "}
    # A test the oracle could not run anyway is a skip, not a failure.
    local why
    why=$("$python" "$oracle" check "$dir")
    [ $? -eq 2 ] && { printf 'SKIP %s: %s\n' "$name" "$why"; rm -f "$out".*; return; }
  # Never "-o /dev/null": an MLIR tool that fails deletes its output file,
  # and run as root that is /dev/null itself.
  elif ! run_stage "$shlo_opt" "$out.mlir" -o "$out.opt"; then
    stage=parse
  elif ! run_stage "$shlo_translate" --serialize --target=current "$out.mlir" -o "$out.vhlo" ||
       ! run_stage "$shlo_translate" --deserialize "$out.vhlo" -o "$out.opt"; then
    stage=serialize
  else
    for ds in "$dir"/test_data_set_*/; do
      ds=${ds%/}
      [ -d "$ds" ] || continue
      timeout "$timeout_s" "$python" "$oracle" wrap "$out.mlir" "$ds" "$out.wrap.mlir" \
        >"$out.msg" 2>"$err"
      rc=$?
      if [ $rc -eq 2 ]; then
        printf 'SKIP %s: %s\n' "$name" "$(head -n 1 "$out.msg")"
        rm -f "$out".*
        return
      elif [ $rc -ne 0 ]; then
        stage=wrap
        reason=$(head -n 1 "$out.msg")
        [ -n "$reason" ] || reason=$(tail -n 1 "$err") # a Python traceback
        [ $rc -eq 124 ] && reason="timed out after ${timeout_s}s"
      elif ! run_stage "$shlo_translate" --interpret --interpreter-print-dense \
             "$out.wrap.mlir" -o "$out.res"; then
        stage=interpret
      elif ! timeout "$timeout_s" "$python" "$oracle" compare "$out.res" "$ds" \
             >"$out.msg" 2>"$err"; then
        stage=mismatch
        reason=$(head -n 1 "$out.msg")
        [ -n "$reason" ] || reason=$(tail -n 1 "$err")
      fi
      if [ -n "$stage" ]; then
        reason="${ds##*/}: $reason"
        break
      fi
    done
  fi
  if [ -n "$stage" ]; then
    printf 'FAIL %s %s: %s\n' "$name" "$stage" "$reason"
    if [ -n "$keep" ]; then
      local k="$keep/${name//\//__}"
      cp "$err" "$k.err" 2>/dev/null
      cp "$out.mlir" "$k.mlir" 2>/dev/null
      case $stage in # the wrapped module and what it printed, to rerun
        interpret|mismatch) cp "$out.wrap.mlir" "$k.wrap.mlir" 2>/dev/null ;;&
        mismatch) cp "$out.res" "$k.res" 2>/dev/null ;;
      esac
    fi
  else
    printf 'PASS %s\n' "$name"
  fi
  rm -f "$out".*
}
export -f check_one first_error run_stage
export build work shlo_opt shlo_translate timeout_s keep python oracle

jobs=${JOBS:-2}
xargs -d '\n' -n 2 -P "$jobs" bash -c 'check_one "$0" "$1"' < "$work/list" > "$work/results"

grep -E '^(FAIL|SKIP) ' "$work/results" | sort -k2,2
passed=$(grep -c '^PASS ' "$work/results")
failed=$(grep -c '^FAIL ' "$work/results")
skipped=$(grep -c '^SKIP ' "$work/results")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
