#!/bin/sh
# The main job on the built-in dataset: installs what is missing, builds, and
# analyses the CT head volume shipped in Testing/Data with the ParaView plugin
# under pvbatch (rendered under Xvfb), writing into out/: the Euler
# characteristic curve (euler_curve.csv, .png), the persistence pairs
# (persistence_pairs.csv), the persistence diagram and barcode
# (persistence_diagram.png, persistence_barcode.png) and a render of the
# regions of the most persistent components (persistent_features.png).
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TOPOVOX_BUILD_DIR:-$root/build}"
"$root/scripts/install-dependencies.sh"
"$root/scripts/build.sh"
export PV_PLUGIN_PATH="$build/lib/paraview-5.11/plugins/TopoVox"
python_dir="$(find "$build/lib" -maxdepth 3 -type d -name site-packages | head -n 1)"
export PYTHONPATH="$python_dir${PYTHONPATH:+:$PYTHONPATH}"
# Both demos under one X server (run_under_xvfb.py waits until it answers and
# starts a fresh one if it refuses pvbatch, as a loaded machine's Xvfb can).
python3 "$root/scripts/run_under_xvfb.py" -- sh -c \
  'pvbatch "$0/Examples/euler_curve_demo.py" "$0/out" && pvbatch "$0/Examples/persistence_demo.py" "$0/out"' "$root"
