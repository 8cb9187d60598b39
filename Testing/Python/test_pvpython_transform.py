"""pvpython: the TopoVox plugin's Euler transform proxy and the wrapped
vtkEulerTransformFilter against scikit-image (transform_oracle.py): for every
direction u and threshold t, chi equals euler_number of the voxel mask
{h <= t}, h = w X + alpha <u, p>. Spread and given directions, shapes by a
level, weighted images, V and T, the image output's layout, and a clear error
for bad directions.

Runs with PV_PLUGIN_PATH at the built plugin and PYTHONPATH at the built
`topovox` package.
"""
import sys

import numpy as np
from vtk.numpy_interface import dataset_adapter as dsa

from paraview import servermanager as sm
from paraview.simple import EulerCharacteristicTransform, Wavelet

from transform_oracle import transform_oracle

# Imported before any proxy makes a filter object: VTK's Python wrapping
# remembers the class it first wraps an object as.
import topovox
from checks import error_messages, expect, failures

extent = [-8, 8, -7, 7, -5, 5]
wavelet = Wavelet()
wavelet.WholeExtent = extent
wavelet.UpdatePipeline()
image = dsa.WrapDataObject(sm.Fetch(wavelet)).PointData["RTData"].reshape(11, 15, 17)
origin = [float(extent[0]), float(extent[2]), float(extent[4])]

cases = [
    ("spread directions, whole image", dict(NumberOfDirections=5), dict()),
    ("shape RTData >= 150", dict(NumberOfDirections=4, UseShapeLevel=1, ShapeLevel=150.0),
     dict(shape_level=150.0)),
    ("weighted image, given directions",
     dict(Directions=[1, 2, 0, 0, 0, -1, 1, 1, 1], Weight=0.5, Alpha=2.0),
     dict(weight=0.5, alpha=2.0)),
]
for construction, label in (("V", "V (voxels are vertices)"), ("T", "T (voxels are cubes)")):
    for name, props, kw in cases:
        what = "%s, %s" % (name, construction)
        et = EulerCharacteristicTransform(Input=wavelet)
        et.Construction = label
        et.NumberOfBins = 12
        for key, value in props.items():
            setattr(et, key, value)
        et.UpdatePipeline()
        table = et.GetClientSideObject().GetOutputDataObject(0)
        picture = et.GetClientSideObject().GetOutputDataObject(1)
        directions = dsa.WrapDataObject(table).FieldData["Directions"]
        thresholds = [table.GetColumnByName("Threshold").GetValue(j) for j in range(table.GetNumberOfRows())]
        got = [[table.GetColumn(1 + d).GetValue(j) for j in range(len(thresholds))]
               for d in range(len(directions))]
        want = transform_oracle(image, directions, thresholds, construction, origin=origin,
                                spacing=[1.0, 1.0, 1.0], **kw)
        expect(len(thresholds) == 12, what + ": 12 thresholds")
        expect(got == want, what + ": equals skimage")
        expect(np.allclose(np.linalg.norm(directions, axis=1), 1.0), what + ": unit directions")
        dims = picture.GetDimensions()
        values = dsa.WrapDataObject(picture).PointData["EulerCharacteristic"]
        expect(dims[0] == len(thresholds) and dims[1] == len(directions) and
               list(values.reshape(len(directions), len(thresholds)).ravel()) == sum(got, []),
               what + ": the image output holds the same transform")

# The wrapped class: a zero direction is refused with a reason, no crash.
f = topovox.vtkEulerTransformFilter()
messages = error_messages(f)
f.SetInputDataObject(0, sm.Fetch(wavelet))
f.AddDirection(0, 0, 0)
f.Update()
expect(any("direction is zero" in m for m in messages), "a zero direction: the error says why")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
