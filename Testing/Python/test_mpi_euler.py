"""MPI: `mpirun -np N pvbatch --symmetric test_mpi_euler.py N`.

Every rank runs the same pipeline on its own piece of the Wavelet image; the
curve must appear on rank 0 only and equal scikit-image's euler_number on the
whole image (computed serially on rank 0), for point data and cell data, V and
T, sublevel and superlevel, exact and binned thresholds. With N > 1 the test
also checks that rank 0 really read only a piece, i.e. that the work was split.
"""

import numpy as np
from skimage.measure import euler_number

from mpi_checks import expect, expect_ranks, rank, report, size
from wavelet_oracle import wavelet_images
from paraview.simple import EulerCharacteristicCurve, PointDatatoCellData, Wavelet

expect_ranks()
extent = [-16, 16, -13, 13, -9, 9]

# Serial oracle images on rank 0.
if rank == 0:
    point_image, cell_image = wavelet_images(extent)

wavelet = Wavelet()
wavelet.WholeExtent = extent
cells = PointDatatoCellData(Input=wavelet)

cases = []
for association, producer in (("POINTS", wavelet), ("CELLS", cells)):
    for construction in ("V", "T"):
        for filtration in ("Sublevel", "Superlevel"):
            for mode in ("Exact", "Bins"):
                cases.append((association, producer, construction, filtration, mode))

for association, producer, construction, filtration, mode in cases:
    what = "%s %s %s %s" % (association, construction, filtration, mode)
    curve = EulerCharacteristicCurve(Input=producer)
    curve.Scalars = [association, "RTData"]
    curve.Construction = ("V (voxels are vertices)" if construction == "V"
                          else "T (voxels are cubes)")
    curve.Filtration = filtration
    curve.ThresholdMode = mode
    curve.NumberOfBins = 64
    curve.UpdatePipeline()
    algorithm = curve.GetClientSideObject()
    table = algorithm.GetOutputDataObject(0)
    rows = table.GetNumberOfRows()
    if rank != 0:
        expect(rows == 0, what + ": ranks other than 0 output nothing")
        continue
    if size > 1:
        piece = algorithm.GetInputDataObject(0, 0).GetExtent()
        expect(list(piece) != extent, what + ": rank 0 read only its piece")
    image = point_image if association == "POINTS" else cell_image
    thresholds = np.array([table.GetColumn(0).GetValue(j) for j in range(rows)])
    chi = [table.GetColumnByName("EulerCharacteristic").GetValue(j) for j in range(rows)]
    if mode == "Exact":
        distinct = np.unique(image)
        expect(np.array_equal(np.sort(thresholds), distinct), what + ": thresholds = distinct values")
        picks = list(range(0, rows, max(1, rows // 40))) + [rows - 1]
    else:
        expect(rows == 64, what + ": 64 thresholds")
        picks = list(range(rows))
    connectivity = 1 if construction == "V" else 3
    for j in picks:
        mask = image >= thresholds[j] if filtration == "Superlevel" else image <= thresholds[j]
        want = euler_number(mask, connectivity=connectivity)
        if chi[j] != want:
            expect(False, "%s: chi(%g) = %d, skimage %d" % (what, thresholds[j], chi[j], want))
            break

report(len(cases))
# No sys.exit: pvbatch must finalize MPI itself. CTest reads the line above.
