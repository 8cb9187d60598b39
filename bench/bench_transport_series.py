#!/usr/bin/env python3
"""Optimal transport along a series of densities on an image grid (what the
filter Optimal Transport Over Time computes).
Ours: one `topovox transport S0 S1 ... --grid` run (process start, reading
the steps, every pair on the grid without the voxels x voxels matrix);
POT: a Python loop of ot.sinkhorn2 over the same pairs with the dense cost
matrix ot.dist of the voxels' positions, built once, in the same run. Same
reg, method, numItermax and stopThr. Prints both times, the ratio, the
largest relative difference of the costs and POT's matrix size.

    python3 bench/bench_transport_series.py --topovox <build>/CommandLine/topovox
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np

import ot


def smooth_steps(rng, shape, steps):
    """A blob drifting across the grid plus noise: a density per step."""
    idx = np.indices(shape).astype(float)
    out = []
    for t in range(steps):
        centre = [(0.3 + 0.4 * t / max(1, steps - 1)) * n for n in shape]
        r2 = sum((idx[k] - centre[k]) ** 2 for k in range(len(shape)))
        out.append(np.exp(-r2 / (2 * (0.15 * shape[0]) ** 2)) + 0.05 * rng.random(shape) + 1e-3)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--reg", type=float, default=2.0)
    ap.add_argument("--shapes", default="24x24;48x48;12x12x12", help="grids, ';'-separated (POT's matrix grows as n^2)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="topovox-series-bench-")
    rng = np.random.default_rng(0)
    print("CPU threads: %d, %d steps, reg %g, sinkhorn_log, numItermax 1000, stopThr 1e-9" % (
        os.cpu_count(), args.steps, args.reg))
    print("| grid | ours s | POT s | POT / ours | max rel. cost difference | POT's M |")
    print("|---|---|---|---|---|---|")
    for shape in (tuple(int(n) for n in text.split("x")) for text in args.shapes.split(";")):
        steps = smooth_steps(rng, shape, args.steps)
        paths = [os.path.join(work, "s%d.npy" % k) for k in range(len(steps))]
        for path, step in zip(paths, steps):
            np.save(path, step)
        out = os.path.join(work, "costs.csv")
        t0 = time.perf_counter()
        subprocess.run([args.topovox, "transport"] + paths + ["--grid", "--method", "sinkhorn_log", "--reg",
                        str(args.reg), "-o", out], check=True)
        ours = time.perf_counter() - t0
        costs = np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)[:, 2]
        t0 = time.perf_counter()
        idx = np.indices(shape)
        X = np.stack([idx[len(shape) - 1 - k].ravel() for k in range(len(shape))], axis=1).astype(float)
        M = ot.dist(X, X)
        want = [ot.sinkhorn2(steps[k].ravel() / steps[k].sum(), steps[k + 1].ravel() / steps[k + 1].sum(), M,
                             args.reg, method="sinkhorn_log", numItermax=1000, stopThr=1e-9)
                for k in range(len(steps) - 1)]
        pot = time.perf_counter() - t0
        diff = float(np.max(np.abs(costs - np.array(want)) / np.abs(want)))
        print("| %s | %.3f | %.3f | %.1fx | %.1e | %d MB |" % ("x".join(map(str, shape)), ours, pot, pot / ours, diff,
                                                            M.nbytes // 2**20), flush=True)


if __name__ == "__main__":
    main()
