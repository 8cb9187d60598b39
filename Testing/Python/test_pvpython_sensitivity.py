"""pvpython: the Euler Characteristic Sensitivity proxy and the wrapped
vtkEulerSensitivityFilter.
  * with a sharp sigmoid and thresholds away from every value, the soft
    curve is scikit-image's exact Euler curve (euler_number(image <= t));
  * the EulerSensitivity array equals central finite differences of
    sum_t chi(t), the filter run again on perturbed copies of the image;
  * a zero direction is refused with a reason.
"""
import sys

import numpy as np
from skimage.measure import euler_number
from vtk.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData

import topovox  # before any proxy makes a filter object (see test_pvpython_transform.py)
from paraview import servermanager as sm
from paraview.simple import EulerCharacteristicSensitivity, Wavelet
from checks import error_messages, expect, failures

def column(table, name):
    c = table.GetColumnByName(name)
    return np.array([c.GetValue(j) for j in range(table.GetNumberOfRows())])


# 1. The proxy on the Wavelet: sharp sigmoid -> the exact curve.
wavelet = Wavelet()
wavelet.WholeExtent = [-6, 6, -5, 5, -4, 4]
wavelet.UpdatePipeline()
image = dsa.WrapDataObject(sm.Fetch(wavelet)).PointData["RTData"].reshape(9, 11, 13)
values = np.unique(image)
picks = values[np.linspace(0, len(values) - 2, 7).astype(int)]
thresholds = [float((v + values[np.searchsorted(values, v) + 1]) / 2) for v in picks]
gap = min(np.min(np.abs(image - t)) for t in thresholds)
s = EulerCharacteristicSensitivity(Input=wavelet)
s.ThresholdValues = thresholds
s.Lambda = 60.0 / gap
s.UpdatePipeline()
table = s.GetClientSideObject().GetOutputDataObject(0)
soft = column(table, "SoftEulerCharacteristic")
exact = [euler_number(image <= t, connectivity=1) for t in thresholds]
expect(np.allclose(soft, exact, atol=1e-6), "sharp sigmoid: the exact curve (%s vs %s)" % (soft, exact))
out = s.GetClientSideObject().GetOutputDataObject(1)
expect(out.GetPointData().GetArray("EulerSensitivity") is not None, "the image carries EulerSensitivity")


# 2. The wrapped class: the sensitivity against finite differences.
def run(array, lam=0.05, direction=(0.0, 0.0, 1.0)):
    img = vtkImageData()
    img.SetDimensions(array.shape[2], array.shape[1], array.shape[0])
    img.SetSpacing(1.0, 1.0, 2.0)
    a = numpy_to_vtk(array.ravel(), deep=1)
    a.SetName("x")
    img.GetPointData().SetScalars(a)
    f = topovox.vtkEulerSensitivityFilter()
    f.SetInputDataObject(0, img)
    f.SetLambda(lam)
    f.SetAlpha(0.3)
    f.SetDirection(*direction)
    for k, t in enumerate(np.linspace(-0.2, 1.2, 9)):
        f.SetThresholdValue(k, float(t))
    f.Update()
    chi = column(f.GetOutputDataObject(0), "SoftEulerCharacteristic")
    sens = dsa.WrapDataObject(f.GetOutputDataObject(1)).PointData["EulerSensitivity"]
    return chi.sum(), np.array(sens).reshape(array.shape), f


rng = np.random.default_rng(4)
x = rng.random((4, 6, 7))
total, sens, _ = run(x, lam=5.0)
eps = 1e-6
ok = True
for idx in [(0, 0, 0), (1, 2, 3), (3, 5, 6), (2, 4, 1)]:
    up, down = x.copy(), x.copy()
    up[idx] += eps
    down[idx] -= eps
    fd = (run(up, lam=5.0)[0] - run(down, lam=5.0)[0]) / (2 * eps)
    ok = ok and abs(fd - sens[idx]) <= 1e-5 * (1 + abs(fd))
expect(ok, "EulerSensitivity equals finite differences of sum chi")

# 3. A zero direction: an error that says why, no crash.
f = topovox.vtkEulerSensitivityFilter()
messages = error_messages(f)
f.SetInputDataObject(0, sm.Fetch(wavelet))
f.SetDirection(0, 0, 0)
f.Update()
expect(any("direction is zero" in m for m in messages), "a zero direction: the error says why")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
