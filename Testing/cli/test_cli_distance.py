#!/usr/bin/env python3
"""`topovox distance` against scipy.ndimage on the same arrays.

distance_transform_edt (with sampling; distances equal within rounding;
without sampling and indices, bit for bit, also on images made to stress
each kind of line of the integer path), the
returned indices (each must name a background voxel at exactly the reported
distance: ties may pick another than scipy), distance_transform_cdt (taxicab
and chessboard, exact, int32) and distance_transform_bf (all three metrics,
exact), on random 1D/2D/3D images from sparse to dense background, images
without background (scipy's own answers), and shipped images thresholded;
then the usage errors.

Usage: test_cli_distance.py --topovox PATH --data DIR
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.ndimage as ndi

from sidecar_data import load_sidecar

from cli_checks import expect, failures, finish  # noqa: E402


def run(tool, work, image, args, indices=False):
    src, out, idx = (os.path.join(work, n) for n in ("in.npy", "out.npy", "idx.npy"))
    np.save(src, image)
    p = subprocess.run([tool, "distance", src, "-o", out] + args + (["--indices", idx] if indices else []),
                       capture_output=True, text=True)
    if p.returncode != 0:
        return p, None
    return np.load(out), (np.load(idx) if indices else None)


def check_edt(tool, work, x, sampling, what):
    got, idx = run(tool, work, x, ["--sampling", ",".join(str(s) for s in reversed(sampling))], indices=True)
    want = ndi.distance_transform_edt(x, sampling=sampling)
    ok = isinstance(got, np.ndarray) and got.dtype == np.float64 and np.allclose(got, want, rtol=1e-12, atol=0)
    expect(ok, what + ": edt distances")
    if ok and x.any() and not x.all():
        # Each index names a background voxel at the reported distance.
        background = ~x[tuple(idx)]
        offsets = (idx - np.indices(x.shape)) * np.array(sampling).reshape((-1,) + (1,) * x.ndim)
        dist = np.sqrt(np.sum(offsets.astype(np.float64) ** 2, axis=0))
        expect(background.all() and np.allclose(dist, want, rtol=1e-12, atol=0), what + ": edt indices")


def check_edt_alone(tool, work, x, what):
    """Unit sampling without indices (scipy's default call, the integer
    path): the distances bit for bit, whatever voxel a tie would pick."""
    got, _ = run(tool, work, x, [])
    want = ndi.distance_transform_edt(x)
    expect(isinstance(got, np.ndarray) and got.shape == want.shape and got.dtype == np.float64 and
           np.array_equal(got.view(np.uint64), want.view(np.uint64)), what + ": edt without indices, bit for bit")


def hard_images(rng):
    """The integer path's line kinds in 2D and 3D: a few background voxels
    (lines with up to 8 finite values, and more), background planes (lines
    of equal values), single background lines, thick balls (lines through
    the lower envelope) and sparse noise."""
    for shape in ((300, 280), (61, 70, 53), (3, 200, 150)):
        for seeds in (1, 5, 8, 9, 30):
            x = np.ones(shape, bool)
            for _ in range(seeds):
                x[tuple(int(rng.integers(0, n)) for n in shape)] = False
            yield x, "%s %d background voxels" % (shape, seeds)
        x = np.ones(shape, bool)
        x[..., ::37] = False
        yield x, "%s background planes" % (shape,)
        x = np.ones(shape, bool)
        x[(slice(None),) + tuple(int(rng.integers(0, n)) for n in shape[1:])] = False
        yield x, "%s one background line" % (shape,)
        g = np.indices(shape)
        x = sum((gi - n / 2.0) ** 2 for gi, n in zip(g, shape)) <= (max(shape) / 3.0) ** 2
        yield x, "%s a thick ball" % (shape,)
        yield rng.random(shape) > 0.002, "%s sparse noise" % (shape,)


def check_batch(tool, work, rng):
    """--batch: a stack of images (numpy's first axis), each transformed
    alone as scipy does it; indices of shape (n, ndim) + an image's."""
    stack = rng.random((5, 12, 9)) > 0.3
    stack[2] = True  # all foreground: scipy's inf-free convention
    stack[3] = False
    got, idx = run(tool, work, stack, ["--batch", "--sampling", "0.5,2"], indices=True)
    want = np.stack([ndi.distance_transform_edt(img, sampling=(2, 0.5)) for img in stack])
    ok = isinstance(got, np.ndarray) and got.shape == want.shape and np.allclose(got, want, rtol=1e-12, atol=0)
    expect(ok, "--batch edt distances")
    if ok:
        expect(idx.shape == (5, 2, 12, 9), "--batch edt indices shape %s" % (idx.shape,))
        for k in (0, 1, 4):  # images with background: each index names it, at the distance
            background = ~stack[k][tuple(idx[k])]
            off = (idx[k] - np.indices(stack[k].shape)) * np.array([2, 0.5]).reshape(2, 1, 1)
            expect(background.all() and np.allclose(np.sqrt((off ** 2).sum(axis=0)), want[k], rtol=1e-12, atol=0),
                   "--batch edt indices of image %d" % k)
    for metric in ("taxicab", "chessboard"):
        got, _ = run(tool, work, stack, ["--batch", "--method", "cdt", "--metric", metric])
        want = np.stack([ndi.distance_transform_cdt(img, metric=metric) for img in stack])
        expect(isinstance(got, np.ndarray) and got.dtype == want.dtype and np.array_equal(got, want),
               "--batch cdt %s" % metric)
    volumes = rng.random((3, 6, 7, 8)) > 0.25  # a stack of volumes: 4 axes
    got, idx = run(tool, work, volumes, ["--batch"], indices=True)
    want = np.stack([ndi.distance_transform_edt(v) for v in volumes])
    ok = isinstance(got, np.ndarray) and got.shape == want.shape and np.allclose(got, want, rtol=1e-12, atol=0)
    expect(ok and idx.shape == (3, 3, 6, 7, 8), "--batch of volumes: edt distances and the indices' shape")
    if ok:
        for k in range(3):
            background = ~volumes[k][tuple(idx[k])]
            dist = np.sqrt(((idx[k] - np.indices(volumes[k].shape)) ** 2).sum(axis=0))
            expect(background.all() and np.allclose(dist, want[k], rtol=1e-12, atol=0),
                   "--batch of volumes: indices of volume %d" % k)
    line = rng.random((4, 30)) > 0.2
    got, _ = run(tool, work, line, ["--batch", "--method", "bf", "--metric", "taxicab"])
    want = np.stack([ndi.distance_transform_bf(img, metric="taxicab") for img in line])
    expect(isinstance(got, np.ndarray) and np.array_equal(got, want), "--batch bf taxicab of 1D images")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(3)
    with tempfile.TemporaryDirectory() as work:
        for shape in ((31,), (13, 17), (7, 9, 11)):
            for density in (0.02, 0.3, 0.8):
                x = rng.random(shape) > density
                what = "%s background %.2f" % (shape, density)
                check_edt(a.topovox, work, x, [1.0] * len(shape), what)
                check_edt_alone(a.topovox, work, x, what)
                check_edt(a.topovox, work, x, list(rng.uniform(0.3, 2.5, size=len(shape))), what + " sampling")
                for metric in ("taxicab", "chessboard"):
                    got, _ = run(a.topovox, work, x, ["--method", "cdt", "--metric", metric])
                    want = ndi.distance_transform_cdt(x, metric=metric)
                    expect(isinstance(got, np.ndarray) and got.dtype == np.int32 and np.array_equal(got, want),
                           "%s: cdt %s" % (what, metric))
                for metric in ("euclidean", "taxicab", "chessboard"):
                    got, _ = run(a.topovox, work, x, ["--method", "bf", "--metric", metric])
                    want = ndi.distance_transform_bf(x, metric=metric)
                    expect(isinstance(got, np.ndarray) and got.dtype == want.dtype and np.array_equal(got, want),
                           "%s: bf %s" % (what, metric))
            # No background at all: scipy's answers.
            ones = np.ones(shape, bool)
            check_edt(a.topovox, work, ones, [1.0] * len(shape), "%s without background" % (shape,))
            got, _ = run(a.topovox, work, ones, ["--method", "cdt"])
            expect(np.array_equal(got, ndi.distance_transform_cdt(ones)), "%s without background: cdt" % (shape,))
            for metric in ("euclidean", "taxicab"):
                got, _ = run(a.topovox, work, ones, ["--method", "bf", "--metric", metric])
                expect(np.array_equal(got, ndi.distance_transform_bf(ones, metric=metric)),
                       "%s without background: bf %s" % (shape, metric))
        for x, what in hard_images(rng):
            check_edt_alone(a.topovox, work, x, what)
        for name in ("camera_512", "headsq_64x64x93"):
            volume, meta = load_sidecar(os.path.join(a.data, name + ".json"))
            mask = volume > np.percentile(volume, 60)
            check_edt_alone(a.topovox, work, mask, name)
            check_edt(a.topovox, work, mask, [float(s) for s in reversed(meta["spacing"][:mask.ndim])], name)
            got, _ = run(a.topovox, work, mask, ["--method", "cdt", "--metric", "taxicab"])
            expect(np.array_equal(got, ndi.distance_transform_cdt(mask, metric="taxicab")), name + ": cdt taxicab")
            # Long lines, near and far from the background: both of the
            # chessboard's line methods (windows and the lower envelope).
            got, _ = run(a.topovox, work, mask, ["--method", "cdt", "--metric", "chessboard"])
            expect(np.array_equal(got, ndi.distance_transform_cdt(mask, metric="chessboard")), name + ": cdt chessboard")
        # Usage errors: exit 2, one line.
        x = rng.random((5, 5)) > 0.5
        for args, why in ((["--method", "edt", "--metric", "taxicab"], "Euclidean"),
                          (["--method", "cdt", "--metric", "euclidean"], "taxicab or chessboard"),
                          (["--method", "fast"], "expected edt"),
                          (["--sampling", "1,2,3"], "one per image axis"),
                          (["--sampling", "0"], "positive")):
            p, _ = run(a.topovox, work, x, args)
            expect(not isinstance(p, np.ndarray) and p.returncode == 2 and why in p.stderr and
                   len(p.stderr.strip().splitlines()) == 1,
                   "%s: expected exit 2 naming '%s', got %r" % (args, why, getattr(p, "stderr", "an image")))
        check_batch(a.topovox, work, rng)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
