#!/usr/bin/env bash
# check_torch_mlir.sh - checks the torch form against torch-mlir itself.
#
# Imports every model of the ONNX node suite (../shared/onnx-node-tests, or
# $O2M_NODE_TESTS) with BUILD_DIR/onnx2mlir, then runs torch-mlir-opt on
# each output twice:
#   parse   torch-mlir-opt OUT.mlir (the torch dialect registered: every
#           op, type and attribute must be what torch-mlir accepts)
#   lower   torch-mlir-opt --torch-onnx-to-torch-backend-pipeline OUT.mlir
#           (torch-mlir's own lowering of its importer's form). A model
#           counts as lowered when the pipeline succeeds and no
#           torch.operator "onnx.*" is left: torch-onnx-to-torch leaves an op
#           it has no pattern for in place without failing, so a leftover
#           op is reported as "lower: unconverted onnx.X".
# Prints one line per failing model, "FAIL <test> <stage>: <first error>",
# then "N imported, N parsed, N lowered (of N)".
#
# A developer tool, not part of CI: torch-mlir-opt is an oracle built
# locally (DESIGN.md section 5), so tests/run.sh does not call this script.
#
#   usage: check_torch_mlir.sh BUILD_DIR [TORCH_MLIR_OPT]
#   env:   JOBS      parallel models (default 2)
#          TIMEOUT   seconds per tool run (default 120)
#          O2M_NODE_TESTS  the node-test folder
#          KEEP_DIR  keep each failing model's .mlir and stderr there
#          FILTER    only tests whose folder name matches this extended
#                    regular expression (bash =~), e.g. '^test_(if|loop)'
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: check_torch_mlir.sh BUILD_DIR [TORCH_MLIR_OPT]}" && pwd)
torch_opt=${2:-/work/oracles/torch-mlir-build/bin/torch-mlir-opt}
node_tests=${O2M_NODE_TESTS:-$here/../../../shared/onnx-node-tests}
timeout_s=${TIMEOUT:-120}
keep=${KEEP_DIR:-}
if [ ! -x "$torch_opt" ]; then
  echo "check_torch_mlir.sh: no torch-mlir-opt at $torch_opt" >&2
  exit 2
fi
if [ ! -d "$node_tests" ]; then
  echo "check_torch_mlir.sh: no node tests at $node_tests" >&2
  exit 2
fi
[ -n "$keep" ] && mkdir -p "$keep" && keep=$(cd "$keep" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

filter=${FILTER:-}
for m in "$node_tests"/*/model.onnx; do
  t=${m%/model.onnx}
  t=${t##*/}
  if [ -n "$filter" ] && ! [[ $t =~ $filter ]]; then continue; fi
  printf '%s\n%s\n' "$t" "$m"
done > "$work/list"

# One-line reason from a tool's stderr: its first "error:" line (without
# the file:line:col prefix), with the ONNX op name appended for an op that
# failed to legalize; for a crash, the "LLVM ERROR" line or else the first
# torch-mlir frame of the stack dump; else the first line.
first_error() {
  awk '
    !first && /error:/ { first = $0; want = /failed to legalize/; next }
    want && /name = "onnx\./ {
      match($0, /name = "onnx\.[A-Za-z0-9_]*"/)
      op = substr($0, RSTART + 8, RLENGTH - 9); want = 0
    }
    !fatal && /^LLVM ERROR/ { fatal = $0 }
    !frame && /^ *#[0-9]+ .*mlir::torch::/ {
      frame = $0; sub(/^ *#[0-9]+ 0x[0-9a-f]+ /, "", frame)
    }
    NR == 1 { line1 = $0 }
    END {
      r = fatal ? fatal : first ? first : frame ? "in " frame : line1
      if (op && !fatal) r = r " (" op ")"
      sub(/^[^ ]*:[0-9]+:[0-9]+: /, "", r)
      print substr(r, 1, 300)
    }' "$1"
}

check_one() {
  local name=$1 model=$2 out="$work/$1" rc
  exec 2>/dev/null # bash's own "Aborted" notes for a crashed tool
  local stage="" reason=""
  timeout "$timeout_s" "$build/onnx2mlir" import "$model" -o "$out.mlir" 2>"$out.err"
  rc=$?
  if [ $rc -ne 0 ]; then
    stage=import
  else
    echo "IMPORTED $name"
    timeout "$timeout_s" "$torch_opt" "$out.mlir" -o "$out.parsed" 2>"$out.err"
    rc=$?
    if [ $rc -ne 0 ]; then
      stage=parse
    else
      echo "PARSED $name"
      timeout "$timeout_s" "$torch_opt" --torch-onnx-to-torch-backend-pipeline \
        "$out.mlir" -o "$out.low" 2>"$out.err"
      rc=$?
      if [ $rc -ne 0 ]; then
        stage=lower
      else
        local left
        left=$(grep -o 'torch.operator "onnx\.[A-Za-z0-9_]*"' "$out.low" |
               sed 's/.*"\(.*\)"/\1/' | sort -u | tr '\n' ' ')
        if [ -n "$left" ]; then
          stage=lower
          reason="unconverted ${left% }"
        else
          echo "LOWERED $name"
        fi
      fi
    fi
  fi
  if [ -n "$stage" ]; then
    if [ -z "$reason" ]; then
      case $rc in
        124|137) reason="timed out after ${timeout_s}s" ;;
        *) reason=$(first_error "$out.err")
           [ $rc -gt 128 ] && reason="crashed (signal $((rc - 128))) $reason" ;;
      esac
    fi
    printf 'FAIL %s %s: %s\n' "$name" "$stage" "$reason"
    if [ -n "$keep" ]; then
      cp "$out.err" "$keep/$name.err" 2>/dev/null
      cp "$out.mlir" "$keep/$name.mlir" 2>/dev/null
    fi
  fi
  rm -f "$out.mlir" "$out.err" "$out.low" "$out.parsed"
}
export -f check_one first_error
export build work torch_opt timeout_s keep

jobs=${JOBS:-2}
xargs -d '\n' -n 2 -P "$jobs" bash -c 'check_one "$0" "$1"' < "$work/list" > "$work/results"

grep '^FAIL ' "$work/results" | sort
total=$(( $(wc -l < "$work/list") / 2 ))
imported=$(grep -c '^IMPORTED ' "$work/results")
parsed=$(grep -c '^PARSED ' "$work/results")
lowered=$(grep -c '^LOWERED ' "$work/results")
echo "torch-mlir: $imported imported, $parsed parsed, $lowered lowered (of $total)"
[ "$lowered" -eq "$total" ]
