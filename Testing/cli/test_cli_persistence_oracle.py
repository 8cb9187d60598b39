#!/usr/bin/env python3
"""`topovox persistence` against CubicalRipser and GUDHI.

For every diagram the built tool writes:
  * the multiset of (dimension, birth, death, essential) equals the oracle's,
    compared with exact float equality (births and deaths are image values):
      V: cripser.computePH (CubicalRipser's V construction);
      T: tcripser.computePH, and GUDHI's
         CubicalComplex(top_dimensional_cells=image).persistence(Z/2);
    an essential class is CubicalRipser's death DBL_MAX, GUDHI's inf, ours
    +inf (sublevel) or -inf (superlevel) with death voxel -1,-1,-1;
  * superlevel: the oracles run on -image and their values are negated
    (the convention of Persistence.h);
  * --max-dimension N and --min-persistence X: the oracle's pairs with
    dimension <= N and |death - birth| > X (essential classes always);
  * every pair: image[birth voxel] == birth, and image[death voxel] == death
    (a NaN voxel equals nothing, so no pair involves one); birth < death
    (sublevel) or birth > death (superlevel); rows by dimension, then birth;
  * --format cripser: on images without ties (so that the voxel of every
    value is unique), every row, coordinates included, equals a row of
    cripser.computePH(np.load(INPUT)) (C- and Fortran-ordered .npy), and the
    CSV (no header) holds the same numbers as the .npy.

The oracles are handed the image with its axes of length 1 removed (a
1 x N image is 1D for topovox): CubicalRipser 0.0.37 gets 2D arrays with an
axis of length 1 wrong (cripser.computePH(np.array([[0., 5, 1, 6, 2]])) gives
five essential classes, as if the voxels were not adjacent).

NaN and infinities (the rule tested). topovox: a NaN voxel is absent (V: every
cell with a NaN vertex is absent; T: a cell is absent when every cube
containing it is NaN); +-inf are ordinary values. CubicalRipser leaves cells
above its threshold DBL_MAX out, so +inf would act as absent there, and it
mishandles NaN. The oracle therefore runs on ranks: the distinct non-NaN
values (of the image, or of -image for superlevel), sorted, become 0, 1, ...,
m - 1 and NaN becomes m, above them all. Then a V cell (max of its vertices)
or T cell (min of its cubes) has rank m exactly when topovox leaves it out,
so topovox's complex is the sublevel set {rank < m} of the oracle's, a prefix
of its filtration; the diagram of a prefix is the full diagram truncated:
    oracle pair (b, d) with b = m:           dropped (born among absent cells)
    oracle pair (b, d) with b < m, d = m:    essential class born at b
    oracle essential class born at b < m:    essential class born at b
    otherwise:                               the pair (b, d)
and ranks map back to the values exactly. Images without NaN or inf go to
the oracles as they are (float64).

Two parts, so that CTest can run them side by side:
  --part synthetic  random images with ties, uniform floats, constant,
                    checkerboards, 1-voxel, 1-thick and 1D images, 2D and 3D
                    up to 20^3, every dtype, NaN and +-inf, max-dimension and
                    min-persistence filters, the cripser format, outputs;
  --part data       small real volumes of Testing/Data (cropped or
                    sub-sampled), read by the tool through .json sidecars.

Exits 77 (CTest's SKIP_RETURN_CODE) when cripser cannot be imported.

Usage: test_cli_persistence_oracle.py --topovox PATH --data DIR [--part P]
"""
import argparse
import gzip
import json
import math
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

import numpy as np

from sidecar_data import load_sidecar

SKIP = 77
try:
    import cripser
    import tcripser
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"SKIP: cripser is not importable by {sys.executable} ({e}); "
          "pip install cripser==0.0.37 to run the persistence oracle tests")
    sys.exit(SKIP)
try:
    import gudhi
except ImportError:
    gudhi = None

COLUMNS = "dimension,birth,death,birth_x,birth_y,birth_z,death_x,death_y,death_z"
DBL_MAX = np.finfo(np.float64).max
INF = math.inf


# --- the oracles ---------------------------------------------------------------

def oracle_input(image, superlevel):
    """The array the oracles see: float64, negated for superlevel, axes of
    length 1 removed; ranks (and the sorted distinct values) when the image
    holds NaN or infinities, else the values themselves (levels None)."""
    a = np.asarray(image, dtype=np.float64)
    if superlevel:
        a = -a
    a = a.reshape([n for n in a.shape if n > 1] or [1])
    if np.all(np.isfinite(a)):
        return np.ascontiguousarray(a), None
    present = ~np.isnan(a)
    levels = np.unique(a[present])
    ranks = np.full(a.shape, float(len(levels)))
    ranks[present] = np.searchsorted(levels, a[present])
    return ranks, levels


def raw_oracle_pairs(a, construction, tool):
    """(dim, birth, death) of an oracle; death inf for essential classes."""
    if tool == "gudhi":
        cc = gudhi.CubicalComplex(top_dimensional_cells=a)
        return [(int(d), float(b), float(x))
                for d, (b, x) in cc.persistence(homology_coeff_field=2, min_persistence=0)]
    module = cripser if construction == "V" else tcripser
    ph = module.computePH(a, maxdim=3)
    return [(int(r[0]), float(r[1]), INF if r[2] >= DBL_MAX else float(r[2])) for r in ph]


def oracle(image, construction, superlevel, tool, maxdim=3, minpers=0.0):
    """Counter of (dimension, birth, death, essential) in the image's values."""
    a, levels = oracle_input(image, superlevel)
    out = Counter()
    for d, b, x in raw_oracle_pairs(a, construction, tool):
        essential = math.isinf(x)
        if levels is not None:
            rb = int(b)
            if rb >= len(levels):
                continue  # born at rank m: among the cells topovox leaves out
            b = float(levels[rb])
            if not essential:
                rd = int(x)
                if rd >= len(levels):
                    essential = True  # killed by an absent cell: never dies
                else:
                    x = float(levels[rd])
        if essential:
            x = INF
        if superlevel:
            b, x = -b, -x
        # Pairs with birth == death are not reported; an essential class is,
        # even one born at +inf (sublevel) or -inf (superlevel), whose birth
        # equals its death: the essential classes are the homology of the
        # whole complex.
        if b == x and not essential:
            continue
        if d > maxdim or not (essential or abs(x - b) > minpers):
            continue
        out[(d, b, x, essential)] += 1
    return out


def describe_difference(ours, theirs, limit=6):
    extra = list((ours - theirs).elements())
    missing = list((theirs - ours).elements())
    return (f"{len(extra)} extra {sorted(extra)[:limit]}, "
            f"{len(missing)} missing {sorted(missing)[:limit]}")


# --- running the tool --------------------------------------------------------

class Checker:
    """Runs the tool and counts checks; failures are collected, not fatal."""

    def __init__(self, topovox, workdir):
        self.topovox = topovox
        self.workdir = workdir
        self.checks = 0
        self.failures = []
        self.runs = 0
        self.device = "cpu"

    def expect(self, ok, what):
        self.checks += 1
        if not ok:
            self.failures.append(what)
            if len(self.failures) <= 30:
                print("FAIL:", what, flush=True)
        return ok

    def run(self, args, what, format="topovox"):
        """Runs `topovox persistence ARGS`; returns the (n, 9) table or None."""
        self.runs += 1
        env = dict(os.environ)
        if self.device is not None:
            env["TOPOVOX_DEVICE"] = self.device
        args = [str(a) for a in args]
        proc = subprocess.run([self.topovox, "persistence"] + args, capture_output=True,
                              text=True, errors="replace", env=env, timeout=120)
        if proc.returncode != 0:
            self.expect(False, f"{what}: exit {proc.returncode}: {proc.stderr.strip()}")
            return None
        output = args[args.index("-o") + 1]
        if output == "-":
            return self.parse_csv(proc.stdout, what, format)
        if output.endswith(".csv"):
            with open(output) as f:
                return self.parse_csv(f.read(), what, format)
        table = np.load(output)
        self.expect(table.dtype == np.float64 and table.ndim == 2 and table.shape[1] == 9,
                    f"{what}: .npy output has dtype {table.dtype}, shape {table.shape}")
        return table

    def parse_csv(self, text, what, format):
        lines = text.splitlines()
        if format == "topovox":
            self.expect(lines and lines[0] == COLUMNS, f"{what}: CSV header {lines[:1]}")
            lines = lines[1:]
        # float() reads %.17g exactly, "inf" and "-inf" included.
        rows = [[float(x) for x in line.split(",")] for line in lines]
        self.expect(all(len(r) == 9 for r in rows), f"{what}: CSV rows without 9 columns")
        return np.array(rows, dtype=np.float64).reshape(len(rows), 9)


def save_image(ck, image, name="image.npy", order="C"):
    path = os.path.join(ck.workdir, name)
    np.save(path, np.asfortranarray(image) if order == "F" else np.ascontiguousarray(image))
    return path


def value_at(values, x, y, z):
    """The value of topovox's voxel (x, y, z) in a C-ordered array (x is
    the last axis); None when the voxel is outside the image (a negative
    index must not wrap around)."""
    index = (z, y, x)[3 - values.ndim:]
    if any(i < 0 or i >= n for i, n in zip(index, values.shape)) or \
            any(c != 0 for c in (z, y, x)[:3 - values.ndim]):
        return None
    return values[index]


def check_table(ck, what, image, table, superlevel, maxdim, minpers):
    """The checks that need no oracle: values at the voxels, essential
    classes, direction, filters, order. Returns our multiset."""
    values = np.asarray(image, dtype=np.float64)
    ours = Counter()
    bad_birth = bad_death = bad_essential = bad_direction = 0
    for r in table:
        d, b, x = int(r[0]), r[1], r[2]
        essential = r[6] == -1
        bx, by, bz, dx, dy, dz = (int(v) for v in r[3:9])
        v = value_at(values, bx, by, bz)
        if v is None or not v == b:
            bad_birth += 1
        if essential:
            if not (x == (-INF if superlevel else INF) and dy == -1 and dz == -1):
                bad_essential += 1
        else:
            v = value_at(values, dx, dy, dz)
            if v is None or not v == x:
                bad_death += 1
        if not (b > x if superlevel else b < x) and not (essential and b == x):
            bad_direction += 1
        ours[(d, float(b), float(x), bool(essential))] += 1
    ck.expect(bad_birth == 0, f"{what}: {bad_birth} pairs whose birth voxel does not hold "
                              f"the birth value")
    ck.expect(bad_death == 0, f"{what}: {bad_death} pairs whose death voxel does not hold "
                              f"the death value")
    ck.expect(bad_essential == 0, f"{what}: {bad_essential} essential rows with a finite "
                                  f"death or death voxel != -1")
    ck.expect(bad_direction == 0, f"{what}: {bad_direction} pairs with birth "
                                  f"{'<=' if superlevel else '>='} death")
    if len(table):
        dims = table[:, 0]
        ck.expect(dims.max() <= maxdim, f"{what}: a pair of dimension {dims.max()} > {maxdim}")
        finite = table[table[:, 6] != -1]
        ck.expect(bool(np.all(np.abs(finite[:, 2] - finite[:, 1]) > minpers)),
                  f"{what}: a pair with persistence <= {minpers}")
        # Rows by dimension, then birth (descending for superlevel).
        key = [(int(r[0]), -r[1] if superlevel else r[1]) for r in table]
        ck.expect(key == sorted(key), f"{what}: rows are not by dimension, then birth")
    return ours


def diagram_case(ck, what, image, construction="V", filtration="sublevel", maxdim=None,
                 minpers=None, out=".csv", extra=(), gudhi_too=True):
    """One run of the tool on `image` against every oracle that applies."""
    superlevel = filtration == "superlevel"
    path = save_image(ck, image)
    output = "-" if out == "-" else os.path.join(ck.workdir, "diagram" + out)
    args = [path, "--construction", construction, "--filtration", filtration, "-o", output]
    if maxdim is not None:
        args += ["--max-dimension", maxdim]
    if minpers is not None:
        args += ["--min-persistence", repr(float(minpers))]
    args += list(extra)
    w = f"{what} {construction} {filtration}" + \
        (f" maxdim {maxdim}" if maxdim is not None else "") + \
        (f" minpers {minpers}" if minpers is not None else "")
    table = ck.run(args, w)
    if table is None:
        return None
    dimension = sum(n > 1 for n in np.shape(image))
    md = dimension if maxdim is None else maxdim
    mp = 0.0 if minpers is None else float(minpers)
    ours = check_table(ck, w, image, table, superlevel, md, mp)
    tools = ["cripser"] + (["gudhi"] if construction == "T" and gudhi and gudhi_too else [])
    for tool in tools:
        theirs = oracle(image, construction, superlevel, tool, md, mp)
        name = {"cripser": "cripser" if construction == "V" else "tcripser",
                "gudhi": "gudhi"}[tool]
        ck.expect(ours == theirs, f"{w}: differs from {name}: {describe_difference(ours, theirs)}")
    return table


def every_configuration(ck, what, image, **kw):
    for construction in "VT":
        for filtration in ("sublevel", "superlevel"):
            diagram_case(ck, what, image, construction, filtration, **kw)


# --- the cases ---------------------------------------------------------------

def gaussian_field(shape, exponent, seed):
    """A Gaussian random field with power spectrum |k|^-exponent, float32."""
    noise = np.fft.rfftn(np.random.default_rng(seed).standard_normal(shape))
    grids = np.meshgrid(*[np.fft.fftfreq(n) for n in shape[:-1]], np.fft.rfftfreq(shape[-1]),
                        indexing="ij")
    k2 = sum(g * g for g in grids)
    k2[(0,) * len(shape)] = 1.0
    return np.fft.irfftn(noise * k2 ** (-exponent / 4.0), s=shape).astype(np.float32)


def cases_synthetic(rng):
    """Independent groups of cases, (name, function, arguments), so that two
    processes can share them."""
    groups = []

    def add(name, fn, *args):
        groups.append((name, fn, args))

    # Random integer images with many ties (few levels), 2D and 3D.
    for shape in [(7, 9), (9, 7), (5, 6, 7), (4, 3, 5), (2, 2, 2), (3, 3), (6, 11), (3, 8, 2)]:
        images = [rng.integers(0, 4, size=shape).astype(np.int16) for _ in range(5)]
        add(f"ties {shape}", case_every, images)
    # Two levels: random binary pictures.
    for shape in [(12, 10), (6, 7, 8)]:
        add(f"binary {shape}", case_every,
            [rng.integers(0, 2, size=shape).astype(np.uint8) for _ in range(2)])
    # Uniform random floats (float32 and float64; no ties).
    for shape in [(8, 9), (5, 6, 7), (40,), (12, 12)]:
        add(f"uniform {shape}", case_every,
            [rng.random(shape).astype(np.float32), rng.random(shape)])
    # Constant images: a single essential class in dimension 0.
    for shape in [(5, 6, 7), (8, 8), (9,), (1,)]:
        add(f"constant {shape}", case_constant, shape)
    # Checkerboards: 2 levels, and a 3-level one (x + y + z mod 3).
    for shape in [(8, 8), (7, 9), (4, 5, 6), (5, 5, 5)]:
        grid = np.indices(shape).sum(axis=0)
        add(f"checkerboard {shape}", case_every,
            [(grid % 2).astype(np.uint8), (grid % 3).astype(np.int32)])
    # 1 voxel, 1D signals, 1-thick images along every axis.
    for shape in [(1,), (1, 1), (1, 1, 1), (13,), (1, 13), (13, 1), (1, 1, 11), (1, 11, 1),
                  (11, 1, 1), (4, 1, 6), (1, 5, 6), (5, 6, 1)]:
        add(f"thin {shape}", case_every,
            [rng.integers(0, 3, size=shape).astype(np.int32), rng.random(shape)])
    t = np.linspace(0, 6 * np.pi, 200)
    add("1D signals", case_every, [np.sin(t) + 0.3 * np.sin(7.3 * t),
                                   rng.integers(0, 10, 150).astype(np.uint8),
                                   np.cumsum(rng.normal(size=300))])
    # Larger 2D and 3D images (up to 20^3) with ties and without.
    add("large 3D ties", case_every, [rng.integers(0, 10, size=(20, 20, 20)).astype(np.uint8)])
    add("large 3D floats", case_every, [rng.random((16, 18, 20))])
    add("large 2D", case_every, [rng.integers(0, 30, size=(60, 70)).astype(np.int16),
                                 rng.normal(size=(64, 50)).astype(np.float32)])
    # Smooth fields: long-lived features in every dimension.
    z, y, x = np.indices((18, 19, 20)) / 3.0
    add("smooth 3D", case_every, [np.sin(x) * np.cos(y) * np.sin(z + 0.5)])
    # Gaussian random fields with power spectra k^-1, k^-2, k^-3 (rough to
    # smooth), 2D and 3D.
    add("Gaussian random fields", case_every,
        [gaussian_field(shape, exponent, 7 + exponent)
         for exponent in (1, 2, 3) for shape in ((18, 19, 20), (64, 72))])
    # Random shapes (1 to 6 voxels an axis, 1 to 3 axes), levels, NaN, inf,
    # configurations and filters.
    for part in range(6):
        add(f"random#{part}", case_random, 1000 + part, 100)
    # Filters.
    add("max-dimension", case_max_dimension, rng.integers(0, 6, size=(7, 8, 9)).astype(np.int8),
        rng.random((10, 11)))
    add("min-persistence", case_min_persistence,
        rng.integers(0, 12, size=(8, 9, 7)).astype(np.int16), rng.random((6, 7, 8)))
    # NaN and infinities.
    add("nan/inf", case_nan_inf, rng)
    # Every dtype.
    add("dtypes", case_dtypes, rng)
    # 64-bit integers beyond 2^53 (a known limitation, reported, not failed).
    add("huge integers", case_huge_integers)
    # The cripser format.
    add("cripser format", case_cripser_format, rng)
    # Outputs and execution options.
    add("outputs", case_outputs, rng)
    return groups


def case_every(ck, name, images):
    for i, image in enumerate(images):
        every_configuration(ck, f"{name}#{i} {image.dtype}", image)


def case_constant(ck, name, shape):
    image = np.full(shape, 3, dtype=np.uint8)
    for construction in "VT":
        for filtration in ("sublevel", "superlevel"):
            table = diagram_case(ck, name, image, construction, filtration)
            inf = -INF if filtration == "superlevel" else INF
            ck.expect(table is not None and table.shape[0] == 1 and
                      list(table[0, :3]) == [0, 3, inf] and list(table[0, 6:]) == [-1] * 3,
                      f"{name} {construction} {filtration}: diagram {table}")


def case_random(ck, name, seed, count):
    rng = np.random.default_rng(seed)
    for i in range(count):
        shape = tuple(int(n) for n in rng.integers(1, 7, size=int(rng.integers(1, 4))))
        image = rng.integers(0, int(rng.integers(2, 7)), size=shape).astype(np.float64)
        flat = image.reshape(-1)
        if rng.random() < 0.3:
            flat[rng.random(flat.size) < rng.uniform(0.05, 0.5)] = np.nan
        if rng.random() < 0.2:
            flat[rng.random(flat.size) < 0.15] = rng.choice([np.inf, -np.inf])
        construction = str(rng.choice(["V", "T"]))
        filtration = str(rng.choice(["sublevel", "superlevel"]))
        maxdim = int(rng.integers(0, 4)) if rng.random() < 0.3 else None
        minpers = float(rng.choice([0.5, 1, 2.5])) if rng.random() < 0.3 else None
        # Every third case runs the reference engine: both face the oracles.
        extra = ("--engine", "reference") if i % 3 == 2 else ()
        diagram_case(ck, f"{name}.{i} {shape}" + (" reference" if extra else ""), image,
                     construction, filtration, maxdim, minpers, extra=extra)


def case_huge_integers(ck, name):
    """The kernel compares values as doubles: 2^53 and 2^53 + 1 tie, so the
    pairs (2^53, 2^53 + 1) of this signal vanish. Printed as KNOWN."""
    image = np.array([0, 2**53 + 1, 2**53, 2**53 + 1, 2**53], dtype=np.int64)
    table = ck.run([save_image(ck, image, "huge.npy"), "-o", "-"], "huge integers")
    exact = [(0, 0, None), (0, 2**53, 2**53 + 1), (0, 2**53, 2**53 + 1)]
    if table is not None and len(table) != len(exact):
        print(f"KNOWN: int64 beyond 2^53 compared as doubles: {len(table)} pairs, "
              f"exactly {len(exact)} (the pairs (2^53, 2^53 + 1) vanish)")


def case_max_dimension(ck, name, image3, image2):
    for image in (image3, image2):
        for construction in "VT":
            for filtration in ("sublevel", "superlevel"):
                for maxdim in range(0, 4):
                    diagram_case(ck, name, image, construction, filtration, maxdim=maxdim,
                                 gudhi_too=False)


def case_min_persistence(ck, name, ints, floats):
    for construction in "VT":
        for filtration in ("sublevel", "superlevel"):
            for minpers in (0, 0.5, 1, 3, 7.5, 1e300):
                diagram_case(ck, name, ints, construction, filtration, minpers=minpers,
                             gudhi_too=False)
            # Between and at the persistences present.
            for minpers in (0.1, 0.25, 0.5):
                diagram_case(ck, name, floats, construction, filtration, minpers=minpers,
                             gudhi_too=False)
    diagram_case(ck, name, ints, "V", "sublevel", maxdim=1, minpers=2)


def case_nan_inf(ck, name, rng):
    images = []
    # Random NaN (1/6 of the voxels) and +-inf, in float32 and float64.
    for dtype in (np.float32, np.float64):
        for shape in [(8, 9), (5, 6, 7), (30,), (1, 12)]:
            image = rng.normal(size=shape).round(1).astype(dtype)  # rounding: ties
            flat = image.reshape(-1)
            flat[rng.choice(flat.size, max(1, flat.size // 6), replace=False)] = np.nan
            flat[rng.choice(flat.size, 2, replace=False)] = np.inf
            flat[rng.choice(flat.size, 2, replace=False)] = -np.inf
            images.append((f"{np.dtype(dtype).name} {shape} nan/inf", image))
    # Infinities without NaN (CubicalRipser alone would treat +inf as absent).
    image = rng.integers(0, 4, size=(6, 7)).astype(np.float64)
    image[1, 2] = image[4, 4] = np.inf
    image[0, 0] = image[3, 5] = -np.inf
    images.append(("inf, no NaN", image))
    # NaN walls cutting the image into pieces: several essential components.
    image = rng.random((9, 10))
    image[:, 4] = np.nan
    image[6, :] = np.nan
    images.append(("NaN walls", image))
    image = rng.random((6, 7, 8))
    image[:, :, 3] = np.nan
    images.append(("NaN wall 3D", image))
    # A NaN voxel (2D) or a NaN block (3D) inside: a hole that never fills,
    # an essential loop (void) in V, and in T for the block.
    image = rng.random((7, 7))
    image[3, 3] = np.nan
    images.append(("NaN hole 2D", image))
    image = rng.random((7, 7))
    image[2:5, 2:5] = np.nan
    images.append(("NaN block 2D", image))
    image = rng.random((7, 7, 7))
    image[2:5, 2:5, 2:5] = np.nan
    images.append(("NaN block 3D", image))
    # A ring of NaN around one voxel: an isolated voxel.
    image = rng.random((7, 7))
    image[2:5, 2:5] = np.nan
    image[3, 3] = 0.5
    images.append(("NaN ring", image))
    # All NaN but one voxel; all NaN.
    image = np.full((4, 5), np.nan)
    image[1, 2] = 7.0
    images.append(("one voxel among NaN", image))
    for what, image in images:
        every_configuration(ck, what, image)
    image = np.full((4, 5), np.nan)
    for construction in "VT":
        table = diagram_case(ck, "all NaN", image, construction)
        ck.expect(table is not None and table.shape == (0, 9), f"all NaN: diagram {table}")


def case_dtypes(ck, name, rng):
    for code in ["i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"]:
        dtype = np.dtype(code)
        if dtype.kind == "f":
            levels = np.array([-3.5, -1e-3, 0, 2.25, 1e30 if code == "f4" else 1e300])
        else:
            info = np.iinfo(dtype)
            # Extremes within a double's exact integers (2^53).
            lo, hi = max(int(info.min), -2**53), min(int(info.max), 2**53)
            levels = np.array(sorted({lo, lo + 1, 0, 1, 2, hi - 1, hi}), dtype=object)
        for shape in [(6, 7), (4, 5, 3)]:
            image = rng.choice(levels, size=shape).astype(dtype)
            for order in "CF":
                path = save_image(ck, image, "typed.npy", order)
                # A Fortran-ordered array of shape (a, b, c) has x along a.
                seen = image if order == "C" else np.transpose(image)
                for construction, filtration in (("V", "sublevel"), ("T", "superlevel")):
                    w = f"dtype {code} {order} {shape} {construction} {filtration}"
                    table = ck.run([path, "--construction", construction, "--filtration",
                                    filtration, "-o", os.path.join(ck.workdir, "typed.npy.csv")],
                                   w)
                    if table is None:
                        continue
                    superlevel = filtration == "superlevel"
                    ours = check_table(ck, w, seen, table, superlevel, 3, 0.0)
                    theirs = oracle(image, construction, superlevel, "cripser")
                    ck.expect(ours == theirs, f"{w}: {describe_difference(ours, theirs)}")


def cripser_reference(array, construction, superlevel):
    """cripser's own table for the array np.load returns, in the image's
    values (superlevel: computePH(-array), values negated)."""
    module = cripser if construction == "V" else tcripser
    a = np.asarray(array, dtype=np.float64)
    ph = module.computePH(-a if superlevel else a, maxdim=3)
    if superlevel:
        ph[:, 1:3] *= -1
    return ph


def same_rows(a, b):
    ra = sorted(map(tuple, np.asarray(a).tolist()))
    rb = sorted(map(tuple, np.asarray(b).tolist()))
    return ra == rb, [r for r in ra if r not in rb][:4], [r for r in rb if r not in ra][:4]


def case_cripser_format(ck, name, rng):
    """Without ties every (dimension, birth, death) names its voxels, so the
    whole rows of cripser's table must come out, coordinates included."""
    for shape in [(6, 7), (4, 5, 6), (9,), (3, 4, 5), (7, 5)]:
        image = rng.permutation(math.prod(shape)).reshape(shape).astype(np.float64) - 10.5
        for order in ("C", "F") if len(shape) > 1 else ("C",):
            path = save_image(ck, image, "perm.npy", order)
            loaded = np.load(path)
            for construction in "VT":
                for filtration in ("sublevel", "superlevel"):
                    superlevel = filtration == "superlevel"
                    w = f"cripser format {shape} {order} {construction} {filtration}"
                    out_npy = os.path.join(ck.workdir, "ph.npy")
                    out_csv = os.path.join(ck.workdir, "ph.csv")
                    common = [path, "--construction", construction, "--filtration", filtration,
                              "--format", "cripser"]
                    table = ck.run(common + ["-o", out_npy], w + " npy", "cripser")
                    csv = ck.run(common + ["-o", out_csv], w + " csv", "cripser")
                    if table is None or csv is None:
                        continue
                    ck.expect(np.array_equal(table, csv), f"{w}: CSV and .npy differ")
                    with open(out_csv) as f:
                        first = f.readline()
                    ck.expect(first[:1].isdigit(), f"{w}: CSV starts with {first!r}, not a row")
                    loaded_csv = np.loadtxt(out_csv, delimiter=",", ndmin=2)
                    ck.expect(np.array_equal(loaded_csv, table), f"{w}: np.loadtxt of the CSV")
                    ref = cripser_reference(loaded, construction, superlevel)
                    ok, extra, missing = same_rows(table, ref)
                    ck.expect(ok, f"{w}: rows differ from cripser's: ours only {extra}, "
                                  f"cripser only {missing}")
                    # Essential deaths: DBL_MAX (sublevel), -DBL_MAX (superlevel).
                    ess = table[table[:, 6] == -1]
                    ck.expect(len(ess) >= 1 and np.all(ess[:, 2] == (-DBL_MAX if superlevel
                                                                       else DBL_MAX)),
                              f"{w}: essential deaths {ess[:, 2] if len(ess) else ess}")
                    # Coordinates index the array np.load returns.
                    for r in table:
                        idx = tuple(int(v) for v in r[3:3 + loaded.ndim])
                        inside = all(0 <= i < n for i, n in zip(idx, loaded.shape)) and \
                            all(v == 0 for v in r[3 + loaded.ndim:6])
                        if not ck.expect(inside and loaded[idx] == r[1],
                                         f"{w}: birth {r[1]} is not at numpy index {idx}"):
                            break
    # With ties, NaN, and 1-thick images: the topovox and cripser formats
    # agree on everything but the layout.
    image = rng.integers(0, 4, size=(5, 6, 7)).astype(np.float32)
    image[2, 3, 4] = np.nan
    for shape_image in (image, image[:, :1, :], rng.integers(0, 5, size=(1, 9)).astype(float)):
        path = save_image(ck, shape_image, "ties.npy")
        for filtration in ("sublevel", "superlevel"):
            w = f"cripser vs topovox format {shape_image.shape} {filtration}"
            a = ck.run([path, "--filtration", filtration, "-o",
                        os.path.join(ck.workdir, "a.npy")], w)
            b = ck.run([path, "--filtration", filtration, "--format", "cripser", "-o",
                        os.path.join(ck.workdir, "b.npy")], w, "cripser")
            if a is None or b is None:
                continue
            essential = a[:, 6] == -1
            expected = a.copy()
            expected[essential, 2] = -DBL_MAX if filtration == "superlevel" else DBL_MAX
            nd = shape_image.ndim
            for cols in ((3, 4, 5), (6, 7, 8)):
                xyz = a[:, cols]
                idx = np.zeros_like(xyz)
                idx[:, :nd] = xyz[:, [nd - 1 - k for k in range(nd)]]  # (x, y, z) -> numpy
                idx[essential & (cols[0] == 6)] = -1
                expected[:, cols] = idx
            ck.expect(np.array_equal(b, expected), f"{w}: cripser layout != topovox layout "
                                                   f"remapped")


def case_outputs(ck, name, rng):
    image = rng.normal(size=(9, 8)).astype(np.float64)
    path = save_image(ck, image, "outputs_input.npy")
    outs = []
    for out in (".csv", ".npy", "-"):
        output = "-" if out == "-" else os.path.join(ck.workdir, "outputs" + out)
        outs.append(ck.run([path, "-o", output], f"output {out}"))
    ck.expect(all(o is not None for o in outs) and np.array_equal(outs[0], outs[1]) and
              np.array_equal(outs[0], outs[2]), "CSV, .npy and stdout outputs differ")
    base = outs[0]
    for args in (["--threads", 1], ["--threads", 3], ["--device", "cpu"], ["--verbose"],
                 ["--memory-limit-gb", "inf"]):
        other = ck.run([path, "-o", os.path.join(ck.workdir, "opt.npy")] + args, f"{args}")
        ck.expect(other is not None and base is not None and np.array_equal(base, other),
                  f"{args}: diagram differs from the default run's")
    # CSV written on several threads (blocks of 16,384 rows, formatted apart):
    # the diagram read back from it equals CubicalRipser's, and its bytes
    # are those written on one thread.
    noise = rng.random((56, 56, 56)).astype(np.float32)
    noise[0, 0, :3] = [np.inf, -np.inf, -0.0]
    table = diagram_case(ck, "CSV on 3 threads", noise, extra=["--threads", 3], gudhi_too=False)
    ck.expect(table is not None and len(table) > 2 * 16384,
              f"CSV on threads: {0 if table is None else len(table)} rows, fewer than three blocks")
    texts = []
    for threads in (1, 3):
        output = os.path.join(ck.workdir, "threads%d.csv" % threads)
        ck.run([save_image(ck, noise, "csv_threads.npy"), "-o", output, "--threads", threads],
               f"CSV on {threads} threads")
        texts.append(open(output).read() if os.path.exists(output) else None)
    ck.expect(texts[0] is not None and texts[0] == texts[1], "CSV on 3 threads differs from CSV on 1")
    # Superlevel is the sublevel filtration of -image, in the image's values:
    # the same rows, voxels included (same filtration order), values negated.
    image = rng.integers(-3, 4, size=(5, 6, 7)).astype(np.int16)
    up = ck.run([save_image(ck, image, "up.npy"), "--filtration", "superlevel", "-o", "-"],
                "superlevel of image")
    down = ck.run([save_image(ck, -image, "down.npy"), "-o", "-"], "sublevel of -image")
    if up is not None and down is not None:
        down[:, 1:3] *= -1
        ck.expect(np.array_equal(up, down), "superlevel(image) != -sublevel(-image)")
    # The default device (auto: the CPU threads, or the GPU with TOPOVOX_DEVICE=gpu).
    ck.device = None
    other = ck.run([path, "-o", os.path.join(ck.workdir, "opt.npy")], "default device")
    ck.expect(other is not None and base is not None and np.array_equal(base, other),
              "default device: diagram differs")
    ck.device = "cpu"


# --- the real data --------------------------------------------------------

def write_sidecar(folder, name, volume, meta):
    """`volume` (numpy, axes z, y, x) as name.raw.gz + name.json, in the
    original's dtype and byte order."""
    dtype = np.dtype(meta["dtype"]).newbyteorder("<" if meta["byte_order"] == "little" else ">")
    with gzip.open(os.path.join(folder, name + ".raw.gz"), "wb") as f:
        f.write(np.ascontiguousarray(volume).astype(dtype).tobytes())
    path = os.path.join(folder, name + ".json")
    with open(path, "w") as f:
        json.dump({"dims": list(volume.shape[::-1]), "dtype": meta["dtype"],
                   "byte_order": meta["byte_order"], "file": name + ".raw.gz"}, f)
    return path


def data_case(ck, what, sidecar, image, configurations):
    """Runs the tool on a sidecar and compares with the oracles."""
    for construction, filtration in configurations:
        superlevel = filtration == "superlevel"
        w = f"{what} {construction} {filtration}"
        start = time.time()
        table = ck.run([sidecar, "--construction", construction, "--filtration", filtration,
                        "-o", os.path.join(ck.workdir, "data.npy")], w)
        if table is None:
            continue
        ours = check_table(ck, w, image, table, superlevel, 3, 0.0)
        for tool in ["cripser"] + (["gudhi"] if construction == "T" and gudhi else []):
            theirs = oracle(image, construction, superlevel, tool)
            ck.expect(ours == theirs, f"{w}: differs from {tool}: "
                                      f"{describe_difference(ours, theirs)}")
        print(f"  {w}: {len(table)} pairs, {time.time() - start:.1f} s", flush=True)


def cases_data(data_dir):
    groups = []
    path = lambda name: os.path.join(data_dir, name + ".json")
    both = [("V", "sublevel"), ("V", "superlevel"), ("T", "sublevel"), ("T", "superlevel")]
    if os.path.exists(path("neghip_66")):
        groups.append(("neghip_66", case_data_neghip, (path("neghip_66"), both)))
    if os.path.exists(path("headsq_64x64x93")):
        groups.append(("headsq", case_data_crop,
                       (path("headsq_64x64x93"), (slice(40, 56), slice(16, 40), slice(20, 44)),
                        both)))
    if os.path.exists(path("camera_512")):
        groups.append(("camera", case_data_crop,
                       (path("camera_512"), (slice(100, 164), slice(200, 264)), both)))
    if os.path.exists(path("ct_head_512")):
        groups.append(("ct_head", case_data_crop,
                       (path("ct_head_512"), (slice(256, 320), slice(128, 192)),
                        [("V", "sublevel"), ("T", "superlevel")])))
    if os.path.exists(path("tooth_103x94x161")):
        groups.append(("tooth", case_data_crop,
                       (path("tooth_103x94x161"), (slice(60, 61), slice(20, 80), slice(20, 80)),
                        [("V", "sublevel"), ("T", "superlevel")])))
    return groups


def case_data_neghip(ck, name, sidecar, configurations):
    """neghip through its own sidecar (the whole 66^3, V sublevel and T
    superlevel), then sub-sampled 2x through a sidecar of ours."""
    volume, meta = load_sidecar(sidecar)
    data_case(ck, "neghip_66", sidecar, volume, [("V", "sublevel"), ("T", "superlevel")])
    small = volume[::3, ::3, ::3]
    data_case(ck, "neghip_66[::3]", write_sidecar(ck.workdir, "neghip_sub", small, meta), small,
              configurations)
    crop = volume[23:43, 23:43, 23:43]
    data_case(ck, "neghip_66 crop 20^3", write_sidecar(ck.workdir, "neghip_crop", crop, meta),
              crop, configurations)


def case_data_crop(ck, name, sidecar, crop, configurations):
    volume, meta = load_sidecar(sidecar)
    part = volume[crop]
    label = f"{os.path.basename(sidecar)[:-5]} crop {'x'.join(map(str, part.shape[::-1]))}"
    data_case(ck, label, write_sidecar(ck.workdir, name + "_crop", part, meta), part,
              configurations)


# --- driver --------------------------------------------------------------------

def run_group(task):
    """One group of cases in a worker process: its own Checker and folder."""
    topovox, workdir, (name, fn, args) = task
    folder = tempfile.mkdtemp(dir=workdir)
    ck = Checker(topovox, folder)
    start = time.time()
    fn(ck, name, *args)
    return f"  {name}: {ck.runs} runs, {time.time() - start:.1f} s", ck.checks, ck.runs, \
        ck.failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topovox", required=True, help="the built topovox executable")
    parser.add_argument("--data", required=True, help="Testing/Data")
    parser.add_argument("--part", choices=["synthetic", "data", "all"], default="all")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args()
    start = time.time()
    if gudhi is None:
        print("note: gudhi is not importable: the T construction is checked against "
              "tcripser only")
    groups = []
    if args.part in ("synthetic", "all"):
        groups += cases_synthetic(np.random.default_rng(20240611))
    if args.part in ("data", "all"):
        data = cases_data(args.data)
        if not data:
            print(f"FAIL: no volumes found in {args.data}")
            return 1
        groups += data
    checks = runs = 0
    failures = []
    with tempfile.TemporaryDirectory(prefix="topovox-persistence-") as workdir:
        tasks = [(os.path.abspath(args.topovox), workdir, g) for g in groups]
        with multiprocessing.Pool(args.jobs) as pool:
            for line, c, r, f in pool.imap_unordered(run_group, tasks):
                print(line, flush=True)
                checks += c
                runs += r
                for what in f:
                    if len(failures) < 30:
                        print("FAIL:", what, flush=True)
                    failures.append(what)
    print(f"{checks} checks, {runs} runs of topovox, {len(failures)} failures, "
          f"{time.time() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
