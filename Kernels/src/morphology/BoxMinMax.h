// BoxMinMax.h - the minimum (or maximum) over a flat box on the CPU
// threads, axis by axis.
//
// The minimum along x, then along y, then along z, each pass extending its
// own axis by the border mode (the modes extend each axis on its own, and a
// constant outside any axis is the constant, so the passes compose to the
// box's minimum). Each pass compares strictly, in ascending order, and
// keeps the first of equal values: the survivor is the first in (z, y, x)
// order, which is raster order, the order of the direct minimum
// (MorphologyVoxel.h); the GPU's box kernels follow the same order. scipy's
// passes keep another of equal values (the last along x, then y, then z),
// which differs in its bits only where -0 and +0 tie: images with a -0 (or
// NaN) under a box take scipy's own passes instead (isNanOrNegativeZero,
// SeparableMinMax.h). For types that double holds exactly.
#pragma once

#include "ElementOffsets.h"

#include <type_traits>

namespace topovox
{
namespace morphology
{
// Whether comparisons in T give the answers comparisons in double give
// (every type but the 64-bit integers): the direct rule's flat fast path.
template <typename T>
constexpr bool comparesAsDouble()
{
  return sizeof(T) < 8 || std::is_floating_point<T>::value;
}

// out[x] = the better of out[x] and from[x], the first kept on equality:
// branch-free, so that the compiler vectorises it (for floats the SIMD
// minimum's own rule: the second operand unless the first is strictly
// smaller). One step of the row-wise minima, over the box and elsewhere.
template <typename T, bool Minimum>
void keepBetterRow(const T* __restrict from, T* __restrict out, int64_t n)
{
  for (int64_t x = 0; x < n; ++x)
    out[x] = (Minimum ? (from[x] < out[x]) : (from[x] > out[x])) ? from[x] : out[x];
}

// out: the image's type, x fastest. `e`: the offsets of a full flat box.
template <typename T>
void boxMinOrMax(const GridView& image, const ElementOffsets& e, bool minimum, const GreyOptions& o, T* out);
}
}
