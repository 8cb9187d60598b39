"""Writes the .vti fixtures of test_cli_vti.py with VTK's own writer (run with
pvpython from this folder; the files are committed, so tests need no VTK)."""
import numpy as np
from vtkmodules.vtkCommonDataModel import vtkImageData
from vtkmodules.vtkIOXML import vtkXMLImageDataWriter
from vtkmodules.util.numpy_support import numpy_to_vtk

rng = np.random.default_rng(0)


def image(values, cells=False, spacing=(0.5, 1.0, 2.0), comps=1):
    img = vtkImageData()
    shape = values.shape[:3] if comps == 1 else values.shape[:3]
    nz, ny, nx = shape
    img.SetDimensions(nx + cells, ny + cells, nz + cells) if nz > 1 else img.SetDimensions(nx + cells, ny + cells, 1)
    img.SetSpacing(*spacing)
    arr = numpy_to_vtk(values.reshape(-1, comps) if comps > 1 else values.ravel(), deep=1)
    arr.SetName("v")
    (img.GetCellData() if cells else img.GetPointData()).SetScalars(arr)
    return img


def write(img, name, mode, encode=True, comp="none", header=32, big=False, pieces=1):
    w = vtkXMLImageDataWriter()
    w.SetInputData(img)
    w.SetFileName(name)
    {"ascii": w.SetDataModeToAscii, "binary": w.SetDataModeToBinary, "appended": w.SetDataModeToAppended}[mode]()
    w.SetEncodeAppendedData(encode)
    {"none": w.SetCompressorTypeToNone, "zlib": w.SetCompressorTypeToZLib, "lz4": w.SetCompressorTypeToLZ4}[comp]()
    w.SetBlockSize(16)
    w.SetHeaderTypeToUInt32() if header == 32 else w.SetHeaderTypeToUInt64()
    if big:
        w.SetByteOrderToBigEndian()
    w.SetNumberOfPieces(pieces)
    w.Write()


a = rng.integers(-1000, 1000, size=(3, 4, 5)).astype(np.int16)
np.save("int16_5x4x3.npy", a)
img = image(a)
write(img, "int16_ascii.vti", "ascii")
write(img, "int16_binary_zlib32.vti", "binary", comp="zlib")
write(img, "int16_binary_none64.vti", "binary", header=64)
write(img, "int16_appended_raw_none32.vti", "appended", encode=False)
write(img, "int16_appended_raw_zlib64.vti", "appended", encode=False, comp="zlib", header=64)
write(img, "int16_appended_b64_zlib32.vti", "appended", comp="zlib")
write(img, "int16_appended_b64_none64.vti", "appended", header=64)
write(img, "int16_bigendian_raw_zlib32.vti", "appended", encode=False, comp="zlib", big=True)
f = rng.random((4, 6, 7))
np.save("float64_cells_7x6x4.npy", f)
write(image(f, cells=True), "float64_cells.vti", "appended", encode=False, comp="zlib")
g = rng.random((1, 9, 8)).astype(np.float32)
np.save("float32_8x9.npy", g[0])
write(image(g), "float32_2d.vti", "binary")
# Refused: two components, two pieces, LZ4.
write(image(rng.random((2, 3, 4, 2)), comps=2), "bad_two_components.vti", "ascii")
write(img, "bad_two_pieces.vti", "appended", encode=False, pieces=2)
write(img, "bad_lz4.vti", "appended", encode=False, comp="lz4")
