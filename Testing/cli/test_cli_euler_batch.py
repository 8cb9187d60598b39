#!/usr/bin/env python3
"""`topovox euler --batch` and `topovox transform --batch` on stacks of
images (numpy's first axis).

euler: every curve is on the thresholds of the whole stack (exact: its
distinct values; bins: evenly spaced over its min and max), every row's
Euler characteristic equals scikit-image's euler_number of that image's
sublevel (superlevel) set at that threshold, and the rows equal `topovox
euler` on the image alone with the same thresholds as a list; 1D, 2D and 3D
images, V and T.

transform: every image's transform is on the same directions and on bins
spanning the heights of the whole stack (the lowest first threshold and the
highest last one of the images run alone), and its Euler characteristics
equal scikit-image's on the height masks (Testing/Python/transform_oracle.py).

Usage: test_cli_euler_batch.py --topovox PATH
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from skimage.measure import euler_number

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Python"))
from transform_oracle import transform_oracle  # noqa: E402

from cli_checks import expect, finish  # noqa: E402


def euler_of(mask, construction):
    if mask.ndim == 1:
        mask = mask.reshape(1, -1)
    return int(euler_number(mask, connectivity=1 if construction == "V" else mask.ndim))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    tool = ap.parse_args().topovox
    work = tempfile.mkdtemp(prefix="topovox-euler-batch-")
    stack_path, one_path, out, one_out = (os.path.join(work, n) for n in ("s.npy", "o.npy", "b.csv", "o.csv"))
    rng = np.random.default_rng(21)
    cases = [(rng.integers(0, 7, size=(4, 9, 10)).astype(np.int16), "exact"),
             (rng.random((3, 6, 5, 7)).astype(np.float32), "bins"),
             (rng.integers(-3, 3, size=(5, 17)).astype(np.int32), "exact")]
    for stack, mode in cases:
        np.save(stack_path, stack)
        for construction in ("V", "T"):
            for filtration in ("sublevel", "superlevel"):
                superlevel = filtration == "superlevel"
                what = "%s %s %s %s" % ("x".join(map(str, stack.shape)), mode, construction, filtration)
                args = ["--construction", construction, "--filtration", filtration, "--thresholds", mode]
                if mode == "bins":
                    args += ["--bins", "12"]
                p = subprocess.run([tool, "euler", stack_path, "--batch", "-o", out, "--threads", "2"] + args,
                                   capture_output=True, text=True)
                expect(p.returncode == 0, what + ": ran (%s)" % p.stderr.strip())
                if p.returncode:
                    continue
                rows = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
                if mode == "exact":
                    want_t = np.unique(stack).astype(np.float64)
                else:
                    want_t = np.linspace(float(stack.min()), float(stack.max()), 12)
                if superlevel:
                    want_t = want_t[::-1]
                for k in range(stack.shape[0]):
                    mine = rows[rows[:, 0] == k][:, 1:]
                    expect(mine.shape[0] == len(want_t) and np.allclose(mine[:, 0], want_t, rtol=1e-6, atol=0),
                           "%s image %d: the stack's thresholds" % (what, k))
                    image = stack[k]
                    ok = all(int(row[1]) == euler_of(image >= t if superlevel else image <= t, construction)
                             for row, t in zip(mine, mine[:, 0]))
                    expect(ok, "%s image %d: euler equals skimage's at every threshold" % (what, k))
                    np.save(one_path, image)
                    if os.path.exists(one_out):
                        os.remove(one_out)
                    q = subprocess.run([tool, "euler", one_path, "-o", one_out, "--construction", construction,
                                        "--filtration", filtration, "--thresholds", "list", "--threshold-list",
                                        ",".join(repr(float(t)) for t in mine[:, 0])],
                                       capture_output=True, text=True)
                    alone = np.loadtxt(one_out, delimiter=",", skiprows=1, ndmin=2) if q.returncode == 0 else None
                    expect(alone is not None and np.array_equal(mine, alone),
                           "%s image %d: the rows of the image alone (%s)" % (what, k, q.stderr.strip()))
    check_transform(tool, work, rng)
    return finish()


def check_transform(tool, work, rng):
    stack_path, one_path, out, one_out = (os.path.join(work, n) for n in ("ts.npy", "to.npy", "tb.csv", "to.csv"))
    for stack, kw, extra in ((rng.random((4, 8, 9)), {"weight": 1.0, "alpha": 0.5}, ["--weight", "1", "--alpha", "0.5"]),
                             ((rng.random((3, 5, 6, 4)) > 0.5).astype(np.float32), {"shape_level": 0.5},
                              ["--weight", "0", "--shape-level", "0.5"])):
        stack = stack.astype(np.float32)
        np.save(stack_path, stack)
        what = "transform %s %s" % ("x".join(map(str, stack.shape)), " ".join(extra))
        args = ["--directions", "6", "--bins", "9"] + extra
        p = subprocess.run([tool, "transform", stack_path, "--batch", "-o", out] + args, capture_output=True, text=True)
        expect(p.returncode == 0, what + ": ran (%s)" % p.stderr.strip())
        if p.returncode:
            continue
        rows = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
        firsts, lasts = [], []
        for k in range(stack.shape[0]):
            np.save(one_path, stack[k])
            q = subprocess.run([tool, "transform", one_path, "-o", one_out] + args, capture_output=True, text=True)
            expect(q.returncode == 0, what + ": image %d alone ran (%s)" % (k, q.stderr.strip()))
            if q.returncode:
                return
            alone = np.loadtxt(one_out, delimiter=",", skiprows=1, ndmin=2)
            firsts.append(alone[:, 4].min())
            lasts.append(alone[:, 4].max())
        want_t = np.linspace(min(firsts), max(lasts), 9)
        for k in range(stack.shape[0]):
            mine = rows[rows[:, 0] == k][:, 1:]  # direction, ux, uy, uz, threshold, euler
            thresholds = np.unique(mine[:, 4])
            expect(np.allclose(thresholds, want_t, rtol=1e-12, atol=1e-12),
                   "%s image %d: bins over the whole stack's heights" % (what, k))
            directions = [mine[mine[:, 0] == d][0, 1:4] for d in sorted(set(mine[:, 0].astype(int)))]
            got = [list(mine[mine[:, 0] == d][:, 5].astype(int)) for d in range(len(directions))]
            image3 = stack[k].reshape((1,) * (3 - stack[k].ndim) + stack[k].shape)
            want = transform_oracle(image3, directions, mine[mine[:, 0] == 0][:, 4], "V",
                                    origin=(0.0, 0.0, 0.0), spacing=(1.0, 1.0, 1.0), **kw)
            expect(got == want, "%s image %d: equals skimage on the height masks" % (what, k))


if __name__ == "__main__":
    sys.exit(main())
