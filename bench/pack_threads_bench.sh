#!/usr/bin/env bash
# pack_threads_bench.sh - packs threads_bench's measurement for a machine
# that has Python's onnxruntime but not this project's LLVM/MLIR (a larger
# server, a deployment box): the bench models with lean weights
# (lean_weights.py, so the pack is small), each `compile`d for --cpu CPU,
# bench/compiled_call, the libraries the runtime loads (oneDNN, OpenBLAS,
# GNU OpenMP) and the script that measures there (threads_bundle_run.sh),
# in one DEST.tar.xz. There: tar xJf DEST.tar.xz && DEST/threads_bundle_run.sh
#   usage: bench/pack_threads_bench.sh BUILD_DIR DEST [CPU]  (CPU default x86-64-v4)
set -eu
cd "$(dirname "$0")/.."
build=$(cd "$1" && pwd)
dest=$2
cpu=${3:-x86-64-v4}
out=bench/out
models=${MODELS:-resnet_small encoder_small resnet18 mobilenet_v2 squeezenet bert_encoder vit_small}
rm -rf "$dest" && mkdir -p "$dest/models" "$dest/libs"
for m in $models; do
  [ -f "$out/$m.onnx" ] || { echo "no $out/$m.onnx: run bench/make_run_models.py or make_torchvision_models.py" >&2; exit 1; }
  /usr/bin/python3 bench/lean_weights.py "$out/$m.onnx" "$dest/models/$m.onnx"
  cp "$out/${m}_x.npy" "$dest/models/${m}_x.npy"
  "$build/onnx2mlir" compile "$dest/models/$m.onnx" -o "$dest/models/lib_$m.so" --cpu "$cpu"
done
cc -O2 bench/compiled_call.c -ldl -o "$dest/compiled_call"
for lib in libdnnl.so.2 libopenblas.so.0 libgomp.so.1 libOpenCL.so.1 libgfortran.so.5 libquadmath.so.0; do
  f=$(/sbin/ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ {print $NF; exit}')
  [ -n "$f" ] && cp -L "$f" "$dest/libs/$lib"
done
cp bench/ort_time.py bench/threads_bundle_run.sh "$dest/"
echo "$models" > "$dest/models.txt"
tar -C "$(dirname "$dest")" -cf - "$(basename "$dest")" | xz -6 -T2 > "$dest.tar.xz"
ls -la "$dest.tar.xz"
