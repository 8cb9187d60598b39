// EulerCells.h - the definitions that the CPU and the CUDA paths share, so
// that both give bit-identical curves: the total order on voxels, which cells
// a voxel owns, and which threshold bin a value falls in.
//
// The 3x3x3 neighbourhood of a voxel p is numbered by
//   bit(dx, dy, dz) = (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1),  13 = p itself.
// A neighbour with bit < 13 has a smaller linear index than p (z, then y, then
// x is the order of linear indices), so ties in value are broken by comparing
// the bit with 13: no global index is needed, and a piece of an image (MPI)
// breaks ties exactly as the whole image does.
//
// Total order ("q precedes p"): by value in filtration order (ascending for
// sublevel, descending for superlevel), NaN after every number, then by linear
// index.
//
// V-construction: the cells having p as a vertex are given by a choice per
// axis a in {0, -1, +1}: 0 keeps the axis fixed, +-1 spans the edge towards
// that neighbour. The cell's vertices are the products of {0} or {0, a}.
// Its value is attained by its last vertex in the total order, which owns it:
// p owns the cell iff every other vertex exists and precedes p.
//
// T-construction: the faces of p's cube are given by a choice per axis b in
// {-1, 0, +1}: 0 spans the whole side, -1/+1 is the lower/upper boundary. The
// cubes containing the face are p shifted by products of {0} or {0, b}. The
// face's value is attained by its first cube in the total order, which owns
// it: p owns the face iff no other containing cube (that exists) precedes p.
//
// In both, the cell's dimension is the number of axes it spans.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__CUDACC__)
#define TV_HD __host__ __device__ __forceinline__
#else
#define TV_HD inline
#endif

namespace topovox
{
namespace euler
{

constexpr int kCenterBit = 13;

TV_HD constexpr int neighbourBit(int dx, int dy, int dz)
{
  return (dz + 1) * 9 + (dy + 1) * 3 + (dx + 1);
}

// Offset along axis `axis` of the cell choice number c (0..26), in {-1,0,1}.
TV_HD constexpr int choiceAxis(int c, int axis)
{
  return axis == 0 ? (c % 3) - 1 : axis == 1 ? ((c / 3) % 3) - 1 : (c / 9) - 1;
}

// Bits of the neighbours (other than p) that make up the set
// prod_axis ( {0} if o == 0 else {0, o} ) for the per-axis offsets of c.
TV_HD constexpr uint32_t cornerMask(int c)
{
  const int ox = choiceAxis(c, 0), oy = choiceAxis(c, 1), oz = choiceAxis(c, 2);
  uint32_t mask = 0;
  for (int iz = 0; iz < 2; ++iz)
    for (int iy = 0; iy < 2; ++iy)
      for (int ix = 0; ix < 2; ++ix)
      {
        if ((ix && !ox) || (iy && !oy) || (iz && !oz))
          continue;
        const int b = neighbourBit(ix * ox, iy * oy, iz * oz);
        if (b != kCenterBit)
          mask |= 1u << b;
      }
  return mask;
}

// Dimension of the V cell for choice c: the number of spanned axes.
TV_HD constexpr int cellDimensionV(int c)
{
  return (choiceAxis(c, 0) != 0) + (choiceAxis(c, 1) != 0) + (choiceAxis(c, 2) != 0);
}

// Dimension of the T face for choice c, counting only the image's real axes
// (axisActive bit a set when axis a has more than one sample).
TV_HD constexpr int cellDimensionT(int c, unsigned axisActive)
{
  return ((axisActive & 1u) && choiceAxis(c, 0) == 0) +
    ((axisActive & 2u) && choiceAxis(c, 1) == 0) + ((axisActive & 4u) && choiceAxis(c, 2) == 0);
}

// A T face exists in the complex of the image only if it does not leave the
// image's real axes: on an axis with one sample there is no boundary choice.
TV_HD constexpr bool faceExistsT(int c, unsigned axisActive)
{
  return ((axisActive & 1u) || choiceAxis(c, 0) == 0) &&
    ((axisActive & 2u) || choiceAxis(c, 1) == 0) && ((axisActive & 4u) || choiceAxis(c, 2) == 0);
}

template <typename T>
TV_HD bool isNan(T v)
{
  if constexpr (std::is_floating_point<T>::value)
    return v != v;
  else
    return false;
}

// Does the neighbour with value q and neighbour bit `bit` precede p (value v)?
template <bool Superlevel, typename T>
TV_HD bool precedes(T q, T v, int bit)
{
  const bool qNan = isNan(q), vNan = isNan(v);
  if (qNan || vNan)
    return !qNan || (vNan && bit < kCenterBit);
  if (Superlevel ? (q > v) : (q < v))
    return true;
  return q == v && bit < kCenterBit;
}

// Counts per dimension of the cells p owns, from the mask of existing
// neighbours that precede p. Returned packed, 8 bits per dimension (the most
// any dimension reaches is 12, the edges... of T in 3D: 12 edges).
template <bool TConstruction>
TV_HD uint32_t ownedCellCounts(uint32_t precedingMask, unsigned axisActive)
{
  uint32_t packed = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int c = 0; c < 27; ++c)
  {
    const uint32_t m = cornerMask(c);
    if (TConstruction)
    {
      if (faceExistsT(c, axisActive) && (precedingMask & m) == 0)
        packed += 1u << (8 * cellDimensionT(c, axisActive));
    }
    else
    {
      if ((precedingMask & m) == m)
        packed += 1u << (8 * cellDimensionV(c));
    }
  }
  return packed;
}

// Position of value v among the native thresholds (ascending for sublevel,
// descending for superlevel): the first j with v <= t_j (sublevel) or
// v >= t_j (superlevel); n when v is beyond the last one.
template <bool Superlevel, typename T>
TV_HD int thresholdBin(T v, const T* t, int n)
{
  int lo = 0, hi = n;
  while (lo < hi)
  {
    const int mid = (lo + hi) >> 1;
    const bool reached = Superlevel ? (t[mid] <= v) : (v <= t[mid]);
    if (reached)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

} // namespace euler
} // namespace topovox
