#!/usr/bin/env python3
"""Persistence benchmark: our engine (the `topovox persistence` command, all
threads and one thread) against CubicalRipser (`cripser`, the same machine,
the same run) on the same inputs. Prints, per input: seconds, peak memory
(resident, MiB), the pairs per dimension of each, whether the diagrams are
equal, and the time ratios.

    python3 bench/bench_persistence.py --topovox build/CommandLine/topovox \
        [--data Testing/Data] [--sizes small|full] [--threads N]

Inputs: the 3D volumes of Testing/Data (bonsai_256, engine_256x256x128,
colin27_t1, tooth, brainsmall, headsq, neghip), two of its 2D images
(camera_512, fundus_retina_green), 256^3 Gaussian random fields (power
spectra k^-1, k^-2, k^-3), 128^3 uniform noise and 2048^2 uniform noise;
--only picks some by name, --sizes small shrinks the synthetic ones for a
quick check; --large runs the 512^3 fields (k^-1, k^-2, k^-3) instead. Times are whole processes (reading the input and writing the
pairs included) measured with /usr/bin/time, for both tools alike.

--inprocess BIN (bench_persistence_inprocess of a build) also times ours
inside one process, as a ParaView session or a script computing many
diagrams sees it; with --gpu, CPU and GPU side by side.

--gpu also runs ours with --device gpu (a CUDA build: the Morse summary and
the Morse boundaries on the device, union-find and PHAT on the CPU threads)
and prints a second table: throughput in MVox/s, the ratios to CubicalRipser
and to our CPU path, peak host memory, and the stages as the command's -v
reports them (in-process seconds; the first stage includes creating the
CUDA context, which the whole-process time also pays).
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
    """Runs a command under /usr/bin/time: (seconds, peak MiB, stdout, stderr)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        start = time.time()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name] + command,
                           capture_output=True, text=True, env=env)
        seconds = time.time() - start
        if p.returncode != 0:
            raise RuntimeError("%s failed: %s" % (command[0], p.stderr.strip()[-500:]))
        peak = int(open(t.name).read().strip().splitlines()[-1]) / 1024.0
    return seconds, peak, p.stdout, p.stderr


STAGES = ("gradient and paths", "union-find pairing", "morse boundaries", "reduction", "diagram")


def stages_of(stderr):
    """The seconds of each persistence stage in `topovox ... -v` output."""
    found = {}
    for line in stderr.splitlines():
        for name in STAGES:
            key = "persistence stage %s: " % name
            if key in line:
                found[name] = float(line.split(key)[1].split()[0])
    return [found.get(name, float("nan")) for name in STAGES]


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
                    help="also run ours with --device gpu (summary and boundaries on the GPU, pairing on the threads)")
    ap.add_argument("--no-single", action="store_true", help="skip the one-thread runs of ours")
    ap.add_argument("--inprocess", default="",
                    help="bench_persistence_inprocess (a CUDA build's bench/): also time ours inside one process, "
                         "CPU and GPU, the best of 3 calls after a warm-up")
    ap.add_argument("--large", action="store_true",
                    help="the 512^3 Gaussian random fields (k^-1, k^-2, k^-3) instead of the other inputs: "
                         "tens of millions of pairs, CubicalRipser minutes each and 20 GB")
    ap.add_argument("--memory-limit-gb", type=float, default=120.0,
                    help="passed to topovox (its default, 8, refuses the 512^3 fields)")
    args = ap.parse_args()

    full = args.sizes == "full"
    def shipped(name):
        return ("%s (%s)" % (name, json.load(open(os.path.join(args.data, name + ".json")))["dtype"]),
                lambda: load_sidecar(args.data, name))

    def field(exponent, side=None):
        side = side or (256 if full else 64)
        return ("GRF k^-%d %d^3 (float32)" % (exponent, side),
                lambda: gaussian_field((side, side, side), float(exponent), 1))

    inputs = [
        shipped("bonsai_256"),
        shipped("engine_256x256x128"),
        shipped("colin27_t1"),
        shipped("tooth_103x94x161"),
        shipped("volpack_brainsmall_128x128x84"),
        shipped("headsq_64x64x93"),
        shipped("neghip_66"),
        shipped("camera_512"),
        shipped("fundus_retina_green"),
        field(1),
        field(2),
        field(3),
        ("uniform noise %d^3 (float32)" % (128 if full else 48),
         lambda: np.random.default_rng(2).random((128, 128, 128) if full else (48, 48, 48)).astype(np.float32)),
        ("uniform noise %d^2 (float32)" % (2048 if full else 512),
         lambda: np.random.default_rng(3).random((2048, 2048) if full else (512, 512)).astype(np.float32)),
    ]
    if not full:
        inputs = inputs[9:]
    if args.large:
        inputs = [field(e, 512) for e in (1, 2, 3)]
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
            for threads in sorted({args.threads} if args.no_single else {args.threads, 1}, reverse=True):
                env["TOPOVOX_NUM_THREADS"] = str(threads)
                results[threads] = timed([args.topovox, "persistence", src, "-o", ours_csv,
                                          "--device", "cpu", "--threads", str(threads),
                                          "--memory-limit-gb", str(args.memory_limit_gb)], env)
                print("  ours, %d threads: %.2f s, %.0f MiB" % ((threads,) + results[threads][:2]), flush=True)
            ours = diagram_of_ours(ours_csv)
            gpu_same = True
            if args.gpu:
                env["TOPOVOX_NUM_THREADS"] = str(args.threads)
                gpu_csv = os.path.join(work, "ours_gpu.csv")
                results["gpu"] = timed([args.topovox, "persistence", src, "-o", gpu_csv, "--device", "gpu",
                                        "--threads", str(args.threads), "-v",
                                        "--memory-limit-gb", str(args.memory_limit_gb)], env)
                print("  ours, GPU + %d threads: %.2f s, %.0f MiB" % ((args.threads,) + results["gpu"][:2]),
                      flush=True)
                gpu_same = diagram_of_ours(gpu_csv) == ours
                if not gpu_same:
                    print("  GPU DIAGRAM DIFFERS", flush=True)
            inproc = {}
            if args.inprocess:
                raw = os.path.join(work, "input.raw")
                np.ascontiguousarray(image).tofile(raw)
                shape = list(image.shape[::-1]) + [1] * (3 - image.ndim)
                for device in ("cpu", "gpu") if args.gpu else ("cpu",):
                    out = subprocess.run([args.inprocess, raw, str(image.dtype)] + [str(n) for n in shape] +
                                         [device, "3"], capture_output=True, text=True, check=True, env=env)
                    inproc[device] = json.loads(out.stdout)
                    print("  ours in process, %s: %.1f ms" % (device, inproc[device]["ms"]), flush=True)
            crip_out = os.path.join(work, "cripser.npy")
            cr = timed([args.python, "-c", CRIPSER_SCRIPT, src, crip_out])
            print("  cripser: %.2f s, %.0f MiB" % cr[:2], flush=True)
            theirs = diagram_of_cripser(crip_out)
            rows.append((name, results[args.threads], results.get(1, (float("nan"), 0.0)), cr, per_dimension(ours),
                         per_dimension(theirs), ours == theirs and gpu_same,
                         results.get("gpu"), image.size, inproc))
    print()
    print("| input | ours, %d threads s | ours, 1 thread s | cripser s | cripser / ours (%d threads) "
          "| cripser / ours (1 thread) | ours peak MiB | cripser peak MiB | pairs per dimension (ours) "
          "| (cripser) | equal |" % (args.threads, args.threads))
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, many, one, cr, po, pc, same, _, _, _ in rows:
        single = one[0] == one[0]  # nan when --no-single
        print("| %s | %.2f | %s | %.2f | %.2fx | %s | %.0f | %.0f | %s | %s | %s |" % (
            name, many[0], "%.2f" % one[0] if single else "-", cr[0], cr[0] / many[0],
            "%.2fx" % (cr[0] / one[0]) if single else "-", max(many[1], one[1]), cr[1],
            po, pc, "yes" if same else "NO"))
    if args.gpu:
        print()
        print("| input | ours GPU s | MVox/s | cripser / ours (GPU) | ours %d threads / ours GPU "
              "| peak host MiB | %s (s, in process) |" % (args.threads, " | ".join(STAGES)))
        print("|---|---|---|---|---|---|" + "---|" * len(STAGES))
        for name, many, _, cr, _, _, _, gpu, voxels, _ in rows:
            print("| %s | %.2f | %.1f | %.1fx | %.2fx | %.0f | %s |" % (
                name, gpu[0], voxels / gpu[0] / 1e6, cr[0] / gpu[0], many[0] / gpu[0], gpu[1],
                " | ".join("%.3f" % t for t in stages_of(gpu[3]))))
        real = [r for r in rows if "GRF" not in r[0] and "noise" not in r[0] and r[0].count("_") and
                r[8] >= 128 ** 3]
        if real:
            print()
            print("3D volumes of at least 128^3 (%s): mean %.1f MVox/s, mean %.1fx CubicalRipser (GPU, whole "
                  "processes)" % (", ".join(r[0].split()[0] for r in real),
                                  sum(r[8] / r[7][0] / 1e6 for r in real) / len(real),
                                  sum(r[3][0] / r[7][0] for r in real) / len(real)))
    if args.inprocess and args.gpu:
        print()
        print("In one process (the CUDA context made, the libraries loaded; best of 3 after a warm-up):")
        print()
        print("| input | ours CPU ms | ours GPU ms | MVox/s (GPU) | CPU / GPU | cripser / ours GPU | %s (ms, GPU) |"
              % " | ".join(STAGES))
        print("|---|---|---|---|---|---|" + "---|" * len(STAGES))
        for name, _, _, cr, _, _, _, _, voxels, inproc in rows:
            cpu, gpu = inproc["cpu"], inproc["gpu"]
            print("| %s | %.1f | %.1f | %.1f | %.2fx | %.0fx | %s |" % (
                name, cpu["ms"], gpu["ms"], voxels / gpu["ms"] / 1e3, cpu["ms"] / gpu["ms"], 1e3 * cr[0] / gpu["ms"],
                " | ".join("%.1f" % (1e3 * gpu["stages"].get(st, float("nan"))) for st in STAGES)))
        real = [r for r in rows if "GRF" not in r[0] and "noise" not in r[0] and r[0].count("_") and
                r[8] >= 128 ** 3]
        if real:
            print()
            print("3D volumes of at least 128^3, in process: mean %.1f MVox/s, mean %.0fx CubicalRipser's whole "
                  "process" % (sum(r[8] / r[9]["gpu"]["ms"] / 1e3 for r in real) / len(real),
                               sum(1e3 * r[3][0] / r[9]["gpu"]["ms"] for r in real) / len(real)))
    return 0 if all(r[6] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
