#!/usr/bin/env python3
"""Morphology and distance transform benchmark (GPU machine): our kernels
(bench_morphology) on the GPU through the device API on an array already
there ("resident") and end to end (host array in, host array out), and on
all CPU cores, against cupyx.scipy.ndimage on the same GPU (timed both
with the array already on the device and end to end with the transfers) and
scipy.ndimage on the CPU, on the same generated inputs, in the same run.

Inputs: Gaussian-smoothed noise (sigma 2) as float32 for the grey
operators, thresholded at 0 (about half foreground) for the binary
operators and the transforms. Shapes: 512^3, 256^3, 4096^2, 1024^2.
`--field` picks other binary inputs for the transforms' harder cases:
"planes" (background planes x = 0, 120, 240, ...: every voxel up to 60
samples from it along lines that stay near it), "balls" (five solid balls
of a fifth of the side in radius as foreground: thick structures), "one"
(a single background voxel).

`--batch B` repeats each shape's input B times along a leading batch axis:
ours runs a batch of 2D images as one call on the stack of planes with the
2D element, volumes and the transforms as one call per image; cupyx and
scipy get the element with extent 1 along the batch axis (one call), and
loop over the images for the transforms. Times are per batch.

    python3 bench/bench_morphology.py --bench <build>/bench/bench_morphology
    python3 bench/bench_morphology.py --bench ... --ops edt --field planes --no-cpu
    python3 bench/bench_morphology.py --bench ... --batch 8 --shapes "1024,1024;256,256,256"
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

import numpy as np
import scipy.ndimage as ndi

try:
    import cupy as cp
    import cupyx.scipy.ndimage as cndi
except ImportError:  # no GPU stack: our CPU and scipy only
    cp = None

OPS = ["binary_erosion_box3", "binary_erosion_ball2", "binary_opening_box3", "grey_erosion_box3",
       "grey_erosion_ball2", "edt", "cdt_chessboard"]


def ball(rank, radius):
    axes = np.indices((2 * radius + 1,) * rank) - radius
    return (axes ** 2).sum(axis=0) <= radius * radius


def peer_call(lib, op, x, batched=False):
    """The scipy / cupyx call that computes what our operator computes. With
    `batched`, x's first axis is a batch: the local operators' elements get
    extent 1 along it (one call for the batch), the transforms loop over it."""
    rank = x.ndim - (1 if batched else 0)
    lead = (1,) if batched else ()
    box = np.ones(lead + (3,) * rank, bool)
    b2 = ball(rank, 2).reshape(lead + (5,) * rank)
    if lib is not ndi:
        box, b2 = cp.asarray(box), cp.asarray(b2)

    def each(f):
        return (lambda: [f(item) for item in x]) if batched else (lambda: f(x))
    return {
        "binary_erosion_box3": lambda: lib.binary_erosion(x, structure=box),
        "binary_erosion_ball2": lambda: lib.binary_erosion(x, structure=b2),
        "binary_opening_box3": lambda: lib.binary_opening(x, structure=box),
        "grey_erosion_box3": lambda: lib.grey_erosion(x, size=lead + (3,) * rank),
        "grey_erosion_ball2": lambda: lib.grey_erosion(x, footprint=b2),
        "edt": each(lib.distance_transform_edt),
        "cdt_chessboard": each(lambda v: lib.distance_transform_cdt(v, metric="chessboard"))
        if hasattr(lib, "distance_transform_cdt") else None,
    }[op]


def best_of(fn, repeat, sync=None):
    fn()
    if sync:
        sync()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def ours(bench, op, path, dtype, shape, device, repeat, batch=1):
    nx, ny, nz = shape[::-1] + (1,) * (3 - len(shape))
    out = subprocess.run([bench, op, path, dtype, str(nx), str(ny), str(nz * batch), device, str(repeat),
                          str(batch)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["ms"]  # None: no device API for this operator


def fmt(v):
    return "—" if v is None else f"{v:.2f}"


def ratio(a, b):
    return "—" if a is None or b is None else f"{b / a:.1f}x"


FIELDS = ("smooth", "planes", "balls", "one")


def binary_field(kind, shape, smooth):
    """The binary input of the transforms and binary operators."""
    if kind == "smooth":
        return (smooth > 0).astype(np.uint8)
    grid = np.indices(shape, sparse=True)
    if kind == "planes":
        out = np.ones(shape, np.uint8)
        out[..., ::120] = 0
        return out
    if kind == "balls":
        n = min(shape)
        out = np.zeros(shape, bool)
        for k in range(5):
            centre = [int(s * (0.2 + 0.15 * k)) for s in shape]
            out |= sum((g - c) ** 2 for g, c in zip(grid, centre)) < (n // 5) ** 2
        return out.astype(np.uint8)
    if kind == "one":
        out = np.ones(shape, np.uint8)
        out[tuple(s // 3 for s in shape)] = 0
        return out
    raise ValueError(kind)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--shapes", default="512,512,512;256,256,256;4096,4096;1024,1024")
    ap.add_argument("--ops", default=",".join(OPS), help="operators to run, comma-separated")
    ap.add_argument("--no-cpu", action="store_true", help="skip our CPU path and scipy (GPU columns only)")
    ap.add_argument("--scipy-max", type=int, default=17_000_000, help="largest voxel count scipy runs on")
    ap.add_argument("--field", default="smooth",
                    help="the binary inputs, comma-separated: smooth, planes, balls, one (see above)")
    ap.add_argument("--batch", type=int, default=1,
                    help="images a call: each shape's input repeated along a leading batch axis (see above)")
    args = ap.parse_args()
    fields = args.field.split(",")
    for f in fields:
        if f not in FIELDS:
            raise SystemExit("unknown --field " + f)
    work = tempfile.mkdtemp(prefix="topovox-morph-")
    gpu = cp is not None and cp.cuda.runtime.getDeviceCount() > 0
    if gpu:
        props = cp.cuda.runtime.getDeviceProperties(0)
        print(f"GPU: {props['name'].decode()}, cupy {cp.__version__}")
    print(f"CPU threads: {os.cpu_count()}")
    print("| input | operator | ours GPU resident ms | ours GPU end to end ms | ours CPU ms | cupyx on device ms | "
          "cupyx with transfers ms | scipy ms | resident vs cupyx (device) | end to end vs cupyx (transfers) | "
          "CPU vs scipy | resident bytes in+out per s, share of copy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for text in args.shapes.split(";"):
        shape = tuple(int(v) for v in text.split(","))
        rng = np.random.default_rng(0)
        grey = ndi.gaussian_filter(rng.standard_normal(shape, dtype=np.float32), 2.0) if not gpu else \
            cndi.gaussian_filter(cp.random.default_rng(0).standard_normal(shape, dtype=cp.float32), 2.0).get()
        files = {"float32": os.path.join(work, "grey.raw"), "uint8": os.path.join(work, "binary.raw")}
        if args.batch > 1:
            grey = np.stack([grey] * args.batch)
        grey.tofile(files["float32"])
        big = grey.size > 50_000_000
        copy = copy_bandwidth(grey.nbytes) if gpu else None
        for field in fields:
            binary = binary_field(field, shape, grey[0] if args.batch > 1 else grey)
            if args.batch > 1:
                binary = np.stack([binary] * args.batch)
            binary.tofile(files["uint8"])
            label = ("%d x " % args.batch if args.batch > 1 else "") + "x".join(map(str, shape)) + \
                ("" if field == "smooth" else " " + field)
            for op in args.ops.split(","):
                if field != "smooth" and op.startswith("grey"):
                    continue  # the fields are binary inputs; the grey rows are the smooth field's
                run_op(args, gpu, op, shape, label, grey, binary, files, big, copy)


def copy_bandwidth(nbytes):
    """The device's copy bandwidth (bytes read + written per second) on a
    buffer of `nbytes`, best of five: the yardstick of the local operators."""
    a = cp.zeros(nbytes, cp.uint8)
    b = cp.empty_like(a)
    sync = cp.cuda.Device().synchronize
    seconds = best_of(lambda: cp.copyto(b, a), 5, sync) / 1e3
    del a, b
    cp.get_default_memory_pool().free_all_blocks()
    return 2 * nbytes / seconds


def share_of_copy(op, host, ms, copy):
    """A local operator's bytes in and out (one of each per voxel, of the
    input's type) per second, and its share of the copy bandwidth."""
    if ms is None or copy is None or not op.startswith(("grey", "binary")):
        return "—"
    itemsize = 4 if op.startswith("grey") else 1
    rate = 2 * host.size * itemsize / (ms / 1e3)
    return f"{rate / 1e12:.2f} TB/s, {100 * rate / copy:.0f}% of {copy / 1e12:.2f}"


def run_op(args, gpu, op, shape, label, grey, binary, files, big, copy):
    """One row: ours and the peers on one operator and input."""
    dtype = "float32" if op.startswith("grey") else "uint8"
    host = grey if dtype == "float32" else binary.astype(bool)
    b, batched = args.batch, args.batch > 1
    g = ours(args.bench, op, files[dtype], dtype, shape, "gpu", 3, b) if gpu and op != "cdt_chessboard" else None
    r = ours(args.bench, op, files[dtype], dtype, shape, "resident", 5, b) if gpu else None
    c = None if args.no_cpu else ours(args.bench, op, files[dtype], dtype, shape, "cpu", 1 if big else 2, b)
    cd = ce = None
    if gpu:
        dev = cp.asarray(host)
        call = peer_call(cndi, op, dev, batched)
        if call:
            sync = cp.cuda.Device().synchronize
            cd = best_of(call, 3, sync)

            def with_transfers():
                r = peer_call(cndi, op, cp.asarray(host), batched)()
                for part in r if isinstance(r, list) else [r]:
                    (part[0] if isinstance(part, tuple) else part).get()
            ce = best_of(with_transfers, 3, sync)
        del dev
        cp.get_default_memory_pool().free_all_blocks()
    s = best_of(peer_call(ndi, op, host, batched), 1) if host.size <= args.scipy_max and not args.no_cpu else None
    print(f"| {label} | {op} | {fmt(r)} | {fmt(g)} | {fmt(c)} | {fmt(cd)} | {fmt(ce)} | "
          f"{fmt(s)} | {ratio(r, cd)} | {ratio(g, ce)} | {ratio(c, s)} | {share_of_copy(op, host, r, copy)} |",
          flush=True)


if __name__ == "__main__":
    main()
