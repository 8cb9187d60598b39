// ImageWriter.h - an image as a NumPy .npy file: the samples in the host's
// (little-endian) order, the shape numpy gives the input it came from (C
// order (nz, ny, nx), or Fortran order (nx, ny, nz) for a Fortran-ordered
// .npy input), 0/1 images as bool.
#pragma once

#include "Image.h"
#include "OutputFile.h"

#include <vector>

namespace topovox
{
namespace cli
{
// `asBool`: write the bytes (0/1) as numpy bool. The samples are copied on
// `threads` threads into a mapping of the output where it can be made
// (OutputFile::mapSized; a 512^3 float image is 512 MB), else written
// through its stream.
void writeImageNpy(OutputFile& out, const Image& image, bool asBool = false, int threads = 1);
// The same for samples held elsewhere than an Image (a kernel's own typed
// result): `layout`'s type and shape (its samples unused), `bytes` at
// `data`, written from there rather than copied into an image first.
void writeImageNpy(OutputFile& out, const Image& layout, const void* data, size_t bytes, bool asBool = false,
  int threads = 1);
// Any C-ordered array: numpy's shape (slowest axis first) and raw bytes in
// the host's order, typed by `type`; written as writeImageNpy's.
void writeArrayNpy(OutputFile& out, ScalarType type, const std::vector<int64_t>& shape, const void* data,
  size_t bytes, int threads = 1);
}
}
