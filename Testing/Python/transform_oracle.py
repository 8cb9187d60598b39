"""The Euler characteristic transform's oracle for the ParaView tests:
scikit-image's euler_number on the voxel masks {h <= t}, h the height image
w * X + alpha * <u, p> computed here with numpy (p = origin + spacing * index,
axes z, y, x as numpy holds them). In V a cell is in a sublevel set when all
its vertices are (euler_number with connectivity 1); in T when one of its
cubes is (connectivity = ndim)."""
import numpy as np
from skimage.measure import euler_number


def heights(image, u, origin, spacing, weight=0.0, alpha=1.0, shape_level=None):
    """h per voxel (NaN outside the shape), image axes (z, y, x)."""
    z, y, x = np.meshgrid(*[np.arange(n, dtype=np.float64) for n in image.shape], indexing="ij")
    p = [origin[0] + spacing[0] * x, origin[1] + spacing[1] * y, origin[2] + spacing[2] * z]
    along = u[0] * p[0] + u[1] * p[1] + u[2] * p[2]
    h = (weight * image.astype(np.float64) if weight != 0 else 0.0) + alpha * along
    h = np.where(np.isnan(image), np.nan, h)
    if shape_level is not None:
        h = np.where(image >= shape_level, h, np.nan)
    return h


def transform_oracle(image, directions, thresholds, construction, **kw):
    """chi[direction][threshold], by skimage, for the squeezed image."""
    out = []
    for u in directions:
        h = heights(image, u, **kw)
        hs = np.squeeze(h)
        connectivity = 1 if construction == "V" else hs.ndim
        out.append([int(euler_number(np.nan_to_num(hs, nan=np.inf) <= t, connectivity=connectivity))
                    for t in thresholds])
    return out
