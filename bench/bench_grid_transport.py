#!/usr/bin/env python3
"""Convolutional Sinkhorn benchmark (GPU machine): ours (bench_grid_transport,
end to end: host densities in, cost, potentials and displacement out) on the
GPU and on all CPU cores, against a plain torch loop of the same separable
iterations on the same GPU (float64, kernel matrices per axis, the arrays
already on the device), on the same densities, same run; a fixed number of
iterations (stopThr 0), both methods. Costs must agree.

    python3 bench/bench_grid_transport.py --bench <build>/bench/bench_grid_transport
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

try:
    import torch
except ImportError:
    torch = None


def torch_loop(a, b, reg, method, iterations, device):
    """The same iterations as GridSinkhorn.h, axis by axis with einsum."""
    shape = a.shape  # numpy order (z, y, x) or (y, x)
    A = torch.tensor(a, device=device, dtype=torch.float64)
    B = torch.tensor(b, device=device, dtype=torch.float64)
    mats = []
    for n in shape:
        i = torch.arange(n, device=device, dtype=torch.float64)
        m = (i[:, None] - i[None, :]) ** 2
        mats.append(-m / reg if method == "sinkhorn_log" else torch.exp(-m / reg))
    def apply(x):
        for axis, K in enumerate(mats):
            if method == "sinkhorn":
                x = torch.movedim(torch.tensordot(K, x, dims=([1], [axis])), 0, axis)
            else:
                x = torch.logsumexp(torch.movedim(x, axis, -1).unsqueeze(-2) + K, dim=-1).movedim(-1, axis)
        return x

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


def timed(fn, repeat=3):
    fn()
    best = float("inf")
    for _ in range(repeat):
        if torch is not None and torch.cuda.is_available():
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if torch is not None and torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--iterations", type=int, default=100)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="topovox-ot-")
    gpu = torch is not None and torch.cuda.is_available()
    print("| grid | method | reg | iterations | ours GPU ms | ours CPU ms | torch GPU ms | ours GPU vs torch | costs agree |")
    print("|---|---|---|---|---|---|---|---|---|")
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
        for method in ("sinkhorn", "sinkhorn_log"):
            def ours(device):
                out = subprocess.run([args.bench, pa, pb, str(nx), str(ny), str(nz), str(reg), method,
                                      str(args.iterations), device], check=True, capture_output=True, text=True)
                return json.loads(out.stdout)
            g = ours("gpu") if gpu else None
            big = a.size > 100_000  # the CPU only where it takes seconds, not minutes
            c = ours("cpu") if not big or not gpu else None
            t = timed(lambda: torch_loop(a, b, reg, method, args.iterations, "cuda")) if gpu else None
            agree = "-" if g is None or c is None else ("yes" if abs(g["cost"] - c["cost"]) <= 1e-9 * abs(c["cost"]) else "no")
            fmt = lambda x: "-" if x is None else "%.1f" % x
            ratio = "-" if g is None or t is None else "%.1fx" % (t / g["ms"])
            print("| %s | %s | %g | %d | %s | %s | %s | %s | %s |" % (
                "x".join(map(str, shape)), method, reg, args.iterations, fmt(g and g["ms"]), fmt(c and c["ms"]),
                fmt(t), ratio, agree), flush=True)


if __name__ == "__main__":
    main()
