#!/bin/sh
# The main job on the built-in dataset: installs what is missing, builds, and
# computes the Euler characteristic curve of the CT head volume shipped in
# Testing/Data with the ParaView plugin under pvbatch, writing
# out/euler_curve.csv and out/euler_curve.png (rendered under Xvfb).
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TOPOVOX_BUILD_DIR:-$root/build}"
"$root/scripts/install-dependencies.sh"
"$root/scripts/build.sh"
export PV_PLUGIN_PATH="$build/lib/paraview-5.11/plugins/TopoVox"
xvfb-run -a -s "-screen 0 1280x1024x24" pvbatch "$root/Examples/euler_curve_demo.py" "$root/out"
