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


def error_messages(algorithm):
    """A list that fills with the text of every error `algorithm` reports
    (its ErrorEvent), for tests that check an error says why."""
    from vtkmodules.util.misc import calldata_type
    from vtkmodules.vtkCommonCore import VTK_STRING

    messages = []

    @calldata_type(VTK_STRING)
    def on_error(caller, event, message):
        messages.append(message)

    algorithm.AddObserver("ErrorEvent", on_error)
    return messages


def image_of(values, spacing=(1.0, 1.0, 1.0), name="density"):
    """numpy (z, y, x) or (y, x) -> vtkImageData with point scalars `name`
    (float64) and the given spacing (x first)."""
    import numpy as np
    from vtkmodules.util.numpy_support import numpy_to_vtk
    from vtkmodules.vtkCommonDataModel import vtkImageData

    image = vtkImageData()
    image.SetDimensions(*(list(values.shape[::-1]) + [1] * (3 - values.ndim)))
    image.SetSpacing(*(list(spacing) + [1.0] * (3 - len(spacing))))
    array = numpy_to_vtk(np.ascontiguousarray(values, dtype=float).reshape(-1), deep=1)
    array.SetName(name)
    image.GetPointData().SetScalars(array)
    return image


def world_positions(shape, spacing):
    """World positions (x, y, z) of the voxels of a numpy image of `shape`
    ((z,) y, x), x fastest, as an (n, 3) array (POT's ot.dist input)."""
    import numpy as np

    idx = np.indices(shape)
    coords = [idx[len(shape) - 1 - k].reshape(-1) * spacing[k] for k in range(len(shape))]
    while len(coords) < 3:
        coords.append(np.zeros_like(coords[0], dtype=float))
    return np.stack(coords, axis=1).astype(float)
