// NpyReader.h - NumPy .npy files (format versions 1.0, 2.0 and 3.0), also
// gzip-compressed (.npy.gz). Numeric dtypes i1..u8, f4, f8 and bool (read as
// uint8), either byte order, C or Fortran order, 1 to 3 axes.
//
// Axis order: numpy's shape lists the slowest axis first in C order, so a
// C-ordered array of shape (nz, ny, nx) is an image with x fastest and dims
// (nx, ny, nz) = the reversed shape. In Fortran order the first axis varies
// fastest and dims = shape. Either way the bytes need no reordering.
#pragma once

#include "Image.h"

#include <string>

namespace topovox
{
namespace cli
{

// Whether the file starts with the .npy magic string (after gunzipping).
bool hasNpyMagic(const std::string& path);

// Throws Error naming the file and the reason. `stacks`: a C-ordered 4D
// array (n, z, y, x) is accepted as n volumes (Image::stack).
Image readNpy(const std::string& path, bool stacks = false);

} // namespace cli
} // namespace topovox
