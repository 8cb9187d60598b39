"""MPI: `mpirun -np N pvbatch --symmetric test_mpi_morphology.py N`.

Every rank runs Morphology and Distance Transform on its piece of the
Wavelet image. Local operators (erosion, opening, grey operators with the
reflect, nearest and constant modes, iterations) must give, on every rank,
its piece of scipy.ndimage's result on the whole image (each piece read a
halo around itself); global ones (hole filling, propagation, the wrap mode,
the exact distance transform) appear whole on rank 0, equal to scipy's, and
empty elsewhere.
"""

import numpy as np
import scipy.ndimage as ndi
from vtk.numpy_interface import dataset_adapter as dsa

from mpi_checks import expect, expect_ranks, rank, report, size
from wavelet_oracle import wavelet_images
from paraview.simple import DistanceTransform, Morphology, Wavelet

expect_ranks()
extent = [-9, 9, -8, 8, -6, 6]
rt, _ = wavelet_images(extent)  # every rank: the whole image, for the oracle
fg = (rt >= 120) & (rt <= 200)
wavelet = Wavelet()
wavelet.WholeExtent = extent

z, y, x = np.indices((5, 5, 5)) - 2
ball = x * x + y * y + z * z <= 4
cross = ndi.iterate_structure(ndi.generate_binary_structure(3, 1), 2)
binary = dict(UseForegroundRange=1, ForegroundRange=[120, 200])
# (what, proxy properties, scipy's result on the whole image, local?)
cases = [
    ("binary_erosion ball, 2 iterations",
     dict(Operation="binary_erosion", StructureShape="Ball (radius)", Radius=2, Iterations=2, **binary),
     ndi.binary_erosion(fg, structure=ball, iterations=2), True),
    ("binary_opening even box with origin",
     dict(Operation="binary_opening", StructureShape="Box", StructureSize=[4, 3, 2], Origin=[1, 0, -1], **binary),
     ndi.binary_opening(fg, structure=np.ones((2, 3, 4), bool), origin=(-1, 0, 1)), True),
    ("binary_closing cross radius 2",
     dict(Operation="binary_closing", StructureShape="Cross (connectivity)", Connectivity=1, Radius=2, **binary),
     ndi.binary_closing(fg, structure=cross), True),
    ("grey_erosion box, reflect",
     dict(Operation="grey_erosion", StructureShape="Box", StructureSize=[3, 2, 4]),
     ndi.grey_erosion(rt, size=(4, 2, 3)), True),
    ("grey_opening ball, nearest",
     dict(Operation="grey_opening", StructureShape="Ball (radius)", Radius=2, BorderMode="nearest"),
     ndi.grey_opening(rt, footprint=ball, mode="nearest"), True),
    ("morphological_gradient box, constant",
     dict(Operation="morphological_gradient", StructureShape="Box", StructureSize=[3, 3, 3], BorderMode="constant",
          ConstantValue=90.0),
     ndi.morphological_gradient(rt, size=(3, 3, 3), mode="constant", cval=90.0), True),
    ("grey_dilation box, wrap (global)",
     dict(Operation="grey_dilation", StructureShape="Box", StructureSize=[3, 3, 3], BorderMode="wrap"),
     ndi.grey_dilation(rt, size=(3, 3, 3), mode="wrap"), False),
    ("binary_fill_holes (global)", dict(Operation="binary_fill_holes", **binary), ndi.binary_fill_holes(fg), False),
]


def piece_of(data, image):
    """The part of a whole-image array that `image` (a local piece) covers."""
    e = image.GetExtent()
    return data[e[4] - extent[4]:e[5] - extent[4] + 1, e[2] - extent[2]:e[3] - extent[2] + 1,
                e[0] - extent[0]:e[1] - extent[0] + 1]


def check(proxy, array, want, local, what):
    proxy.UpdatePipeline()
    image = proxy.GetClientSideObject().GetOutputDataObject(0)
    if not local and rank != 0:
        expect(image.GetNumberOfPoints() == 0, what + ": other ranks output nothing")
        return
    got = dsa.WrapDataObject(image).PointData[array]
    e = image.GetExtent()
    shape = (e[5] - e[4] + 1, e[3] - e[2] + 1, e[1] - e[0] + 1)
    expect(image.GetNumberOfPoints() > 0, what + ": this rank has its piece")
    if image.GetNumberOfPoints() == 0:
        return
    got = np.array(got).reshape(shape)
    expect(np.array_equal(got, piece_of(want, image)), what + ": equals scipy on extent %s" % (e,))
    if local and size > 1:
        # A real piece, not the whole image: the halo was needed.
        expect(image.GetNumberOfPoints() < want.size, what + ": a piece smaller than the image")


for what, props, want, local in cases:
    m = Morphology(Input=wavelet)
    for k, v in props.items():
        setattr(m, k, v)
    check(m, "Morphology", want, local, what)
edt = DistanceTransform(Input=wavelet)
edt.UseForegroundRange = 1
edt.ForegroundRange = [120, 200]
check(edt, "Distance", ndi.distance_transform_edt(fg), False, "distance_transform_edt (global)")

report(len(cases) + 1)
# No sys.exit: pvbatch must finalize MPI itself. CTest reads the line above.
