#!/usr/bin/env bash
# quant_bench.sh - quantized models, ours against onnxruntime (npm
# onnxruntime-node) in the same run, one thread each side: run time, import
# and compile time, and our peak memory above a tiny model's against the
# packed weights (bench/quant_bench.py measures; make_quant_models.py makes
# the models: 8 layers of int4 MatMulNBits, 2048 x 2048, block 32, as
# onnxruntime-genai ships LLMs, on one row (a decode step) and on 64 rows
# (a prefill); a dynamically quantized feed-forward stack (DynamicQuantizeLinear,
# MatMulInteger) and convolution stack (ConvInteger); with PyTorch, a QDQ ResNet18 it quantized). FLOAT_ROUTE=1 also times the float decomposition
# (ONNX2MLIR_NO_QUANT_KERNELS=1) on the first model.
#   usage: bench/quant_bench.sh [BUILD_DIR] [N]   (default: build 20; files in bench/out)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-20}
out=bench/out
tool="$build/onnx2mlir"
[ -x "$tool" ] || { echo "no $tool: build first (cmake --build $build)" >&2; exit 2; }
mkdir -p "$out"
# (qdq_resnet18 where Debian's PyTorch is installed)
if [ ! -f "$out/dynamic_conv_x.npy" ] ||
   { [ ! -f "$out/qdq_resnet18.onnx" ] && /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; }; then
  /usr/bin/python3 bench/make_quant_models.py "$out"
fi
if [ ! -f bench/node_modules/onnxruntime-node/package.json ]; then
  (cd bench && npm install --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
/usr/bin/python3 bench/quant_bench.py "$tool" "$out" "$runs" ${MODELS:-}
