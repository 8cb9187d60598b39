#!/usr/bin/env python3
"""In-process persistence throughput on the 256^3-class real volumes, in
rounds, for one or several builds alternating.

One round runs every build on every volume (`bench_persistence_inprocess
FILE DTYPE NX NY NZ DEVICE 3`: the best of 3 calls after a warm-up); the
rounds repeat that. Why rounds and alternation: on the GPU machine the same
build varies by up to 25% from one run to the next (the host's stages,
union-find, PHAT and the diagram, are most of colin27_t1's time), so two
builds compared in separate runs can show noise as a difference.

Prints each build's times per volume and round, then, per build, the
throughput of its best and of its median round per volume, and their means
over the volumes (the issue's "100 MVox/s on average").

    python3 bench/bench_persistence_rounds.py --build new=<build>/bench/bench_persistence_inprocess \\
        [--build old=<other build>/bench/bench_persistence_inprocess] [--rounds 3] [--device gpu]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

from bench_persistence import load_sidecar

VOLUMES = ("bonsai_256", "engine_256x256x128", "colin27_t1")


def unpack(data_dir, name, work):
    """The volume as a raw file in work (as bench_persistence.py's in-process
    runs write it), its dtype and its dims (x first)."""
    image = load_sidecar(data_dir, name)
    raw = os.path.join(work, name + ".raw")
    np.ascontiguousarray(image).tofile(raw)
    return raw, str(image.dtype), list(image.shape[::-1]) + [1] * (3 - image.ndim)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", action="append", required=True,
                    help="NAME=PATH of a bench_persistence_inprocess; repeat to alternate builds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", choices=["cpu", "gpu"], default="gpu")
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "Testing", "Data"))
    ap.add_argument("--only", default="", help="comma-separated volume names (default: the three)")
    a = ap.parse_args()
    builds = []
    for spec in a.build:
        name, sep, path = spec.partition("=")
        if not sep or not os.access(path, os.X_OK):
            ap.error("--build wants NAME=PATH of an executable: %r" % spec)
        builds.append((name, path))
    names = [v for v in a.only.split(",") if v] or list(VOLUMES)
    times = {(b, v): [] for b, _ in builds for v in names}
    voxels = {}
    with tempfile.TemporaryDirectory() as work:
        inputs = {}
        for v in names:
            raw, dtype, dims = unpack(a.data, v, work)
            inputs[v] = (raw, dtype, dims)
            voxels[v] = dims[0] * dims[1] * dims[2]
        for r in range(a.rounds):
            for b, path in builds:
                for v in names:
                    raw, dtype, dims = inputs[v]
                    out = subprocess.run([path, raw, dtype] + [str(n) for n in dims] + [a.device, "3"],
                                         capture_output=True, text=True)
                    if out.returncode != 0:
                        sys.exit("%s on %s failed: %s" % (b, v, out.stderr.strip()))
                    result = json.loads(out.stdout)
                    if result["device"] != a.device:
                        sys.exit("%s on %s ran on the %s, not the %s" % (b, v, result["device"], a.device))
                    times[(b, v)].append(result["ms"])
                    print("round %d %s %s: %.1f ms %s" % (r + 1, b, v, result["ms"], json.dumps(result["stages"])),
                          flush=True)
    print()
    print("| input | " + " | ".join("%s ms (rounds)" % b for b, _ in builds) + " |")
    print("|---|" + "---|" * len(builds))
    for v in names:
        print("| %s | %s |" % (v, " | ".join(", ".join("%.1f" % t for t in times[(b, v)]) for b, _ in builds)))
    print()
    print("| build | " + " | ".join("%s MVox/s best, median" % v for v in names) + " | mean best | mean median |")
    print("|---|" + "---|" * (len(names) + 2))
    for b, _ in builds:
        best = [voxels[v] / min(times[(b, v)]) / 1e3 for v in names]
        median = [voxels[v] / statistics.median(times[(b, v)]) / 1e3 for v in names]
        print("| %s | %s | %.1f | %.1f |" % (b, " | ".join("%.1f, %.1f" % (x, y) for x, y in zip(best, median)),
                                             sum(best) / len(best), sum(median) / len(median)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
