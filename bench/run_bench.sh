#!/usr/bin/env bash
# run_bench.sh - our import+compile time and run latency against onnxruntime
# (npm onnxruntime-node, one thread), measured in the same run, for a
# ResNet-style CNN and a small transformer encoder (make_run_models.py), on
# each lowering target (TARGETS, default "linalg tosa": tosa is the TOSA
# module run through upstream tosa-to-linalg), and, where Debian's PyTorch is
# installed, torchvision ResNet18, MobileNetV2, SqueezeNet 1.1 and a BERT-style
# encoder (make_torchvision_models.py), and the small ViT as onnxruntime saves
# it after its own fusions (vit_small_ort: com.microsoft Gelu, FusedMatMul,
# SkipLayerNormalization; bench/ort_optimize.mjs); MODELS="..." picks some.
# Checks first that both give the same outputs (rtol 1e-3, atol 1e-4).
#   ours: `onnx2mlir run --threads 1 --repeat N`: load + emit + compile once, N calls
#   ort:  bench/ort_time.mjs: InferenceSession.create, N session.run calls
# Run times are medians over N calls (the first call included, no separate
# warmup, on both sides); copying inputs in and outputs out is included.
#   usage: bench/run_bench.sh [BUILD_DIR] [N]   (default: build 20; files in bench/out)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-20}
out=bench/out
tool="$build/onnx2mlir"
[ -x "$tool" ] || { echo "no $tool: build first (cmake --build $build)" >&2; exit 2; }
mkdir -p "$out"
# the issue's targets too when Debian's PyTorch is installed (python3-torch,
# python3-torchvision): ResNet18, MobileNetV2, SqueezeNet 1.1, a BERT-style encoder
torch_models="resnet18 mobilenet_v2 squeezenet bert_encoder vit_small vit_small_ort"
if [ -z "${MODELS:-}" ]; then
  MODELS="resnet_small encoder_small"
  /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null && MODELS="$MODELS $torch_models"
fi
if [ ! -f bench/node_modules/onnxruntime-node/package.json ]; then
  # --ignore-scripts: the CPU library ships in the package; the install
  # script would only try to download GPU parts.
  (cd bench && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
for m in $MODELS; do
  [ -f "$out/$m.onnx" ] && [ -f "$out/${m}_x.npy" ] && continue
  base=${m%_ort}
  if [ ! -f "$out/$base.onnx" ] || [ ! -f "$out/${base}_x.npy" ]; then
    case " $torch_models " in
      *" $base "*) /usr/bin/python3 bench/make_torchvision_models.py "$out" ;;
      *) /usr/bin/python3 bench/make_run_models.py "$out" ;;
    esac
  fi
  if [ "$m" != "$base" ]; then
    node bench/ort_optimize.mjs "$out/$base.onnx" "$out/$m.onnx"
    cp "$out/${base}_x.npy" "$out/${m}_x.npy"
  fi
done

results="$out/results.txt"
: >"$results"
targets=${TARGETS:-linalg tosa}
for m in $MODELS; do
  echo "== $m: onnxruntime, $runs runs" >&2
  ort=$(node bench/ort_time.mjs "$out/$m.onnx" "$out/${m}_x.npy" "$out/ort_$m.npy" "$runs")
  for target in $targets; do
    echo "== $m: onnx2mlir run --target $target --threads 1 --repeat $runs" >&2
    rm -rf "$out/ours_${m}_$target"
    if ! "$tool" run "$out/$m.onnx" --target "$target" --input "input=$out/${m}_x.npy" --no-cache --threads 1 \
         -o "$out/ours_${m}_$target" --npy --repeat "$runs" 2>"$out/ours_${m}_$target.err"; then
      echo "onnx2mlir run --target $target failed on $m:" >&2
      cat "$out/ours_${m}_$target.err" >&2
      exit 1
    fi
    ours=$(grep '^load: ' "$out/ours_${m}_$target.err")
    # the cache: a first run stores the code, a second loads it (its
    # "compile" is hashing the model and loading the code)
    cached="compile -1"
    if [ "$target" = linalg ]; then
      rm -rf "$out/cache"
      for pass in store load; do
        XDG_CACHE_HOME="$out/cache" "$tool" run "$out/$m.onnx" --input "input=$out/${m}_x.npy" \
          -o "$out/cache_out" --npy --repeat 1 2>"$out/cache_$pass.err" || { cat "$out/cache_$pass.err" >&2; exit 1; }
      done
      cached=$(grep '^load: ' "$out/cache_load.err")
    fi
    echo "$m|$target|$ours|$ort|$cached" >>"$results"
  done
done

/usr/bin/python3 - "$results" "$out" <<'EOF'
import json, re, sys
import numpy as np
results, out = sys.argv[1], sys.argv[2]
rows, ok = [], True
for line in open(results):
    model, target, ours, ort, cached = line.rstrip("\n").split("|")
    hit = dict((k, float(x)) for k, x in re.findall(r"(load|emit|compile) ([0-9.-]+)", cached.replace(":", "")))
    v = dict((k, float(x)) for k, x in
             re.findall(r"(load|emit|compile|median|min|passes|LLVM|other) ([0-9.]+)", ours.replace(":", "")))
    o = json.loads(ort)
    a, b = np.load(f"{out}/ours_{model}_{target}/output_0.npy"), np.load(f"{out}/ort_{model}.npy")
    same = a.shape == b.shape and np.allclose(a, b, rtol=1e-3, atol=1e-4)
    ok &= same
    diff = float(np.max(np.abs(a.astype(np.float64) - b))) if a.shape == b.shape else float("nan")
    print(f"{model} ({target}): output {list(a.shape)} max abs diff vs onnxruntime {diff:.3g} "
          f"({'ok' if same else 'MISMATCH'} at rtol 1e-3, atol 1e-4)")
    compile_ms = v["load"] + v["emit"] + v["compile"]
    if hit.get("compile", -1) >= 0:
        print(f"{model}: a second run loads the cached code: load+emit+compile "
              f"{hit['load'] + hit['emit'] + hit['compile']:.1f} ms (cold: {compile_ms:.0f} ms)")
    rows.append((f"{model} ({target})", compile_ms, v["median"], o["create_ms"], o["median_ms"], v, o))
print(f"\nmedian of {rows[0][6]['n']} runs each, onnxruntime-node {rows[0][6]['version']} on 1 thread; "
      "ours: load+emit+compile (JIT, -O2)")
head = ("model", "ours import+compile ms", "ours run ms", "ort create ms", "ort run ms",
        "compile ours/ort", "run ours/ort")
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for model, c, r, oc, orun, v, o in rows:
    print(f"| {model} | {c:.0f} | {r:.2f} | {oc:.0f} | {orun:.2f} | {c / oc:.1f} | {r / orun:.1f} |")
for target in sorted({m.split(" (")[1][:-1] for m, *_ in rows}):
    ratios = [r / orun for m, _, r, _, orun, _, _ in rows if m.endswith(f"({target})")]
    print(f"geometric mean of run ours/ort on {target}: {np.exp(np.mean(np.log(ratios))):.2f} over {len(ratios)} models")
print("\nbreakdown (ms): " + "; ".join(
    f"{m}: load {v['load']:.1f}, emit {v['emit']:.1f}, compile {v['compile']:.1f} (MLIR passes "
    f"{v.get('passes', 0):.1f}, LLVM {v.get('LLVM', 0):.1f}, other {v.get('other', 0):.1f}), run min {v['min']:.2f} "
    f"(ort run min {o['min_ms']:.2f})" for m, _, _, _, _, v, o in rows))
sys.exit(0 if ok else 1)
EOF
