// RegisterShapes.cuh - the small flat elements that the register kernels
// (GreyRegisterKernel.cuh, BinaryRegisterKernel.cuh) compile in: a box or a
// Euclidean ball, described row by row as x intervals, and the test that an
// element's offsets are one of them.
#pragma once

#include "ElementOffsets.h"

#include "../common/CudaUtil.cuh"

namespace topovox
{
namespace morphology
{
namespace registers
{
constexpr int kLanes = 32, kWarps = 8;

// A box (every row of half width Radius) or a Euclidean ball (offsets of
// squared length at most Radius^2) of radius Radius in x and y and
// DepthRadius in z (0: one plane); each thread computes Rows outputs per
// plane, and the registers are budgeted for BlocksPerSM blocks per
// multiprocessor (each kernel picks its own, by what ptxas -v and the
// benchmark showed).
template <int Radius, int DepthRadius, bool Ball, int Rows, int BlocksPerSM>
struct Shape
{
  static constexpr int rx = Radius, ry = Radius, rz = DepthRadius;
  static constexpr int rowsPerThread = Rows, tileRows = Rows * kWarps, blocksPerSM = BlocksPerSM;
  // The half width of row (dz, dy) along x; -1: the row is empty.
  static constexpr __host__ __device__ int halfWidth(int dz, int dy)
  {
    if (!Ball)
      return Radius;
    const int left = Radius * Radius - dz * dz - dy * dy;
    int w = -1;
    while ((w + 1) * (w + 1) <= left)
      ++w;
    return w;
  }
};

// Whether the offsets `e` are shape S's (a flat element), and where its
// centre lies.
template <class S>
bool matches(const ElementOffsets& e, int centre[3])
{
  const int radius[3] = { S::rx, S::ry, S::rz };
  for (int a = 0; a < 3; ++a)
  {
    if (e.reach[a][1] - e.reach[a][0] != 2 * radius[a])
      return false;
    centre[a] = static_cast<int>(e.reach[a][0]) + radius[a];
  }
  size_t count = 0;
  for (int dz = -S::rz; dz <= S::rz; ++dz)
    for (int dy = -S::ry; dy <= S::ry; ++dy)
      if (S::halfWidth(dz, dy) >= 0)
        count += static_cast<size_t>(2 * S::halfWidth(dz, dy) + 1);
  if (!e.flat || e.delta.size() != count)
    return false;
  for (const auto& d : e.delta)
  {
    const int64_t dx = d[0] - centre[0], dy = d[1] - centre[1], dz = d[2] - centre[2];
    const int w = S::halfWidth(static_cast<int>(dz), static_cast<int>(dy));
    if (w < 0 || dx < -w || dx > w)
      return false; // offsets are distinct: the count and this make the sets equal
  }
  return true;
}
// Output planes per block for `tiles` column tiles of `planes` planes:
// `perRadius` planes a unit of the element's z radius (at least one), the
// kernel's best where the device has blocks enough, halved
// (down to 8) until there are enough blocks for two full waves, to keep
// every multiprocessor busy to the end. Deep columns read the z halo less
// often; shallow ones leave a shorter tail, which on the H200 won: at
// 512^3 the 8 to 64 planes of the previous rule gave 0.143 ms for the
// binary box against 0.122 at 8, 0.51 ms for the grey box against 0.43
// at 16.
template <class S>
int marchDepth(int64_t tiles, int64_t planes, int perRadius)
{
  const int64_t wanted = 2 * int64_t(cuda::multiprocessorCount()) * S::blocksPerSM;
  int depth = perRadius * (S::rz > 1 ? S::rz : 1);
  while (depth > 8 && tiles * ((planes + depth - 1) / depth) < wanted)
    depth /= 2;
  return depth;
}
} // namespace registers
} // namespace morphology
} // namespace topovox
