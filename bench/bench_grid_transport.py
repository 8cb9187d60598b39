#!/usr/bin/env python3
"""Convolutional Sinkhorn benchmark (GPU machine): ours (bench_grid_transport,
end to end: host densities in, cost, potentials and displacement out; and
the cost alone, as a series of costs asks for) on the GPU and on all CPU
cores, against a plain torch loop of the same separable
iterations on the same GPU (float64, kernel matrices per axis, the arrays
already on the device), on the same densities, same run; a fixed number of
iterations (stopThr 0), both methods. Costs must agree: ours on the GPU
with ours on the CPU (where it runs) and with the torch loop's (1e-9).

    python3 bench/bench_grid_transport.py --bench <build>/bench/bench_grid_transport
"""
import argparse
import json
import os
import subprocess
import tempfile

import numpy as np

from bench_timing import best_of_ms

try:
    import torch
except ImportError:
    torch = None


def factors(shape, reg, method, device, cost_axis=None):
    """Per axis the kernel's factor (its log in the log domain); on
    cost_axis the factor times the squared distance (for the cost)."""
    mats = []
    for axis, n in enumerate(shape):
        i = torch.arange(n, device=device, dtype=torch.float64)
        m = (i[:, None] - i[None, :]) ** 2
        k = -m / reg if method == "sinkhorn_log" else torch.exp(-m / reg)
        if axis == cost_axis:
            k = k + torch.log(m) if method == "sinkhorn_log" else k * m
        mats.append(k)
    return mats


def apply_factors(x, mats, method):
    for axis, K in enumerate(mats):
        if method == "sinkhorn":
            x = torch.movedim(torch.tensordot(K, x, dims=([1], [axis])), 0, axis)
        else:
            x = torch.logsumexp(torch.movedim(x, axis, -1).unsqueeze(-2) + K, dim=-1).movedim(-1, axis)
    return x


def torch_cost(u, v, reg, method):
    """<plan, M> from the scalings, axis by axis as GridSinkhorn.h does."""
    cost = 0.0
    for axis in range(u.dim()):
        term = apply_factors(v, factors(u.shape, reg, method, u.device, axis), method)
        cost += float((torch.exp(u + term) if method == "sinkhorn_log" else u * term).sum())
    return cost


def torch_loop(a, b, reg, method, iterations, device):
    """The same iterations as GridSinkhorn.h, axis by axis with einsum."""
    shape = a.shape  # numpy order (z, y, x) or (y, x)
    A = torch.tensor(a, device=device, dtype=torch.float64)
    B = torch.tensor(b, device=device, dtype=torch.float64)
    mats = factors(shape, reg, method, device)
    def apply(x):
        return apply_factors(x, mats, method)

    if method == "sinkhorn":
        u = torch.full_like(A, 1.0 / A.numel())
        v = u.clone()
        for _ in range(iterations):
            v = B / apply(u)
            u = 1.0 / ((1.0 / A) * apply(v))
    else:
        u = torch.zeros_like(A)
        v = torch.zeros_like(A)
        la, lb = torch.log(A), torch.log(B)
        for _ in range(iterations):
            v = lb - apply(u)
            u = la - apply(v)
    return u, v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--methods", default="sinkhorn,sinkhorn_log", help="comma-separated: sinkhorn, sinkhorn_log")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="topovox-ot-")
    gpu = torch is not None and torch.cuda.is_available()
    print("| grid | method | reg | iterations | ours GPU ms | ours GPU ms, 1 iteration | ours GPU ms per iteration |"
          " ours GPU ms, cost alone | ours CPU ms | torch GPU ms | torch ms per iteration | ours GPU vs torch |"
          " ours GPU, cost alone, vs torch | costs agree (CPU, torch) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for shape, reg in (((128, 128), 50.0), ((512, 512), 500.0), ((128, 128, 128), 50.0)):
        rng = np.random.default_rng(0)
        a = rng.random(shape) + 0.1
        b = rng.random(shape) ** 2 + 0.01
        a /= a.sum()
        b /= b.sum()
        pa, pb = os.path.join(work, "a.raw"), os.path.join(work, "b.raw")
        a.tofile(pa)
        b.tofile(pb)
        nx, ny, nz = (list(shape[::-1]) + [1])[:3]
        for method in args.methods.split(","):
            def ours(device, iterations=args.iterations, what="fields"):
                out = subprocess.run([args.bench, pa, pb, str(nx), str(ny), str(nz), str(reg), method,
                                      str(iterations), device, what], check=True, capture_output=True, text=True)
                return json.loads(out.stdout)
            g = ours("gpu") if gpu else None
            gc = ours("gpu", what="cost") if gpu else None  # the cost alone: no field per voxel
            g1 = ours("gpu", 1) if gpu else None  # the fixed part: set-up, one iteration, results
            big = a.size > 100_000  # the CPU only where it takes seconds, not minutes
            c = ours("cpu") if not big or not gpu else None
            t = best_of_ms(lambda: torch_loop(a, b, reg, method, args.iterations, "cuda")) if gpu else None
            tc = torch_cost(*torch_loop(a, b, reg, method, args.iterations, "cuda"), reg, method) if gpu else None
            close = lambda x, y: abs(x - y) <= 1e-9 * abs(y)
            agree = "-" if g is None else ("yes" if close(g["cost"], tc) and gc["cost"] == g["cost"] and
                                           (c is None or close(g["cost"], c["cost"]))
                                           else "no (%.12g vs torch %.12g%s)" % (g["cost"], tc, "" if c is None else
                                                                             ", CPU %.12g" % c["cost"]))
            fmt = lambda x: "-" if x is None else "%.1f" % x
            ratio = "-" if g is None or t is None else "%.1fx" % (t / g["ms"])
            ratio_cost = "-" if gc is None or t is None else "%.1fx" % (t / gc["ms"])
            per = "-" if g is None else "%.3f" % ((g["ms"] - g1["ms"]) / (args.iterations - 1))
            tper = "-" if t is None else "%.3f" % (t / args.iterations)
            print("| %s | %s | %g | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                "x".join(map(str, shape)), method, reg, args.iterations, fmt(g and g["ms"]), fmt(g1 and g1["ms"]), per,
                fmt(gc and gc["ms"]), fmt(c and c["ms"]), fmt(t), tper, ratio, ratio_cost, agree), flush=True)


if __name__ == "__main__":
    main()
