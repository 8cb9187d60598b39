#!/usr/bin/env python3
"""Batched persistence: many small images at once (a training batch): 2D
images, and volumes (a 4D .npy stack).
Ours: one `topovox persistence --batch` run over the stack (process start,
reading, all diagrams, writing the pairs as .npy); CubicalRipser: a Python
loop of cripser.computePH over the same images, in the same run. Prints the
per-image time of both, the ratio, and whether the pairs agree.

    python3 bench/bench_persistence_batch.py --topovox <build>/CommandLine/topovox [--device gpu]

--device gpu: the summaries of the whole batch built on the GPU in one set
of launches, the pairings on the CPU threads (a CUDA build).
"""
import argparse
import collections
import os
import subprocess
import tempfile
import time

import numpy as np

import cripser


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device", choices=["auto", "cpu", "gpu"], default="auto")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="topovox-batch-bench-")
    rng = np.random.default_rng(0)
    print("CPU threads: %d, device: %s" % (os.cpu_count(), args.device))
    print("| batch | ours per image us | cripser per image us | cripser / ours | pairs agree |")
    print("|---|---|---|---|---|")
    for count, shape in ((1024, (32, 32)), (1024, (64, 64)), (64, (256, 256)), (256, (32, 32, 32))):
        stack = rng.random((count,) + shape).astype(np.float32)
        src, out = os.path.join(work, "stack.npy"), os.path.join(work, "pairs.npy")
        np.save(src, stack)
        cmd = [args.topovox, "persistence", src, "--batch", "-o", out, "--device", args.device]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        theirs = [cripser.computePH(stack[k].astype(np.float64)) for k in range(count)]
        ripser = time.perf_counter() - t0
        rows = np.load(out)
        agree = True
        for k in range(0, count, max(1, count // 16)):  # a sample of the images
            mine = collections.Counter((int(d), b, e) for d, b, e in rows[rows[:, 0] == k][:, 1:4])
            want = collections.Counter((int(d), b, np.inf if e > 1e300 else e) for d, b, e in theirs[k][:, :3] if b != e)
            agree = agree and mine == want
        print("| %d x %s | %.0f | %.0f | %.2fx | %s |" % (count, "x".join(map(str, shape)), 1e6 * ours / count,
                                                   1e6 * ripser / count, ripser / ours, "yes" if agree else "NO"),
              flush=True)


if __name__ == "__main__":
    main()
