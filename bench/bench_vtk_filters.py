"""Our morphology and distance filters against the VTK filters a ParaView
user has today, on the CPU of this machine, same input, same run (pvpython):

* grey erosion with a 3x3x3 box: vtkImageContinuousErode3D (KernelSize 3)
  against vtkGPUMorphologyFilter (grey_erosion, Device CPU);
* the exact squared Euclidean distance to the nearest zero voxel:
  vtkImageEuclideanDistance (Saito, as in VTK's defaults) against
  vtkGPUDistanceTransformFilter (Euclidean, Device CPU), whose distances
  squared must equal VTK's.

    PV_PLUGIN_PATH=<build>/lib/paraview-5.11/plugins/TopoVox \
    PYTHONPATH=<build>/lib/python3.11/site-packages \
        pvpython bench/bench_vtk_filters.py [N ...]

Prints a markdown table: input, operation, VTK s, ours s, speed-up, and
whether the results are equal. Timings are the best of 3 runs.
"""
import os
import sys
import time

import numpy as np
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkImagingGeneral import vtkImageEuclideanDistance

try:  # not in Debian's ParaView 5.11 build
    from vtkmodules.vtkImagingMorphological import vtkImageContinuousErode3D
except ImportError:
    vtkImageContinuousErode3D = None

import topovox


def image_of(values):
    image = vtkImageData()
    image.SetDimensions(*values.shape[::-1])
    array = numpy_to_vtk(np.ascontiguousarray(values).reshape(-1), deep=1)
    array.SetName("values")
    image.GetPointData().SetScalars(array)
    return image


def best(make, repeat=3):
    """Best wall time of `repeat` fresh updates, and the last filter."""
    times = []
    for _ in range(repeat):
        f = make()
        t0 = time.perf_counter()
        f.Update()
        times.append(time.perf_counter() - t0)
    return min(times), f


def main():
    sizes = [int(s) for s in sys.argv[1:]] or [128, 256]
    print("CPU threads: %d" % os.cpu_count())
    print("| input | operation | VTK s | ours s | speed-up | equal |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        rng = np.random.default_rng(0)
        grey = rng.integers(0, 255, size=(n, n, n), dtype=np.uint8)
        binary = (rng.random((n, n, n)) > 0.02).astype(np.uint8)  # 2% zero voxels: the features
        gimage, bimage = image_of(grey), image_of(binary)

        def vtk_erode():
            f = vtkImageContinuousErode3D()
            f.SetInputData(gimage)
            f.SetKernelSize(3, 3, 3)
            return f

        def our_erode():
            f = topovox.vtkGPUMorphologyFilter()
            f.SetInputData(gimage)
            f.SetOperation(topovox.vtkGPUMorphologyFilter.GREY_EROSION)
            f.SetStructureShape(topovox.vtkGPUMorphologyFilter.BOX)
            f.SetStructureSize(3, 3, 3)
            f.SetBorderMode(2)  # nearest: VTK's erosion ignores outside voxels
            f.SetDevice(1)
            return f

        if vtkImageContinuousErode3D is None:
            to, _ = best(our_erode)
            print("| %d^3 uint8 | grey erosion 3x3x3 | (vtkImageContinuousErode3D is not in this build) | %.3f "
                  "| - | - |" % (n, to), flush=True)
        else:
            tv, fv = best(vtk_erode)
            to, fo = best(our_erode)
            same = np.array_equal(vtk_to_numpy(fv.GetOutput().GetPointData().GetScalars()),
                                  vtk_to_numpy(fo.GetOutput().GetPointData().GetArray("Morphology")))
            print("| %d^3 uint8 | grey erosion 3x3x3 | %.3f | %.3f | %.1fx | %s |" % (n, tv, to, tv / to, same),
                  flush=True)

        def vtk_edt():
            f = vtkImageEuclideanDistance()
            f.SetInputData(bimage)
            f.SetAlgorithmToSaito()
            f.InitializeOn()
            return f

        def our_edt():
            f = topovox.vtkGPUDistanceTransformFilter()
            f.SetInputData(bimage)
            f.SetDevice(1)
            return f

        tv, fv = best(vtk_edt)
        to, fo = best(our_edt)
        d2 = vtk_to_numpy(fo.GetOutput().GetPointData().GetArray("Distance")) ** 2
        same = np.allclose(vtk_to_numpy(fv.GetOutput().GetPointData().GetScalars()), d2, rtol=1e-9, atol=1e-9)
        print("| %d^3 uint8, 2%% zeros | squared EDT | %.3f | %.3f | %.1fx | %s |" % (n, tv, to, tv / to, same),
              flush=True)


if __name__ == "__main__":
    main()
