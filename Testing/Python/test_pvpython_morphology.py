"""pvpython: the Morphology proxy (vtkGPUMorphologyFilter) against
scipy.ndimage on the Wavelet: binary operators on a thresholded RTData (a
foreground range), grey operators on RTData itself, every element shape,
modes, origins, iterations and a mask input; arrays compared exactly.
"""
import sys

import numpy as np
import scipy.ndimage as ndi
from vtk.numpy_interface import dataset_adapter as dsa

from paraview import servermanager as sm
from paraview.simple import Calculator, Morphology, Wavelet

failures = []


def expect(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)


wavelet = Wavelet()
wavelet.WholeExtent = [-7, 7, -6, 6, -5, 5]
wavelet.UpdatePipeline()
shape = (11, 13, 15)  # z, y, x
rt = np.array(dsa.WrapDataObject(sm.Fetch(wavelet)).PointData["RTData"]).reshape(shape)
fg = (rt >= 120) & (rt <= 200)


def run(**props):
    m = Morphology(Input=wavelet)
    for k, v in props.items():
        setattr(m, k, v)
    m.UpdatePipeline()
    return np.array(dsa.WrapDataObject(sm.Fetch(m)).PointData["Morphology"]).reshape(shape)


def cross(conn, radius):
    return ndi.iterate_structure(ndi.generate_binary_structure(3, conn), radius)


z, y, x = np.indices((5, 5, 5)) - 2
ball = x * x + y * y + z * z <= 4

binary = dict(UseForegroundRange=1, ForegroundRange=[120, 200])
for op in ("binary_erosion", "binary_dilation", "binary_opening", "binary_closing"):
    f = getattr(ndi, op)
    got = run(Operation=op, StructureShape="Cross (connectivity)", Connectivity=2, Radius=1, Iterations=2, **binary)
    expect(np.array_equal(got, f(fg, structure=cross(2, 1), iterations=2)), op + ", cross 2, 2 iterations")
    got = run(Operation=op, StructureShape="Ball (radius)", Radius=2, **binary)
    expect(np.array_equal(got, f(fg, structure=ball)), op + ", ball of radius 2")
    got = run(Operation=op, StructureShape="Box", StructureSize=[4, 3, 2], Origin=[1, 0, -1], **binary)
    expect(np.array_equal(got, f(fg, structure=np.ones((2, 3, 4), bool), origin=(-1, 0, 1))),
           op + ", even box with an origin")
expect(np.array_equal(run(Operation="binary_fill_holes", **binary), ndi.binary_fill_holes(fg)), "binary_fill_holes")

for op in ("grey_erosion", "grey_dilation", "grey_opening", "white_tophat", "morphological_laplace"):
    f = getattr(ndi, op)
    for mode in ("reflect", "mirror", "nearest", "wrap", "constant"):
        got = run(Operation=op, StructureShape="Box", StructureSize=[3, 2, 4], BorderMode=mode, ConstantValue=100.0)
        expect(np.array_equal(got, f(rt, size=(4, 2, 3), mode=mode, cval=100.0)), "%s, box, %s" % (op, mode))
    got = run(Operation=op, StructureShape="Ball (radius)", Radius=2, BorderMode="nearest")
    expect(np.array_equal(got, f(rt, footprint=ball, mode="nearest")), op + ", ball footprint")

# The mask input: propagation inside it.
mask = Calculator(Input=wavelet, Function="RTData > 100", ResultArrayName="inside")
seed = Morphology(Input=wavelet, Mask=mask, Operation="binary_propagation", UseForegroundRange=1,
                         ForegroundRange=[250, 300], StructureShape="Cross (connectivity)", Connectivity=3)
seed.UpdatePipeline()
got = np.array(dsa.WrapDataObject(sm.Fetch(seed)).PointData["Morphology"]).reshape(shape)
want = ndi.binary_propagation((rt >= 250) & (rt <= 300), structure=cross(3, 1), mask=rt > 100)
expect(np.array_equal(got, want), "binary_propagation inside a mask input")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
