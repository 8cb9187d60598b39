"""What the Python tests share: failures collected and printed as they
happen, and the CubicalRipser oracle or a skip when it is missing."""
import sys

failures = []


def expect(ok, what):
    """Records a failure (and prints it) when ok is false."""
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def require_cripser():
    """(cripser, tcripser), or exit 77 (CTest: skipped) when not installed."""
    try:
        import cripser
        import tcripser
    except ImportError:
        print("SKIP: the oracle cripser is not installed (pip install cripser)")
        sys.exit(77)
    return cripser, tcripser


def cripser_pairs(image, construction, superlevel):
    """CubicalRipser's pairs of a numpy image as a Counter of
    (dimension, birth, death), essential deaths +-inf; a superlevel diagram
    is cripser's of -image, negated back. construction: "V" or "T"."""
    import collections

    import numpy as np

    cripser, tcripser = require_cripser()
    # Axes of one voxel leave the complex unchanged, but cripser 0.0.37
    # mishandles them in 2D (a 1x17 row gives 17 pairs): drop them.
    image = np.asarray(image)
    if image.ndim > 1 and image.size > 1:
        image = image.reshape([n for n in image.shape if n > 1])
    data = -image if superlevel else image
    ph = (cripser if construction == "V" else tcripser).computePH(data.astype(np.float64))
    sign = -1.0 if superlevel else 1.0
    out = collections.Counter()
    for row in ph:
        if row[1] == row[2]:
            continue
        death = np.inf if row[2] > 1e300 else row[2]
        out[(int(row[0]), sign * row[1], sign * death)] += 1
    return out
