"""The long persistence test (CTest label "long", not run by CI): every
image and volume of Testing/Data at full size, V and T constructions, the
diagram of `topovox persistence` against CubicalRipser's (cripser for V,
tcripser for T) as multisets of (dimension, birth, death).

    test_cli_persistence_volumes.py --topovox PATH --data DIR
"""
import argparse
import collections
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from sidecar_data import load_sidecar

try:
    import cripser
    import tcripser
except ImportError:
    print("SKIP: the oracle cripser is not installed (pip install cripser)")
    sys.exit(77)


def ours(topovox, sidecar, construction, out):
    subprocess.run([topovox, "persistence", sidecar, "--construction", construction, "-o", out,
                    "--memory-limit-gb", "inf"], check=True)
    diagram = collections.Counter()
    with open(out) as f:
        next(f)
        for line in f:
            d, b, e = line.split(",")[:3]
            diagram[(int(d), float(b), float(e))] += 1
    return diagram


def theirs(image, construction):
    ph = (cripser if construction == "V" else tcripser).computePH(image)
    return collections.Counter((int(r[0]), float(r[1]), float("inf") if r[2] > 1e300 else float(r[2]))
                               for r in ph if r[1] != r[2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--topovox", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        for sidecar in sorted(glob.glob(os.path.join(args.data, "*.json"))):
            image = load_sidecar(sidecar)[0].astype(np.float64)
            for construction in ("V", "T"):
                start = time.time()
                a = ours(args.topovox, sidecar, construction, os.path.join(work, "d.csv"))
                b = theirs(image, construction)
                same = a == b
                failures += not same
                print("%s %s %s: %d pairs, %s, %.1f s" % ("ok  " if same else "FAIL",
                      os.path.basename(sidecar), construction, sum(a.values()),
                      "equal to cripser" if same else "differs from cripser", time.time() - start),
                      flush=True)
    print("%d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
