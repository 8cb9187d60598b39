"""MPI: `mpirun -np N pvbatch --symmetric test_mpi_persistence.py N`.

The diagram must appear on rank 0 only and equal CubicalRipser's on the
whole image (computed on rank 0 from a serial copy of the Wavelet), for
point and cell data, V and T, sublevel and superlevel.
"""
import collections

import numpy as np

from mpi_checks import comm, expect, expect_ranks, rank, report, size
from wavelet_oracle import wavelet_images
from paraview.simple import PersistenceDiagram, PointDatatoCellData, Wavelet

try:
    import cripser
    import tcripser
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
                superlevel = filtration == "Superlevel"
                data = (-image if superlevel else image).astype(np.float64)
                ph = (cripser if construction == "V" else tcripser).computePH(data)
                sign = -1.0 if superlevel else 1.0
                want = collections.Counter(
                    (int(r[0]), sign * r[1], sign * (np.inf if r[2] > 1e300 else r[2]))
                    for r in ph if r[1] != r[2])
                cols = {table.GetColumnName(i): table.GetColumn(i) for i in range(table.GetNumberOfColumns())}
                got = collections.Counter(
                    (cols["Dimension"].GetValue(j), cols["Birth"].GetValue(j), cols["Death"].GetValue(j))
                    for j in range(table.GetNumberOfRows()))
                expect(got == want, what + ": pairs equal cripser's")
    report(cases)
