"""pvpython: the Persistence Diagram proxy and the wrapped
vtkPersistenceDiagramFilter against CubicalRipser (the `cripser` package:
computePH for V, tcripser for T), compared as multisets of
(dimension, birth, death). Superlevel diagrams are compared with cripser on
the negated image. Also checks TTK's diagram layout, the critical voxels and
that every reported voxel holds the reported value.
"""
import collections
import gzip
import json
import os
import sys

import numpy as np
from vtk.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData

from paraview import servermanager as sm
from paraview.simple import PersistenceDiagram, Wavelet

import topovox
from checks import cripser_pairs, require_cripser

require_cripser()

failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def oracle(image, construction, superlevel):
    return cripser_pairs(image, construction, superlevel)


def ours(table):
    cols = {table.GetColumnName(i): table.GetColumn(i) for i in range(table.GetNumberOfColumns())}
    out = collections.Counter()
    for j in range(table.GetNumberOfRows()):
        out[(cols["Dimension"].GetValue(j), cols["Birth"].GetValue(j), cols["Death"].GetValue(j))] += 1
    return out, cols


def check_voxels(image, cols, rows, what):
    """image is numpy (z, y, x); ids are x-fastest linear indices."""
    flat = image.reshape(-1)
    ok = True
    for j in range(rows):
        b = cols["BirthId"].GetValue(j)
        ok = ok and flat[b] == cols["Birth"].GetValue(j)
        d = cols["DeathId"].GetValue(j)
        if d >= 0:
            ok = ok and flat[d] == cols["Death"].GetValue(j)
    expect(ok, what + ": image[voxel] equals birth and death")


# 1. The proxy on ParaView's Wavelet, as a user applies it.
wavelet = Wavelet()
wavelet.WholeExtent = [-7, 7, -6, 6, -4, 4]
wavelet.UpdatePipeline()
image = dsa.WrapDataObject(sm.Fetch(wavelet)).PointData["RTData"].reshape(9, 13, 15)
for construction, label in (("V", "V (voxels are vertices)"), ("T", "T (voxels are cubes)")):
    for superlevel in (False, True):
        what = "Wavelet %s %s" % (construction, "superlevel" if superlevel else "sublevel")
        pd = PersistenceDiagram(Input=wavelet)
        pd.Construction = label
        pd.Filtration = "Superlevel" if superlevel else "Sublevel"
        pd.UpdatePipeline()
        algorithm = pd.GetClientSideObject()
        table = algorithm.GetOutputDataObject(1)
        got, cols = ours(table)
        expect(got == oracle(image, construction, superlevel), what + ": pairs equal cripser's")
        check_voxels(image, cols, table.GetNumberOfRows(), what)
        diagram = algorithm.GetOutputDataObject(0)
        expect(diagram.GetNumberOfCells() == table.GetNumberOfRows() + 1,
               what + ": one line per pair plus the diagonal")
        for name in ("PairIdentifier", "PairType", "Persistence", "Birth", "IsFinite"):
            expect(diagram.GetCellData().GetArray(name) is not None, what + ": cell array " + name)
        for name in ("CriticalType", "ttkVertexScalarField", "Coordinates"):
            expect(diagram.GetPointData().GetArray(name) is not None, what + ": point array " + name)
        ids = diagram.GetCellData().GetArray("PairIdentifier")
        expect(ids.GetValue(diagram.GetNumberOfCells() - 1) == -1, what + ": the diagonal is last")
        finite = sum(1 for j in range(table.GetNumberOfRows()) if cols["IsFinite"].GetValue(j))
        points = algorithm.GetOutputDataObject(2)
        expect(points.GetNumberOfPoints() == 2 * finite + (table.GetNumberOfRows() - finite),
               what + ": two critical voxels per finite pair, one per essential class")

# Filters: maximum dimension and minimum persistence.
pd = PersistenceDiagram(Input=wavelet)
pd.MaximumDimension = 0
pd.MinimumPersistence = 5.0
pd.UpdatePipeline()
got, cols = ours(pd.GetClientSideObject().GetOutputDataObject(1))
want = collections.Counter({k: n for k, n in oracle(image, "V", False).items()
                            if k[0] == 0 and abs(k[2] - k[1]) > 5.0})
expect(got == want, "maximum dimension 0 and minimum persistence 5")

# The persistence curve of the pairs table against a direct count.
from paraview.simple import PersistenceCurve
pd = PersistenceDiagram(Input=wavelet)
curve = PersistenceCurve(Input=pd)
curve.Input = sm.OutputPort(pd, 1)
curve.UpdatePipeline()
ctable = curve.GetClientSideObject().GetOutputDataObject(0)
pairs = pd.GetClientSideObject().GetOutputDataObject(1)
_, pcols = ours(pairs)
pers = [pcols["Persistence"].GetValue(j) for j in range(pairs.GetNumberOfRows())]
dims = [pcols["Dimension"].GetValue(j) for j in range(pairs.GetNumberOfRows())]
ok = ctable.GetNumberOfRows() == len(set(p for p in pers if np.isfinite(p)))
for j in range(ctable.GetNumberOfRows()):
    p = ctable.GetColumnByName("Persistence").GetValue(j)
    for k in range(3):
        want = sum(1 for d, q in zip(dims, pers) if d == k and q >= p)
        ok = ok and ctable.GetColumnByName("Dimension%d" % k).GetValue(j) == want
expect(ok, "persistence curve equals a direct count")

# 2. The wrapped class on real volumes shipped with the tests.
data_dir = os.environ["TOPOVOX_DATA_DIR"]
for name, crop in (("neghip_66", None), ("headsq_64x64x93", (slice(20, 60), slice(0, 64), slice(0, 64))),
                   ("camera_512", (slice(100, 228), slice(200, 328)))):
    meta = json.load(open(os.path.join(data_dir, name + ".json")))
    raw = gzip.open(os.path.join(data_dir, meta["file"])).read()
    dims = meta["dims"]
    volume = np.frombuffer(raw, dtype=np.dtype(meta["dtype"]).newbyteorder("<")).reshape(dims[::-1])
    if crop:
        volume = volume[crop]
    volume = np.ascontiguousarray(volume.astype(volume.dtype.newbyteorder("=")))
    shape = list(volume.shape[::-1]) + [1] * (3 - volume.ndim)
    vtk_image = vtkImageData()
    vtk_image.SetDimensions(*shape)
    array = numpy_to_vtk(volume.reshape(-1), deep=1)
    array.SetName("values")
    vtk_image.GetPointData().SetScalars(array)
    for construction in ("V", "T"):
        f = topovox.vtkPersistenceDiagramFilter()
        f.SetInputDataObject(0, vtk_image)
        f.SetConstruction(0 if construction == "V" else 1)
        f.Update()
        table = f.GetOutputDataObject(1)
        got, cols = ours(table)
        what = "%s %s" % (name, construction)
        expect(got == oracle(volume.astype(np.float64), construction, False), what + ": pairs equal cripser's")
        check_voxels(volume, cols, table.GetNumberOfRows(), what)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
