"""pvpython: the Topological Simplification proxy and
vtkTopologicalSimplificationFilter against CubicalRipser: the simplified
field's components (dimension-0 pairs, by cripser) are exactly the input's
that persist longer than the threshold, for V and T, sublevel and
superlevel, 2D and 3D; the new array keeps the input's type and only takes
values of the input; bad input is an error, not a crash.
"""
import collections
import sys

import numpy as np
from vtk.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkCommand
from vtkmodules.vtkCommonDataModel import vtkImageData

from paraview import servermanager as sm
from paraview.simple import TopologicalSimplification, Wavelet

import topovox
from checks import expect, failures, require_cripser

cripser, tcripser = require_cripser()


def components(volume, construction, superlevel, above):
    """cripser's dimension-0 pairs persisting longer than `above`."""
    data = -volume if superlevel else volume
    ph = (cripser if construction == "V" else tcripser).computePH(data.astype(np.float64))
    out = collections.Counter()
    for dim, birth, death in ph[:, :3]:
        death = np.inf if death > 1e300 else death
        if dim == 0 and death - birth > above:
            out[(birth, death)] += 1
    return out


rng = np.random.default_rng(12)
for shape in ((31, 27), (9, 10, 11)):
    for dtype in (np.float32, np.int16):
        volume = (rng.random(shape) * 1000).astype(dtype)
        image = vtkImageData()
        image.SetDimensions(*(list(volume.shape[::-1]) + [1] * (3 - volume.ndim)))
        array = numpy_to_vtk(volume.reshape(-1), deep=1)
        array.SetName("values")
        image.GetPointData().SetScalars(array)
        for construction in ("V", "T"):
            for superlevel in (False, True):
                threshold = 150.0
                what = "%s %s %s %s" % ("x".join(map(str, shape)), np.dtype(dtype).name, construction,
                                        "super" if superlevel else "sub")
                f = topovox.vtkTopologicalSimplificationFilter()
                f.SetInputDataObject(0, image)
                f.SetConstruction(0 if construction == "V" else 1)
                f.SetFiltration(1 if superlevel else 0)
                f.SetPersistenceThreshold(threshold)
                f.Update()
                out = f.GetOutput().GetPointData().GetArray("values_Simplified")
                simplified = vtk_to_numpy(out).reshape(volume.shape)
                expect(out.GetDataType() == array.GetDataType(), what + ": the type is kept")
                expect(np.isin(simplified, volume).all(), what + ": only values of the input")
                expect(components(simplified, construction, superlevel, -1.0) ==
                       components(volume, construction, superlevel, threshold),
                       what + ": components are the input's above the threshold (cripser)")
                expect((simplified != volume).any(), what + ": something was simplified")

# The proxy, as a user applies it.
wavelet = Wavelet()
wavelet.WholeExtent = [-8, 8, -8, 8, 0, 0]
simple = TopologicalSimplification(Input=wavelet)
simple.PersistenceThreshold = 30.0
simple.UpdatePipeline()
data = dsa.WrapDataObject(sm.Fetch(simple))
expect("RTData_Simplified" in data.PointData.keys(), "proxy: RTData_Simplified array")

# No scalars: an error, not a crash.
errors = []
bad = topovox.vtkTopologicalSimplificationFilter()
bad.AddObserver(vtkCommand.ErrorEvent, lambda obj, event: errors.append(event))
empty = vtkImageData()
empty.SetDimensions(4, 4, 1)
bad.SetInputDataObject(0, empty)
bad.Update()
expect(len(errors) == 1, "an image without scalars is reported")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
