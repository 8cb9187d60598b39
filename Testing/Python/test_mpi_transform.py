"""MPI: `mpirun -np N pvbatch --symmetric test_mpi_transform.py N`.

Every rank runs the Euler transform on its own piece of the Wavelet image;
the transform must appear on rank 0 only and equal scikit-image's on the
whole image (transform_oracle.py, computed on rank 0 from a serial copy),
for point and cell data, V and T, a shape level and a weighted image.
"""

from vtk.numpy_interface import dataset_adapter as dsa

from mpi_checks import expect, expect_ranks, rank, report
from wavelet_oracle import wavelet_images
from transform_oracle import transform_oracle
from paraview.simple import EulerCharacteristicTransform, PointDatatoCellData, Wavelet

expect_ranks()
extent = [-9, 9, -8, 8, -5, 5]
if rank == 0:
    point_image, cell_image = wavelet_images(extent)
wavelet = Wavelet()
wavelet.WholeExtent = extent
cells = PointDatatoCellData(Input=wavelet)
cases = 0
for association, producer in (("POINTS", wavelet), ("CELLS", cells)):
    for construction, label in (("V", "V (voxels are vertices)"), ("T", "T (voxels are cubes)")):
        for shape in (None, 160.0):
            cases += 1
            what = "%s %s shape %s" % (association, construction, shape)
            et = EulerCharacteristicTransform(Input=producer)
            et.Scalars = [association, "RTData"]
            et.Construction = label
            et.NumberOfDirections = 6
            et.NumberOfBins = 10
            if shape is None:
                et.Weight = 0.25
            else:
                et.UseShapeLevel = 1
                et.ShapeLevel = shape
            et.UpdatePipeline()
            table = et.GetClientSideObject().GetOutputDataObject(0)
            if rank != 0:
                expect(table.GetNumberOfRows() == 0, what + ": other ranks output nothing")
                continue
            directions = dsa.WrapDataObject(table).FieldData["Directions"]
            thresholds = [table.GetColumnByName("Threshold").GetValue(j) for j in range(table.GetNumberOfRows())]
            got = [[table.GetColumn(1 + d).GetValue(j) for j in range(len(thresholds))]
                   for d in range(len(directions))]
            image = point_image if association == "POINTS" else cell_image
            half = 0.5 if association == "CELLS" else 0.0
            origin = [extent[0] + half, extent[2] + half, extent[4] + half]
            kw = dict(weight=0.25) if shape is None else dict(shape_level=shape)
            want = transform_oracle(image, directions, thresholds, construction, origin=origin,
                                    spacing=[1.0, 1.0, 1.0], **kw)
            expect(len(thresholds) == 10 and got == want, what + ": equals skimage")
report(cases)
