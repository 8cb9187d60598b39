"""MPI: `mpirun -np N pvbatch --symmetric test_mpi_regions.py N`.

Every rank runs Feature Regions, Topological Simplification and Optimal
Transport on its piece of the Wavelet image: each gathers the whole image on
rank 0, whose output must equal the same filter run on a whole serial copy
of the image (plain VTK, on rank 0); the other ranks output empty images.
Optimal Transport Over Time reads a file series of Wavelet-derived densities
step by step on every rank; rank 0's table must equal a serial run's.
"""
import os
import tempfile

import numpy as np
from vtk.numpy_interface import dataset_adapter as dsa
from vtkmodules.vtkImagingCore import vtkRTAnalyticSource

import topovox
from mpi_checks import comm, expect, expect_ranks, rank, report
from paraview.modules.vtkPVVTKExtensionsIOCore import vtkFileSeriesReader
from paraview.simple import (FeatureRegions, OptimalTransport, OptimalTransportOverTime, TopologicalSimplification,
                             Wavelet, XMLImageDataReader)
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkIOXML import vtkXMLImageDataReader, vtkXMLImageDataWriter

expect_ranks()
extent = [-7, 7, -6, 6, -5, 5]
wavelet = Wavelet()
wavelet.WholeExtent = extent
serial = None
if rank == 0:
    source = vtkRTAnalyticSource()
    source.SetWholeExtent(*extent)
    source.Update()
    serial = source.GetOutput()


def serial_run(make):
    f = make()
    f.SetInputDataObject(0, serial)
    if f.GetNumberOfInputPorts() > 1 and isinstance(f, topovox.vtkOptimalTransportFilter):
        f.SetInputDataObject(1, serial)
    f.Update()
    return f.GetOutputDataObject(0)


def check(proxy, array, make, what):
    proxy.UpdatePipeline()
    image = proxy.GetClientSideObject().GetOutputDataObject(0)
    if rank != 0:
        expect(image.GetNumberOfPoints() == 0, what + ": other ranks output nothing")
        return
    reference = serial_run(make)
    present = array in dsa.WrapDataObject(image).PointData.keys() and array in dsa.WrapDataObject(reference).PointData.keys()
    expect(present and image.GetNumberOfPoints() == serial.GetNumberOfPoints(),
           what + ": rank 0 holds the whole image with %s" % array)
    if present:
        got = np.asarray(dsa.WrapDataObject(image).PointData[array])
        want = np.asarray(dsa.WrapDataObject(reference).PointData[array])
        expect(np.array_equal(got, want), what + ": equals the serial run")
        if array.endswith("Region"):
            expect((got >= 0).any(), what + ": some voxels are labelled")


def regions():
    f = topovox.vtkFeatureRegionsFilter()
    f.SetMinimumPersistence(15.0)
    return f


def simplification():
    f = topovox.vtkTopologicalSimplificationFilter()
    f.SetPersistenceThreshold(15.0)
    return f


def transport():
    f = topovox.vtkOptimalTransportFilter()
    f.SetReg(5.0)
    return f


fr = FeatureRegions(Input=wavelet)
fr.MinimumPersistence = 15.0
check(fr, "ComponentRegion", regions, "feature regions")
check(fr, "EnclosedRegion", regions, "feature regions (enclosed)")
ts = TopologicalSimplification(Input=wavelet)
ts.PersistenceThreshold = 15.0
check(ts, "RTData_Simplified", simplification, "topological simplification")
ot = OptimalTransport(Source=wavelet, Target=wavelet)
ot.Reg = 5.0
check(ot, "Displacement", transport, "optimal transport")

# A series of three densities (the Wavelet image raised to three powers),
# written by rank 0, read in pieces by every rank.
folder = comm.bcast(tempfile.mkdtemp(prefix="topovox-mpi-series-") if rank == 0 else None)
names = [os.path.join(folder, "density_%d.vti" % k) for k in range(3)]
if rank == 0:
    rt = np.asarray(dsa.WrapDataObject(serial).PointData["RTData"], dtype=float)
    for k, name in enumerate(names):
        frame = serial.NewInstance()
        frame.CopyStructure(serial)
        density = numpy_to_vtk((rt / rt.max()) ** (k + 1), deep=1)
        density.SetName("density")
        frame.GetPointData().SetScalars(density)
        writer = vtkXMLImageDataWriter()
        writer.SetDataModeToBinary()  # Debian's VTK 9.2 misreads some appended files it wrote
        writer.SetFileName(name)
        writer.SetInputData(frame)
        writer.Write()
comm.Barrier()
tt = OptimalTransportOverTime(Input=XMLImageDataReader(FileName=names))
tt.Reg = 5.0
tt.UpdatePipeline()
table = tt.GetClientSideObject().GetOutputDataObject(0)
if rank == 0:
    series = vtkFileSeriesReader()
    series.SetReader(vtkXMLImageDataReader())
    series.SetFileNameMethod("SetFileName")
    for name in names:
        series.AddFileName(name)
    f = topovox.vtkTemporalTransportFilter()
    f.SetReg(5.0)
    f.SetInputConnection(series.GetOutputPort())
    f.Update()
    want = dsa.WrapDataObject(f.GetOutput()).RowData["TransportCost"]
    got = dsa.WrapDataObject(table).RowData["TransportCost"]
    expect(got is not None and len(want) == 2 and np.array_equal(np.asarray(got), np.asarray(want)),
           "optimal transport over time: equals the serial run (%s, %s)" % (got, want))
else:
    expect(table.GetNumberOfRows() == 0, "optimal transport over time: other ranks output nothing")
cases = 5

report(cases)
# No sys.exit: pvbatch must finalize MPI itself. CTest reads the line above.
