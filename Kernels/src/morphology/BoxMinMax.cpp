// BoxMinMax.cpp - a flat box's minimum or maximum, one axis at a time
// (BoxMinMax.h): along x per row through an extended copy of the row;
// along y and z whole rows at a time, contiguous in x.
#include "BoxMinMax.h"

#include "topovox/UninitializedAllocator.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace topovox
{
namespace morphology
{
namespace
{
template <typename T, bool Minimum>
inline void keepBetter(T& best, T t)
{
  if (Minimum ? (t < best) : (t > best))
    best = t;
}

// Along x: out row r = the window [lo, lo + span] of the extended row.
template <typename T, bool Minimum>
void passX(const GridView& g, const ElementOffsets& e, const GreyOptions& o, T* out, int threads)
{
  const int64_t nx = g.dims[0], lo = e.reach[0][0], span = e.reach[0][1] - e.reach[0][0];
  const T* data = static_cast<const T*>(g.data);
  const T cv = static_cast<T>(o.cval);
  const int mode = static_cast<int>(o.mode);
  parallelFor(g.dims[1] * g.dims[2], threads, [&](int, int64_t r0, int64_t r1) {
    std::vector<T> line(static_cast<size_t>(nx + span));
    for (int64_t r = r0; r < r1; ++r)
    {
      const T* row = data + (r % g.dims[1]) * g.strides[1] + (r / g.dims[1]) * g.strides[2];
      // The samples inside the row straight, the border mode for the others.
      const int64_t inside0 = std::max<int64_t>(0, -lo), inside1 = std::min(nx + span, nx - lo);
      for (int64_t i = 0; i < nx + span; ++i)
      {
        if (i == inside0 && inside0 < inside1)
        {
          const int64_t s = g.strides[0];
          if (s == 1)
            std::copy(row + i + lo, row + inside1 + lo, line.data() + i);
          else
            for (int64_t k = i; k < inside1; ++k)
              line[static_cast<size_t>(k)] = row[(k + lo) * s];
          i = inside1 - 1;
          continue;
        }
        const int64_t q = extendIndex(i + lo, nx, mode);
        line[static_cast<size_t>(i)] = q < 0 ? cv : row[q * g.strides[0]];
      }
      T* to = out + r * nx;
      for (int64_t x = 0; x < nx; ++x)
      {
        T best = line[static_cast<size_t>(x)];
        for (int64_t d = 1; d <= span; ++d)
          keepBetter<T, Minimum>(best, line[static_cast<size_t>(x + d)]);
        to[x] = best;
      }
    }
  });
}

// Along y (axis 1) or z (axis 2) of a packed image: out row = the rows of
// the window, compared element by element in ascending order.
template <typename T, bool Minimum>
void passRows(const T* in, const int64_t dims[3], int axis, int64_t lo, int64_t span, const GreyOptions& o, T* out,
  int threads)
{
  const int64_t nx = dims[0], ny = dims[1], n = dims[axis];
  const std::vector<T> constant(static_cast<size_t>(nx), static_cast<T>(o.cval));
  const int mode = static_cast<int>(o.mode);
  parallelFor(dims[1] * dims[2], threads, [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
    {
      const int64_t y = r % ny, z = r / ny;
      const int64_t at = axis == 1 ? y : z;
      auto rowOf = [&](int64_t d) {
        const int64_t q = extendIndex(at + lo + d, n, mode);
        if (q < 0)
          return constant.data();
        return in + nx * (axis == 1 ? (q + ny * z) : (y + ny * q));
      };
      T* to = out + r * nx;
      std::copy(rowOf(0), rowOf(0) + nx, to);
      for (int64_t d = 1; d <= span; ++d)
      {
        keepBetterRow<T, Minimum>(rowOf(d), to, nx);
      }
    }
  });
}

template <typename T, bool Minimum>
void boxTyped(const GridView& image, const ElementOffsets& e, const GreyOptions& o, T* out)
{
  const int threads = threadCount(o.threads);
  const int64_t* dims = image.dims;
  passX<T, Minimum>(image, e, o, out, threads);
  UninitializedVector<T> spare; // written in full by its pass
  T* current = out;
  for (int axis = 1; axis < 3; ++axis)
  {
    const int64_t span = e.reach[axis][1] - e.reach[axis][0];
    if (dims[axis] == 1 && span == 0)
      continue;
    if (spare.empty())
      spare.resize(static_cast<size_t>(image.voxelCount()));
    T* to = current == out ? spare.data() : out;
    passRows<T, Minimum>(current, dims, axis, e.reach[axis][0], span, o, to, threads);
    current = to;
  }
  if (current != out)
    std::copy(current, current + image.voxelCount(), out);
}
} // namespace

template <typename T>
void boxMinOrMax(const GridView& image, const ElementOffsets& e, bool minimum, const GreyOptions& o, T* out)
{
  if (minimum)
    boxTyped<T, true>(image, e, o, out);
  else
    boxTyped<T, false>(image, e, o, out);
}

#define TOPOVOX_BOX(T)                                                                                       \
  template void boxMinOrMax<T>(const GridView&, const ElementOffsets&, bool, const GreyOptions&, T*);
TOPOVOX_BOX(int8_t)
TOPOVOX_BOX(uint8_t)
TOPOVOX_BOX(int16_t)
TOPOVOX_BOX(uint16_t)
TOPOVOX_BOX(int32_t)
TOPOVOX_BOX(uint32_t)
TOPOVOX_BOX(float)
TOPOVOX_BOX(double)
#undef TOPOVOX_BOX
}
}
