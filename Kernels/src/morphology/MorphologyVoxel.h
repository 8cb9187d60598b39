// MorphologyVoxel.h - one voxel of the grey operators (Morphology.h),
// written once for the CPU threads and the CUDA kernels, so that both give
// the same bits: the border extension and the grey minimum or maximum over
// the element (scipy's order of evaluation). The binary operators work on
// words of bits instead (BinaryBits.h, BinaryMorphologyCUDA.cu).
#pragma once

#include "../euler/EulerCells.h" // TV_HD

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace topovox
{
namespace morphology
{
// The element as flat arrays (device-copyable).
struct ElementView
{
  int count;
  const int64_t* delta;  // 3 per element: x, y, z offsets from the voxel
  const int64_t* direct; // per element: the offset in elements of the image (strides applied)
  const double* values;  // per element, signed for the operation; null: flat
  int64_t reach[3][2];   // min and max offset per axis
};

struct GreyGrid
{
  int64_t dims[3], strides[3];
  int mode; // BorderMode
};

// Whether a value is a NaN or a -0, the two values on which the fast rules
// and scipy's part: under a flat box they make scipy's separable passes
// (SeparableMinMax.h) the only way to its bits (the passes' NaN rule is not
// the direct minimum's; among equal values the passes keep the last along
// x, then y, then z, the direct rule the first in raster order, and -0 and
// +0 tie with other bits), and under the GPU's register kernels they stop
// the fmin/fmax fold (GreyRegisterKernel.cuh). Integers never are.
template <typename T>
TV_HD bool isNanOrNegativeZero(T v)
{
  // -0 as its bits: one integer compare (the kernels test every value).
  if constexpr (std::is_same<T, float>::value)
  {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return v != v || bits == 0x80000000u;
  }
  else if constexpr (std::is_same<T, double>::value)
  {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return v != v || bits == 0x8000000000000000ull;
  }
  else
    return false;
}

// Where index i reads from, or -1 for the constant (modes of BorderMode:
// 0 reflect, 1 mirror, 2 nearest, 3 wrap, 4 constant).
TV_HD int64_t extendIndex(int64_t i, int64_t n, int mode)
{
  if (i >= 0 && i < n)
    return i;
  switch (mode)
  {
    case 2: return i < 0 ? 0 : n - 1;
    case 3:
    {
      const int64_t m = i % n;
      return m < 0 ? m + n : m;
    }
    case 0: // d c b a | a b c d | d c b a: period 2n
    {
      int64_t m = i % (2 * n);
      if (m < 0)
        m += 2 * n;
      return m < n ? m : 2 * n - 1 - m;
    }
    case 1: // d c b | a b c d | c b a: period 2n - 2
    {
      if (n == 1)
        return 0;
      int64_t m = i % (2 * n - 2);
      if (m < 0)
        m += 2 * n - 2;
      return m < n ? m : 2 * n - 2 - m;
    }
    default: return -1;
  }
}

// The minimum (or maximum) over the element at (x, y, z): the first term in
// double (plus its value), the others in T, comparisons with NaN false.
template <typename T>
TV_HD T greyVoxel(const T* data, const GreyGrid& g, const ElementView& e, bool minimum, T cv, int64_t x, int64_t y,
  int64_t z)
{
  const T* at = data + x * g.strides[0] + y * g.strides[1] + z * g.strides[2];
  const bool inside = x + e.reach[0][0] >= 0 && x + e.reach[0][1] < g.dims[0] && y + e.reach[1][0] >= 0 &&
    y + e.reach[1][1] < g.dims[1] && z + e.reach[2][0] >= 0 && z + e.reach[2][1] < g.dims[2];
  // A flat element inside the image, on a type that double holds exactly:
  // the comparisons in T give the same answer as in double, faster.
  constexpr bool exactInDouble = sizeof(T) < 8 || static_cast<T>(0.5) != T(0);
  if (exactInDouble && inside && !e.values)
  {
    T best = at[e.direct[0]];
    for (int k = 1; k < e.count; ++k)
    {
      const T t = at[e.direct[k]];
      if (minimum ? (t < best) : (t > best))
        best = t;
    }
    return best;
  }
  double result = 0;
  for (int k = 0; k < e.count; ++k)
  {
    T t;
    if (inside)
      t = at[e.direct[k]];
    else
    {
      const int64_t q0 = extendIndex(x + e.delta[3 * k], g.dims[0], g.mode);
      const int64_t q1 = extendIndex(y + e.delta[3 * k + 1], g.dims[1], g.mode);
      const int64_t q2 = extendIndex(z + e.delta[3 * k + 2], g.dims[2], g.mode);
      t = (q0 < 0 || q1 < 0 || q2 < 0) ? cv : data[q0 * g.strides[0] + q1 * g.strides[1] + q2 * g.strides[2]];
    }
    if (k == 0)
    {
      result = static_cast<double>(t);
      if (e.values)
        result += e.values[0];
      continue;
    }
    if (e.values)
      t = static_cast<T>(static_cast<double>(t) + e.values[k]);
    if (minimum ? (static_cast<double>(t) < result) : (static_cast<double>(t) > result))
      result = static_cast<double>(t);
  }
  return static_cast<T>(result);
}
}
}
