#!/usr/bin/env bash
# Here, before a device call: a Release build in build-dev/ of what the GPU machine runs,
# plus the shared libraries that machine lacks and libtgemm itself, for the Python package
# (build-dev/devlibs). The call then carries
#   build-dev/tuner/tgemm-tune build-dev/tuner/tgemm-worker build-dev/tuner/tgemm-db
#   build-dev/tuner/tgemm-bench build-dev/tuner/tgemm-dispatch-bench build-dev/tuner/tgemm-profile-target
#   build-dev/tests/tgemm_gpu_tests build-dev/devlibs
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT=/usr/local/cuda >/dev/null
cmake --build build-dev --target tgemm-tune tgemm-worker tgemm-db tgemm-bench tgemm-dispatch-bench \
  tgemm-profile-target tgemm_gpu_tests tgemm
mkdir -p build-dev/devlibs
# Seen missing on the GPU machine's image (Ubuntu 24.04): muParser and Google Benchmark;
# libgomp is carried as a guard; libtgemm links yaml-cpp 0.7 (the image's is another version).
for lib in libmuparser.so.2 libgomp.so.1 libbenchmark.so.1debian libyaml-cpp.so.0.7; do
  cp -L "/usr/lib/x86_64-linux-gnu/$lib" build-dev/devlibs/
done
cp -L build-dev/libtgemm.so.0 build-dev/devlibs/
du -ch build-dev/tuner/tgemm-* build-dev/tests/tgemm_gpu_tests build-dev/devlibs | tail -1
