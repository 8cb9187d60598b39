#!/bin/sh
# Configures and builds TopoVox in build/ (Release, Ninja). CUDA is used when
# nvcc works (TOPOVOX_CUDA=AUTO); extra CMake arguments are passed through.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TOPOVOX_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$build" --parallel "$(nproc)"
