#!/usr/bin/env python3
"""`topovox morphology` against scipy.ndimage on the same arrays, bit for bit.

Every operator on random 1D, 2D and 3D images (bool-like, int16 with ties,
float32), with the structuring element given every way scipy takes it
(size, footprint, structure, generate_binary_structure's connectivity,
iterate_structure), even and asymmetric elements with shifted origins, every
border mode and cval, iterations (also until stable), masks and border
values, non-flat grey structures, NaN in float images (scipy's separable
and point paths differ there: both mirrored), and a Fortran-ordered input;
then the
images of Testing/Data thresholded; then the usage errors (an out-of-range
origin, which scipy does not check for binary operators; a grey operator
without an element; an unknown operation). The tool's axes are x first, so
sizes and origins are given reversed.

Usage: test_cli_morphology.py --topovox PATH --data DIR
"""
import argparse
import itertools
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.ndimage as ndi

from sidecar_data import load_sidecar

from cli_checks import expect, failures, finish  # noqa: E402


class Tool:
    def __init__(self, path, work):
        self.path, self.work, self.n = path, work, 0

    def save(self, array, name):
        p = os.path.join(self.work, name)
        np.save(p, array)
        return p

    def run(self, op, image, args):
        self.n += 1
        src = self.save(image, "in%d.npy" % self.n)
        out = os.path.join(self.work, "out%d.npy" % self.n)
        p = subprocess.run([self.path, "morphology", op, src, "-o", out, "--threads", "2"] + args,
                           capture_output=True, text=True)
        if p.returncode != 0:
            return p
        return np.load(out)


def rev(seq):
    return ",".join(str(v) for v in reversed(list(seq)))


def same(got, want):
    return (isinstance(got, np.ndarray) and got.shape == want.shape and got.dtype == want.dtype
            and np.array_equal(got, want, equal_nan=want.dtype.kind == "f"))


BINARY = ["binary_erosion", "binary_dilation", "binary_opening", "binary_closing"]
GREY = ["grey_erosion", "grey_dilation", "grey_opening", "grey_closing", "morphological_gradient",
        "morphological_laplace", "white_tophat", "black_tophat"]


def check_binary(tool, rng, image, what):
    nd = image.ndim
    for op in BINARY:
        f = getattr(ndi, op)
        expect(same(tool.run(op, image, []), f(image)), "%s %s default element" % (what, op))
        for conn in range(1, nd + 1):
            s = ndi.generate_binary_structure(nd, conn)
            for it in (1, 2, -1):
                for border in (0, 1):
                    got = tool.run(op, image, ["--connectivity", str(conn), "--iterations", str(it),
                                               "--border-value", str(border)])
                    expect(same(got, f(image, structure=s, iterations=it, border_value=border)),
                           "%s %s conn %d iterations %d border %d" % (what, op, conn, it, border))
        # An even, asymmetric element with a shifted origin; a mask.
        shape = tuple(rng.integers(1, 5, size=nd))
        s = rng.random(shape) > 0.4
        s.flat[0] = True
        origin = [int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in shape]
        mask = rng.random(image.shape) > 0.3
        sp, mp = tool.save(s.astype(np.uint8), "s.npy"), tool.save(mask.astype(np.uint8), "mask.npy")
        got = tool.run(op, image, ["--structure", sp, "--origin", rev(origin), "--mask", mp, "--iterations", "2"])
        expect(same(got, f(image, structure=s, origin=origin, mask=mask, iterations=2)),
               "%s %s structure %s origin %s mask" % (what, op, shape, origin))
    s = ndi.generate_binary_structure(nd, nd)
    mask = rng.random(image.shape) > 0.3
    mp = tool.save(mask.astype(np.uint8), "mask.npy")
    expect(same(tool.run("binary_propagation", image, ["--connectivity", str(nd), "--mask", mp]),
                ndi.binary_propagation(image, structure=s, mask=mask)), what + " binary_propagation")
    expect(same(tool.run("binary_fill_holes", image, []), ndi.binary_fill_holes(image)), what + " binary_fill_holes")
    expect(same(tool.run("binary_hit_or_miss", image, []), ndi.binary_hit_or_miss(image)), what + " binary_hit_or_miss")
    s2 = ndi.iterate_structure(ndi.generate_binary_structure(nd, 1), 2)
    expect(same(tool.run("binary_erosion", image, ["--connectivity", "1", "--iterate-structure", "2"]),
                ndi.binary_erosion(image, structure=s2)), what + " iterate_structure 2")


def check_grey(tool, rng, image, what):
    nd = image.ndim
    for op in GREY:
        f = getattr(ndi, op)
        for mode in ("reflect", "mirror", "nearest", "wrap", "constant", "grid-constant"):
            size = tuple(rng.integers(1, 5, size=nd))
            got = tool.run(op, image, ["--size", rev(size), "--mode", mode, "--cval", "3"])
            expect(same(got, f(image, size=size, mode=mode, cval=3)), "%s %s size %s %s" % (what, op, size, mode))
        shape = tuple(rng.integers(1, 5, size=nd))
        fp = rng.random(shape) > 0.4
        fp.flat[-1] = True
        origin = [int(rng.integers(-(k // 2), (k - 1) // 2 + 1)) for k in shape]
        fpath = tool.save(fp.astype(np.uint8), "fp.npy")
        got = tool.run(op, image, ["--footprint", fpath, "--origin", rev(origin), "--mode", "mirror"])
        expect(same(got, f(image, footprint=fp, origin=origin, mode="mirror")),
               "%s %s footprint %s origin %s" % (what, op, shape, origin))
        if image.dtype.kind == "f":
            st = rng.integers(-2, 3, size=shape).astype(np.float64)
            spath = tool.save(st, "st.npy")
            got = tool.run(op, image, ["--structure", spath, "--mode", "nearest"])
            expect(same(got, f(image, structure=st, mode="nearest")), "%s %s non-flat structure %s" % (what, op, shape))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    rng = np.random.default_rng(8)
    with tempfile.TemporaryDirectory() as work:
        tool = Tool(a.topovox, work)
        for shape in ((23,), (9, 11), (5, 6, 7)):
            check_binary(tool, rng, rng.random(shape) > 0.45, "%dD" % len(shape))
            check_grey(tool, rng, rng.integers(0, 6, size=shape).astype(np.int16), "%dD int16" % len(shape))
            check_grey(tool, rng, rng.random(shape).astype(np.float32), "%dD float32" % len(shape))
            # NaN: scipy's separable passes (size) and point filter (footprint,
            # structure) treat it differently; both are mirrored.
            for share, dtype in ((0.1, np.float64), (0.35, np.float32)):
                x = rng.random(shape).astype(dtype)
                x[rng.random(shape) < share] = np.nan
                check_grey(tool, rng, x, "%dD %s with %d%% NaN" % (len(shape), np.dtype(dtype).name, 100 * share))
        # Rows of several 64-voxel words (the bits' x shifts across words,
        # the padded last word) under a wide element with a shifted origin,
        # a mask, two passes and passes until stable.
        wide = rng.random((37, 150)) > 0.3
        s = rng.random((3, 141)) > 0.7
        s[1, 70] = True
        mask = rng.random(wide.shape) > 0.2
        sp, mp = tool.save(s.astype(np.uint8), "s.npy"), tool.save(mask.astype(np.uint8), "mask.npy")
        for op in BINARY:
            f = getattr(ndi, op)
            for it, border in ((2, 0), (-1, 1)):
                got = tool.run(op, wide, ["--structure", sp, "--origin", "-9,1", "--mask", mp, "--iterations", str(it),
                                          "--border-value", str(border)])
                expect(same(got, f(wide, structure=s, origin=[1, -9], mask=mask, iterations=it, border_value=border)),
                       "37x150 %s, a 3x141 element, iterations %d, border %d" % (op, it, border))
        # A volume large enough for the CPU's row-wise interior and its
        # border voxels: a radius-2 ball and a random footprint, every mode.
        vol = rng.random((19, 23, 70)).astype(np.float32)
        ball = (np.indices((5, 5, 5)) - 2) ** 2
        ball = ball.sum(axis=0) <= 4
        fp = rng.random((3, 4, 5)) > 0.5
        fp.flat[0] = True
        for name, footprint in (("ball", ball), ("random footprint", fp)):
            fpath = tool.save(footprint.astype(np.uint8), "fp.npy")
            for mode in ("reflect", "mirror", "nearest", "wrap", "constant"):
                got = tool.run("grey_erosion", vol, ["--footprint", fpath, "--mode", mode, "--cval", "0.5"])
                expect(same(got, ndi.grey_erosion(vol, footprint=footprint, mode=mode, cval=0.5)),
                       "19x23x70 float32 grey_erosion, %s, %s" % (name, mode))
            got = tool.run("grey_dilation", vol, ["--size", "3,5,2", "--mode", "wrap"])
            expect(same(got, ndi.grey_dilation(vol, size=(2, 5, 3), mode="wrap")), "19x23x70 grey_dilation size")
        # +0 and -0 compare equal but differ in their bits: scipy keeps the
        # first of equal values in the element's order (the border voxels'
        # rule once turned a first -0 into +0).
        zeros = rng.choice(np.array([-0.0, 0.0, 1.0, -1.0], np.float32), size=(19, 23, 70))
        bpath = tool.save(ball.astype(np.uint8), "ball.npy")
        for name, args, kw in (("ball", ["--footprint", bpath], dict(footprint=ball)),
                               ("size 3", ["--size", "3,3,3"], dict(size=3))):
            for mode in ("reflect", "nearest", "wrap", "constant"):
                for op in ("grey_erosion", "grey_dilation"):
                    got = tool.run(op, zeros, args + ["--mode", mode, "--cval", "-0.0"])
                    want = getattr(ndi, op)(zeros, mode=mode, cval=-0.0, **kw)
                    expect(same(got, want) and np.array_equal(got.view(np.uint32), want.view(np.uint32)),
                           "19x23x70 float32 of +0/-0 ties %s, %s, %s: the same bits" % (op, name, mode))
        # Rows of whole 4-voxel quads (x = 16, the last numpy axis): on a GPU,
        # one pass by a 3x3(x3) box or a radius-2 ball runs the byte kernel;
        # every origin the box takes along x, shifted balls, both borders,
        # bool, uint8 and float32 (NaN is true) inputs.
        for shape in ((10, 12, 16), (12, 16)):
            nd = len(shape)
            box = np.ones((3,) * nd, bool)
            rball = (np.indices((5,) * nd) - 2) ** 2
            rball = rball.sum(axis=0) <= 4
            image = rng.random(shape) > 0.25
            inputs = (("bool", image), ("uint8", image * rng.integers(1, 200, size=shape).astype(np.uint8)),
                      ("float32 with NaN", np.where(image, np.nan, rng.choice([0.0, -0.0], size=shape))
                       .astype(np.float32)))
            for ename, element, origins in (("box", box, (-1, 0, 1)), ("ball", rball, (-2, 1, 2))):
                epath = tool.save(element.astype(np.uint8), "e.npy")
                for k, ox in enumerate(origins):
                    origin = [(k + a) % 3 - 1 for a in range(nd - 1)] + [ox]
                    for border in (0, 1):
                        for op in BINARY:
                            for kind, x in inputs:
                                got = tool.run(op, x, ["--structure", epath, "--origin", rev(origin),
                                                       "--border-value", str(border)])
                                want = getattr(ndi, op)(x, structure=element, origin=origin, border_value=border)
                                expect(same(got, want), "%s %s %s, %s origin %s, border %d"
                                       % (shape, kind, op, ename, origin, border))
        # uint8 wrapping in the derived operators, and a Fortran-ordered input.
        u8 = rng.integers(0, 255, size=(7, 9)).astype(np.uint8)
        expect(same(tool.run("morphological_laplace", u8, ["--size", "3,3"]), ndi.morphological_laplace(u8, size=3)),
               "uint8 laplace wraps as numpy")
        fortran = np.asfortranarray(rng.integers(0, 9, size=(4, 5, 6)).astype(np.int32))
        expect(same(tool.run("grey_erosion", fortran, ["--size", "2,2,2"]), ndi.grey_erosion(fortran, size=2)),
               "a Fortran-ordered input")
        # Real images, thresholded.
        for name in ("camera_512", "headsq_64x64x93"):
            volume, _ = load_sidecar(os.path.join(a.data, name + ".json"))
            for level in np.percentile(volume, [30, 70]):
                mask = volume > level
                conn = mask.ndim
                expect(same(tool.run("binary_opening", mask, ["--connectivity", str(conn)]),
                            ndi.binary_opening(mask, structure=ndi.generate_binary_structure(mask.ndim, conn))),
                       "%s > %g: binary_opening" % (name, level))
                expect(same(tool.run("binary_fill_holes", mask, []), ndi.binary_fill_holes(mask)),
                       "%s > %g: binary_fill_holes" % (name, level))
            expect(same(tool.run("grey_closing", volume, ["--size", "3"]), ndi.grey_closing(volume, size=3)),
                   name + ": grey_closing")
        # --batch: a stack of images (numpy's first axis), each as scipy
        # gives it alone; a mask with the stack's shape.
        for stack in (rng.random((6, 9, 11)) > 0.5, rng.random((5, 23)) > 0.4):
            structure = ndi.generate_binary_structure(stack.ndim - 1, 1)
            mask = rng.random(stack.shape) > 0.3
            np.save(os.path.join(work, "mask.npy"), mask.astype(np.uint8))
            oracles = {  # scipy on one image of the stack, with its mask
                "binary_erosion": lambda img, m: ndi.binary_erosion(img, structure=structure, iterations=2, mask=m),
                "binary_closing": lambda img, m: ndi.binary_closing(img, structure=structure, iterations=2),
                "binary_fill_holes": lambda img, m: ndi.binary_fill_holes(img, structure=structure),
                "binary_hit_or_miss": lambda img, m: ndi.binary_hit_or_miss(img, structure1=structure),
            }
            for op, oracle in oracles.items():
                args = ["--batch", "--connectivity", "1"]
                if op in ("binary_erosion", "binary_closing"):
                    args += ["--iterations", "2"]
                if op == "binary_erosion":
                    args += ["--mask", os.path.join(work, "mask.npy")]
                want = np.stack([oracle(img, m) for img, m in zip(stack, mask)])
                expect(same(tool.run(op, stack, args), want), "--batch %s %s" % (op, stack.shape))
            # Until stable, a border of 1, and wrapping grey borders: a stack
            # of 1D or 2D images runs as one image with an axis more, whose
            # element has extent 1 there (the images stay apart).
            s2 = ndi.generate_binary_structure(stack.ndim - 1, stack.ndim - 1)
            want = np.stack([ndi.binary_dilation(img, structure=s2, iterations=-1, border_value=1, mask=m)
                             for img, m in zip(stack, mask)])
            got = tool.run("binary_dilation", stack, ["--batch", "--connectivity", str(stack.ndim - 1),
                                                      "--iterations", "-1", "--border-value", "1",
                                                      "--mask", os.path.join(work, "mask.npy")])
            expect(same(got, want), "--batch binary_dilation until stable, border 1, mask %s" % (stack.shape,))
            values = rng.random(stack.shape).astype(np.float32)
            want = np.stack([ndi.grey_dilation(img, size=3, mode="wrap") for img in values])
            expect(same(tool.run("grey_dilation", values, ["--batch", "--size", "3", "--mode", "wrap"]), want),
                   "--batch grey_dilation wrap %s" % (stack.shape,))
        grey_stack = rng.integers(0, 9, size=(7, 8, 10)).astype(np.int16)
        for op in ("grey_opening", "morphological_gradient", "white_tophat"):
            want = np.stack([getattr(ndi, op)(img, size=(3, 2), mode="nearest") for img in grey_stack])
            expect(same(tool.run(op, grey_stack, ["--batch", "--size", "2,3", "--mode", "nearest"]), want),
                   "--batch %s int16 (7, 8, 10)" % op)
        volumes = rng.random((3, 5, 6, 7)).astype(np.float32)  # a stack of volumes: 4 axes
        want = np.stack([ndi.grey_erosion(v, size=(2, 3, 2), mode="wrap") for v in volumes])
        expect(same(tool.run("grey_erosion", volumes, ["--batch", "--size", "2,3,2", "--mode", "wrap"]), want),
               "--batch of volumes (3, 5, 6, 7): grey_erosion")
        masks = rng.random((3, 5, 6, 7)) > 0.4
        want = np.stack([ndi.binary_opening(m, structure=ndi.generate_binary_structure(3, 2)) for m in masks])
        expect(same(tool.run("binary_opening", masks, ["--batch", "--connectivity", "2"]), want),
               "--batch of volumes (3, 5, 6, 7): binary_opening")
        p = tool.run("grey_erosion", volumes, ["--size", "3"])
        expect(not isinstance(p, np.ndarray) and p.returncode == 1 and "4 axes" in p.stderr and "--batch" in p.stderr,
               "a 4D array without --batch: an input error naming --batch (%r)" % getattr(p, "stderr", "an image"))
        p = tool.run("grey_erosion", rng.random(9), ["--batch", "--size", "3"])
        expect(not isinstance(p, np.ndarray) and p.returncode == 2 and "--batch" in p.stderr,
               "--batch of a 1D array: exit 2 naming --batch (%r)" % getattr(p, "stderr", "an image"))
        # Usage errors: exit 2, one line, no output.
        img = rng.random((5, 5)) > 0.5
        for args, op, why in ((["--size", "3", "--origin", "2"], "grey_erosion", "origin"),
                              (["--connectivity", "1", "--origin", "-2"], "binary_dilation", "origin"),
                              ([], "grey_dilation", "size, footprint"),
                              ([], "binary_skeleton", "unknown operation")):
            p = tool.run(op, img, args)
            expect(not isinstance(p, np.ndarray) and p.returncode == 2 and why in p.stderr and
                   len(p.stderr.strip().splitlines()) == 1,
                   "%s %s: expected exit 2 naming '%s', got %r" % (op, args, why,
                                                                getattr(p, "stderr", "an image")))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
