// SoftEulerVoxel.h - one voxel of the differentiable Euler curve
// (SoftEuler.h), shared by the CPU loop and the CUDA kernels: the voxel's
// height and the signed count of the cells it owns in the height order.
#pragma once

#include "EulerCells.h"

#include <cmath>
#include <cstdint>

namespace topovox
{
namespace euler
{
struct SoftVoxelParams
{
  int64_t dims[3];
  unsigned axes; // bit a: axis a has more than one sample
  bool tConstruction;
  double weight, alpha, lambda;
  double u[3], origin[3], spacing[3];
};

TV_HD void softPosition(const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k, double pos[3])
{
  pos[0] = P.origin[0] + P.spacing[0] * static_cast<double>(i);
  pos[1] = P.origin[1] + P.spacing[1] * static_cast<double>(j);
  pos[2] = P.origin[2] + P.spacing[2] * static_cast<double>(k);
}

// h = weight * x + alpha * <u, p> for the value x at (i, j, k); NaN for NaN.
// With alpha 0 (the image's own filtration) the position is not computed.
TV_HD double softHeightOf(double x, const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k)
{
  if (x != x)
    return x;
  const double level = P.weight != 0 ? P.weight * x : 0.0;
  if (P.alpha == 0)
    return level;
  double pos[3];
  softPosition(P, i, j, k, pos);
  return level + P.alpha * (P.u[0] * pos[0] + P.u[1] * pos[1] + P.u[2] * pos[2]);
}

template <typename T>
TV_HD double softHeight(const T* image, const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k)
{
  return softHeightOf(static_cast<double>(image[i + P.dims[0] * (j + P.dims[1] * k)]), P, i, j, k);
}

// Whether the neighbour of bit b of the voxel (i, j, k) is in the image.
TV_HD bool neighbourInside(const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k, int b)
{
  const int64_t c[3] = { i, j, k };
  bool in = b != kCenterBit;
  for (int a = 0; a < 3; ++a)
    in = in && (choiceAxis(b, a) < 0 ? c[a] > 0 : choiceAxis(b, a) > 0 ? c[a] + 1 < P.dims[a] : true);
  return in;
}

// The neighbours b in [First, Last) of the voxel (i, j, k), of height h,
// that precede it in the order of heights (EulerCells.h: value, then index;
// NaN last), as bits. Their values are all loaded before any is compared:
// on the GPU the loads are then in flight together, where a compare after
// each load would wait out one memory latency after another (a small
// image's whole time).
template <int First, int Last, typename T>
TV_HD uint32_t precedingNeighbours(
  const T* image, const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k, double h)
{
  const int64_t at = i + P.dims[0] * (j + P.dims[1] * k), sy = P.dims[0], sz = P.dims[0] * P.dims[1];
  T value[Last - First];
  uint32_t inside = 0;
#pragma unroll
  for (int b = First; b < Last; ++b)
  {
    const bool in = neighbourInside(P, i, j, k, b);
    inside |= in ? 1u << b : 0u;
    value[b - First] = in ? image[at + choiceAxis(b, 0) + sy * choiceAxis(b, 1) + sz * choiceAxis(b, 2)] : T(0);
  }
  uint32_t mask = 0;
#pragma unroll
  for (int b = First; b < Last; ++b)
    if (inside >> b & 1u)
    {
      const double hq = softHeightOf(static_cast<double>(value[b - First]), P, i + choiceAxis(b, 0),
        j + choiceAxis(b, 1), k + choiceAxis(b, 2));
      if (precedes<false>(hq, h, b))
        mask |= 1u << b;
    }
  return mask;
}

// Sum of (-1)^dim over the cells a voxel owns, from the bits of its
// neighbours that precede it (Plane: an image of one plane).
template <bool Plane>
TV_HD int signedCountOfMask(uint32_t mask, const SoftVoxelParams& P)
{
  const uint32_t packed = Plane
    ? (P.tConstruction ? ownedCellCountsInPlane<true>(mask, P.axes) : ownedCellCountsInPlane<false>(mask, P.axes))
    : (P.tConstruction ? ownedCellCounts<true>(mask, P.axes) : ownedCellCounts<false>(mask, P.axes));
  return static_cast<int>(packed & 255u) - static_cast<int>((packed >> 8) & 255u) +
    static_cast<int>((packed >> 16) & 255u) - static_cast<int>((packed >> 24) & 255u);
}

// Sum of (-1)^dim over the cells the voxel (i, j, k), of height h, owns in
// the order of heights. An image of one plane looks at the 9 neighbours of
// its plane (bits 9 to 17) only: the others are outside it.
template <typename T>
TV_HD int softSignedCount(const T* image, const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k, double h)
{
  if (h != h)
    return 0;
  return P.dims[2] == 1 ? signedCountOfMask<true>(precedingNeighbours<9, 18>(image, P, i, j, k, h), P)
                        : signedCountOfMask<false>(precedingNeighbours<0, 27>(image, P, i, j, k, h), P);
}

// sigmoid(z), without overflow for large |z|.
TV_HD double softSigmoid(double z)
{
  if (z >= 0)
    return 1.0 / (1.0 + exp(-z));
  const double e = exp(z);
  return e / (1.0 + e);
}
}
}
