"""pvpython: Persistence Diagram Distance (vtkPersistenceDiagramDistanceFilter)
against GUDHI's wasserstein_distance and an exact assignment (scipy's
linear_sum_assignment on the classical augmented matrix): on the diagrams
of two random images, per dimension, orders 1 and 2, L-infinity and L2
ground metrics, the entropic distance approaches the exact one as the
regularisation shrinks (within 2% at 1e-3, 0.2% at 1e-4); essential
classes matched by birth; on a small diagram with one optimal matching, the
matching itself; errors on bad tables.
"""
import sys

import numpy as np
from scipy.optimize import linear_sum_assignment
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkCommand, vtkDoubleArray, vtkIntArray
from vtkmodules.vtkCommonDataModel import vtkImageData, vtkTable

from paraview.simple import PersistenceDiagram, PersistenceDiagramDistance, Wavelet
from paraview import servermanager as sm

import topovox
from checks import expect, failures

try:
    from gudhi.wasserstein import wasserstein_distance
except ImportError:
    print("SKIP: the oracle GUDHI (with POT) is not installed")
    sys.exit(77)


def image_of(values):
    image = vtkImageData()
    image.SetDimensions(*values.shape[::-1], 1)
    array = numpy_to_vtk(values.reshape(-1), deep=1)
    array.SetName("values")
    image.GetPointData().SetScalars(array)
    return image


def pairs_table(values):
    f = topovox.vtkPersistenceDiagramFilter()
    f.SetInputDataObject(0, image_of(values))
    f.Update()
    table = vtkTable()
    table.DeepCopy(f.GetOutputDataObject(1))
    return table


def columns(table):
    return {table.GetColumnName(i): vtk_to_numpy(table.GetColumn(i)) for i in range(table.GetNumberOfColumns())}


def exact(X, Y, order, p):
    """The exact distance by assignment on the (n+m) x (n+m) augmented matrix."""
    n, m = len(X), len(Y)
    def ground(x, y):
        d = np.abs(x - y)
        return d.max() if np.isinf(p) else (d ** p).sum() ** (1 / p)
    def diag(x):
        return abs(x[1] - x[0]) * (0.5 if np.isinf(p) else 2 ** (1 / p - 1))
    big = 1e18
    C = np.zeros((n + m, n + m))
    for i in range(n):
        for j in range(m):
            C[i, j] = ground(X[i], Y[j]) ** order
        C[i, m:] = big
        C[i, m + i] = diag(X[i]) ** order
    for j in range(m):
        C[n:, j] = big
        C[n + j, j] = diag(Y[j]) ** order
    r, c = linear_sum_assignment(C)
    return C[r, c].sum() ** (1 / order)


def distances(first, second, **props):
    f = topovox.vtkPersistenceDiagramDistanceFilter()
    f.SetInputDataObject(0, first)
    f.SetInputDataObject(1, second)
    for k, v in props.items():
        getattr(f, "Set" + k)(v)
    f.Update()
    return columns(f.GetOutputDataObject(0)), columns(f.GetOutputDataObject(1))


rng = np.random.default_rng(2)
A, B = rng.random((9, 10)), rng.random((9, 10))
ta, tb = pairs_table(A), pairs_table(B)
ca, cb = columns(ta), columns(tb)
for order, p, internal in ((1.0, np.inf, 0.0), (2.0, 2.0, 2.0)):
    results = {}
    for reg in (1e-3, 1e-4):
        got, _ = distances(ta, tb, Order=order, InternalP=internal, RelativeRegularization=reg)
        results[reg] = got
    for d in (0, 1):
        X = np.stack([ca["Birth"], ca["Death"]], 1)[(ca["Dimension"] == d) & (ca["IsFinite"] == 1)]
        Y = np.stack([cb["Birth"], cb["Death"]], 1)[(cb["Dimension"] == d) & (cb["IsFinite"] == 1)]
        want = wasserstein_distance(X, Y, order=order, internal_p=p)
        expect(abs(exact(X, Y, order, p) - want) <= 1e-9 * max(1, want), "oracles agree (dim %d)" % d)
        row = list(results[1e-3]["Dimension"]).index(d)
        coarse = results[1e-3]["FiniteDistance"][row]
        fine = results[1e-4]["FiniteDistance"][row]
        what = "dim %d order %g p %s" % (d, order, p)
        expect(abs(coarse - want) <= 0.02 * want, what + ": within 2%% at 1e-3 (%g vs GUDHI %g)" % (coarse, want))
        expect(abs(fine - want) <= 0.002 * want, what + ": within 0.2%% at 1e-4 (%g vs GUDHI %g)" % (fine, want))
        # Essential classes: one component each in 2D, matched by birth.
        ea = np.sort(ca["Birth"][(ca["Dimension"] == d) & (ca["IsFinite"] == 0)])
        eb = np.sort(cb["Birth"][(cb["Dimension"] == d) & (cb["IsFinite"] == 0)])
        want_e = np.sum(np.abs(ea - eb) ** order) if len(ea) == len(eb) else np.inf
        expect(results[1e-3]["EssentialCost"][row] == want_e, what + ": essential cost")

# The matching on a small diagram with one optimal matching.
def table_of(points, dim=0):
    t = vtkTable()
    for name, values in (("PairIdentifier", [10 + k for k in range(len(points))]),
                         ("Dimension", [dim] * len(points)), ("Birth", [b for b, _ in points]),
                         ("Death", [d for _, d in points])):
        a = vtkIntArray() if name in ("PairIdentifier", "Dimension") else vtkDoubleArray()
        a.SetName(name)
        for v in values:
            a.InsertNextValue(v)
        t.AddColumn(a)
    return t


X = [(0.0, 10.0), (5.0, 5.5), (2.0, 6.0)]
Y = [(0.2, 9.5), (2.1, 6.3)]
got, match = distances(table_of(X), table_of(Y), RelativeRegularization=1e-4)
pairs = set(zip(match["FirstPair"], match["SecondPair"]))
expect(pairs == {(10, 10), (11, -1), (12, 11)}, "matching: %s" % sorted(pairs))
want = wasserstein_distance(np.array(X), np.array(Y))
expect(abs(got["Distance"][0] - want) <= 1e-3 * want, "small diagram: %g vs GUDHI %g" % (got["Distance"][0], want))

# The proxy: two Wavelets' diagrams.
w1, w2 = Wavelet(), Wavelet()
w1.WholeExtent = [0, 8, 0, 8, 0, 0]
w2.WholeExtent = [0, 8, 0, 8, 0, 0]
w2.Maximum = 200.0
dist = PersistenceDiagramDistance(Input=sm.OutputPort(PersistenceDiagram(Input=w1), 1),
                                  SecondInput=sm.OutputPort(PersistenceDiagram(Input=w2), 1))
dist.UpdatePipeline()
expect(sm.Fetch(dist).GetNumberOfRows() >= 1, "proxy: a row per dimension")

# A table without the needed columns: an error, not a crash.
errors = []
bad = topovox.vtkPersistenceDiagramDistanceFilter()
bad.AddObserver(vtkCommand.ErrorEvent, lambda obj, event: errors.append(event))
bad.SetInputDataObject(0, vtkTable())
bad.SetInputDataObject(1, table_of(Y))
bad.Update()
expect(len(errors) == 1, "a table without Dimension/Birth/Death is reported")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
