#!/usr/bin/env python3
"""`topovox transform` against scikit-image, row by row, and its errors.

For every row (direction u, threshold t) the tool writes, euler equals
skimage.measure.euler_number of the voxel mask {h <= t}, h = W * value +
A * <u, p> computed here with numpy (Testing/Python/transform_oracle.py;
connectivity 1 for V, ndim for T), NaN voxels and voxels outside the shape
excluded. Random 2D and 3D images with ties and NaN, spread and given
directions, a shape level, a weighted image, listed thresholds, CSV and
.npy outputs, a shipped volume read through its sidecar (whose spacing sets
the positions). Then every usage error: one line, exit status 2, no output.

Usage: test_cli_transform.py --topovox PATH --data DIR
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Python"))
from transform_oracle import transform_oracle  # noqa: E402
from sidecar_data import load_sidecar  # noqa: E402

from cli_checks import expect, failures, finish  # noqa: E402


def run(topovox, args):
    return subprocess.run([topovox, "transform"] + args, capture_output=True, text=True)


def rows_of(path):
    if path.endswith(".npy"):
        return np.load(path)
    return np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def check(topovox, work, name, image, args, construction, spacing=(1.0, 1.0, 1.0), path=None,
          out_name="out.csv", **kw):
    if path is None:
        path = os.path.join(work, "input.npy")
        np.save(path, image)
    out = os.path.join(work, out_name)
    p = run(topovox, [path, "-o", out, "--construction", construction, "--device", "cpu"] + args)
    if p.returncode != 0:
        expect(False, "%s: exit %d: %s" % (name, p.returncode, p.stderr.strip()))
        return
    rows = rows_of(out)
    directions = []
    for d in sorted(set(rows[:, 0].astype(int))):
        directions.append(rows[rows[:, 0] == d][0, 1:4])
    thresholds = rows[rows[:, 0] == 0][:, 4]
    got = [list(rows[rows[:, 0] == d][:, 5].astype(int)) for d in range(len(directions))]
    image3 = image.reshape((1,) * (3 - image.ndim) + image.shape)
    want = transform_oracle(image3, directions, thresholds, construction, origin=(0.0, 0.0, 0.0),
                            spacing=spacing, **kw)
    expect(got == want, "%s %s: equals skimage" % (name, construction))
    expect(np.allclose(np.linalg.norm(np.array(directions), axis=1), 1.0), name + ": unit directions")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as work:
        for shape in ((9, 11), (5, 6, 7)):
            ints = rng.integers(0, 4, size=shape).astype(np.int16)
            floats = rng.random(shape).astype(np.float32)
            floats.flat[::7] = np.nan
            for construction in ("V", "T"):
                check(a.topovox, work, "spread directions %s" % (shape,), ints,
                      ["--directions", "7", "--bins", "9"], construction)
                check(a.topovox, work, "shape >= 2 %s" % (shape,), ints,
                      ["--directions", "5", "--shape-level", "2"], construction, shape_level=2.0)
                check(a.topovox, work, "weighted floats with NaN %s" % (shape,), floats,
                      ["--direction", "1,2,0", "--direction", "0,-1,1", "--weight", "2", "--alpha", "0.5"],
                      construction, weight=2.0, alpha=0.5)
                check(a.topovox, work, "listed thresholds, .npy out %s" % (shape,), ints,
                      ["--directions", "3", "--threshold-list", "-5,-1,0,0.5,2,6"], construction,
                      out_name="out.npy")
        # A shipped volume through its sidecar: its spacing places the voxels.
        sidecar = os.path.join(a.data, "headsq_64x64x93.json")
        volume, meta = load_sidecar(sidecar)
        for construction in ("V", "T"):
            check(a.topovox, work, "headsq_64x64x93 shape >= 1000", volume,
                  ["--directions", "4", "--bins", "12", "--shape-level", "1000"], construction,
                  spacing=tuple(float(s) for s in meta["spacing"]), path=sidecar, shape_level=1000.0)

        # Usage errors: one line, exit 2, no output file.
        good = os.path.join(work, "good.npy")
        np.save(good, np.zeros((4, 4), np.float32))
        out = os.path.join(work, "never.csv")
        for args, why in ((["--direction", "0,0,0"], "zero"),
                          (["--direction", "1,2"], "three numbers"),
                          (["--bins", "4", "--threshold-list", "1,2"], "exclude"),
                          (["--directions", "3", "--direction", "1,0,0"], "exclude"),
                          (["--threshold-list", "3,2,1"], "increasing"),
                          (["--directions", "0"], "--directions"),
                          (["--weight", "nan"], "number"),
                          (["--alpha", "inf"], "finite")):
            p = run(a.topovox, [good, "-o", out] + args)
            expect(p.returncode == 2 and why in p.stderr and len(p.stderr.strip().splitlines()) == 1
                   and not os.path.exists(out),
                   "%s: expected exit 2 and one line naming '%s', got %d %r" % (args, why, p.returncode, p.stderr))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
