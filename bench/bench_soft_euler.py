#!/usr/bin/env python3
"""Differentiable Euler curve benchmark (GPU machine): topovox_torch's
SoftEulerFunction against the plain PyTorch implementation of the same
relaxation (every cell listed, torch.maximum/minimum, autograd: the test's
oracle, Torch/tests/test_soft_euler_torch.py) on the same inputs, same GPU,
same run; forward and forward+backward, float32, 64 thresholds, V
construction; and the time to read the input once (x.sum()) for scale.

    TOPOVOX_KERNELS_LIB=<build>/Kernels/libtopovox_kernels.a \
        python3 bench/bench_soft_euler.py [--device cuda|cpu]
"""
import argparse
import os
import sys
import time

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "Torch"))
sys.path.insert(0, os.path.join(ROOT, "Torch", "tests"))
from topovox_torch import SoftEulerFunction  # noqa: E402
from test_soft_euler_torch import reference_chi  # noqa: E402


def timed(fn, device, repeat=5):
    fn()  # warm-up (and the extension's first load)
    if device == "cuda":
        torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    dev = args.device
    shapes = [(1, 1, 256, 256), (1, 1, 1024, 1024), (1, 1, 4096, 4096), (64, 1, 256, 256),
              (1, 1, 64, 64, 64), (1, 1, 256, 256, 256), (16, 1, 64, 64, 64)]
    t = torch.linspace(0, 1, 64, device=dev)
    u = torch.tensor([0.3, -0.5, 0.8], device=dev)
    a = torch.tensor([0.2], device=dev)
    print("| input (B, C, ...) | read once ms | ours fwd ms | ours fwd+bwd ms | torch fwd ms | "
          "torch fwd+bwd ms | fwd speed-up | fwd+bwd speed-up |")
    print("|---|---|---|---|---|---|---|---|")
    for shape in shapes:
        torch.manual_seed(0)
        x = torch.rand(shape, device=dev, requires_grad=True)
        read = timed(lambda: x.sum(), dev)
        ours_f = timed(lambda: SoftEulerFunction.apply(x, t, u, a, 10.0, 1.0, "V", (0, 0, 0), (1, 1, 1)), dev)

        def ours_fb():
            chi = SoftEulerFunction.apply(x, t, u, a, 10.0, 1.0, "V", (0, 0, 0), (1, 1, 1))
            chi.sum().backward()
        ours_b = timed(ours_fb, dev)
        flat = x.reshape(-1, 1, shape[-2], shape[-1]) if len(shape) == 4 else x.reshape(-1, *shape[-3:])

        def theirs_f():
            return reference_chi(flat, t, u, a, 10.0, 1.0, "V")

        def theirs_fb():
            theirs_f().sum().backward()
        try:
            ref_f = timed(theirs_f, dev, repeat=2)
            ref_b = timed(theirs_fb, dev, repeat=2)
        except torch.OutOfMemoryError:
            ref_f = ref_b = float("nan")
            torch.cuda.empty_cache()
        print("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.1fx | %.1fx |" % (
            "x".join(map(str, shape)), read * 1e3, ours_f * 1e3, ours_b * 1e3, ref_f * 1e3, ref_b * 1e3,
            ref_f / ours_f, ref_b / ours_b), flush=True)
        del x
        if dev == "cuda":
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
