"""The CT head volume shipped with TopoVox (Testing/Data/headsq_64x64x93:
int16, 64x64x93, VTKData BSD) opened with ParaView's raw image reader: what
the demo scripts start from."""
import gzip
import json
import os
import shutil

from paraview.simple import ImageReader

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Testing", "Data")


def open_headsq(out_dir):
    """(reader, sidecar, raw_path): the volume uncompressed into out_dir
    (remove raw_path when done) and a reader for it, array "ImageFile"."""
    meta = json.load(open(os.path.join(DATA_DIR, "headsq_64x64x93.json")))
    raw_path = os.path.join(out_dir, "headsq_64x64x93.raw")
    with gzip.open(os.path.join(DATA_DIR, meta["file"])) as src, open(raw_path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    nx, ny, nz = meta["dims"]
    reader = ImageReader(FileNames=[raw_path])
    reader.DataScalarType = "short"
    reader.DataByteOrder = "LittleEndian"
    reader.DataExtent = [0, nx - 1, 0, ny - 1, 0, nz - 1]
    reader.DataSpacing = meta["spacing"]
    return reader, meta, raw_path
