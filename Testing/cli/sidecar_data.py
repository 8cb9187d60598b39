"""The images and volumes of Testing/Data, read with numpy alone (the tests'
independent path to the same voxels the tool reads through its sidecar
reader)."""
import gzip
import json
import os

import numpy as np


def load_sidecar(json_path):
    """(volume, meta): the voxels of a .json sidecar's raw file as a numpy
    array of shape (nz, ny, nx) (x fastest, as stored) in native byte order,
    and the sidecar's fields."""
    with open(json_path) as f:
        meta = json.load(f)
    raw = os.path.join(os.path.dirname(json_path), meta["file"])
    dtype = np.dtype(meta["dtype"]).newbyteorder("<" if meta["byte_order"] == "little" else ">")
    opener = gzip.open if raw.endswith(".gz") else open
    with opener(raw, "rb") as f:
        data = np.frombuffer(f.read(), dtype=dtype)
    return data.reshape(meta["dims"][::-1]).astype(dtype.newbyteorder("=")), meta
