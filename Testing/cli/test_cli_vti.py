#!/usr/bin/env python3
"""`topovox` reading VTK XML image data (.vti) against the same voxels as .npy.

The fixtures in vti/ were written by VTK's own vtkXMLImageDataWriter
(vti/make_fixtures.py): ascii, inline binary, appended raw and base64,
uncompressed and zlib, UInt32 and UInt64 headers, big-endian, point and cell
data, 2D and 3D. For each, `topovox persistence` on the .vti and on the
.npy of the same values must write identical files (values and voxels), and
`topovox transform` must use the .vti's spacing (the same rows as a raw
file with a sidecar giving that spacing). Then the refusals: two
components, two pieces, LZ4, a truncated file, not XML; one line each,
exit 1, no output. Also gzip-compressed .vti.gz.

Usage: test_cli_vti.py --topovox PATH
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vti")
from cli_checks import expect, failures, finish  # noqa: E402


def run(topovox, args):
    return subprocess.run([topovox] + args, capture_output=True, text=True)


def same_output(topovox, work, command, a, b, extra=()):
    outs = []
    for k, path in enumerate((a, b)):
        out = os.path.join(work, "out%d.csv" % k)
        p = run(topovox, [command, path, "-o", out, "--device", "cpu"] + list(extra))
        if p.returncode != 0:
            expect(False, "%s %s: exit %d: %s" % (command, os.path.basename(path), p.returncode, p.stderr.strip()))
            return
        outs.append(open(out).read())
    expect(outs[0] == outs[1], "%s: %s reads as %s" % (command, os.path.basename(a), os.path.basename(b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        cases = [(name, "int16_5x4x3.npy") for name in sorted(os.listdir(HERE)) if name.startswith("int16_")
                 and name.endswith(".vti")]
        cases += [("float64_cells.vti", "float64_cells_7x6x4.npy"), ("float32_2d.vti", "float32_8x9.npy")]
        for vti, npy in cases:
            same_output(a.topovox, work, "persistence", os.path.join(HERE, vti), os.path.join(HERE, npy))
        # gzip-compressed.
        gz = os.path.join(work, "int16.vti.gz")
        with open(os.path.join(HERE, "int16_appended_raw_zlib64.vti"), "rb") as src, gzip.open(gz, "wb") as dst:
            shutil.copyfileobj(src, dst)
        same_output(a.topovox, work, "persistence", gz, os.path.join(HERE, "int16_5x4x3.npy"))
        # The spacing (0.5, 1, 2) comes along: the transform equals that of a
        # raw file whose sidecar says so.
        values = np.load(os.path.join(HERE, "int16_5x4x3.npy"))
        raw = os.path.join(work, "int16.raw")
        values.astype("<i2").tofile(raw)
        with open(os.path.join(work, "int16.json"), "w") as f:
            json.dump({"dims": [5, 4, 3], "dtype": "int16", "byte_order": "little", "file": "int16.raw",
                       "spacing": [0.5, 1.0, 2.0]}, f)
        same_output(a.topovox, work, "transform", os.path.join(HERE, "int16_ascii.vti"),
                    os.path.join(work, "int16.json"), extra=["--directions", "5", "--bins", "7"])
        # Refusals.
        truncated = os.path.join(work, "truncated.vti")
        data = open(os.path.join(HERE, "int16_appended_raw_zlib64.vti"), "rb").read()
        open(truncated, "wb").write(data[:len(data) - 40])
        notxml = os.path.join(work, "notxml.vti")
        open(notxml, "w").write("hello")
        for path, why in ((os.path.join(HERE, "bad_two_components.vti"), "components"),
                          (os.path.join(HERE, "bad_two_pieces.vti"), "pieces"),
                          (os.path.join(HERE, "bad_lz4.vti"), "compressor"),
                          (truncated, "truncated"),
                          (notxml, "not a VTK XML file")):
            out = os.path.join(work, "never.csv")
            p = run(a.topovox, ["euler", path, "-o", out])
            expect(p.returncode == 1 and why in p.stderr and len(p.stderr.strip().splitlines()) == 1
                   and not os.path.exists(out),
                   "%s: expected exit 1 and one line naming '%s', got %d %r" % (os.path.basename(path), why,
                                                                              p.returncode, p.stderr))
    return finish()


if __name__ == "__main__":
    sys.exit(main())
