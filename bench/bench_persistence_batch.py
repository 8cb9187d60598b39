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

--inprocess BIN (bench_persistence_inprocess of a build) also times ours
inside one process, as a training loop sees it (best of 3 after a warm-up:
no process start, no files), on the same stack, 2D images and volumes
alike, with the device of --device (auto: the GPU where there is one):

    python3 bench/bench_persistence_batch.py --topovox ... --inprocess <build>/bench/bench_persistence_inprocess
"""
import argparse
import collections
import json
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
    ap.add_argument("--inprocess", default="", help="bench_persistence_inprocess: also ours inside one process")
    ap.add_argument("--cases", default="", help="the cases to run, e.g. 1024x32x32,256x32x32x32 (default: all)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="topovox-batch-bench-")
    rng = np.random.default_rng(0)
    print("CPU threads: %d, device: %s" % (os.cpu_count(), args.device))
    print("| batch | ours per image us | cripser per image us | cripser / ours | pairs agree | "
          "ours in process per image us | cripser / ours in process |")
    print("|---|---|---|---|---|---|---|")
    cases = ((1024, (32, 32)), (1024, (64, 64)), (64, (256, 256)), (256, (32, 32, 32)))
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in cases if "x".join(map(str, (c[0],) + c[1])) in wanted]
    for count, shape in cases:
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
        inproc = in_process(args, work, stack) if args.inprocess else None
        print("| %d x %s | %.0f | %.0f | %.2fx | %s | %s | %s |" % (
            count, "x".join(map(str, shape)), 1e6 * ours / count, 1e6 * ripser / count, ripser / ours,
            "yes" if agree else "NO", "—" if inproc is None else "%.1f" % inproc,
            "—" if inproc is None else "%.1fx" % (1e6 * ripser / count / inproc)), flush=True)


def in_process(args, work, stack):
    """Ours on `stack` inside one process (bench_persistence_inprocess's batch
    modes): microseconds per image."""
    raw = os.path.join(work, "stack.raw")
    stack.tofile(raw)
    count, shape = stack.shape[0], stack.shape[1:]
    nx, ny = shape[-1], shape[-2]
    depth = shape[0] if len(shape) == 3 else 1
    device = "cpu" if args.device == "cpu" else "gpu"  # gpu: the CPU where there is none
    mode = ["batch"] if depth == 1 else ["batch3d", str(depth)]
    out = subprocess.run([args.inprocess, raw, "float32", str(nx), str(ny), str(count * depth), device, "3"] + mode,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["us_per_image"]


if __name__ == "__main__":
    main()
