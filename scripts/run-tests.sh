#!/bin/sh
# Installs what is missing, builds, and runs the whole test suite (CTest):
# kernels against a brute-force cell count, the CLI, the VTK filter, pvpython
# and MPI (1, 2, 3 ranks) against scikit-image, and the install tree with the
# example VTK C++ program. GPU tests report "skipped" on a machine without one.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TOPOVOX_BUILD_DIR:-$root/build}"
"$root/scripts/install-dependencies.sh"
"$root/scripts/build.sh"
cd "$build"
# The "long" label (every volume at full size against CubicalRipser) is
# left out here; run it with: ctest -L long
ctest --output-on-failure --parallel "$(nproc)" --timeout 900 --label-exclude long
