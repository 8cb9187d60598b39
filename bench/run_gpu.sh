#!/usr/bin/env bash
# The whole benchmark on the GPU machine, from the repository root:
#   bash bench/run_gpu.sh build   # kernels-only build of bench_euler (~2 min)
#   bash bench/run_gpu.sh run     # pyect wheel + run_bench.py (~3-5 min)
#   bash bench/run_gpu.sh         # both
# Extra arguments after the step go to run_bench.py. When $OUT is set, the
# results (not the inputs) are copied there.
set -euo pipefail
cd "$(dirname "$0")/.."
step="${1:-all}"
[ $# -gt 0 ] && shift
build=build-gpu

if [ "$step" = build ] || [ "$step" = all ]; then
  if grep -q 'add_subdirectory(bench)' CMakeLists.txt; then
    cmake -S . -B "$build" -G Ninja -DTOPOVOX_KERNELS_ONLY=ON -DTOPOVOX_CUDA=ON
  else
    # The top level does not add bench/ yet: a wrapper that adds Kernels/ and
    # bench/ the same way (kernels-only, CUDA required).
    echo "run_gpu.sh: CMakeLists.txt has no add_subdirectory(bench); using a wrapper project"
    wrapper=/tmp/topovox-bench-top
    mkdir -p "$wrapper"
    cat > "$wrapper/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(TopoVoxBench LANGUAGES C CXX)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release CACHE STRING "" FORCE)
endif()
add_subdirectory($PWD/Kernels Kernels)
if(TOPOVOX_WITH_CUDA)
  add_subdirectory($PWD/bench bench)
endif()
EOF
    build=build-gpu-bench
    cmake -S "$wrapper" -B "$build" -G Ninja -DTOPOVOX_CUDA=ON -DBUILD_TESTING=OFF
  fi
  time ninja -C "$build" bench_euler
fi

if [ "$step" = run ] || [ "$step" = all ]; then
  bench="$build/bench/bench_euler"
  [ -x "$bench" ] || bench=build-gpu-bench/bench/bench_euler
  [ -x "$bench" ] || { echo "run_gpu.sh: no bench_euler; run the build step first" >&2; exit 1; }
  if ls .whl/pyect-*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/pyect-*.whl
    export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  else
    echo "run_gpu.sh: no .whl/pyect-*.whl (carry .whl to this machine); pyect will be skipped"
  fi
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv || true
  lscpu | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket)' || true
  status=0
  python3 bench/run_bench.py --bench "$bench" --workdir /tmp/topovox-bench "$@" || status=$?
  if [ -n "${OUT:-}" ]; then
    cp /tmp/topovox-bench/results.* "$OUT"/ 2>/dev/null || true
  fi
  exit $status
fi
