// SoftEulerVoxel.h - one voxel of the differentiable Euler curve
// (SoftEuler.h), shared by the CPU loop and the CUDA kernels: the voxel's
// height and, from its neighbours' heights, the signed count of the cells
// it owns in the height order.
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

// The neighbours b in [First, Last) of the voxel (i, j, k), of height h (a
// number, not NaN), that precede it in the order of heights (EulerCells.h:
// value, then index; NaN last), as bits; heightOf(b) gives the height of
// neighbour b, asked only of those in the image. With h a number,
// precedes() is precedesNumber() (a NaN q compares false both ways, as it
// must). The GPU reads the heights from a
// tile in shared memory, the CPU from rows it computed (SoftEuler.cpp):
// each height is computed once, not once per voxel around it.
template <int First, int Last, typename HeightOf>
TV_HD uint32_t precedingByHeights(
  const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k, double h, HeightOf heightOf)
{
  uint32_t mask = 0;
#pragma unroll
  for (int b = First; b < Last; ++b)
    if (b != kCenterBit && neighbourInside(P, i, j, k, b))
    {
      if (precedesNumber<false>(heightOf(b), h, b))
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
