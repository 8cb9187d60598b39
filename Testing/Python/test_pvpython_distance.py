"""pvpython: the Distance Transform proxy (vtkGPUDistanceTransformFilter)
against scipy.ndimage on a thresholded Wavelet (unit spacing; sampling is
checked by the CLI test): exact Euclidean distances, chessboard and taxicab, the
nearest background index and vector (each naming a background voxel at
the reported distance), and the signed distance.
"""
import sys

import numpy as np
import scipy.ndimage as ndi
from vtk.numpy_interface import dataset_adapter as dsa

from paraview import servermanager as sm
from paraview.simple import DistanceTransform, Wavelet

failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)


wavelet = Wavelet()
wavelet.WholeExtent = [-8, 8, -7, 7, -5, 5]
wavelet.UpdatePipeline()
shape = (11, 15, 17)
rt = np.array(dsa.WrapDataObject(sm.Fetch(wavelet)).PointData["RTData"]).reshape(shape)
fg = (rt >= 100) & (rt <= 220)


def run(**props):
    d = DistanceTransform(Input=wavelet, UseForegroundRange=1, ForegroundRange=[100, 220], **props)
    d.UpdatePipeline()
    return dsa.WrapDataObject(sm.Fetch(d)).PointData


out = run(Metric="Euclidean (exact)", ComputeIndices=1, ComputeVectors=1, ComputeSignedDistance=1)
want = ndi.distance_transform_edt(fg)
got = np.array(out["Distance"]).reshape(shape)
expect(np.allclose(got, want, rtol=1e-12, atol=0), "exact Euclidean distances")
index = np.array(out["NearestBackgroundIndex"]).reshape(shape + (3,))
i, j, k = index[..., 0], index[..., 1], index[..., 2]
expect((~fg[k, j, i]).all(), "indices name background voxels")
vec = np.array(out["NearestBackgroundVector"]).reshape(shape + (3,))
expect(np.allclose(np.linalg.norm(vec, axis=-1), want, rtol=1e-12, atol=0), "vectors reach the nearest background")
signed = np.array(out["SignedDistance"]).reshape(shape)
expect(np.allclose(signed, np.where(fg, -want, ndi.distance_transform_edt(~fg)), rtol=1e-12, atol=0),
       "signed distance")
for metric, name in (("chessboard", "Chessboard"), ("taxicab", "Taxicab")):
    got = np.array(run(Metric=name)["Distance"]).reshape(shape)
    expect(np.array_equal(got, ndi.distance_transform_cdt(fg, metric=metric)), metric + " distances")
got = np.array(run(Metric="Euclidean (brute force)")["Distance"]).reshape(shape)
expect(np.array_equal(got, ndi.distance_transform_bf(fg)), "brute-force Euclidean distances")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
