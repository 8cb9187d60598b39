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
TV_HD double softHeightOf(double x, const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k)
{
  if (x != x)
    return x;
  double pos[3];
  softPosition(P, i, j, k, pos);
  return (P.weight != 0 ? P.weight * x : 0.0) + P.alpha * (P.u[0] * pos[0] + P.u[1] * pos[1] + P.u[2] * pos[2]);
}

template <typename T>
TV_HD double softHeight(const T* image, const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k)
{
  return softHeightOf(static_cast<double>(image[i + P.dims[0] * (j + P.dims[1] * k)]), P, i, j, k);
}

// Sum of (-1)^dim over the cells the voxel (i, j, k), of height h, owns in
// the order of heights (EulerCells.h: value, then index; NaN last). The 26
// neighbours' values are all loaded before any is compared: on the GPU the
// loads are then in flight together, where a compare after each load would
// wait out 26 memory latencies one after another (a small image's whole
// time).
template <typename T>
TV_HD int softSignedCount(const T* image, const SoftVoxelParams& P, int64_t i, int64_t j, int64_t k, double h)
{
  if (h != h)
    return 0;
  T value[27];
  uint32_t inside = 0;
#pragma unroll
  for (int b = 0; b < 27; ++b)
  {
    const int64_t q[3] = { i + choiceAxis(b, 0), j + choiceAxis(b, 1), k + choiceAxis(b, 2) };
    const bool in = b != kCenterBit && q[0] >= 0 && q[1] >= 0 && q[2] >= 0 && q[0] < P.dims[0] &&
      q[1] < P.dims[1] && q[2] < P.dims[2];
    inside |= in ? 1u << b : 0u;
    value[b] = in ? image[q[0] + P.dims[0] * (q[1] + P.dims[1] * q[2])] : T(0);
  }
  uint32_t mask = 0;
#pragma unroll
  for (int b = 0; b < 27; ++b)
    if (inside >> b & 1u)
    {
      const double hq = softHeightOf(static_cast<double>(value[b]), P, i + choiceAxis(b, 0), j + choiceAxis(b, 1),
        k + choiceAxis(b, 2));
      if (precedes<false>(hq, h, b))
        mask |= 1u << b;
    }
  const uint32_t packed = P.tConstruction ? ownedCellCounts<true>(mask, P.axes) : ownedCellCounts<false>(mask, P.axes);
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
