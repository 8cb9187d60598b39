#!/usr/bin/env python3
"""`topovox transport` against POT (Python Optimal Transport) on the same
inputs: ot.sinkhorn's plans and ot.sinkhorn2's costs, method 'sinkhorn' and
'sinkhorn_log', several regularisations, batches of pairs and one histogram
broadcast against many (relative error 1e-10: the same iterations in
float64); the plans' marginals match a and b when converged; a zero entry
in a marginal (log domain) gives a zero plan row, no NaN; too few
iterations warn in one line and still write; and the usage errors. Then
--grid (convolutional Sinkhorn on image grids, 1D to 3D, anisotropic
spacing) against POT's dense problem on the voxels' positions: cost,
displacement and potentials. Skipped (exit 77) without POT.

Usage: test_cli_transport.py --topovox PATH
"""
import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

try:
    import ot
except ImportError:
    print("SKIP: POT (python3-pot) is not installed")
    sys.exit(77)

warnings.simplefilter("ignore")
from cli_checks import expect, failures, finish  # noqa: E402


def rel(x, y):
    return float(np.max(np.abs(np.asarray(x) - np.asarray(y))) / max(np.max(np.abs(np.asarray(y))), 1e-300))


def run(tool, work, A, B, M, args):
    paths = [os.path.join(work, n) for n in ("A.npy", "B.npy", "M.npy")]
    for p, v in zip(paths, (A, B, M)):
        np.save(p, v)
    out, plan = os.path.join(work, "c.csv"), os.path.join(work, "P.npy")
    p = subprocess.run([tool, "transport"] + paths + args + ["--plan", plan, "-o", out], capture_output=True,
                       text=True)
    if p.returncode != 0:
        return p, None, None
    return p, np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2), np.load(plan)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory() as work:
        # d >= 256 with several pairs: the batched solvers (SinkhornBatch.cpp).
        for d, n in ((7, 1), (16, 5), (256, 3)):
            A = rng.random((n, d)); A /= A.sum(1, keepdims=True)
            B = rng.random((n, d)); B /= B.sum(1, keepdims=True)
            x = rng.random((d, 2))
            M = ot.dist(x, x)
            for method in ("sinkhorn", "sinkhorn_log"):
                for reg in (1.0, 0.1, 0.02):
                    what = "d %d pairs %d %s reg %g" % (d, n, method, reg)
                    p, table, plans = run(a.topovox, work, A, B, M, ["--reg", str(reg), "--method", method])
                    if table is None:
                        expect(False, what + ": " + p.stderr.strip())
                        continue
                    for i in range(n):
                        want = ot.sinkhorn(A[i], B[i], M, reg, method=method)
                        cost = float(ot.sinkhorn2(A[i], B[i], M, reg, method=method))
                        expect(rel(plans[i], want) < 1e-10, "%s pair %d: plan equals POT's" % (what, i))
                        expect(abs(table[i, 1] - cost) <= 1e-10 * abs(cost), "%s pair %d: cost equals POT's" % (what, i))
                        if table[i, 3] < 1e-9:
                            expect(np.allclose(plans[i].sum(0), B[i], atol=1e-8) and
                                   np.allclose(plans[i].sum(1), A[i], atol=1e-8), "%s pair %d: marginals" % (what, i))
            # One source histogram against every target.
            p, table, plans = run(a.topovox, work, A[0], B, M, ["--reg", "0.1"])
            expect(table is not None and all(abs(table[i, 1] - float(ot.sinkhorn2(A[0], B[i], M, 0.1))) <= 1e-10 *
                                             float(ot.sinkhorn2(A[0], B[i], M, 0.1)) for i in range(n)),
                   "d %d: one A against %d B" % (d, n))
        # A zero marginal entry in the log domain: a zero row, no NaN.
        d = 6
        A = np.array([0.0, 0.3, 0.2, 0.1, 0.25, 0.15]); B = np.full(d, 1.0 / d)
        x = np.arange(d, dtype=float)[:, None]
        M = ot.dist(x, x) / 25.0
        p, table, plans = run(a.topovox, work, A, B, M, ["--reg", "0.05", "--method", "sinkhorn_log"])
        expect(table is not None and np.all(np.isfinite(plans)) and np.all(plans[0, 0] == 0) and
               rel(plans[0], ot.sinkhorn(A, B, M, 0.05, method="sinkhorn_log")) < 1e-10,
               "a zero marginal entry: zero row, no NaN, POT's plan")
        # Too few iterations: a one-line warning, and the output.
        A = rng.random(8); A /= A.sum(); B = rng.random(8); B /= B.sum()
        x = rng.random((8, 1)); M = ot.dist(x, x)
        p, table, plans = run(a.topovox, work, A, B, M, ["--reg", "0.001", "--iterations", "3"])
        expect(table is not None and "did not converge" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
               "non-convergence warns once: %r" % p.stderr)
        # Usage errors: exit 2, one line.
        for args, data, why in ((["--reg", "0"], (A, B, M), "reg"),
                                ([], (-A, B, M), "nonnegative"),
                                ([], (A, B[:5], M), "disagree"),
                                (["--method", "emd"], (A, B, M), "sinkhorn_log")):
            p, table, _ = run(a.topovox, work, data[0], data[1], data[2], args)
            expect(table is None and p.returncode == 2 and why in p.stderr and len(p.stderr.strip().splitlines()) == 1,
                   "%s: expected exit 2 naming '%s', got %d %r" % (args, why, p.returncode, p.stderr))
        check_grids(a.topovox, work, rng)
    return finish()


def check_grids(tool, work, rng):
    """--grid: two densities on one image grid against POT's dense problem
    on the voxels' world positions (squared Euclidean cost): the cost, the
    barycentres of POT's plan, and the plan rebuilt from the potentials."""
    pa, pb = os.path.join(work, "ga.npy"), os.path.join(work, "gb.npy")
    out, disp, pot = (os.path.join(work, n) for n in ("gc.csv", "gd.npy", "gp.npy"))
    for shape, spacing, reg, method in (((9,), (0.5,), 0.3, "sinkhorn"), ((4, 6), (0.5, 2.0), 0.7, "sinkhorn_log"),
                                        ((3, 4, 5), (1.0, 0.5, 2.0), 1.5, "sinkhorn_log")):
        a = rng.random(shape) + 0.1
        b = rng.random(shape) ** 2 + 0.05
        np.save(pa, a)
        np.save(pb, b)
        p = subprocess.run([tool, "transport", pa, pb, "--grid", "--spacing", ",".join(map(str, spacing)),
                            "--method", method, "--reg", str(reg), "-o", out, "--displacement", disp,
                            "--potentials", pot], capture_output=True, text=True)
        what = "grid %s %s" % (shape, method)
        expect(p.returncode == 0, what + ": ran (%s)" % p.stderr.strip())
        if p.returncode:
            continue
        idx = np.indices(shape)
        # World positions x first (the tool's spacing order), voxels in C order.
        X = np.stack([idx[len(shape) - 1 - k].ravel() * spacing[k] for k in range(len(shape))], axis=1)
        an, bn = a.ravel() / a.sum(), b.ravel() / b.sum()
        M = ot.dist(X, X)
        want = ot.sinkhorn2(an, bn, M, reg, method=method, numItermax=1000, stopThr=1e-9)
        row = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)[0]
        expect(rel(row[0], want) < 1e-10, what + ": cost %r, POT %r" % (row[0], want))
        P = ot.sinkhorn(an, bn, M, reg, method=method, numItermax=1000, stopThr=1e-9)
        bary = P @ X / P.sum(axis=1, keepdims=True) - X
        d = np.load(disp)
        expect(d.shape == shape + (3,) and np.allclose(d.reshape(-1, 3)[:, :len(shape)], bary, rtol=0, atol=1e-9),
               what + ": displacement = POT plan's barycentres")
        f, g = np.load(pot).reshape(2, -1)
        expect(np.allclose(np.exp((f[:, None] + g[None, :] - M) / reg), P, rtol=0, atol=1e-9 * P.max()),
               what + ": the potentials give POT's plan")
    # A series S0..S3: each step to the next, or from the first (--from-first).
    shape, spacing, reg = (5, 4), (1.0, 0.5), 0.7
    steps = [rng.random(shape) + 0.05 for _ in range(4)]
    paths = [os.path.join(work, "s%d.npy" % k) for k in range(4)]
    for path, step in zip(paths, steps):
        np.save(path, step)
    idx = np.indices(shape)
    X = np.stack([idx[len(shape) - 1 - k].ravel() * spacing[k] for k in range(len(shape))], axis=1)
    M = ot.dist(X, X)
    for extra in ([], ["--from-first"]):
        p = subprocess.run([tool, "transport"] + paths + ["--grid", "--spacing", "1,0.5", "--method", "sinkhorn_log",
                            "--reg", str(reg), "-o", out] + extra, capture_output=True, text=True)
        what = "series %s" % (extra or "consecutive")
        expect(p.returncode == 0, what + ": ran (%s)" % p.stderr.strip())
        if p.returncode:
            continue
        rows = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)
        expect(rows.shape == (3, 5), what + ": one row per pair of steps (%s)" % (rows.shape,))
        for k, row in enumerate(rows):
            i = 0 if extra else k
            a, b = steps[i].ravel() / steps[i].sum(), steps[k + 1].ravel() / steps[k + 1].sum()
            want = ot.sinkhorn2(a, b, M, reg, method="sinkhorn_log", numItermax=1000, stopThr=1e-9)
            expect(row[0] == i and row[1] == k + 1 and rel(row[2], want) < 1e-10,
                   what + ": row %d (%s) against POT %r" % (k, row[:3], want))
    for args, why in ((paths[:2] + ["--from-first"], "--from-first"), (paths + ["--displacement", disp], "series")):
        p = subprocess.run([tool, "transport"] + args + ["--grid", "-o", out], capture_output=True, text=True)
        expect(p.returncode == 2 and why in p.stderr, "%s: exit 2 naming '%s' (%r)" % (args[-1], why, p.stderr))
    # Usage: --grid with a matrix, grids that differ.
    np.save(pb, rng.random((4, 5)))
    p = subprocess.run([tool, "transport", pa, pb, "--grid", "-o", out], capture_output=True, text=True)
    expect(p.returncode == 2 and "share one grid" in p.stderr, "grids that differ: %r" % p.stderr)


if __name__ == "__main__":
    sys.exit(main())
