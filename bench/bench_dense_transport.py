#!/usr/bin/env python3
"""Dense Sinkhorn benchmark: ours (bench_dense_transport, end to end through
the public API: host histograms and cost matrix in, costs out) on the GPU
when there is one and on all CPU cores, against POT (ot.sinkhorn2 on the
CPU, a Python loop over the pairs) and a plain torch loop of the same
iterations on the GPU (all pairs at once: matrix products for the scaling
method, logsumexp over a broadcast for the log domain; arrays already on
the device). Histograms of d = 32x32 bins, the cost the squared distance
between the bins' centres on the 32x32 grid (scaled to a maximum of 1),
reg 0.05; a fixed number of iterations (stopThr 0), so that every solver
runs the same updates; 1 pair and a batch of 16. Costs must agree within
1e-9 (POT and torch with ours).

    python3 bench/bench_dense_transport.py --bench <build>/bench/bench_dense_transport

POT's log domain takes seconds a pair: it runs on the first --pot-pairs
pairs of a batch and its time is scaled to the batch (marked "est.").
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np

from bench_timing import best_of_ms

try:
    import ot
except ImportError:
    ot = None
try:
    import torch
except ImportError:
    torch = None


def torch_costs(a, b, M, reg, method, iterations):
    """POT's iterations for every pair at once; returns the costs."""
    dev = "cuda"
    A = torch.tensor(a, device=dev, dtype=torch.float64)
    B = torch.tensor(b, device=dev, dtype=torch.float64)
    Mt = torch.tensor(M, device=dev, dtype=torch.float64)
    d = A.shape[1]
    if method == "sinkhorn":
        K = torch.exp(-Mt / reg)
        u = torch.full_like(A, 1.0 / d)
        v = torch.full_like(B, 1.0 / d)
        for _ in range(iterations):
            v = B / (u @ K)
            u = 1.0 / ((1.0 / A) * (v @ K.T))
        P = u[:, :, None] * K[None] * v[:, None, :]
    else:
        Mr = -Mt / reg
        u = torch.zeros_like(A)
        v = torch.zeros_like(B)
        la, lb = torch.log(A), torch.log(B)
        for _ in range(iterations):
            v = lb - torch.logsumexp(Mr[None] + u[:, :, None], dim=1)
            u = la - torch.logsumexp(Mr[None] + v[:, None, :], dim=2)
        P = torch.exp(Mr[None] + u[:, :, None] + v[:, None, :])
    return (P * Mt[None]).sum(dim=(1, 2)).cpu().numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--pot-pairs", type=int, default=2)
    ap.add_argument("--no-cpu", action="store_true", help="leave out ours on the CPU (and its comparisons)")
    ap.add_argument("--pairs", default="1,16", help="batch sizes, comma-separated (default 1,16)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="topovox-dense-")
    gpu = torch is not None and torch.cuda.is_available()
    side = 32
    xy = np.stack(np.meshgrid(np.arange(side), np.arange(side), indexing="ij"), -1).reshape(-1, 2).astype(float)
    M = ((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)
    M /= M.max()
    d, reg = M.shape[0], 0.05
    print("CPU threads: %d; GPU: %s" % (os.cpu_count(), torch.cuda.get_device_name(0) if gpu else "none"))
    print("| d | pairs | method | iterations | ours GPU ms | ours CPU ms | POT ms | torch GPU ms | "
          "POT / ours CPU | torch / ours GPU | costs agree |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for pairs in [int(x) for x in args.pairs.split(",")]:
        rng = np.random.default_rng(pairs)
        a = rng.random((pairs, d)) + 0.1
        b = rng.random((pairs, d)) ** 2 + 0.01
        a /= a.sum(1, keepdims=True)
        b /= b.sum(1, keepdims=True)
        paths = [os.path.join(work, n) for n in ("a.raw", "b.raw", "M.raw")]
        for path, values in zip(paths, (a, b, M)):
            values.tofile(path)
        for method in ("sinkhorn", "sinkhorn_log"):
            for iterations in (100, 1000):
                def ours(device):
                    out = subprocess.run([args.bench] + paths + [str(pairs), str(d), str(reg), method, str(iterations),
                                                                 device], check=True, capture_output=True, text=True)
                    return json.loads(out.stdout)
                g = ours("gpu") if gpu else None
                c = None if args.no_cpu else ours("cpu")
                pot_ms, pot_costs, est = None, None, ""
                if ot is not None:
                    n = pairs if method == "sinkhorn" else min(pairs, args.pot_pairs)
                    t0 = time.perf_counter()
                    pot_costs = [float(ot.sinkhorn2(a[i], b[i], M, reg, method=method, numItermax=iterations,
                                                    stopThr=0)) for i in range(n)]
                    pot_ms = (time.perf_counter() - t0) * 1e3 * pairs / n
                    est = " (est. from %d)" % n if n < pairs else ""
                t_ms, t_costs = None, None
                if gpu:
                    t_ms = best_of_ms(lambda: torch_costs(a, b, M, reg, method, iterations))
                    t_costs = torch_costs(a, b, M, reg, method, iterations)
                close = lambda x, y: all(abs(p - q) <= 1e-9 * abs(q) for p, q in zip(x, y))
                checks = []
                if pot_costs is not None and c is not None:
                    checks.append(close(c["costs"][:len(pot_costs)], pot_costs))
                if t_costs is not None:
                    checks.append(close(g["costs"], list(t_costs)))
                if g is not None and c is not None:
                    checks.append(close(g["costs"], c["costs"]))
                fmt = lambda x: "-" if x is None else "%.1f" % x
                ratio = lambda x, y: "-" if x is None or y is None else "%.1fx" % (x / y)
                print("| %d | %d | %s | %d | %s | %s | %s%s | %s | %s | %s | %s |" % (
                    d, pairs, method, iterations, fmt(g and g["ms"]), fmt(c and c["ms"]), fmt(pot_ms), est, fmt(t_ms),
                    ratio(pot_ms, c and c["ms"]), ratio(t_ms, g and g["ms"]),
                    "yes" if checks and all(checks) else ("-" if not checks else "no")), flush=True)


if __name__ == "__main__":
    main()
