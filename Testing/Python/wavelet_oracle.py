"""Serial copies of the Wavelet image that the MPI tests split across
ranks: the oracles compare the distributed result with a computation on
these, made on one rank with plain VTK."""
from vtk.numpy_interface import dataset_adapter as dsa
from vtkmodules.vtkFiltersCore import vtkPointDataToCellData
from vtkmodules.vtkImagingCore import vtkRTAnalyticSource


def wavelet_images(extent):
    """(point_image, cell_image): RTData of vtkRTAnalyticSource over `extent`
    as numpy arrays (z, y, x), and its point-to-cell average, as ParaView's
    Wavelet and Point Data to Cell Data produce them."""
    source = vtkRTAnalyticSource()
    source.SetWholeExtent(*extent)
    source.Update()
    dims = [extent[1] - extent[0] + 1, extent[3] - extent[2] + 1, extent[5] - extent[4] + 1]
    points = dsa.WrapDataObject(source.GetOutput()).PointData["RTData"].reshape(dims[::-1])
    to_cells = vtkPointDataToCellData()
    to_cells.SetInputConnection(source.GetOutputPort())
    to_cells.Update()
    cells = dsa.WrapDataObject(to_cells.GetOutput()).CellData["RTData"].reshape(
        [d - 1 for d in dims[::-1]])
    return points, cells
