#!/usr/bin/env python3
"""The .npy files the CLI writes, made straight into a mapping of the output
file (OutputFile::mapSized) or written through the stream
(TOPOVOX_OUTPUT_MAP=0): the same bytes either way. Tables: np.load reads
them as float64 of the right shape, with the values numpy parses from the
CSV; on persistence diagrams of more rows than one window of the stream
holds (1 and 3 threads: windows of 32768 and 98304 rows), in both layouts,
an empty diagram, and an Euler curve (a table made whole before it is
written). Images: a morphology result of 4.2 MB (parts of 4 MiB copied on
the threads, and the last short one), float32 and bool, its shape, and
scipy.ndimage's values.

Usage: test_cli_table_output.py --topovox PATH [--persistence]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import ndimage

from cli_checks import expect, finish


def run(tool, args, mapped=True, threads=1):
    env = dict(os.environ, TOPOVOX_NUM_THREADS=str(threads))
    if not mapped:
        env["TOPOVOX_OUTPUT_MAP"] = "0"
    return subprocess.run([tool] + args, capture_output=True, text=True, env=env)


def check_outputs(tool, command, what, work, threads):
    """Runs `command` (its -o added) three times: .npy mapped, .npy
    streamed, CSV; returns the rows or None."""
    outs = [os.path.join(work, n) for n in ("mapped.npy", "streamed.npy", "table.csv")]
    for out, mapped in zip(outs, (True, False, True)):
        p = run(tool, command + ["-o", out], mapped, threads)
        expect(p.returncode == 0, "%s -> %s: ran (%s)" % (what, os.path.basename(out), p.stderr.strip()))
        if p.returncode:
            return None
    with open(outs[0], "rb") as f:
        mapped_bytes = f.read()
    with open(outs[1], "rb") as f:
        streamed_bytes = f.read()
    expect(mapped_bytes == streamed_bytes, "%s: the mapped and the streamed .npy are the same bytes" % what)
    rows = np.load(outs[0])
    expect(rows.dtype == np.float64 and rows.ndim == 2, "%s: float64 rows (%s %s)" % (what, rows.dtype, rows.shape))
    with open(outs[2]) as f:
        first = f.readline()
        more = f.read(1)
    has_header = any(c.isalpha() and c not in "eE" for c in first.replace("inf", "").replace("nan", ""))
    if rows.shape[0] == 0:
        expect(has_header and not more, "%s: CSV without rows too" % what)
    else:
        text = np.loadtxt(outs[2], delimiter=",", skiprows=1 if has_header else 0, ndmin=2)
        expect(text.shape == rows.shape and np.array_equal(text, rows, equal_nan=True),
            "%s: the .npy's values are the CSV's (%s, %s)" % (what, text.shape, rows.shape))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    ap.add_argument("--persistence", action="store_true", help="the tool was built with PHAT")
    args = ap.parse_args()
    tool = args.topovox
    work = tempfile.mkdtemp(prefix="topovox-table-")
    rng = np.random.default_rng(31)
    image = os.path.join(work, "noise.npy")
    np.save(image, rng.random((600, 610)).astype(np.float32))  # about 115,000 pairs

    curve = check_outputs(tool, ["euler", image, "--bins", "300"], "euler curve", work, 2)
    expect(curve is not None and curve.shape == (300, 6), "euler curve: 300 rows of 6")

    volume, mask = os.path.join(work, "volume.npy"), os.path.join(work, "mask.npy")
    values = rng.random((102, 101, 103)).astype(np.float32)
    np.save(volume, values)
    np.save(mask, (values > 0.9).astype(np.uint8))
    for operation, source, element, dtype in (("grey_erosion", volume, ["--size", "3"], np.float32),
            ("binary_dilation", mask, ["--connectivity", "1"], np.bool_)):
        outs = [os.path.join(work, n) for n in ("mapped-image.npy", "streamed-image.npy")]
        ran = True
        for out, mapped in zip(outs, (True, False)):
            p = run(tool, ["morphology", operation, source] + element + ["-o", out], mapped, 3)
            expect(p.returncode == 0, "%s -> %s: ran (%s)" % (operation, os.path.basename(out), p.stderr.strip()))
            ran = ran and p.returncode == 0
        if ran:
            with open(outs[0], "rb") as f, open(outs[1], "rb") as g:
                expect(f.read() == g.read(), operation + ": the mapped and the streamed image are the same bytes")
            result = np.load(outs[0])
            expect(result.dtype == dtype and result.shape == (102, 101, 103),
                "%s: %s %s read back" % (operation, result.dtype, result.shape))
            # scipy.ndimage's result (the morphology tests' oracle).
            if dtype == np.bool_:
                expected = ndimage.binary_dilation(values > 0.9, structure=ndimage.generate_binary_structure(3, 1))
            else:
                expected = ndimage.grey_erosion(values, size=3)
            expect(np.array_equal(result, expected), operation + ": scipy.ndimage's values")

    if args.persistence:
        sizes = []
        for threads in (1, 3):
            for layout in ("topovox", "cripser"):
                what = "persistence of 600x610 noise, %s layout, %d thread(s)" % (layout, threads)
                rows = check_outputs(tool, ["persistence", image, "--format", layout], what, work, threads)
                if rows is not None:
                    sizes.append(rows.shape[0])
                    expect(rows.shape[1] == 9, what + ": 9 columns")
        expect(len(sizes) == 4 and len(set(sizes)) == 1 and sizes[0] > 3 * 32768,
            "persistence: one number of rows, more than three windows of one thread (%s)" % sizes)
        empty = os.path.join(work, "nan.npy")
        np.save(empty, np.full((5, 6), np.nan, dtype=np.float32))
        rows = check_outputs(tool, ["persistence", empty], "persistence of an all-NaN image", work, 2)
        expect(rows is not None and rows.shape == (0, 9), "all-NaN image: an empty (0, 9) table")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
