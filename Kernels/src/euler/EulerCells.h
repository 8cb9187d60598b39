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
#include <utility>

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

// Bits of the neighbours whose offset along `axis` is `side` (-1 or +1).
TV_HD constexpr uint32_t sideBits(int axis, int side)
{
  uint32_t m = 0;
  for (int b = 0; b < 27; ++b)
    if (choiceAxis(b, axis) == side)
      m |= 1u << b;
  return m;
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

TV_HD constexpr int popcount3(unsigned m)
{
  return int(m & 1u) + int((m >> 1) & 1u) + int((m >> 2) & 1u);
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

// precedes() for a voxel value v that is not NaN and a neighbour bit B known
// at compile time: a NaN q compares false, so it never precedes, as required.
template <bool Superlevel, int B, typename T>
TV_HD bool precedesNumber(T q, T v)
{
  if constexpr (B < kCenterBit)
    return Superlevel ? (q >= v) : (q <= v);
  else
    return Superlevel ? (q > v) : (q < v);
}

// The same with the neighbour's bit known at run time.
template <bool Superlevel, typename T>
TV_HD bool precedesNumber(T q, T v, int bit)
{
  return bit < kCenterBit ? (Superlevel ? (q >= v) : (q <= v)) : (Superlevel ? (q > v) : (q < v));
}

// The mask of the 26 neighbours of p that precede it, for a voxel whose
// every neighbour exists (no bounds checks, no data-dependent branches).
template <bool Superlevel, typename T, int... B>
TV_HD uint32_t interiorPrecedingMask(
  const T* p, const int64_t* offset, T v, std::integer_sequence<int, B...>)
{
  uint32_t mask = 0;
  ((mask |= (B != kCenterBit && precedesNumber<Superlevel, B>(p[offset[B]], v)) ? (1u << B) : 0u),
    ...);
  return mask;
}

// The neighbour bits interiorPrecedingMask compares: all 27 (the centre
// skipped), or the 8 in the voxel's z plane, all that a 2D image has.
using NeighbourBits = std::make_integer_sequence<int, 27>;
using PlaneNeighbourBits = std::integer_sequence<int, 9, 10, 11, 12, 14, 15, 16, 17>;

// Per-choice constants, as types, so that every mask below is an immediate
// operand after inlining (a constexpr function called in a loop is not
// guaranteed to be folded by nvcc).
template <int C>
struct CellConstants
{
  static constexpr uint32_t corners = cornerMask(C);
  static constexpr int dimensionV = cellDimensionV(C);
  // Axes the T face spans (choice 0) and axes it sits on a side of.
  static constexpr unsigned spanned = (choiceAxis(C, 0) == 0 ? 1u : 0u) |
    (choiceAxis(C, 1) == 0 ? 2u : 0u) | (choiceAxis(C, 2) == 0 ? 4u : 0u);
  static constexpr unsigned sided = 7u & ~spanned;
  static constexpr int dimensionT3 = cellDimensionT(C, 7u);
};

template <bool TConstruction, bool Full3D, int... C>
TV_HD uint32_t ownedCellCountsOf(
  uint32_t precedingMask, unsigned axisActive, std::integer_sequence<int, C...>)
{
  uint32_t packed = 0;
  if constexpr (!TConstruction)
  {
    // V: p owns the cell when every other vertex precedes it.
    ((packed += ((precedingMask & CellConstants<C>::corners) == CellConstants<C>::corners)
         ? (1u << (8 * CellConstants<C>::dimensionV))
         : 0u),
      ...);
  }
  else if constexpr (Full3D)
  {
    // T in 3D: p owns the face when no other cube containing it precedes p.
    ((packed += ((precedingMask & CellConstants<C>::corners) == 0)
         ? (1u << (8 * CellConstants<C>::dimensionT3))
         : 0u),
      ...);
  }
  else
  {
    // T in 1D/2D: faces exist only on real axes; dimension counts real axes.
    ((packed += ((axisActive & CellConstants<C>::sided) == CellConstants<C>::sided &&
                  (precedingMask & CellConstants<C>::corners) == 0)
         ? (1u << (8 * popcount3(axisActive & CellConstants<C>::spanned)))
         : 0u),
      ...);
  }
  return packed;
}

// Counts per dimension of the cells p owns, from the mask of existing
// neighbours that precede p, packed 8 bits per dimension (at most 12 cells
// of one dimension: the 12 edges of a T cube, or the 12 squares at a V vertex).
template <bool TConstruction>
TV_HD uint32_t ownedCellCounts(uint32_t precedingMask, unsigned axisActive)
{
  if (!TConstruction || axisActive == 7u)
    return ownedCellCountsOf<TConstruction, true>(
      precedingMask, axisActive, std::make_integer_sequence<int, 27>{});
  return ownedCellCountsOf<TConstruction, false>(
    precedingMask, axisActive, std::make_integer_sequence<int, 27>{});
}

template <int Offset, int... C>
constexpr std::integer_sequence<int, (Offset + C)...> offsetSequence(std::integer_sequence<int, C...>)
{
  return {};
}

// ownedCellCounts for an image of one plane (axis z inactive, the mask's
// bits those of the plane, 9 to 17): only the 9 choices that keep z fixed
// can give a cell (a V cell off the plane needs a vertex there, which is
// never in the mask; a T face off it needs axis z), so the other 18 are
// not looked at.
template <bool TConstruction>
TV_HD uint32_t ownedCellCountsInPlane(uint32_t precedingMask, unsigned axisActive)
{
  return ownedCellCountsOf<TConstruction, !TConstruction>(
    precedingMask, axisActive, offsetSequence<9>(std::make_integer_sequence<int, 9>{}));
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

// thresholdBin, started from a guess (e.g. by linear interpolation): one step
// either way is checked directly, a worse guess falls back to the binary
// search on the side where the answer lies. Exact whatever the guess.
template <bool Superlevel, typename T>
TV_HD int thresholdBinFrom(T v, const T* t, int n, int guess)
{
  auto reached = [&](int j) { return Superlevel ? (t[j] <= v) : (v <= t[j]); };
  int j = guess < 0 ? 0 : (guess > n ? n : guess);
  if (j > 0 && reached(j - 1))
  {
    --j;
    if (j > 0 && reached(j - 1))
      j = thresholdBin<Superlevel>(v, t, j - 1);
  }
  else if (j < n && !reached(j))
  {
    ++j;
    if (j < n && !reached(j))
      j = j + 1 + thresholdBin<Superlevel>(v, t + j + 1, n - j - 1);
  }
  return j;
}

// The bin a value would have if the thresholds were evenly spaced from
// `origin` with `scale` bins per unit (scale 0: no guess, returns 0).
TV_HD int guessBin(double value, double origin, double scale, int n)
{
  const double g = (value - origin) * scale;
  return g > 0 ? (g < n ? static_cast<int>(std::ceil(g)) : n) : 0;
}

} // namespace euler
} // namespace topovox
