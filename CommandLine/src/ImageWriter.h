// ImageWriter.h - an image as a NumPy .npy file: the samples in the host's
// (little-endian) order, the shape numpy gives the input it came from (C
// order (nz, ny, nx), or Fortran order (nx, ny, nz) for a Fortran-ordered
// .npy input), 0/1 images as bool.
#pragma once

#include "Image.h"

#include <cstdio>
#include <vector>

namespace topovox
{
namespace cli
{
// `asBool`: write the bytes (0/1) as numpy bool.
void writeImageNpy(FILE* out, const Image& image, bool asBool = false);
// Any C-ordered array: numpy's shape (slowest axis first) and raw bytes in
// the host's order, typed by `type`.
void writeArrayNpy(FILE* out, ScalarType type, const std::vector<int64_t>& shape, const void* data, size_t bytes);
}
}
