#!/usr/bin/env bash
# setup.sh - installs onnx2mlir's dependencies (Debian 12 packages) and
# builds it into ./build. Safe to run again.
set -eu
cd "$(dirname "$0")"
packages="cmake make gcc g++ bc libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  clang-22 libclang-rt-22-dev libonnx-testdata python3-onnx python3-numpy pkg-config
  libopenblas0-serial libdnnl-dev file dpkg-dev"
if ! dpkg -s $packages > /dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update
  $sudo apt-get install -y --no-install-recommends $packages
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j"$(nproc)"
