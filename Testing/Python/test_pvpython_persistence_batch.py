"""pvpython: the Persistence Diagrams Of Many Images proxy and
vtkPersistenceBatchFilter against CubicalRipser image by image: the blocks
of a multiblock and of a partitioned data set (2D and 3D, odd sizes,
plateaus, NaN, a 1-voxel image, V and T, sublevel and superlevel) and every
time step of an image series (read one step per execution); the summary
rows against the pairs; reported voxels hold the reported values; errors
for a leaf that is not an image and for a bad step.
"""
import collections
import sys

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.util.vtkAlgorithm import VTKPythonAlgorithmBase
from vtkmodules.vtkCommonDataModel import vtkImageData, vtkMultiBlockDataSet, vtkPartitionedDataSet, vtkPolyData
from vtkmodules.vtkCommonExecutionModel import vtkStreamingDemandDrivenPipeline as SDDP

from paraview import servermanager as sm
from paraview.simple import PersistenceDiagramsOfManyImages, TrivialProducer

import topovox
import checks
from checks import cripser_pairs, error_messages, expect, failures, require_cripser

require_cripser()


def image_of(values):
    return checks.image_of(values, name="f")


def columns(table):
    return {table.GetColumnName(c): vtk_to_numpy(table.GetColumn(c)) for c in range(table.GetNumberOfColumns())}


def run(make_input, construction=0, filtration=0):
    f = topovox.vtkPersistenceBatchFilter()
    messages = error_messages(f)
    make_input(f)
    f.SetConstruction(construction)
    f.SetFiltration(filtration)
    f.Update()
    return f, columns(f.GetOutputDataObject(0)), columns(f.GetOutputDataObject(1)), messages


def single_image_pairs(values, construction, filtration):
    """The Persistence Diagram filter's pairs of one image: the oracle for
    images with NaN voxels (absent from the complex), which cripser has no
    rule for; it is itself checked against cripser and GUDHI elsewhere."""
    f = topovox.vtkPersistenceDiagramFilter()
    f.SetInputDataObject(0, image_of(values))
    f.SetConstruction(construction)
    f.SetFiltration(filtration)
    f.Update()
    one = columns(f.GetOutputDataObject(1))
    return collections.Counter(zip(one["Dimension"].astype(int), one["Birth"], one["Death"]))


def check_batch(arrays, pairs, summary, construction, filtration, what, times=None):
    """Each image's rows against cripser (or, with NaN, the single-image
    filter); voxels; times; the summary against the rows."""
    expect(len(summary.get("Image", [])) == len(arrays), what + ": one summary row per image")
    for k, values in enumerate(arrays):
        rows = np.flatnonzero(pairs["Image"] == k) if "Image" in pairs else []
        got = collections.Counter((int(pairs["Dimension"][r]), pairs["Birth"][r], pairs["Death"][r]) for r in rows)
        if np.isnan(values).any():
            want, oracle = single_image_pairs(values, construction, filtration), "the single-image filter"
        else:
            want, oracle = cripser_pairs(values, "VT"[construction], filtration == 1), "cripser"
        expect(got == want, "%s: image %d %s equals %s (%d vs %d pairs)" % (
            what, k, values.shape, oracle, sum(got.values()), sum(want.values())))
        flat = values.reshape(-1)
        ok = all(flat[pairs["BirthId"][r]] == pairs["Birth"][r] and
                 (pairs["DeathId"][r] < 0 or flat[pairs["DeathId"][r]] == pairs["Death"][r]) for r in rows)
        expect(ok, "%s: image %d: image[voxel] equals birth and death" % (what, k))
        if times is not None:
            expect(all(pairs["Time"][r] == times[k] for r in rows), "%s: image %d: its time" % (what, k))
        if k < len(summary.get("Image", [])):
            for d in range(4):
                n = sum(1 for r in rows if pairs["Dimension"][r] == d)
                total = sum(abs(pairs["Death"][r] - pairs["Birth"][r]) for r in rows
                            if pairs["Dimension"][r] == d and pairs["IsFinite"][r])
                expect(summary["Pairs%d" % d][k] == n and np.isclose(summary["TotalPersistence%d" % d][k], total),
                       "%s: image %d: summary of dimension %d" % (what, k, d))


class SeriesSource(VTKPythonAlgorithmBase):
    """An image per time step, counting how often it is asked for data."""

    def __init__(self, times, frames):
        VTKPythonAlgorithmBase.__init__(self, nInputPorts=0, nOutputPorts=1, outputType="vtkImageData")
        self.times, self.frames, self.executions = list(times), frames, []

    def RequestInformation(self, request, inInfo, outInfo):
        info = outInfo.GetInformationObject(0)
        info.Set(SDDP.TIME_STEPS(), self.times, len(self.times))
        info.Set(SDDP.TIME_RANGE(), [self.times[0], self.times[-1]], 2)
        return 1

    def RequestData(self, request, inInfo, outInfo):
        k = self.times.index(outInfo.GetInformationObject(0).Get(SDDP.UPDATE_TIME_STEP()))
        self.executions.append(k)
        vtkImageData.GetData(outInfo).ShallowCopy(image_of(self.frames[k]))
        return 1


rng = np.random.default_rng(3)
with_nan = rng.random((9, 8))
with_nan[2, 3] = np.nan
arrays = [rng.random((13, 11)),                 # 2D, odd sizes
          np.round(rng.random((6, 7, 5)) * 4),  # 3D plateaus
          with_nan,                             # a NaN voxel
          np.array([[0.5]]),                    # one voxel
          rng.random((1, 17))]                  # thin
for construction in (0, 1):
    for filtration in (0, 1):
        what = "%s %s" % ("VT"[construction], "superlevel" if filtration else "sublevel")
        mb = vtkMultiBlockDataSet()
        for k, values in enumerate(arrays):
            mb.SetBlock(k, image_of(values))
        _, pairs, summary, messages = run(lambda f: f.SetInputDataObject(0, mb), construction, filtration)
        expect(not messages, "multiblock " + what + ": no errors (%s)" % messages)
        check_batch(arrays, pairs, summary, construction, filtration, "multiblock " + what)

# A partitioned data set (ParaView's newer composite).
pd = vtkPartitionedDataSet()
for k, values in enumerate(arrays[:2]):
    pd.SetPartition(k, image_of(values))
_, pairs, summary, messages = run(lambda f: f.SetInputDataObject(0, pd))
expect(not messages, "partitioned: no errors (%s)" % messages)
check_batch(arrays[:2], pairs, summary, 0, 0, "partitioned")

# A time series: every step, read once each, in one batch.
times = [0.0, 0.25, 1.0, 4.0]
frames = [rng.random((10, 12)) for _ in times]
source = SeriesSource(times, frames)
f, pairs, summary, messages = run(lambda f: f.SetInputConnection(source.GetOutputPort()))
expect(not messages, "series: no errors (%s)" % messages)
expect(source.executions == [0, 1, 2, 3], "series: every step read once, in order (%s)" % source.executions)
check_batch(frames, pairs, summary, 0, 0, "series", times)
expect(list(summary.get("Time", [])) == times, "series: the summary's times")

# The proxy as a user applies it, on a multiblock.
mb = vtkMultiBlockDataSet()
for k, values in enumerate(arrays[:2]):
    mb.SetBlock(k, image_of(values))
producer = TrivialProducer()
producer.GetClientSideObject().SetOutput(mb)
proxy = PersistenceDiagramsOfManyImages(Input=producer)
proxy.UpdatePipeline()
check_batch(arrays[:2], columns(sm.Fetch(proxy, arg1=None, arg2=None, idx=0)),
            columns(sm.Fetch(proxy, arg1=None, arg2=None, idx=1)), 0, 0, "proxy")

# Errors that say why; nothing crashes.
mb = vtkMultiBlockDataSet()
mb.SetBlock(0, image_of(arrays[0]))
mb.SetBlock(1, vtkPolyData())
_, _, _, messages = run(lambda f: f.SetInputDataObject(0, mb))
expect(any("leaf 1 is a vtkPolyData" in m for m in messages), "a non-image leaf: the error says so (%s)" % messages)
two = np.stack([arrays[0], arrays[0]], axis=-1)  # a 2-component array
mb = vtkMultiBlockDataSet()
image = image_of(arrays[0])
vec = numpy_to_vtk(two.reshape(-1, 2), deep=1)
vec.SetName("v")
image.GetPointData().SetScalars(vec)
mb.SetBlock(0, image)
_, _, _, messages = run(lambda f: f.SetInputDataObject(0, mb))
expect(any("image 0" in m and "components" in m for m in messages),
       "a vector array: the error names the image and says why (%s)" % messages)

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
