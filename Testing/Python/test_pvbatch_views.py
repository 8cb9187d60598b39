"""pvbatch under Xvfb: the Persistence Plot filter and topovox.views.

Geometry against CubicalRipser: the diagram's vertices are exactly the
pairs' (birth, death) points (essential classes on the top edge), the
barcode has one bar per pair from birth to death, grouped by dimension and
ordered by persistence. Pictures: show_diagram and show_barcode render
images in which every dimension present in the diagram appears in its own
colour (pixels of that colour exist), and nothing renders blank.
"""
import collections
import os
import tempfile

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkIOImage import vtkPNGReader

from paraview import simple

import topovox
from checks import expect, failures, require_cripser
from topovox import views

cripser, _ = require_cripser()


rng = np.random.default_rng(8)
volume = rng.integers(0, 40, size=(10, 12, 11)).astype(np.float64)
image = vtkImageData()
image.SetDimensions(11, 12, 10)
array = numpy_to_vtk(volume.reshape(-1), deep=1)
array.SetName("values")
image.GetPointData().SetScalars(array)
reference = collections.Counter()
for row in cripser.computePH(volume):
    if row[1] != row[2]:
        reference[(int(row[0]), row[1], np.inf if row[2] > 1e300 else row[2])] += 1

diagram = topovox.vtkPersistenceDiagramFilter()
diagram.SetInputDataObject(0, image)
plot = topovox.vtkPersistencePlotFilter()
plot.SetInputConnection(diagram.GetOutputPort(1))
plot.Update()
poly = plot.GetOutput()
cells = poly.GetCellData()
dims = vtk_to_numpy(cells.GetArray("Dimension"))
finite = vtk_to_numpy(cells.GetArray("IsFinite"))
points = vtk_to_numpy(poly.GetPoints().GetData())
top = volume.max() + 0.05 * (volume.max() - volume.min())
got = collections.Counter()
for c in range(poly.GetNumberOfVerts()):
    x, y = points[poly.GetCell(c).GetPointId(0)][:2]
    got[(int(dims[c]), x, y if finite[c] else np.inf)] += 1
    expect(finite[c] or abs(y - top) < 1e-9, "essential class drawn on the top edge")
expect(got == reference, "diagram vertices are cripser's (birth, death) points")
expect(poly.GetNumberOfLines() == 2 and (dims[poly.GetNumberOfVerts():] == -1).all(),
       "diagram guides: the diagonal and the top edge, Dimension -1")

plot.SetLayout(1)
plot.Update()
poly = plot.GetOutput()
rows = vtk_to_numpy(poly.GetCellData().GetArray("Row"))
dims = vtk_to_numpy(poly.GetCellData().GetArray("Dimension"))
pers = vtk_to_numpy(poly.GetCellData().GetArray("Persistence"))
expect(poly.GetNumberOfLines() == sum(reference.values()), "barcode: one bar per pair")
order = np.argsort(rows)
expect(np.all(np.diff(dims[order]) >= 0), "barcode: grouped by dimension, 0 at the bottom")
same = dims[order][1:] == dims[order][:-1]
expect(np.all(np.diff(pers[order])[same] <= 0), "barcode: longest bar first within a dimension")

# Pictures through topovox.views, as the main job makes them.
source = simple.TrivialProducer()
source.GetClientSideObject().SetOutput(image)
proxy = simple.PersistenceDiagram(Input=source)
out = tempfile.mkdtemp()
present = sorted(set(d for d, _, _ in reference))
for name, show in (("diagram", views.show_diagram), ("barcode", views.show_barcode)):
    view, _ = show(proxy, size=(500, 500))
    path = os.path.join(out, name + ".png")
    simple.SaveScreenshot(path, view, ImageResolution=[500, 500])
    reader = vtkPNGReader()
    reader.SetFileName(path)
    reader.Update()
    pixels = vtk_to_numpy(reader.GetOutput().GetPointData().GetScalars())[:, :3].astype(int)
    for d in present:
        rgb = np.array(views.DIMENSION_RGB[d]) * 255
        hits = (np.abs(pixels - rgb).max(axis=1) < 40).sum()
        # The legend's swatch alone gives about 480 pixels of each colour at
        # this size: demand more, i.e. points or bars drawn in it.
        expect(hits > 550, "%s: dimension %d drawn in its colour (%d pixels)" % (name, d, hits))
    expect(len(np.unique(pixels, axis=0)) > 20, name + ": not blank")

# No sys.exit after rendering: pvbatch must tear its views down itself (an
# early exit leaves a GLX context behind). CTest reads the line below.
print("views: %d failures" % len(failures))
