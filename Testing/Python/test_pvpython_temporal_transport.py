"""pvpython: the Optimal Transport Over Time proxy and
vtkTemporalTransportFilter against POT on every pair of time steps: the
dense problem with M = ot.dist of the voxels' world positions, ot.sinkhorn2's
cost, from each step to the next and from the first step to each. Also: the
series is read one step per execution (a counting source), a file series
read by ParaView gives the same table, the table opens in a line chart, and
bad series (a negative step, a grid that changes, no time steps) are errors
that say which step and why.
"""
import os
import sys
import tempfile

import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.util.vtkAlgorithm import VTKPythonAlgorithmBase
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline as SDDP
from vtkmodules.vtkIOXML import vtkXMLImageDataWriter

from paraview import servermanager as sm
from paraview.simple import OptimalTransportOverTime, XMLImageDataReader

import topovox
from checks import error_messages, expect, failures, image_of, world_positions

try:
    import ot
except ImportError:
    print("SKIP: the oracle POT is not installed (python3-pot)")
    sys.exit(77)


positions = world_positions


class SeriesSource(VTKPythonAlgorithmBase):
    """An image per time step (times and arrays given), counting how often
    it is asked for data."""

    def __init__(self, times, frames, spacing):
        VTKPythonAlgorithmBase.__init__(self, nInputPorts=0, nOutputPorts=1, outputType="vtkImageData")
        self.times, self.frames, self.spacing = list(times), frames, spacing
        self.executions = []

    def RequestInformation(self, request, inInfo, outInfo):
        info = outInfo.GetInformationObject(0)
        if self.times:
            info.Set(SDDP.TIME_STEPS(), self.times, len(self.times))
            info.Set(SDDP.TIME_RANGE(), [self.times[0], self.times[-1]], 2)
        shape = self.frames[0].shape
        dims = list(shape[::-1]) + [1] * (3 - len(shape))
        info.Set(SDDP.WHOLE_EXTENT(), [0, dims[0] - 1, 0, dims[1] - 1, 0, dims[2] - 1], 6)
        return 1

    def RequestData(self, request, inInfo, outInfo):
        info = outInfo.GetInformationObject(0)
        t = info.Get(SDDP.UPDATE_TIME_STEP()) if info.Has(SDDP.UPDATE_TIME_STEP()) else None
        k = self.times.index(t) if self.times else 0
        self.executions.append(k)
        out = vtkImageData.GetData(outInfo)
        out.ShallowCopy(image_of(self.frames[k], self.spacing))
        return 1


def run(source, reference=0, reg=0.5, method=1):
    """The filter's table as columns, and its error messages."""
    f = topovox.vtkTemporalTransportFilter()
    messages = error_messages(f)
    f.SetInputConnection(source.GetOutputPort())
    f.SetReference(reference)
    f.SetReg(reg)
    f.SetMethod(method)
    f.Update()
    table = f.GetOutput()
    columns = {table.GetColumnName(c): vtk_to_numpy(table.GetColumn(c)) for c in range(table.GetNumberOfColumns())}
    return f, columns, messages


rng = np.random.default_rng(11)
for shape, spacing, times, reg, method in (((6, 7), (1.0, 0.5), [0.0, 0.5, 2.0, 3.5], 0.5, 1),
                                          ((3, 4, 5), (0.5, 1.0, 2.0), [1.0, 2.0, 3.0], 2.0, 0)):
    frames = [rng.random(shape) ** 2 + 0.01 for _ in times]
    X = positions(shape, spacing)
    M = ot.dist(X, X)
    pot_method = "sinkhorn_log" if method else "sinkhorn"
    for reference in (0, 1):
        what = "%s times %s %s reference %s" % ("x".join(map(str, shape)), times, pot_method,
                                                "first" if reference else "previous")
        source = SeriesSource(times, frames, spacing)
        f, cols, messages = run(source, reference, reg, method)
        expect(not messages, what + ": no errors (%s)" % messages)
        n = len(times) - 1
        expect(len(cols.get("TransportCost", [])) == n, what + ": one row per pair of steps")
        expect(source.executions == list(range(len(times))),
               what + ": every step read once, in order (%s)" % source.executions)
        for k in range(min(n, len(cols.get("TransportCost", [])))):
            i = 0 if reference else k
            a = frames[i].reshape(-1) / frames[i].sum()
            b = frames[k + 1].reshape(-1) / frames[k + 1].sum()
            want = ot.sinkhorn2(a, b, M, reg, method=pot_method, numItermax=1000, stopThr=1e-9)
            got = cols["TransportCost"][k]
            expect(abs(got - want) <= 1e-8 * abs(want), what + ": row %d cost %r, POT %r" % (k, got, want))
            expect(cols["FromStep"][k] == i and cols["ToStep"][k] == k + 1, what + ": row %d steps" % k)
            expect(cols["FromTime"][k] == times[i] and cols["ToTime"][k] == times[k + 1], what + ": row %d times" % k)
        # Updated again unchanged: no new pass over the series.
        f.Update()
        expect(len(source.executions) == len(times), what + ": an unchanged update reads nothing again")

# A series of files read by ParaView (the proxy as a user applies it).
frames = [rng.random((5, 6)) + 0.1 for _ in range(3)]
work = tempfile.mkdtemp(prefix="topovox-series-")
names = []
for k, frame in enumerate(frames):
    names.append(os.path.join(work, "density_%d.vti" % k))
    writer = vtkXMLImageDataWriter()
    writer.SetDataModeToBinary()  # Debian's VTK 9.2 misreads some appended files it wrote
    writer.SetFileName(names[-1])
    writer.SetInputData(image_of(frame, (1.0, 1.0)))
    writer.Write()
reader = XMLImageDataReader(FileName=names)
proxy = OptimalTransportOverTime(Input=reader)
proxy.Reg = 0.5
proxy.UpdatePipeline()
table = sm.Fetch(proxy)
costs = vtk_to_numpy(table.GetColumnByName("TransportCost")) if table.GetColumnByName("TransportCost") else []
X = positions((5, 6), (1.0, 1.0))
want = [ot.sinkhorn2(frames[k].reshape(-1) / frames[k].sum(), frames[k + 1].reshape(-1) / frames[k + 1].sum(),
                     ot.dist(X, X), 0.5, method="sinkhorn_log", numItermax=1000, stopThr=1e-9) for k in range(2)]
expect(len(costs) == 2 and np.allclose(costs, want, rtol=1e-8, atol=0),
       "proxy on a file series: costs %s, POT %s" % (list(costs), want))
controller = sm.vtkSMParaViewPipelineControllerWithRendering()
expect(controller.GetPreferredViewType(proxy.SMProxy, 0) == "XYChartView", "proxy: the table opens in a line chart")
# A stale selection of a table column (what ParaView can leave in a proxy
# made before its input was updated): the active scalars, and no error.
proxy.Density = ["ROWS", "FromStep"]
stale_errors = error_messages(proxy.GetClientSideObject())
proxy.UpdatePipeline()
table = sm.Fetch(proxy)
costs = vtk_to_numpy(table.GetColumnByName("TransportCost")) if table.GetColumnByName("TransportCost") else []
expect(not stale_errors and len(costs) == 2 and np.allclose(costs, want, rtol=1e-8, atol=0),
       "a stale Row Data selection: the active scalars, no error (%s)" % stale_errors)

# Bad series: errors that say which step and why; nothing crashes.
good = rng.random((4, 5)) + 0.1
for frames, times, words in (([good, good, -good], [0, 1, 2], "time step 2"),
                             ([good, good, rng.random((4, 6))], [0, 1, 2], "not on the grid of time step 1"),
                             ([good], [], "no time steps"),
                             ([good], [7.0], "one time step")):
    _, cols, messages = run(SeriesSource(times, frames, (1.0, 1.0)))
    expect(any(words in m for m in messages), "bad series (%s): the error says so (%s)" % (words, messages))

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
