// Grid.h - a non-owning view of a 1D/2D/3D image over plain buffers.
//
// The Kernels library never owns or copies the caller's image unless an
// algorithm needs to (e.g. to stage it on the GPU). A GridView says where the
// samples are (host or device memory), their scalar type, the number of
// samples per axis and the distance between neighbours per axis, in elements.
// Axis 0 (x) varies fastest in a C-ordered VTK image: strides {1, nx, nx*ny}.
#pragma once

#include <cstdint>
#include <string>

namespace topovox
{

// Every scalar type VTK images carry. The numbering is ours, not VTK's.
enum class ScalarType : int
{
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float32,
  Float64
};

const char* scalarTypeName(ScalarType t);
std::size_t scalarTypeSize(ScalarType t);
bool scalarTypeIsFloating(ScalarType t);
// Parses "uint8", "float32", "f4", "<u2"-style names; returns false if unknown.
bool parseScalarType(const std::string& name, ScalarType& out);

enum class MemorySpace : int
{
  Host,
  Device // a CUDA device pointer (only meaningful to the GPU path)
};

// An axis-aligned box of voxel indices [lo, hi) inside a GridView.
struct Box
{
  int64_t lo[3] = { 0, 0, 0 };
  int64_t hi[3] = { 0, 0, 0 };
  int64_t count() const
  {
    int64_t n = 1;
    for (int a = 0; a < 3; ++a)
      n *= (hi[a] > lo[a] ? hi[a] - lo[a] : 0);
    return n;
  }
};

struct GridView
{
  const void* data = nullptr;
  ScalarType type = ScalarType::Float32;
  MemorySpace memory = MemorySpace::Host;
  int64_t dims[3] = { 1, 1, 1 };    // samples per axis; unused axes have 1
  int64_t strides[3] = { 1, 1, 1 }; // in elements, may be any positive value

  int64_t voxelCount() const { return dims[0] * dims[1] * dims[2]; }
  bool isContiguous() const
  {
    return strides[0] == 1 && (dims[1] == 1 || strides[1] == dims[0]) &&
      (dims[2] == 1 || strides[2] == dims[0] * dims[1]);
  }
  // Number of axes with more than one sample: the image's dimension.
  int dimension() const
  {
    int d = 0;
    for (int a = 0; a < 3; ++a)
      d += dims[a] > 1 ? 1 : 0;
    return d;
  }
  Box wholeBox() const
  {
    Box b;
    for (int a = 0; a < 3; ++a)
      b.hi[a] = dims[a];
    return b;
  }

  // A C-ordered contiguous view (x fastest).
  static GridView contiguous(const void* data, ScalarType type, int64_t nx, int64_t ny = 1,
    int64_t nz = 1, MemorySpace memory = MemorySpace::Host)
  {
    GridView g;
    g.data = data;
    g.type = type;
    g.memory = memory;
    g.dims[0] = nx;
    g.dims[1] = ny;
    g.dims[2] = nz;
    g.strides[0] = 1;
    g.strides[1] = nx;
    g.strides[2] = nx * ny;
    return g;
  }
};

// Checks a view for obvious misuse; returns an empty string when it is valid,
// otherwise the reason, written for a user.
std::string validateGrid(const GridView& grid);

} // namespace topovox
