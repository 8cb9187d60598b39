// Image.h - an image read from a file: its samples in native byte order,
// x varying fastest, owned by this struct; GridView views it for the kernels.
#pragma once

#include "topovox/Grid.h"
#include "topovox/UninitializedAllocator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{
namespace cli
{

// An image's samples. New bytes are left unwritten (a reader or a kernel
// writes every one, on its threads) and large blocks sit on huge pages:
// the kernels' own result type (Morphology.h's GreyImage and BinaryImage
// are this vector), so a result becomes an Image's samples without a copy.
using SampleBytes = UninitializedVector<unsigned char>;

struct Image
{
  ScalarType type = ScalarType::UInt8;
  int axes = 0;                       // axes the file describes (1..3)
  int64_t dims[3] = { 1, 1, 1 };      // samples per axis, x first
  double spacing[3] = { 1, 1, 1 };    // from a sidecar; 1 when unknown
  // How numpy sees the samples: false (C order, raw files and sidecars) for
  // an array of shape (nz, ny, nx), true for a Fortran-ordered .npy, which
  // np.load returns with shape (nx, ny, nz). Only outputs that name voxels
  // by numpy index (persistence --format cripser) need it.
  bool fortranOrder = false;
  // A 4D .npy read for --batch (numpy shape (n, z, y, x), C order): the n
  // volumes one after the other, held as dims (x, y, n z) with stack = n;
  // 0 for everything else.
  int64_t stack = 0;
  // The samples. Their allocator returns memory aligned for any
  // fundamental type, so the bytes can be read as any ScalarType.
  SampleBytes bytes;

  int64_t voxelCount() const { return dims[0] * dims[1] * dims[2]; }
  // The same image description with no samples: what a command's result
  // starts from (copying the input's bytes first would cost a copy of the
  // whole input, hundreds of megabytes for a large volume).
  Image withoutSamples() const
  {
    Image out;
    out.type = type;
    out.axes = axes;
    out.fortranOrder = fortranOrder;
    out.stack = stack;
    for (int a = 0; a < 3; ++a)
    {
      out.dims[a] = dims[a];
      out.spacing[a] = spacing[a];
    }
    return out;
  }
  GridView view() const
  {
    return GridView::contiguous(bytes.data(), type, dims[0], dims[1], dims[2]);
  }
  // "256x256x128 uint8"
  std::string describe() const;
};

// Checks a list of 1..3 axis lengths and returns the number of bytes an
// image of `type` with them occupies. Throws Error, naming `what` (a file,
// an option), when an axis is not positive or the size overflows.
int64_t imageByteCount(const std::vector<int64_t>& dims, ScalarType type, const std::string& what);

// Formats dims as "256x256x128".
std::string formatDims(const std::vector<int64_t>& dims);

} // namespace cli
} // namespace topovox
