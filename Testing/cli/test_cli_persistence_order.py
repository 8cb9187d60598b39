#!/usr/bin/env python3
"""The Morse engine gives a diagram's pairs by dimension and birth, the
essential classes last: the order in which DiagramBuilder::finish merges
rather than sorts a large float field's diagram (its keys then hold the
dimension and the birth's rank alone). A pairing that stopped doing so
would only be slower, which no other test would see. With
TOPOVOX_DIAGRAM_ORDER=require, pairs given in another order are an error:
float noise in 2D (the dual and dimension 0's union-find) and in 3D (both
union-finds at once, and the reduction), sublevel and superlevel, on 1
and 3 threads, an 8-bit volume (ties) and a float volume with NaN (no
dual union-find: the reduction's pairs of dimensions 1 and 2, split by
dimension), must pass and write the same bytes as without the hook. The control: the reference engine, whose pairs
come in the reduction's order, runs under `require` (it promises no
order) and fails under `require-all` (the hook can fire).

Usage: test_cli_persistence_order.py --topovox PATH
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

from cli_checks import expect, finish


def run(tool, args, threads, require):
    env = dict(os.environ, TOPOVOX_NUM_THREADS=str(threads))
    env.pop("TOPOVOX_DIAGRAM_ORDER", None)
    if require:
        env["TOPOVOX_DIAGRAM_ORDER"] = require if isinstance(require, str) else "require"
    return subprocess.run([tool, "persistence"] + args + ["--device", "cpu"], capture_output=True, text=True,
        env=env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    tool = ap.parse_args().topovox
    work = tempfile.mkdtemp(prefix="topovox-order-")
    rng = np.random.default_rng(7)
    images = {"2D float noise": rng.random((200, 210)).astype(np.float32),
        "3D float noise": rng.random((30, 31, 32)).astype(np.float32),
        "3D 8-bit noise": rng.integers(0, 256, size=(30, 31, 32)).astype(np.uint8),
        "3D float noise with NaN": np.where(rng.random((30, 31, 32)) < 0.05, np.nan,
                                            rng.random((30, 31, 32))).astype(np.float32)}
    path = os.path.join(work, "image.npy")
    plain, hooked = (os.path.join(work, n) for n in ("plain.npy", "hooked.npy"))
    for what, image in images.items():
        np.save(path, image)
        for filtration in ("sublevel", "superlevel"):
            for threads in (1, 3):
                options = [path, "--filtration", filtration]
                p = run(tool, options + ["-o", plain], threads, False)
                q = run(tool, options + ["-o", hooked], threads, True)
                label = "%s, %s, %d thread(s)" % (what, filtration, threads)
                expect(p.returncode == 0, label + ": ran (%s)" % p.stderr.strip())
                expect(q.returncode == 0, label + ": the pairs came in order (%s)" % q.stderr.strip())
                if p.returncode == 0 and q.returncode == 0:
                    with open(plain, "rb") as f, open(hooked, "rb") as g:
                        expect(f.read() == g.read(), label + ": the same diagram with the hook")
    np.save(path, images["3D float noise"][:12, :12, :12])
    p = run(tool, [path, "--engine", "reference", "-o", plain], 2, False)
    q = run(tool, [path, "--engine", "reference", "-o", hooked], 2, True)
    expect(p.returncode == 0 and q.returncode == 0,
        "the reference engine under require (it promises no order): ran (%s)" % q.stderr.strip())
    q = run(tool, [path, "--engine", "reference", "-o", hooked], 2, "require-all")
    expect(q.returncode != 0 and "did not come in order" in q.stderr,
        "the reference engine under require-all: refused (rc %d: %s)" % (q.returncode, q.stderr.strip()))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
