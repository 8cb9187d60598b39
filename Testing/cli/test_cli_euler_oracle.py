#!/usr/bin/env python3
"""`topovox euler` against scikit-image, row by row.

For every row (threshold t) of the curve the built tool writes:
  * euler == skimage.measure.euler_number(S, connectivity) where S is the
    sublevel set (image <= t) or the superlevel set (image >= t), with
    connectivity 1 for the V construction (voxels are vertices: 4-/6-
    connected sets) and image.ndim for T (voxels are cubes: 8-/26-connected).
    euler_number pads the image with background, as the cubical complex of
    an image has nothing beyond its border. A NaN voxel is in no set:
    NaN <= t and NaN >= t are both False in numpy, as in topovox.
  * euler == vertices - edges + squares - cubes;
  * the cell counts equal a direct count of the complex of S (small images,
    every row; real data, the full complex at the last row);
  * thresholds are what the mode promises (exact: the distinct values).

Two parts, so that CTest can run them side by side:
  --part synthetic  random images with many ties, 1-voxel and 1-thick
                    images, NaN/inf, every dtype as C/Fortran/big-endian .npy,
                    raw files, every threshold mode, CSV and .npy outputs;
                    these hundreds of small runs use the CPU (a GPU would cost
                    each its CUDA start-up), then a subset runs again on the
                    default device: the GPU where there is one;
  --part data       every volume in TOPOVOX_DATA_DIR, read by the tool through
                    its .json sidecar, exact thresholds, a sample of rows, on
                    the default device.

Usage: test_cli_euler_oracle.py --topovox PATH --data DIR [--part P]
"""
import argparse
import gzip
import itertools
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from skimage.measure import euler_number

from sidecar_data import load_sidecar

COLUMNS = "threshold,euler,vertices,edges,squares,cubes"


class Checker:
    """Runs the tool and counts checks; failures are collected, not fatal."""

    def __init__(self, topovox, workdir):
        self.topovox = topovox
        self.workdir = workdir
        self.device = None  # TOPOVOX_DEVICE for the runs; None: as inherited
        self.checks = 0
        self.failures = []
        self.runs = 0

    def expect(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures.append(what)
            if len(self.failures) <= 30:
                print("FAIL:", what, flush=True)

    def run(self, args, what):
        """Runs `topovox euler ARGS`; returns the (n, 6) curve or None."""
        self.runs += 1
        env = dict(os.environ)
        if self.device is not None:
            env["TOPOVOX_DEVICE"] = self.device
        proc = subprocess.run([self.topovox, "euler"] + [str(a) for a in args],
                              capture_output=True, text=True, errors="replace", env=env)
        if proc.returncode != 0:
            self.expect(False, f"{what}: exit {proc.returncode}: {proc.stderr.strip()}")
            return None
        output = args[args.index("-o") + 1]
        if output == "-":
            return self.parse_csv(proc.stdout, what)
        if output.endswith(".csv"):
            with open(output) as f:
                return self.parse_csv(f.read(), what)
        curve = np.load(output)
        self.expect(curve.dtype == np.float64 and curve.ndim == 2 and curve.shape[1] == 6,
                    f"{what}: .npy output has dtype {curve.dtype}, shape {curve.shape}")
        return curve

    def parse_csv(self, text, what):
        lines = text.splitlines()
        self.expect(lines and lines[0] == COLUMNS, f"{what}: CSV header {lines[:1]}")
        # float() reads %.17g exactly, "inf" and "nan" included.
        rows = [[float(x) for x in line.split(",")] for line in lines[1:]]
        return np.array(rows, dtype=np.float64).reshape(len(rows), 6)


# --- what the tool should compute -----------------------------------------

def members(image, t, superlevel):
    """The voxels in the set at threshold t, compared exactly: integers as
    Python integers (no rounding of 64-bit values through float64), floats
    in float64 (numpy would otherwise round t to float32 first). The tool
    rounds t to the image's type first, which changes no answer."""
    if image.dtype.kind == "f":
        values = image.astype(np.float64)
        return values >= t if superlevel else values <= t
    info = np.iinfo(image.dtype)
    if math.isinf(t):
        everything = (t < 0) == superlevel
        return np.full(image.shape, everything)
    k = math.ceil(t) if superlevel else math.floor(t)
    if superlevel:
        return np.full(image.shape, False) if k > info.max else \
            np.full(image.shape, True) if k <= info.min else image >= image.dtype.type(k)
    return np.full(image.shape, False) if k < info.min else \
        np.full(image.shape, True) if k >= info.max else image <= image.dtype.type(k)


def skimage_euler(mask, construction):
    """euler_number needs 2 or 3 axes: 1D images become 1 x N."""
    if mask.ndim == 1:
        mask = mask.reshape(1, -1)
    return int(euler_number(mask, connectivity=1 if construction == "V" else mask.ndim))


def direct_cells(mask, construction):
    """Cells per dimension of the cubical complex of a binary image, counted
    directly. Axes of length 1 do not count (a 1-thick image is 2D)."""
    m = mask.reshape([n for n in mask.shape if n > 1])
    d = m.ndim
    counts = [0, 0, 0, 0]
    for k in range(d + 1):
        for span in itertools.combinations(range(d), k):
            if construction == "V":
                # A cell spanning the axes in `span` exists iff its 2^k
                # vertices (voxels) are all in the set.
                cell = m
                for a in span:
                    lo = [slice(None)] * d
                    hi = [slice(None)] * d
                    lo[a] = slice(0, -1)
                    hi[a] = slice(1, None)
                    cell = cell[tuple(lo)] & cell[tuple(hi)]
            else:
                # A face spanning `span` (and on the boundary between two
                # voxels along every other axis) exists iff one of the
                # voxels whose cubes contain it is in the set.
                cell = m
                for a in range(d):
                    if a in span:
                        continue
                    pad = [(0, 0)] * d
                    pad[a] = (1, 1)
                    cell = np.pad(cell, pad)
                    lo = [slice(None)] * d
                    hi = [slice(None)] * d
                    lo[a] = slice(0, -1)
                    hi[a] = slice(1, None)
                    cell = cell[tuple(lo)] | cell[tuple(hi)]
            counts[k] += int(np.count_nonzero(cell))
    return counts


def full_complex_cells(shape, construction):
    """Cells of the complex of the whole image, from its axis lengths."""
    n = [x for x in shape if x > 1]
    counts = [0, 0, 0, 0]
    for k in range(len(n) + 1):
        for span in itertools.combinations(range(len(n)), k):
            c = 1
            for a, length in enumerate(n):
                if construction == "V":
                    c *= length - 1 if a in span else length
                else:
                    c *= length if a in span else length + 1
            counts[k] += c
    return counts


def check_curve(ck, what, image, curve, construction, superlevel, mode,
                rows=None, cells=True, bins=None, thresholds=None):
    """Checks a curve against the oracles. `rows`: indices to compare with
    skimage (None: all); `cells`: also count cells directly at those rows."""
    if curve is None:
        return
    t = curve[:, 0]
    finite = image[np.isfinite(image)] if image.dtype.kind == "f" else image
    present = image[~np.isnan(image)] if image.dtype.kind == "f" else image
    # The thresholds the mode promises.
    if mode == "exact":
        expected = np.unique(present).astype(np.float64)
        if superlevel:
            expected = expected[::-1]
        ck.expect(np.array_equal(t, expected),
                  f"{what}: exact thresholds {t[:5]}... != distinct values {expected[:5]}...")
    elif mode == "bins":
        if finite.size == 0:
            ck.expect(len(t) == 0, f"{what}: bins of an image without finite values: {t}")
        else:
            lo, hi = float(finite.min()), float(finite.max())
            expected = np.unique(np.linspace(lo, hi, bins) if bins > 1 else np.array([hi]))
            ascending = t[::-1] if superlevel else t
            ck.expect(len(ascending) == len(expected) and
                      np.allclose(ascending, expected, rtol=1e-12, atol=1e-12 * (hi - lo)) and
                      ascending[0] == expected[0] and ascending[-1] == expected[-1],
                      f"{what}: bins thresholds {t} != linspace({lo}, {hi}, {bins})")
    elif mode == "list":
        ck.expect(np.array_equal(t, np.asarray(thresholds, dtype=np.float64)),
                  f"{what}: list thresholds {t} != {thresholds}")
    step = np.diff(t)
    ck.expect(bool(np.all(step <= 0) if superlevel else np.all(step >= 0)),
              f"{what}: thresholds are not monotone")

    # Every row: chi from the cells; cumulative counts never decrease.
    chi = curve[:, 2] - curve[:, 3] + curve[:, 4] - curve[:, 5]
    ck.expect(np.array_equal(curve[:, 1], chi), f"{what}: euler != v - e + s - c")
    ck.expect(bool(np.all(np.diff(curve[:, 2:], axis=0) >= 0)),
              f"{what}: cell counts decrease between rows")

    # Sampled (or all) rows against skimage and the direct count.
    for j in (range(len(t)) if rows is None else rows):
        mask = members(image, float(t[j]), superlevel)
        expected = skimage_euler(mask, construction)
        ck.expect(curve[j, 1] == expected,
                  f"{what}: row {j} (t={t[j]!r}): euler {curve[j, 1]:.0f}, skimage {expected}")
        if cells:
            counts = direct_cells(mask, construction)
            ck.expect(list(curve[j, 2:]) == counts,
                      f"{what}: row {j} (t={t[j]!r}): cells {curve[j, 2:]}, direct {counts}")

    # A last row that holds every voxel holds the whole complex.
    if len(t) and members(image, float(t[-1]), superlevel).all():
        full = full_complex_cells(image.shape, construction)
        ck.expect(list(curve[-1, 2:]) == full,
                  f"{what}: last row cells {curve[-1, 2:]}, full complex {full}")


def sample_rows(n, count):
    """`count` evenly spaced row indices, the first and last included."""
    if n <= count:
        return list(range(n))
    return sorted(set(np.linspace(0, n - 1, count).round().astype(int).tolist()))


# --- synthetic images ---------------------------------------------------------

def save_npy(path, array, order="C", byteorder="="):
    a = np.asfortranarray(array) if order == "F" else np.ascontiguousarray(array)
    if byteorder != "=":
        a = a.astype(a.dtype.newbyteorder(byteorder))
    np.save(path, a)


def curve_of(ck, what, image, args, construction="V", filtration="sublevel", out=".csv"):
    path = os.path.join(ck.workdir, "image.npy")
    np.save(path, image)
    output = "-" if out == "-" else os.path.join(ck.workdir, "curve" + out)
    return ck.run([path, "--construction", construction, "--filtration", filtration,
                   "-o", output] + args, what)


def every_configuration(ck, what, image, args=(), mode="exact", bins=None, thresholds=None):
    """Both constructions, both filtrations, every row checked."""
    for construction in "VT":
        for filtration in ("sublevel", "superlevel"):
            w = f"{what} {construction} {filtration}"
            curve = curve_of(ck, w, image, list(args), construction, filtration)
            check_curve(ck, w, image, curve, construction, filtration == "superlevel", mode,
                        bins=bins, thresholds=thresholds)


def part_synthetic(ck, data_dir):
    ck.device = "cpu"
    rng = np.random.default_rng(20240601)

    # Random integer images with many ties (values 0..3), 2D and 3D.
    for shape in [(7, 9), (9, 7), (5, 6, 7), (4, 3, 5), (2, 2, 2), (3, 3), (6, 11), (3, 8, 2)]:
        for seed in range(6):
            image = rng.integers(0, 4, size=shape).astype(np.int16)
            every_configuration(ck, f"ties {shape}#{seed}", image)
    # Two-valued images: the topology of a random binary picture.
    for shape in [(10, 12), (6, 7, 8)]:
        for seed in range(4):
            image = rng.integers(0, 2, size=shape).astype(np.uint8)
            every_configuration(ck, f"binary {shape}#{seed}", image)

    # Degenerate shapes: 1 voxel, 1D, 1-thick in any axis.
    for shape in [(1,), (1, 1), (1, 1, 1), (13,), (1, 13), (13, 1), (1, 1, 11), (1, 11, 1),
                  (11, 1, 1), (4, 1, 6), (1, 5, 6), (5, 6, 1)]:
        for seed in range(3):
            image = rng.integers(0, 3, size=shape).astype(np.int32)
            every_configuration(ck, f"thin {shape}#{seed}", image)

    # A constant image: one threshold, the whole complex, chi = 1.
    for shape in [(5, 6, 7), (8, 8), (9,)]:
        image = np.full(shape, 3, dtype=np.uint8)
        every_configuration(ck, f"constant {shape}", image)
        curve = curve_of(ck, f"constant {shape}", image, [])
        ck.expect(curve is not None and curve.shape[0] == 1 and curve[0, 1] == 1,
                  f"constant {shape}: curve {curve}")

    # Floats with NaN and +-inf, every threshold mode.
    for dtype in (np.float32, np.float64):
        for shape in [(8, 9), (5, 6, 7)]:
            image = rng.normal(size=shape).round(1).astype(dtype)  # rounding: ties
            flat = image.reshape(-1)
            flat[rng.choice(flat.size, flat.size // 6, replace=False)] = np.nan
            flat[rng.choice(flat.size, 3, replace=False)] = np.inf
            flat[rng.choice(flat.size, 3, replace=False)] = -np.inf
            name = f"{np.dtype(dtype).name} {shape} nan/inf"
            every_configuration(ck, name + " auto", image, ["--bins", 17], "bins", bins=17)
            every_configuration(ck, name + " exact", image, ["--thresholds", "exact"])
            every_configuration(ck, name + " bins 1", image, ["--thresholds", "bins", "--bins", 1],
                                "bins", bins=1)
            for construction in "VT":
                for filtration, ts in (("sublevel", [-np.inf, -1.05, 0, 0.3, 2, np.inf]),
                                       ("superlevel", [np.inf, 0.25, -0.1, -7])):
                    w = f"{name} list {construction} {filtration}"
                    text = ",".join(repr(float(x)) for x in ts)
                    curve = curve_of(ck, w, image, ["--threshold-list", text], construction,
                                     filtration)
                    check_curve(ck, w, image, curve, construction, filtration == "superlevel",
                                "list", thresholds=ts)
    # All NaN: an empty curve, with a warning but success.
    image = np.full((4, 5), np.nan)
    curve = curve_of(ck, "all NaN", image, [])
    ck.expect(curve is not None and curve.shape == (0, 6), f"all NaN: curve {curve}")

    # Every dtype, written by numpy in C and Fortran order, little and big
    # endian; values spanning each type's range (negative ones included).
    dtypes = ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]
    for code in dtypes:
        dtype = np.dtype(code)
        if dtype.kind == "f":
            levels = np.array([-3.5, -1e-3, 0, 2.25, 1e30 if code == "f4" else 1e300])
        elif dtype.itemsize < 8:
            # The type's extremes and a few values near 0.
            info = np.iinfo(dtype)
            levels = np.unique([info.min, info.min + 1, 0, 1, 2, info.max - 1, info.max])
        else:
            # 64-bit: values a double holds exactly, up to the largest such
            # (see part_huge_integers for the others).
            levels = np.array([-2**63, -2**53, 0, 1, 2, 2**53] if code == "i8"
                              else [0, 1, 2, 2**53, 2**63, 2**64 - 2**11], dtype=object)
        for order, byteorder in (("C", "<"), ("F", "<"), ("C", ">"), ("F", ">")):
            for shape in [(6, 7), (4, 5, 3)]:
                image = rng.choice(levels, size=shape).astype(dtype)
                path = os.path.join(ck.workdir, "typed.npy")
                save_npy(path, image, order, byteorder)
                for construction, filtration in (("V", "sublevel"), ("T", "superlevel")):
                    w = f"dtype {byteorder}{code} {order} {shape} {construction} {filtration}"
                    curve = ck.run([path, "--construction", construction, "--filtration",
                                    filtration, "--thresholds", "exact", "-o",
                                    os.path.join(ck.workdir, "typed.csv")], w)
                    check_curve(ck, w, image, curve, construction, filtration == "superlevel",
                                "exact")
        # Bins on integer data (thresholds between the integers).
        image = rng.choice(levels, size=(5, 6)).astype(dtype)
        np.save(os.path.join(ck.workdir, "typed.npy"), image)
        for filtration in ("sublevel", "superlevel"):
            w = f"dtype {code} bins 7 {filtration}"
            curve = ck.run([os.path.join(ck.workdir, "typed.npy"), "--thresholds", "bins",
                            "--bins", 7, "--filtration", filtration, "-o", "-"], w)
            check_curve(ck, w, image, curve, "V", filtration == "superlevel", "bins", bins=7)

    # Integer thresholds lists with values between, below and above the data.
    image = rng.integers(-5, 6, size=(6, 7, 5)).astype(np.int8)
    for construction in "VT":
        ts = [-1000, -5.5, -0.5, 0, 2.5, 5, 1e300]
        w = f"int8 list {construction}"
        curve = curve_of(ck, w, image, ["--threshold-list", ",".join(map(str, ts))], construction)
        check_curve(ck, w, image, curve, construction, False, "list", thresholds=ts)

    # The other input routes: .npy.gz, raw (.gz) with --dims/--dtype and
    # --byte-order, raw through a sidecar; all must equal the .npy result.
    image = rng.integers(0, 300, size=(5, 7, 9)).astype(np.uint16)  # numpy (z, y, x)
    reference = curve_of(ck, "routes reference", image, [])
    check_curve(ck, "routes reference", image, reference, "V", False, "exact", cells=False)
    routes = {}
    gz = os.path.join(ck.workdir, "routes.npy.gz")
    with gzip.open(gz, "wb") as f:
        np.save(f, image)
    routes["npy.gz"] = [gz]
    for byteorder, name in (("<", "little"), (">", "big")):
        raw = os.path.join(ck.workdir, f"routes_{name}.raw")
        image.astype(f"{byteorder}u2").tofile(raw)
        routes[f"raw {name}"] = [raw, "--dims", "9,7,5", "--dtype", "uint16",
                                 "--byte-order", name]
        with open(raw, "rb") as src, gzip.open(raw + ".gz", "wb") as dst:
            dst.write(src.read())
        routes[f"raw.gz {name}"] = [raw + ".gz", "--dims", "9x7x5", "--dtype", "u2",
                                    "--byte-order", name]
    sidecar_dir = os.path.join(ck.workdir, "sidecar")
    os.makedirs(sidecar_dir, exist_ok=True)
    with gzip.open(os.path.join(sidecar_dir, "vol.raw.gz"), "wb") as f:
        f.write(image.astype(">u2").tobytes())
    with open(os.path.join(sidecar_dir, "vol.json"), "w") as f:
        json.dump({"dims": [9, 7, 5], "dtype": "uint16", "byte_order": "big",
                   "spacing": [1, 1, 2.5], "file": "vol.raw.gz"}, f)
    routes["sidecar .json"] = [os.path.join(sidecar_dir, "vol.json")]
    routes["sidecar sibling"] = [os.path.join(sidecar_dir, "vol.raw.gz")]
    for name, args in routes.items():
        curve = ck.run(args + ["-o", os.path.join(ck.workdir, "route.npy")], f"route {name}")
        ck.expect(curve is not None and reference is not None and np.array_equal(curve, reference),
                  f"route {name}: curve differs from the .npy input's")

    # CSV, .npy and stdout outputs hold the same numbers, bit for bit (the
    # CSV's %.17g must round-trip the bins' non-integer thresholds).
    image = rng.normal(size=(9, 8)).astype(np.float64)
    outs = [curve_of(ck, f"output {o}", image, ["--bins", 33], out=o) for o in (".csv", ".npy", "-")]
    ck.expect(all(o is not None for o in outs) and np.array_equal(outs[0], outs[1]) and
              np.array_equal(outs[0], outs[2]), "CSV, .npy and stdout outputs differ")

    # --device cpu and --threads give the same curve as the defaults.
    image = rng.integers(0, 50, size=(20, 30, 40)).astype(np.int32)
    base = curve_of(ck, "threads default", image, [])
    for args in (["--threads", 1], ["--threads", 3], ["--device", "cpu"]):
        other = curve_of(ck, f"options {args}", image, args)
        ck.expect(other is not None and base is not None and np.array_equal(base, other),
                  f"{args}: curve differs from the default run's")
    check_curve(ck, "threads default", image, base, "V", False, "exact",
                rows=sample_rows(len(base) if base is not None else 0, 12))


def part_default_device(ck):
    """A subset of part_synthetic on the default device (--device auto): on
    a machine with a GPU, the GPU path against skimage."""
    ck.device = None
    rng = np.random.default_rng(7)
    for shape in [(7, 9), (5, 6, 7), (1, 1, 11), (4, 1, 6), (1,)]:
        image = rng.integers(0, 4, size=shape).astype(np.int16)
        every_configuration(ck, f"default device: ties {shape}", image)
    for dtype in (np.float32, np.float64):
        image = rng.normal(size=(6, 7, 8)).round(1).astype(dtype)
        flat = image.reshape(-1)
        flat[rng.choice(flat.size, flat.size // 6, replace=False)] = np.nan
        flat[rng.choice(flat.size, 3, replace=False)] = np.inf
        flat[rng.choice(flat.size, 3, replace=False)] = -np.inf
        every_configuration(ck, f"default device: {np.dtype(dtype).name} nan/inf", image,
                            ["--bins", 17], "bins", bins=17)
    for code in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8"]:
        image = rng.integers(0, 100, size=(5, 6, 7)).astype(code)
        w = f"default device: {code}"
        curve = curve_of(ck, w, image, ["--thresholds", "exact"], "T", "superlevel")
        check_curve(ck, w, image, curve, "T", True, "exact")
    ck.device = "cpu"


# --- 64-bit integers beyond a double's precision ------------------------------

def part_huge_integers(ck):
    """64-bit integers that a double cannot hold: Exact mode must keep 2^53
    and 2^53 + 1 apart and count every voxel, and a superlevel threshold of
    exactly 2^63 (2^64 for uint64), which no value reaches, must select
    nothing (the type's maximum is one less)."""
    cases = [
        ("int64 2^53+1", np.array([[2**53, 2**53 + 1, 2**53 + 1, 5]], dtype=np.int64)),
        ("int64 top", np.array([[2**63 - 1, 2**63 - 2, 7, 2**63 - 1]], dtype=np.int64)),
        ("uint64 top", np.array([[2**64 - 1, 2**64 - 2, 7, 2**64 - 1]], dtype=np.uint64)),
    ]
    for name, image in cases:
        for filtration in ("sublevel", "superlevel"):
            superlevel = filtration == "superlevel"
            w = f"{name} exact {filtration}"
            curve = curve_of(ck, w, image, ["--thresholds", "exact"], "V", filtration)
            if curve is None:
                continue
            # The exact mode's promise: a row per distinct value, counting
            # the voxels up to (down to) that very value.
            values = sorted(set(int(v) for v in image.reshape(-1)), reverse=superlevel)
            expected = [skimage_euler(image >= image.dtype.type(v) if superlevel
                                      else image <= image.dtype.type(v), "V") for v in values]
            vertices = [int(np.count_nonzero(image >= image.dtype.type(v) if superlevel
                                             else image <= image.dtype.type(v))) for v in values]
            ok = len(curve) == len(values) and list(curve[:, 1]) == expected and \
                list(curve[:, 2]) == vertices
            ck.expect(ok, f"{w}: vertices per row {curve[:, 2].astype(int).tolist()}, "
                          f"exact {vertices}")
    # A superlevel threshold beyond every value must select nothing.
    for name, image, t in (("int64", np.array([[2**63 - 1, 3]], dtype=np.int64), "9223372036854775808"),
                           ("uint64", np.array([[2**64 - 1, 3]], dtype=np.uint64), "18446744073709551616")):
        w = f"{name} superlevel list {t}"
        curve = curve_of(ck, w, image, ["--threshold-list", t], "V", "superlevel")
        ck.expect(curve is not None and curve[0, 2] == 0,
                  f"{w}: no voxel is >= {t}")


# --- the real data --------------------------------------------------------

def check_volume(ck, path):
    """One volume: V sublevel and T superlevel (both constructions, both
    directions) with exact thresholds, a sample of rows against skimage."""
    start = time.time()
    image, _ = load_sidecar(path)
    # Larger volumes compare fewer rows: skimage costs ~20 ns a voxel.
    rows = 42 if image.size <= 2_000_000 else 22 if image.size <= 9_000_000 else 12
    for construction, filtration in (("V", "sublevel"), ("T", "superlevel")):
        w = f"{os.path.basename(path)} {construction} {filtration}"
        curve = ck.run([path, "--construction", construction, "--filtration", filtration,
                        "--thresholds", "exact", "-o", os.path.join(ck.workdir, "data.npy")], w)
        if curve is not None:
            check_curve(ck, w, image, curve, construction, filtration == "superlevel", "exact",
                        rows=sample_rows(len(curve), rows), cells=image.size <= 300_000)
    return (f"  {os.path.basename(path)}: {'x'.join(map(str, image.shape[::-1]))} "
            f"{image.dtype}, {time.time() - start:.1f} s")


def check_volume_task(task):
    """check_volume in a worker process: its own Checker and folder."""
    topovox, workdir, path = task
    folder = tempfile.mkdtemp(dir=workdir)
    ck = Checker(topovox, folder)
    line = check_volume(ck, path)
    return line, ck.checks, ck.runs, ck.failures


def part_data(ck, data_dir):
    sidecars = [os.path.join(data_dir, f) for f in os.listdir(data_dir) if f.endswith(".json")]
    ck.expect(len(sidecars) > 0, f"no .json sidecars in {data_dir}")
    # Largest first, spread over two processes: the volumes dominate the
    # suite's time, and the test machines have two cores or more.
    def voxels(path):
        with open(path) as f:
            return math.prod(json.load(f)["dims"])
    sidecars.sort(key=voxels, reverse=True)
    tasks = [(ck.topovox, ck.workdir, p) for p in sidecars]
    with multiprocessing.Pool(min(2, os.cpu_count() or 1)) as pool:
        for line, checks, runs, failures in pool.imap_unordered(check_volume_task, tasks):
            print(line, flush=True)
            ck.checks += checks
            ck.runs += runs
            for f in failures:
                ck.expect(False, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topovox", required=True, help="the built topovox executable")
    parser.add_argument("--data", required=True, help="Testing/Data")
    parser.add_argument("--part", choices=["synthetic", "data", "all"], default="all")
    args = parser.parse_args()
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="topovox-cli-") as workdir:
        ck = Checker(os.path.abspath(args.topovox), workdir)
        if args.part in ("synthetic", "all"):
            part_synthetic(ck, args.data)
            part_huge_integers(ck)
            part_default_device(ck)
        if args.part in ("data", "all"):
            part_data(ck, args.data)
    print(f"{ck.checks} checks, {ck.runs} runs of topovox, {len(ck.failures)} failures, "
          f"{time.time() - start:.1f} s")
    return 1 if ck.failures else 0


if __name__ == "__main__":
    sys.exit(main())
