"""pvpython: Histogram Transport (vtkHistogramTransportFilter) against POT:
rows of a table as histograms (bin centres from the column names, from a
BinCenters array, or 0, 1, 2...), compared with a second table row by row,
one against many, and consecutive rows of one table; ParaView's Histogram
filter output on two Wavelets; costs equal ot.sinkhorn2 on
M = |c_i - c_j|^p; errors for negative values and mismatched bins.
"""
import sys

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkCommand
from vtkmodules.vtkCommonDataModel import vtkTable

from paraview import servermanager as sm
from paraview.simple import Calculator, Histogram, HistogramTransport, Wavelet

import topovox
from checks import expect, failures

try:
    import ot
except ImportError:
    print("SKIP: the oracle POT is not installed (python3-pot)")
    sys.exit(77)


def table_of(rows, names, centres=None):
    t = vtkTable()
    for k, name in enumerate(names):
        column = numpy_to_vtk(np.ascontiguousarray(rows[:, k]), deep=1)
        column.SetName(name)
        t.AddColumn(column)
    if centres is not None:
        c = numpy_to_vtk(np.asarray(centres, float), deep=1)
        c.SetName("BinCenters")
        t.GetFieldData().AddArray(c)
    return t


def run(first, second=None, **props):
    f = topovox.vtkHistogramTransportFilter()
    f.SetInputDataObject(0, first)
    if second is not None:
        f.SetInputDataObject(1, second)
    for k, v in props.items():
        getattr(f, "Set" + k)(v)
    f.Update()
    out = f.GetOutput()
    return {out.GetColumnName(i): vtk_to_numpy(out.GetColumn(i)) for i in range(out.GetNumberOfColumns())}


def pot(a, b, centres, power, reg, method):
    M = np.abs(centres[:, None] - centres[None, :]) ** power
    return ot.sinkhorn2(a / a.sum(), b / b.sum(), M, reg, method=method, numItermax=1000, stopThr=1e-9)


rng = np.random.default_rng(6)
A = rng.random((4, 7))
B = rng.random((4, 7))
numbered = ["%g" % (0.5 * k) for k in range(7)]
for names, centres, given in ((numbered, 0.5 * np.arange(7), None), (["b%d" % k for k in range(7)], np.arange(7.0), None),
                              (["b%d" % k for k in range(7)], np.array([0, 1, 3, 4, 8, 9, 12.0]), [0, 1, 3, 4, 8, 9, 12.0])):
    for power, reg, method, m in ((2.0, 0.5, 1, "sinkhorn_log"), (1.0, 0.3, 0, "sinkhorn")):
        what = "centres %s p %g %s" % (list(centres), power, m)
        got = run(table_of(A, names, given), table_of(B, names, given), Reg=reg, Method=method, CostPower=power)
        want = [pot(A[k], B[k], centres, power, reg, m) for k in range(4)]
        expect(np.allclose(got["TransportCost"], want, rtol=1e-9, atol=0), what + ": row by row")
        expect(np.allclose(got["Wasserstein"], np.array(want) ** (1 / power), rtol=1e-9), what + ": Wasserstein")
        one = run(table_of(A[:1], names, given), table_of(B, names, given), Reg=reg, Method=method, CostPower=power)
        want = [pot(A[0], B[k], centres, power, reg, m) for k in range(4)]
        expect(np.allclose(one["TransportCost"], want, rtol=1e-9, atol=0), what + ": one against many")
        series = run(table_of(A, names, given), Reg=reg, Method=method, CostPower=power)
        want = [pot(A[k], A[k + 1], centres, power, reg, m) for k in range(3)]
        expect(list(series["First"]) == [0, 1, 2] and np.allclose(series["TransportCost"], want, rtol=1e-9, atol=0),
               what + ": consecutive rows")

# ParaView's Histogram filter on two Wavelets: the same bins, one histogram each.
w = Wavelet()
shifted = Calculator(Input=w, Function="RTData + 20", ResultArrayName="RTData")
hists = []
for src in (w, shifted):
    h = Histogram(Input=src)
    h.SelectInputArray = ["POINTS", "RTData"]
    h.BinCount = 12
    h.CustomBinRanges = [0.0, 320.0]
    h.UseCustomBinRanges = 1
    hists.append(h)
ht = HistogramTransport(Input=hists[0], SecondInput=hists[1])
ht.Reg = 50.0
ht.UpdatePipeline()
out = sm.Fetch(ht)
h0, h1 = (sm.Fetch(h) for h in hists)
centres = vtk_to_numpy(h0.GetColumnByName("bin_extents"))
want = pot(vtk_to_numpy(h0.GetColumnByName("bin_values")).astype(float),
           vtk_to_numpy(h1.GetColumnByName("bin_values")).astype(float), centres, 2.0, 50.0, "sinkhorn_log")
expect(out.GetNumberOfRows() == 1 and abs(out.GetColumnByName("TransportCost").GetValue(0) - want) <= 1e-9 * want,
       "ParaView histograms: one comparison, POT's cost")

# Errors, not crashes.
for first, second, words in ((table_of(-A, numbered), None, "negative"),
                             (table_of(A, numbered), table_of(B[:, :5], numbered[:5]), "bins differ")):
    errors = []
    f = topovox.vtkHistogramTransportFilter()
    f.AddObserver(vtkCommand.ErrorEvent, lambda obj, event: errors.append(event))
    f.SetInputDataObject(0, first)
    if second is not None:
        f.SetInputDataObject(1, second)
    f.Update()
    expect(len(errors) == 1, "bad input (%s) is reported" % words)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
