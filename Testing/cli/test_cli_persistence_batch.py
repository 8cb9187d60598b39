#!/usr/bin/env python3
"""`topovox persistence --batch` on stacks of images (numpy's first axis):
every image's rows equal the rows `topovox persistence` writes for that
image alone, in the same order, and (when cripser is installed) its pairs
equal cripser.computePH's on that image; 3D, 2D and 1D images, V and T,
sublevel and superlevel; then the usage errors.

Usage: test_cli_persistence_batch.py --topovox PATH
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile

import numpy as np

from cli_checks import expect, finish


def run(tool, args):
    return subprocess.run([tool, "persistence"] + args, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    tool = ap.parse_args().topovox
    try:  # the oracle: without it the batch would only be compared with ourselves
        import cripser
        import tcripser
    except ImportError:
        print("SKIP: the oracle cripser is not installed (pip install cripser)")
        return 77
    work = tempfile.mkdtemp(prefix="topovox-batch-")
    stack_path, one_path, out, one_out = (os.path.join(work, n) for n in ("stack.npy", "one.npy", "b.csv", "o.csv"))
    rng = np.random.default_rng(12)
    for shape in ((7, 12, 13), (5, 30), (3, 5, 6, 7)):  # 2D, 1D and 3D images
        stack = rng.integers(0, 20, size=shape).astype(np.float32)
        np.save(stack_path, stack)
        for construction in ("V", "T"):
            for filtration in ("sublevel", "superlevel"):
                options = ["--construction", construction, "--filtration", filtration]
                what = "%s %s %s" % ("x".join(map(str, shape)), construction, filtration)
                p = run(tool, [stack_path, "--batch", "-o", out, "--threads", "2"] + options)
                expect(p.returncode == 0, what + ": ran (%s)" % p.stderr.strip())
                if p.returncode:
                    continue
                rows = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
                for k in range(shape[0]):
                    np.save(one_path, stack[k])
                    q = run(tool, [one_path, "-o", one_out] + options)
                    expect(q.returncode == 0, "%s image %d alone: ran (%s)" % (what, k, q.stderr.strip()))
                    alone = np.loadtxt(one_out, delimiter=",", skiprows=1, ndmin=2)
                    mine = rows[rows[:, 0] == k][:, 1:]
                    expect(np.array_equal(mine, alone), "%s image %d: the rows of the image alone" % (what, k))
                    sign = -1.0 if filtration == "superlevel" else 1.0
                    ph = (cripser if construction == "V" else tcripser).computePH(sign * stack[k].astype(np.float64))
                    want = collections.Counter((int(d), sign * b, sign * (np.inf if e > 1e300 else e))
                                               for d, b, e in ph[:, :3] if b != e)
                    got = collections.Counter((int(d), b, e) for d, b, e in mine[:, :3])
                    expect(got == want, "%s image %d: cripser's pairs" % (what, k))
    # Usage errors: a single 1D array, the cripser format, the reference engine.
    np.save(one_path, rng.random(10))
    for args, words in (([one_path, "--batch", "-o", out], "stack"),
                        ([stack_path, "--batch", "--format", "cripser", "-o", out], "topovox format"),
                        ([stack_path, "--batch", "--engine", "reference", "-o", out], "morse engine")):
        p = run(tool, args)
        expect(p.returncode == 2 and words in p.stderr, "usage error %s: %s" % (args[1:], p.stderr.strip()))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
