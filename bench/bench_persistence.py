#!/usr/bin/env python3
"""Persistence benchmark: our engine (the `topovox persistence` command, all
threads and one thread) against CubicalRipser (`cripser`, the same machine,
the same run) on the same inputs. Prints, per input: seconds, peak memory
(resident, MiB), the pairs per dimension of each, whether the diagrams are
equal, and the time ratios.

    python3 bench/bench_persistence.py --topovox build/CommandLine/topovox \
        [--data Testing/Data] [--sizes small|full] [--threads N]

Inputs: bonsai_256 and engine_256x256x128 (Testing/Data), a 256^3 Gaussian
random field (power spectrum k^-2), 128^3 uniform noise and 2048^2 uniform
noise; --sizes small shrinks the synthetic ones for a quick check. Times are
whole processes (reading the input and writing the pairs included) measured
with /usr/bin/time, for both tools alike.
"""
import argparse
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def gaussian_field(shape, exponent, seed):
    """A Gaussian random field with power spectrum |k|^-exponent."""
    rng = np.random.default_rng(seed)
    noise = np.fft.rfftn(rng.standard_normal(shape))
    grids = np.meshgrid(*[np.fft.fftfreq(n) for n in shape[:-1]], np.fft.rfftfreq(shape[-1]),
                        indexing="ij")
    k2 = sum(g * g for g in grids)
    k2[(0,) * len(shape)] = 1.0
    field = np.fft.irfftn(noise * k2 ** (-exponent / 4.0), s=shape)
    return field.astype(np.float32)


def load_sidecar(data_dir, name):
    meta = json.load(open(os.path.join(data_dir, name + ".json")))
    raw = gzip.open(os.path.join(data_dir, meta["file"])).read()
    array = np.frombuffer(raw, dtype=np.dtype(meta["dtype"]).newbyteorder("<"))
    return array.reshape(meta["dims"][::-1]).astype(np.dtype(meta["dtype"]))


def timed(command, env=None):
    """Runs a command under /usr/bin/time: (seconds, peak MiB, stdout)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        start = time.time()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name] + command,
                           capture_output=True, text=True, env=env)
        seconds = time.time() - start
        if p.returncode != 0:
            raise RuntimeError("%s failed: %s" % (command[0], p.stderr.strip()[-500:]))
        peak = int(open(t.name).read().strip().splitlines()[-1]) / 1024.0
    return seconds, peak, p.stdout


CRIPSER_SCRIPT = r"""
import sys, numpy as np, cripser
a = np.load(sys.argv[1]).astype(np.float64)
ph = cripser.computePH(a)
np.save(sys.argv[2], ph[:, :3])
"""


def diagram_of_cripser(path):
    rows = np.load(path)
    out = collections.Counter()
    for d, b, e in rows:
        if b != e:
            out[(int(d), float(b), float("inf") if e > 1e300 else float(e))] += 1
    return out


def diagram_of_ours(path):
    out = collections.Counter()
    with open(path) as f:
        next(f)
        for line in f:
            d, b, e = line.split(",")[:3]
            out[(int(d), float(b), float(e))] += 1
    return out


def per_dimension(diagram):
    counts = collections.Counter()
    for (d, _, _), n in diagram.items():
        counts[d] += n
    return "/".join(str(counts[d]) for d in range(max(counts) + 1)) if counts else "0"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topovox", required=True)
    ap.add_argument("--data", default=os.path.join(os.path.dirname(__file__), "..", "Testing", "Data"))
    ap.add_argument("--sizes", choices=["small", "full"], default="full")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--python", default=sys.executable, help="a python that imports cripser")
    ap.add_argument("--only", default="", help="comma-separated words: run the inputs whose name has one")
    ap.add_argument("--gpu", action="store_true",
                    help="also run ours with --device gpu (the gradient on the GPU, the rest on all threads)")
    args = ap.parse_args()

    full = args.sizes == "full"
    inputs = [
        ("bonsai_256 (uint8)", lambda: load_sidecar(args.data, "bonsai_256")),
        ("engine_256x256x128 (uint8)", lambda: load_sidecar(args.data, "engine_256x256x128")),
        ("GRF k^-2 %d^3 (float32)" % (256 if full else 64),
         lambda: gaussian_field((256, 256, 256) if full else (64, 64, 64), 2.0, 1)),
        ("uniform noise %d^3 (float32)" % (128 if full else 48),
         lambda: np.random.default_rng(2).random((128, 128, 128) if full else (48, 48, 48)).astype(np.float32)),
        ("uniform noise %d^2 (float32)" % (2048 if full else 512),
         lambda: np.random.default_rng(3).random((2048, 2048) if full else (512, 512)).astype(np.float32)),
    ]
    if not full:
        inputs = inputs[2:]
    if args.only:
        words = args.only.split(",")
        inputs = [i for i in inputs if any(w in i[0] for w in words)]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, make in inputs:
            image = make()
            src = os.path.join(work, "input.npy")
            np.save(src, image)
            print("%s: %s %s" % (name, "x".join(map(str, image.shape[::-1])), image.dtype), flush=True)
            ours_csv = os.path.join(work, "ours.csv")
            env = dict(os.environ)
            results = {}
            for threads in sorted({args.threads, 1}, reverse=True):
                env["TOPOVOX_NUM_THREADS"] = str(threads)
                results[threads] = timed([args.topovox, "persistence", src, "-o", ours_csv,
                                          "--device", "cpu", "--threads", str(threads)], env)
                print("  ours, %d threads: %.2f s, %.0f MiB" % ((threads,) + results[threads][:2]), flush=True)
            ours = diagram_of_ours(ours_csv)
            gpu_same = True
            if args.gpu:
                env["TOPOVOX_NUM_THREADS"] = str(args.threads)
                gpu_csv = os.path.join(work, "ours_gpu.csv")
                results["gpu"] = timed([args.topovox, "persistence", src, "-o", gpu_csv, "--device", "gpu",
                                        "--threads", str(args.threads)], env)
                print("  ours, GPU gradient + %d threads: %.2f s, %.0f MiB" % ((args.threads,) + results["gpu"][:2]),
                      flush=True)
                gpu_same = diagram_of_ours(gpu_csv) == ours
                if not gpu_same:
                    print("  GPU DIAGRAM DIFFERS", flush=True)
            crip_out = os.path.join(work, "cripser.npy")
            cr = timed([args.python, "-c", CRIPSER_SCRIPT, src, crip_out])
            print("  cripser: %.2f s, %.0f MiB" % cr[:2], flush=True)
            theirs = diagram_of_cripser(crip_out)
            rows.append((name, results[args.threads], results[1], cr, per_dimension(ours),
                         per_dimension(theirs), ours == theirs and gpu_same,
                         results.get("gpu")))
    print()
    print("| input | ours, %d threads s | ours, 1 thread s | cripser s | cripser / ours (%d threads) "
          "| cripser / ours (1 thread) | ours peak MiB | cripser peak MiB | pairs per dimension (ours) "
          "| (cripser) | equal |" % (args.threads, args.threads))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, many, one, cr, po, pc, same, _ in rows:
        print("| %s | %.2f | %.2f | %.2f | %.2fx | %.2fx | %.0f | %.0f | %s | %s | %s |" % (
            name, many[0], one[0], cr[0], cr[0] / many[0], cr[0] / one[0], max(many[1], one[1]), cr[1],
            po, pc, "yes" if same else "NO"))
    if args.gpu:
        print()
        print("| input | ours, GPU gradient + %d threads s | cripser / ours (GPU) | ours GPU peak host MiB |"
              % args.threads)
        print("|---|---|---|---|")
        for name, _, _, cr, _, _, _, gpu in rows:
            print("| %s | %.2f | %.2fx | %.0f |" % (name, gpu[0], cr[0] / gpu[0], gpu[1]))
    return 0 if all(r[6] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
