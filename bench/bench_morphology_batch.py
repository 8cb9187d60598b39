#!/usr/bin/env python3
"""Morphology and distance transforms on a batch of small images (a training
batch): ours, one `topovox morphology|distance --batch` process over the
stack (start-up, reading, every image, writing the stack; the images shared
among the CPU threads); scipy.ndimage, a Python loop over the same images,
same run. Prints both times per image, the ratio, and whether the results
are equal (bit for bit; EDT within 1e-12).

    python3 bench/bench_morphology_batch.py --topovox <build>/CommandLine/topovox
"""
import argparse
import os
import subprocess
import tempfile
import time

import numpy as np
import scipy.ndimage as ndi


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="topovox-morph-batch-")
    rng = np.random.default_rng(0)
    print("CPU threads: %d" % os.cpu_count())
    print("| batch | operation | ours per image us | scipy per image us | scipy / ours | equal |")
    print("|---|---|---|---|---|---|")
    cases = (
        ("grey_erosion, size 3", ["morphology", "grey_erosion"], ["--size", "3"],
         lambda x: ndi.grey_erosion(x, size=3), "float"),
        ("binary_opening, connectivity 1", ["morphology", "binary_opening"], ["--connectivity", "1"],
         lambda x: ndi.binary_opening(x, structure=ndi.generate_binary_structure(x.ndim, 1)), "mask"),
        ("distance_transform_edt", ["distance"], [], lambda x: ndi.distance_transform_edt(x), "mask"),
    )
    for count, shape in ((1024, (64, 64)), (256, (128, 128)), (64, (32, 32, 32))):
        floats = rng.random((count,) + shape).astype(np.float32)
        masks = rng.random((count,) + shape) > 0.3
        for name, command, extra, oracle, kind in cases:
            stack = floats if kind == "float" else masks
            src, out = os.path.join(work, "in.npy"), os.path.join(work, "out.npy")
            np.save(src, stack)
            t0 = time.perf_counter()
            subprocess.run([args.topovox] + command + [src, "--batch", "-o", out] + extra, check=True)
            ours = time.perf_counter() - t0
            t0 = time.perf_counter()
            want = np.stack([oracle(x) for x in stack])
            theirs = time.perf_counter() - t0
            got = np.load(out)
            equal = got.shape == want.shape and (np.allclose(got, want, rtol=1e-12, atol=0) if want.dtype.kind == "f"
                                                 and name.startswith("distance") else np.array_equal(got, want))
            print("| %d x %s | %s | %.1f | %.1f | %.2fx | %s |" % (
                count, "x".join(map(str, shape)), name, 1e6 * ours / count, 1e6 * theirs / count, theirs / ours,
                "yes" if equal else "NO"), flush=True)


if __name__ == "__main__":
    main()
