"""pvpython: the TopoVox plugin's Euler curve proxy and the Python-wrapped
vtkEulerCurveFilter against scikit-image's euler_number (the oracle):
chi(t) == euler_number(image <= t, connectivity=1) for the V construction and
connectivity=ndim for T (image >= t for superlevel filtrations).

Runs with PV_PLUGIN_PATH pointing at the built plugin, PYTHONPATH at the
built `topovox` package and TOPOVOX_DATA_DIR at Testing/Data.
"""
import gzip
import json
import os
import sys

import numpy as np
from skimage.measure import euler_number
from vtk.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk

from paraview import servermanager as sm
from paraview.simple import EulerCharacteristicCurve, Wavelet

import topovox  # the wrapped VTK module, importable without the plugin

failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def oracle(image, thresholds, construction, superlevel):
    connectivity = 1 if construction == "V" else image.ndim
    out = []
    for t in thresholds:
        mask = image >= t if superlevel else image <= t
        out.append(euler_number(mask, connectivity=connectivity))
    return out


def table_columns(table):
    return {table.GetColumnName(i): np.array([table.GetColumn(i).GetValue(j)
                                              for j in range(table.GetNumberOfRows())])
            for i in range(table.GetNumberOfColumns())}


# 1. The proxy, as a ParaView user applies it to the Wavelet source.
wavelet = Wavelet()
wavelet.WholeExtent = [-8, 8, -7, 7, -5, 5]
wavelet.UpdatePipeline()
image = dsa.WrapDataObject(sm.Fetch(wavelet)).PointData["RTData"].reshape(11, 15, 17)
for construction, label in (("V", "V (voxels are vertices)"), ("T", "T (voxels are cubes)")):
    for superlevel in (False, True):
        curve = EulerCharacteristicCurve(Input=wavelet)
        curve.Construction = label
        curve.Filtration = "Superlevel" if superlevel else "Sublevel"
        curve.ThresholdMode = "Bins"
        curve.NumberOfBins = 40
        curve.UpdatePipeline()
        cols = table_columns(sm.Fetch(curve))
        what = "Wavelet %s %s" % (construction, "superlevel" if superlevel else "sublevel")
        expect(len(cols.get("Threshold", [])) == 40, what + ": 40 thresholds")
        expect(list(cols["EulerCharacteristic"]) ==
               oracle(image, cols["Threshold"], construction, superlevel),
               what + ": equals skimage")
        expect(cols["Vertices"][-1] == (image.size if construction == "V"
                                        else 18 * 16 * 12), what + ": vertex count")

# List mode through the proxy's repeatable property.
curve = EulerCharacteristicCurve(Input=wavelet)
curve.ThresholdMode = "List"
curve.Thresholds = [60.0, 100.0, 150.0, 200.0, 250.0]
curve.UpdatePipeline()
cols = table_columns(sm.Fetch(curve))
expect(list(cols["Threshold"]) == [60.0, 100.0, 150.0, 200.0, 250.0], "list thresholds kept")
expect(list(cols["EulerCharacteristic"]) == oracle(image, cols["Threshold"], "V", False),
       "list mode equals skimage")

# 2. The wrapped class on real volumes shipped with the tests (exact mode).
data_dir = os.environ["TOPOVOX_DATA_DIR"]
for name in ("neghip_66", "headsq_64x64x93", "camera_512"):
    meta = json.load(open(os.path.join(data_dir, name + ".json")))
    raw = gzip.open(os.path.join(data_dir, meta["file"])).read()
    dims = meta["dims"] + [1] * (3 - len(meta["dims"]))
    values = np.frombuffer(raw, dtype=np.dtype(meta["dtype"]).newbyteorder("<"))
    img = vtk_image = None
    from vtkmodules.vtkCommonDataModel import vtkImageData
    vtk_image = vtkImageData()
    vtk_image.SetDimensions(*dims)
    array = numpy_to_vtk(values.astype(values.dtype.newbyteorder("=")), deep=1)
    array.SetName("values")
    vtk_image.GetPointData().SetScalars(array)
    volume = values.reshape(dims[::-1]).squeeze()
    for construction in ("V", "T"):
        f = topovox.vtkEulerCurveFilter()
        f.SetInputData(vtk_image)
        f.SetConstruction(0 if construction == "V" else 1)
        f.SetThresholdMode(f.THRESHOLDS_EXACT)
        f.Update()
        cols = table_columns(f.GetOutput())
        expect(list(cols["Threshold"]) == sorted(set(values.tolist())),
               name + ": exact thresholds are the distinct values")
        # Every 10th threshold against skimage keeps the test quick.
        picks = list(range(0, len(cols["Threshold"]), 10)) + [len(cols["Threshold"]) - 1]
        got = [cols["EulerCharacteristic"][i] for i in picks]
        want = oracle(volume, [cols["Threshold"][i] for i in picks], construction, False)
        expect(got == want, "%s %s: equals skimage at %d thresholds" % (name, construction, len(picks)))

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
