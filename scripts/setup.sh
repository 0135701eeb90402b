#!/usr/bin/env bash
# Installs the Debian packages tgemm builds with (when missing), then configures and
# builds everything in build/. The CUDA 13 toolkit is expected at /usr/local/cuda.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build libsqlite3-dev sqlite3 libspdlog-dev libfmt-dev
          libcli11-dev libyaml-cpp-dev libmuparser-dev libgtest-dev libbenchmark-dev
          nlohmann-json3-dev chromium  # chromium: the HTML report's screenshot test
          python3-venv python3-setuptools python3-wheel)  # the Python package's install test
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: the CUDA toolkit (NVRTC, cuBLAS, runtime) is expected at /usr/local/cuda" >&2
  exit 1
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT=/usr/local/cuda
cmake --build build
