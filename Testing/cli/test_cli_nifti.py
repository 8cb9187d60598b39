"""NIfTI-1 input: `topovox euler` on a .nii (and .nii.gz) must give exactly
the curve it gives on the same voxels as .npy (the .npy reader is itself
checked against scikit-image), for several data types, both byte orders,
header extensions, and scaled data (scl_slope/scl_inter: the curve of
slope * stored + intercept in float64, as nibabel's get_fdata() returns).
The NIfTI files are written here with struct, following the NIfTI-1 header
layout (no nibabel needed). Bad files get a one-line error and no output.

    test_cli_nifti.py --topovox PATH
"""
import argparse
import gzip
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

CODES = {np.uint8: 2, np.int16: 4, np.int32: 8, np.float32: 16, np.float64: 64, np.int8: 256,
         np.uint16: 512, np.uint32: 768, np.int64: 1024, np.uint64: 1280}


def nifti_bytes(volume, order="<", slope=0.0, inter=0.0, extension=b"", magic=b"n+1\0",
                code=None, dims=None):
    """A single-file NIfTI-1 image of `volume` (numpy shape (nz, ny, nx) or
    fewer axes; NIfTI stores x fastest, as numpy's C order does)."""
    shape = list(volume.shape[::-1]) if dims is None else dims
    header = bytearray(348)
    struct.pack_into(order + "i", header, 0, 348)
    dim = [len(shape)] + shape + [1] * (7 - len(shape))
    struct.pack_into(order + "8h", header, 40, *dim)
    code = CODES[volume.dtype.type] if code is None else code
    struct.pack_into(order + "hh", header, 70, code, volume.dtype.itemsize * 8)
    struct.pack_into(order + "8f", header, 76, 1.0, 0.5, 0.75, 2.0, 1, 1, 1, 1)
    offset = 352 + len(extension)
    struct.pack_into(order + "fff", header, 108, float(offset), slope, inter)
    header[344:348] = magic
    ext = b"\0\0\0\0" + extension
    data = volume.astype(volume.dtype.newbyteorder(order)).tobytes()
    return bytes(header) + ext + data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    args = ap.parse_args()
    failures = []
    rng = np.random.default_rng(11)
    with tempfile.TemporaryDirectory() as work:
        def run(path, *extra):
            out = os.path.join(work, "curve.csv")
            if os.path.exists(out):
                os.remove(out)
            p = subprocess.run([args.topovox, "euler", path, "--thresholds", "exact", "-o", out, *extra],
                               capture_output=True, text=True)
            return p, (open(out).read() if os.path.exists(out) else None)

        def same_as_npy(what, volume, nii, as_float64=None):
            ref = os.path.join(work, "ref.npy")
            np.save(ref, volume if as_float64 is None else as_float64)
            p1, a = run(nii)
            p2, b = run(ref)
            if p1.returncode != 0 or a is None or a != b:
                failures.append(what)
                print("FAIL:", what, p1.stderr.strip())

        cases = [(np.uint8, (6, 7, 8)), (np.int16, (5, 9)), (np.float32, (4, 5, 6)),
                 (np.float64, (30,)), (np.int8, (3, 4, 5)), (np.uint16, (9, 8)),
                 (np.int32, (4, 4, 4)), (np.uint32, (5, 6)), (np.int64, (3, 3, 3)), (np.uint64, (7,))]
        for dtype, shape in cases:
            volume = rng.integers(0, 9, size=shape).astype(dtype)
            for order in "<>":
                for gz in (False, True):
                    path = os.path.join(work, "v.nii" + (".gz" if gz else ""))
                    data = nifti_bytes(volume, order, extension=b"\x10\0\0\0\x04\0\0\0abcdefgh")
                    open(path, "wb").write(gzip.compress(data) if gz else data)
                    same_as_npy("%s %s %s%s" % (np.dtype(dtype).name, shape, order, " gz" if gz else ""),
                                volume, path)
        # Scaled data: the curve of slope * stored + intercept.
        volume = rng.integers(0, 50, size=(5, 6, 7)).astype(np.int16)
        path = os.path.join(work, "s.nii")
        open(path, "wb").write(nifti_bytes(volume, slope=0.5, inter=-3.0))
        same_as_npy("scaled int16", volume, path, as_float64=volume.astype(np.float64) * 0.5 - 3.0)
        # A 4D image with one volume is a 3D image.
        path = os.path.join(work, "t.nii")
        open(path, "wb").write(nifti_bytes(volume, dims=[7, 6, 5, 1]))
        same_as_npy("4D with one volume", volume, path)

        bad = {
            "4D": (nifti_bytes(volume, dims=[7, 6, 5, 2]) + volume.tobytes(), "reads 1D to 3D"),
            "pair header": (nifti_bytes(volume, magic=b"ni1\0"), ".hdr/.img pair"),
            "complex": (nifti_bytes(volume, code=32), "not a real scalar type"),
            "truncated": (nifti_bytes(volume)[:-10], "truncated"),
            "not nifti": (b"hello" * 100, "not a NIfTI-1 file"),
            "short": (b"\x5c\x01\0\0", "a header needs 348"),
        }
        for name, (data, reason) in bad.items():
            path = os.path.join(work, "bad.nii")
            open(path, "wb").write(data)
            p, out = run(path)
            ok = p.returncode == 1 and out is None and reason in p.stderr and \
                p.stderr.count("\n") == 1 and p.stderr.startswith("topovox: ")
            if not ok:
                failures.append(name)
                print("FAIL: %s: exit %d, %r" % (name, p.returncode, p.stderr))
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
