"""Topology and transport along a time series: two blobs that drift apart,
merge-free, while a third fades in. For every time step, the persistence
diagram (superlevel sets: a blob is a component) in one batch, and the
optimal-transport cost from each step to the next and from the first step.

    xvfb-run -a pvbatch Examples/series_demo.py [OUTPUT_DIR]

Needs PV_PLUGIN_PATH to point at the TopoVox plugin and PYTHONPATH at its
Python package (scripts/run-default.sh sets both). Writes, in OUTPUT_DIR:
  series/density_K.vti        the synthetic series (32x32, 8 steps)
  transport_over_time.csv     FromTime, ToTime, TransportCost, ... per pair
  transport_from_first.csv    the same from step 0 to each step
  persistence_over_time.csv   per step: pairs per dimension, total persistence
  series_pairs.csv            every pair of every step (Image, Time, ...)
  transport_over_time.png     both costs against time (line chart)
"""
import os
import sys

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkIOXML import vtkXMLImageDataWriter

from paraview import simple

import topovox  # noqa: F401  (the wrapped filters, before any proxy)

out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "out")
series_dir = os.path.join(out_dir, "series")
os.makedirs(series_dir, exist_ok=True)


def frame(t, n=32):
    """Blobs at time t in [0, 1]: two moving apart, a third fading in."""
    y, x = np.mgrid[0:n, 0:n] / (n - 1.0)
    blob = lambda cx, cy, w: np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * w * w))
    return (blob(0.45 - 0.25 * t, 0.5, 0.08) + blob(0.55 + 0.25 * t, 0.5, 0.08) + t * blob(0.5, 0.15, 0.06) +
            0.01)


names = []
for k, t in enumerate(np.linspace(0.0, 1.0, 8)):
    image = vtkImageData()
    image.SetDimensions(32, 32, 1)
    image.SetSpacing(1.0 / 31, 1.0 / 31, 1.0)
    density = numpy_to_vtk(frame(t).reshape(-1), deep=1)
    density.SetName("density")
    image.GetPointData().SetScalars(density)
    names.append(os.path.join(series_dir, "density_%02d.vti" % k))
    writer = vtkXMLImageDataWriter()
    writer.SetDataModeToBinary()  # Debian's VTK 9.2 misreads some appended files it wrote
    writer.SetFileName(names[-1])
    writer.SetInputData(image)
    writer.Write()
series = simple.XMLImageDataReader(FileName=names)

# Transport between steps: how much the field moves (reg in squared world units).
written = []
for reference, name in (("Previous Step", "transport_over_time.csv"), ("First Step", "transport_from_first.csv")):
    transport = simple.OptimalTransportOverTime(Input=series, Reference=reference, Reg=0.005)
    path = os.path.join(out_dir, name)
    simple.SaveData(path, proxy=transport, FieldAssociation="Row Data")
    written.append(path)
    if reference == "Previous Step":
        consecutive = transport
    else:
        from_first = transport

# Persistence of every step in one batch; blobs are superlevel components.
batch = simple.PersistenceDiagramsOfManyImages(Input=series, Filtration="Superlevel", MinimumPersistence=0.05)
for port, name in ((1, "persistence_over_time.csv"), (0, "series_pairs.csv")):
    path = os.path.join(out_dir, name)
    simple.SaveData(path, proxy=simple.OutputPort(batch, port), FieldAssociation="Row Data")
    written.append(path)

# Both costs against time.
chart = simple.CreateView("XYChartView")
chart.ViewSize = [900, 500]
chart.LeftAxisTitle = "entropic transport cost"
chart.BottomAxisTitle = "time"
for source, label in ((consecutive, "from the previous step"), (from_first, "from the first step")):
    display = simple.Show(source, chart)
    display.UseIndexForXAxis = 0
    display.XArrayName = "ToTime"
    display.SeriesVisibility = ["TransportCost"]
    display.SeriesLabel = ["TransportCost", label]
png = os.path.join(out_dir, "transport_over_time.png")
simple.SaveScreenshot(png, chart, ImageResolution=[900, 500])
written.append(png)

summary = simple.servermanager.Fetch(batch, arg1=None, arg2=None, idx=1)
components = [summary.GetColumnByName("Pairs0").GetValue(r) for r in range(summary.GetNumberOfRows())]
print("components above persistence 0.05, per step: %s" % components)
for path in written:
    print("wrote %s" % path)
