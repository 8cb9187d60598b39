#!/usr/bin/env python3
"""Image samples read by the threads in parts (InputFile::readSamples: pread
of parts of TOPOVOX_READ_PART_BYTES, 8 MiB unless set) against numpy's own
values: every reader that hands its samples over this way (raw, .npy, NIfTI)
with its header's offset, a big-endian .npy (swapped after the parts), a
NIfTI with a scale (converted after them), parts that split samples (4099
bytes), one and three threads, and the sequential reads the parts stand in
for (a small file, a .gz, parts larger than the file). The command is an
identity: grey_erosion with a 1-voxel element, whose output is the input
as read (float64 for a scaled NIfTI). Also a 20 MB volume at the default
part size, and a file that holds more than its header says (refused
before any part is read).

Usage: test_cli_input_parts.py --topovox PATH
"""
import argparse
import gzip
import os
import subprocess
import sys
import tempfile

import numpy as np

from cli_checks import expect, finish
from test_cli_nifti import nifti_bytes


def identity(tool, path, extra, work, part=None, threads=1):
    """The image as topovox read it (grey_erosion, size 1), or the stderr."""
    env = dict(os.environ, TOPOVOX_NUM_THREADS=str(threads))
    env.pop("TOPOVOX_READ_PART_BYTES", None)
    if part:
        env["TOPOVOX_READ_PART_BYTES"] = str(part)
    out = os.path.join(work, "out.npy")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([tool, "morphology", "grey_erosion", path, "--size", "1", "--device", "cpu", "-o", out] + extra,
                       capture_output=True, text=True, env=env)
    if p.returncode:
        return p.stderr.strip()
    return np.load(out)


def same(tool, what, path, extra, expected, work):
    for part, threads in ((None, 1), (4096, 3), (4099, 2), (1 << 30, 3)):
        got = identity(tool, path, extra, work, part, threads)
        ok = isinstance(got, np.ndarray) and got.dtype == expected.dtype and got.shape == expected.shape and \
            np.array_equal(got, expected)
        expect(ok, "%s, parts of %s bytes, %d threads: the values numpy has (%s)" % (
            what, part or "default", threads, got if isinstance(got, str) else got.dtype))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    args = ap.parse_args()
    tool = args.topovox
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory() as work:
        volume = rng.random((23, 41, 37)).astype(np.float32)  # 139 KB: 34 parts of 4096

        raw = os.path.join(work, "volume.raw")
        volume.tofile(raw)
        same(tool, "raw float32", raw, ["--dims", "37,41,23", "--dtype", "float32"], volume, work)

        npy = os.path.join(work, "volume.npy")
        np.save(npy, volume.astype(np.float64))
        same(tool, ".npy float64 (a 128-byte header first)", npy, [], volume.astype(np.float64), work)

        big = os.path.join(work, "big_endian.npy")
        words = rng.integers(0, 65535, size=(17, 29, 31)).astype(">u2")
        np.save(big, words)
        same(tool, ".npy big-endian uint16", big, [], words.astype(np.uint16), work)

        nii = os.path.join(work, "volume.nii")
        with open(nii, "wb") as f:
            f.write(nifti_bytes(volume, extension=b"x" * 16))
        same(tool, "NIfTI float32 (368 bytes before the data)", nii, [], volume, work)

        scaled = os.path.join(work, "scaled.nii")
        counts = rng.integers(0, 30000, size=(19, 23, 29)).astype(np.int16)
        with open(scaled, "wb") as f:
            f.write(nifti_bytes(counts, slope=2.0, inter=1.0))
        same(tool, "NIfTI int16 scaled to float64", scaled, [], counts.astype(np.float64) * 2.0 + 1.0, work)

        zipped = os.path.join(work, "volume.npy.gz")
        with open(npy, "rb") as f, gzip.open(zipped, "wb") as z:
            z.write(f.read())
        same(tool, ".npy.gz (read as it unpacks)", zipped, [], volume.astype(np.float64), work)

        small = os.path.join(work, "small.npy")
        np.save(small, volume[:1, :3, :5])
        same(tool, "a .npy of 60 bytes", small, [], volume[:1, :3, :5], work)

        large = os.path.join(work, "large.npy")
        field = rng.random((160, 160, 200)).astype(np.float32)  # 20.5 MB: 3 parts of 8 MiB
        np.save(large, field)
        for threads in (1, 3):
            got = identity(tool, large, [], work, None, threads)
            expect(isinstance(got, np.ndarray) and np.array_equal(got, field),
                   "20 MB .npy at the default parts, %d threads: the values numpy has" % threads)

        longer = os.path.join(work, "longer.raw")
        with open(longer, "wb") as f:
            f.write(volume.tobytes() + b"\0" * 8)
        got = identity(tool, longer, ["--dims", "37,41,23", "--dtype", "float32"], work, 4096, 3)
        expect(isinstance(got, str) and "bytes but" in got,
               "a raw file 8 bytes longer than its --dims: refused (%s)" % (got if isinstance(got, str) else "read"))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
