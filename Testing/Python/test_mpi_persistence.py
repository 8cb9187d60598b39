"""MPI: `mpirun -np N pvbatch --symmetric test_mpi_persistence.py N`.

The diagram must appear on rank 0 only and equal CubicalRipser's on the
whole image (computed on rank 0 from a serial copy of the Wavelet), for
point and cell data, V and T, sublevel and superlevel. The batch filter on
a multiblock whose images are spread over the ranks (image k on rank
k mod N) must give rank 0 every image's pairs, each equal to cripser's, and
so must its run over a file series that every rank reads step by step.
"""
import collections
import os
import tempfile

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk
from vtkmodules.vtkCommonDataModel import vtkImageData, vtkMultiBlockDataSet
from vtkmodules.vtkIOXML import vtkXMLImageDataWriter

import topovox
from checks import cripser_pairs, image_of
from mpi_checks import comm, expect, expect_ranks, rank, report, size
from wavelet_oracle import wavelet_images
from paraview.simple import (PersistenceDiagram, PersistenceDiagramsOfManyImages, PointDatatoCellData, Wavelet,
                             XMLImageDataReader)

try:
    import cripser  # noqa: F401 (the oracle is there)
    import tcripser  # noqa: F401
    have_oracle = True
except ImportError:
    have_oracle = False
have_oracle = comm.allreduce(1 if have_oracle else 0) == size
if not have_oracle:
    if rank == 0:
        print("SKIP: cripser is not installed", flush=True)
else:
    expect_ranks()
    extent = [-9, 9, -8, 8, -5, 5]
    if rank == 0:
        point_image, cell_image = wavelet_images(extent)

    wavelet = Wavelet()
    wavelet.WholeExtent = extent
    cells = PointDatatoCellData(Input=wavelet)
    cases = 0
    for association, producer in (("POINTS", wavelet), ("CELLS", cells)):
        for construction in ("V", "T"):
            for filtration in ("Sublevel", "Superlevel"):
                cases += 1
                what = "%s %s %s" % (association, construction, filtration)
                pd = PersistenceDiagram(Input=producer)
                pd.Scalars = [association, "RTData"]
                pd.Construction = ("V (voxels are vertices)" if construction == "V"
                                   else "T (voxels are cubes)")
                pd.Filtration = filtration
                pd.UpdatePipeline()
                table = pd.GetClientSideObject().GetOutputDataObject(1)
                if rank != 0:
                    expect(table.GetNumberOfRows() == 0, what + ": other ranks output nothing")
                    continue
                image = point_image if association == "POINTS" else cell_image
                want = cripser_pairs(image, construction, filtration == "Superlevel")
                cols = {table.GetColumnName(i): table.GetColumn(i) for i in range(table.GetNumberOfColumns())}
                got = collections.Counter(
                    (cols["Dimension"].GetValue(j), cols["Birth"].GetValue(j), cols["Death"].GetValue(j))
                    for j in range(table.GetNumberOfRows()))
                expect(got == want, what + ": pairs equal cripser's")

    # Many images, spread over the ranks, in one batch.
    rng = np.random.default_rng(8)
    images = [rng.random(shape) for shape in ((7, 9), (5, 6, 4), (11, 3), (4, 4, 4), (8,), (6, 5))]
    blocks = vtkMultiBlockDataSet()
    blocks.SetNumberOfBlocks(len(images))
    for k, values in enumerate(images):
        if k % size == rank:
            image = vtkImageData()
            image.SetDimensions(*(list(values.shape[::-1]) + [1] * (3 - values.ndim)))
            array = numpy_to_vtk(values.reshape(-1), deep=1)
            array.SetName("f")
            image.GetPointData().SetScalars(array)
            blocks.SetBlock(k, image)
    batch = topovox.vtkPersistenceBatchFilter()
    batch.SetInputDataObject(0, blocks)
    batch.UpdatePiece(rank, size, 0)
    table = batch.GetOutputDataObject(0)
    cases += 1
    if rank != 0:
        expect(table.GetNumberOfRows() == 0, "batch: other ranks output nothing")
    else:
        cols = {table.GetColumnName(i): table.GetColumn(i) for i in range(table.GetNumberOfColumns())}
        rows = range(table.GetNumberOfRows())
        for k, values in enumerate(images):
            got = collections.Counter(
                (cols["Dimension"].GetValue(j), cols["Birth"].GetValue(j), cols["Death"].GetValue(j))
                for j in rows if cols["Image"].GetValue(j) == k)
            expect(got == cripser_pairs(values, "V", False), "batch: image %d (rank %d) equals cripser" % (k, k % size))
        expect(batch.GetOutputDataObject(1).GetNumberOfRows() == len(images), "batch: one summary row per image")

    # A series of three volumes in files, written by rank 0, read step by
    # step in pieces by every rank; the batch on rank 0.
    frames = [rng.random((6, 7, 5)) for _ in range(3)]
    folder = comm.bcast(tempfile.mkdtemp(prefix="topovox-mpi-batch-") if rank == 0 else None)
    names = [os.path.join(folder, "f_%d.vti" % k) for k in range(3)]
    if rank == 0:
        for name, frame in zip(names, frames):
            writer = vtkXMLImageDataWriter()
            writer.SetDataModeToBinary()  # Debian's VTK 9.2 misreads some appended files it wrote
            writer.SetFileName(name)
            writer.SetInputData(image_of(frame, name="f"))
            writer.Write()
    comm.Barrier()
    series = PersistenceDiagramsOfManyImages(Input=XMLImageDataReader(FileName=names))
    series.UpdatePipeline()
    table = series.GetClientSideObject().GetOutputDataObject(0)
    cases += 1
    if rank != 0:
        expect(table.GetNumberOfRows() == 0, "series batch: other ranks output nothing")
    else:
        cols = {table.GetColumnName(i): table.GetColumn(i) for i in range(table.GetNumberOfColumns())}
        for k, frame in enumerate(frames):
            got = collections.Counter(
                (cols["Dimension"].GetValue(j), cols["Birth"].GetValue(j), cols["Death"].GetValue(j))
                for j in range(table.GetNumberOfRows()) if cols["Image"].GetValue(j) == k)
            expect(got == cripser_pairs(frame, "V", False), "series batch: step %d equals cripser" % k)
    report(cases)
