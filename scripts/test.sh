#!/usr/bin/env bash
# Builds (if needed) and runs every test suite: unit, jit (NVRTC, no GPU), cli, and gpu
# (which skips cleanly on a machine without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/build.ninja ] ||
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT=/usr/local/cuda
cmake --build build
cd build
ctest --output-on-failure --timeout 1800 -j "$(nproc)" "$@"
