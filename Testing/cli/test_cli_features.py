#!/usr/bin/env python3
"""`topovox regions` and `topovox simplify` against independent oracles.

regions: for random 2D/3D images with distinct values, V and T, sublevel and
superlevel, each voxel's label must be the row (in `topovox persistence`'s
diagram with the same options) of the smallest region holding it, a region
being the scipy.ndimage.label component of {value < death} holding the birth
voxel (--kind components; the construction's connectivity) or of
{value > birth} holding the death voxel (--kind enclosed; the dual
connectivity). simplify: the result's components, by CubicalRipser, are
exactly the input's persisting longer than the threshold (skipped without
cripser); its dtype is the input's. Then usage errors.

Usage: test_cli_features.py --topovox PATH
"""
import argparse
import collections
import os
import subprocess
import sys
import tempfile

import numpy as np
import scipy.ndimage as ndi

from cli_checks import expect, finish


def tool_run(tool, args):
    return subprocess.run([tool] + args, capture_output=True, text=True)


def regions_oracle(x, diagram, construction, superlevel, above, enclosed):
    rank = x.ndim
    top = rank - 1
    face, full = ndi.generate_binary_structure(rank, 1), ndi.generate_binary_structure(rank, rank)
    sign = -1.0 if superlevel else 1.0
    flat = sign * x.reshape(-1)
    labels = np.full(flat.size, -1)
    best = np.full(flat.size, np.inf)
    for row, (dim, birth, death, bx, by, bz, dx, dy, dz) in enumerate(diagram):
        finite = np.isfinite(death)
        if finite and abs(death - birth) <= above:
            continue
        if enclosed:
            if dim != top or not finite:
                continue
            inside = flat > sign * birth
            structure = full if construction == "V" else face
            seed = int(dx + x.shape[-1] * (dy + (x.shape[-2] if rank == 3 else 1) * dz))
        else:
            if dim != 0:
                continue
            inside = flat < sign * death if finite else np.ones(flat.size, bool)
            structure = face if construction == "V" else full
            seed = int(bx + x.shape[-1] * (by + (x.shape[-2] if rank == 3 else 1) * bz))
        comp, _ = ndi.label(inside.reshape(x.shape), structure=structure)
        region = comp.reshape(-1) == comp.reshape(-1)[seed]
        closer = region & (region.sum() < best)
        labels[closer] = row
        best[closer] = region.sum()
    return labels.reshape(x.shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    tool = ap.parse_args().topovox
    work = tempfile.mkdtemp(prefix="topovox-features-")
    src, out, csv = (os.path.join(work, n) for n in ("in.npy", "out.npy", "pairs.csv"))
    rng = np.random.default_rng(31)
    for shape in ((25, 21), (8, 9, 10)):
        x = rng.random(shape)
        np.save(src, x)
        for construction in ("V", "T"):
            for filtration in ("sublevel", "superlevel"):
                options = ["--construction", construction, "--filtration", filtration]
                what = "%s %s %s" % ("x".join(map(str, shape)), construction, filtration)
                p = tool_run(tool, ["persistence", src, "-o", csv] + options)
                expect(p.returncode == 0, what + ": persistence ran (%s)" % p.stderr.strip())
                diagram = np.loadtxt(csv, delimiter=",", skiprows=1, ndmin=2)
                for kind in ("components", "enclosed"):
                    p = tool_run(tool, ["regions", src, "-o", out, "--kind", kind, "--min-persistence", "0.1"] + options)
                    expect(p.returncode == 0, what + " " + kind + ": regions ran (%s)" % p.stderr.strip())
                    if p.returncode:
                        continue
                    got = np.load(out)
                    want = regions_oracle(x, diagram, construction, filtration == "superlevel", 0.1,
                                          kind == "enclosed")
                    expect(got.dtype == np.int32 and np.array_equal(got, want),
                           what + " " + kind + ": labels equal scipy's regions")
                    expect((got >= 0).any(), what + " " + kind + ": something labelled")

    try:
        import cripser
        import tcripser
    except ImportError:
        cripser = None
        print("cripser is not installed: the simplify oracle is skipped")
    if cripser:
        for shape, dtype in (((30, 26), np.float64), ((9, 8, 10), np.int16)):
            x = (rng.random(shape) * 1000).astype(dtype)
            np.save(src, x)
            for construction in ("V", "T"):
                for filtration in ("sublevel", "superlevel"):
                    what = "simplify %s %s %s %s" % ("x".join(map(str, shape)), np.dtype(dtype).name,
                                                     construction, filtration)
                    p = tool_run(tool, ["simplify", src, "-o", out, "--threshold", "120", "--construction",
                                        construction, "--filtration", filtration])
                    expect(p.returncode == 0, what + ": ran (%s)" % p.stderr.strip())
                    if p.returncode:
                        continue
                    y = np.load(out)
                    expect(y.dtype == x.dtype and y.shape == x.shape, what + ": dtype and shape kept")
                    engine = cripser if construction == "V" else tcripser
                    sign = -1.0 if filtration == "superlevel" else 1.0

                    def components(a, above):
                        c = collections.Counter()
                        for d, b, e in engine.computePH(sign * a.astype(np.float64))[:, :3]:
                            e = np.inf if e > 1e300 else e
                            if d == 0 and e - b > above:
                                c[(b, e)] += 1
                        return c
                    expect(components(y, -1.0) == components(x, 120.0), what + ": components above the threshold")

    # Usage errors: a table output, a negative threshold, an unknown kind.
    for args, words in ((["simplify", src, "-o", csv], "name it .npy"),
                        (["simplify", src, "-o", out, "--threshold", "-1"], "finite number"),
                        (["regions", src, "-o", out, "--kind", "tunnels"], "tunnels")):
        p = tool_run(tool, args)
        expect(p.returncode == 2 and words in p.stderr, "usage error %s: %s" % (args[0], p.stderr.strip()))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
