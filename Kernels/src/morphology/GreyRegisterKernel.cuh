// GreyRegisterKernel.cuh - the grey minimum or maximum over the common small
// flat elements, any origin and border mode: the 3 x 3 x 3 box and the ball
// of radius 2 (and their one-plane forms, the 3 x 3 square and the disk of
// radius 2), the elements of grey_erosion(size=3) and of footprint=ball(2).
// A kernel of registers and warp shuffles, without shared memory or
// barriers.
//
// Why a kernel of its own: the general kernels stage every plane (box) or
// tile (any element) through shared memory; the box kernel spent its time
// on its three passes and two barriers there (0.87 TB/s at 512^3), the tile
// kernel on one shared-memory look per element and output. Here a warp owns
// 32 columns and each thread 4 output rows of a 32 x 32 tile, marching
// along z:
//  * per plane a thread reads, at its own column, the input rows its outputs
//    need (a warp reads 128 contiguous bytes per row of floats); the columns
//    up to `rx` either side come from the neighbouring lanes by shuffles,
//    and the lanes within rx of the warp's ends also read the columns past
//    them (the halo);
//  * each element row (dz, dy) is an x interval centred on the column, of
//    half width w (Shape::halfWidth): per input row the minima over the
//    intervals of half width 0 .. rx, then per plane and dz the minimum over
//    the element's rows of that plane, folded into the outputs of the planes
//    it belongs to (one accumulator per output plane in flight);
//  * the next plane's loads are issued before the current plane is reduced,
//    so that a thread has two planes in flight.
// Every step folds terms in the element's raster order (z, then y, then x)
// and compares strictly, so among equal values (+0 and -0) the first in
// raster order survives, as in the direct rule (MorphologyVoxel.h), scipy's
// for the ball. A NaN is reported through `sawSpecial` and the output is then
// to be discarded: the direct rule does not fold NaN this way (the caller
// runs scipy's rule); under the box a -0 is too, since scipy's separable
// passes keep another of equal values (needsSeparablePasses).
#pragma once

#include "ElementOffsets.h"
#include "MorphologyVoxel.h"
#include "RegisterShapes.cuh"

#include "../common/CudaUtil.cuh"

#include "topovox/Grid.h"

#include <algorithm>

namespace topovox
{
namespace morphology
{
namespace registers
{
// The float kernels' shapes (ptxas -v: no spills for float).
using Box3 = Shape<1, 1, false, 4, 4>;
using Square3 = Shape<1, 0, false, 4, 4>;
// The ball: 4 rows in 123 registers (two blocks per multiprocessor) beat 2
// rows in 80 (three) at 512^3, 1.15 against 1.30 ms on the H200.
using Ball2 = Shape<2, 2, true, 4, 2>;
using Disk2 = Shape<2, 0, true, 4, 2>;

struct Grid
{
  int64_t dims[3], strides[3];
  int centre[3]; // the element's centre, as an offset from the output voxel
  int mode;      // BorderMode
  int depth;     // output planes per block
};

// The value of lane - d (d > 0) or lane + |d| (d < 0); sub-word types
// travel as int.
template <typename T>
__device__ __forceinline__ T shuffled(T v, int d)
{
  if constexpr (sizeof(T) < 4)
    return static_cast<T>(shuffled(static_cast<int>(v), d));
  else
    return d > 0 ? __shfl_up_sync(0xffffffffu, v, d) : __shfl_down_sync(0xffffffffu, v, -d);
}

// One input plane's samples of a thread: its own column per input row, and
// the halo columns at distance 1 .. rx (left lanes: to the left; right
// lanes: to the right; read only where the shuffle would leave the warp).
template <typename T, class S>
struct PlaneSamples
{
  static constexpr int rows = S::rowsPerThread + 2 * S::ry;
  T at[rows];
  T halo[rows][S::rx];
};

// A sample at offsets the border mode gave (-1: outside, the constant).
template <typename T>
__device__ __forceinline__ T sample(const T* __restrict__ data, int64_t plane, int64_t row, int64_t column, T cv)
{
  return plane < 0 || row < 0 || column < 0 ? cv : data[plane + row + column];
}

// `earlier`, unless `later` is strictly better: folding in raster order
// keeps the first of equal values.
template <typename T, bool Minimum>
__device__ __forceinline__ T better(T earlier, T later)
{
  return (Minimum ? later < earlier : later > earlier) ? later : earlier;
}

template <typename T, bool Minimum, class S>
__global__ void __launch_bounds__(kLanes * kWarps, S::blocksPerSM)
  registerKernel(const T* __restrict__ data, Grid g, T cv, T* __restrict__ out, int* sawSpecial)
{
  constexpr int RX = S::rx, RY = S::ry, RZ = S::rz;
  constexpr int kInputRows = PlaneSamples<T, S>::rows, kRowsPerThread = S::rowsPerThread;
  const int lane = threadIdx.x;
  const int64_t x = int64_t(blockIdx.x) * kLanes + lane;
  const int64_t y = int64_t(blockIdx.y) * S::tileRows + int64_t(threadIdx.y) * kRowsPerThread;
  const int64_t z0 = int64_t(blockIdx.z) * g.depth;
  // Which side's halo this lane reads (-1 left, 1 right, 0 none), and the
  // columns: its own (the element's centre column) and the halo's.
  const int side = lane < RX ? -1 : (lane >= kLanes - RX ? 1 : 0);
  int64_t column = x + g.centre[0], haloColumn[RX];
#pragma unroll
  for (int k = 0; k < RX; ++k)
    haloColumn[k] = column + side * (k + 1);
  const int64_t warpFirst = int64_t(blockIdx.x) * kLanes + g.centre[0] - RX;
  if (g.strides[0] != 1 || warpFirst < 0 || warpFirst + kLanes + 2 * RX > g.dims[0])
  {
    const int64_t q = extendIndex(column, g.dims[0], g.mode);
    column = q < 0 ? -1 : q * g.strides[0];
#pragma unroll
    for (int k = 0; k < RX; ++k)
    {
      const int64_t h = extendIndex(haloColumn[k], g.dims[0], g.mode);
      haloColumn[k] = h < 0 ? -1 : h * g.strides[0];
    }
  }
  // Whether this lane reads halo column k: the lane k + 1 places away on
  // its side lies past the warp.
  auto readsHalo = [&](int k) { return side < 0 ? lane <= k : (side > 0 && lane >= kLanes - 1 - k); };
  int64_t rows[kInputRows];
#pragma unroll
  for (int j = 0; j < kInputRows; ++j)
  {
    const int64_t q = extendIndex(y + g.centre[1] - RY + j, g.dims[1], g.mode);
    rows[j] = q < 0 ? -1 : q * g.strides[1];
  }
  auto planeAt = [&](int64_t z) {
    const int64_t q = extendIndex(z, g.dims[2], g.mode);
    return q < 0 ? int64_t(-1) : q * g.strides[2];
  };
  auto fetch = [&](int64_t plane, PlaneSamples<T, S>& p) {
#pragma unroll
    for (int j = 0; j < kInputRows; ++j)
    {
      p.at[j] = sample(data, plane, rows[j], column, cv);
#pragma unroll
      for (int k = 0; k < RX; ++k)
        p.halo[j][k] = readsHalo(k) ? sample(data, plane, rows[j], haloColumn[k], cv) : cv;
    }
  };
  const int64_t firstZ = z0 + g.centre[2] - RZ;
  const int64_t planes = min(int64_t(g.depth), g.dims[2] - z0) + 2 * RZ;
  const int64_t planeStride = g.dims[0] * g.dims[1];
  T* to = out + x + g.dims[0] * y + planeStride * (z0 - 2 * RZ);
  bool special = false;
  // acc[k][r]: output plane i - k's fold so far (k = 2 RZ: complete).
  T acc[2 * RZ + 1][kRowsPerThread];
#pragma unroll
  for (int k = 0; k <= 2 * RZ; ++k)
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r)
      acc[k][r] = cv;
  PlaneSamples<T, S> next;
  fetch(planeAt(firstZ), next);
  for (int64_t i = 0; i < planes; ++i, to += planeStride)
  {
    const PlaneSamples<T, S> p = next;
    if (i + 1 < planes)
      fetch(planeAt(firstZ + i + 1), next);
    // alongX[j][w]: input row j's fold over columns -w .. w.
    T alongX[kInputRows][RX + 1];
#pragma unroll
    for (int j = 0; j < kInputRows; ++j)
    {
      special |= S::box ? needsSeparablePasses(p.at[j]) : p.at[j] != p.at[j];
      alongX[j][0] = p.at[j];
#pragma unroll
      for (int w = 1; w <= RX; ++w)
      {
        // (The lanes that read no halo hold the constant there, unused.)
        if (readsHalo(w - 1))
          special |= S::box ? needsSeparablePasses(p.halo[j][w - 1]) : p.halo[j][w - 1] != p.halo[j][w - 1];
        // Every lane shuffles (a shuffle names the whole warp), then the
        // lanes at the warp's ends take their halo instead.
        const T fromLeft = shuffled(p.at[j], w), fromRight = shuffled(p.at[j], -w);
        const T left = side < 0 && readsHalo(w - 1) ? p.halo[j][w - 1] : fromLeft;
        const T right = side > 0 && readsHalo(w - 1) ? p.halo[j][w - 1] : fromRight;
        alongX[j][w] = better<T, Minimum>(better<T, Minimum>(left, alongX[j][w - 1]), right);
      }
    }
#pragma unroll
    for (int k = 2 * RZ; k > 0; --k)
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r)
        acc[k][r] = acc[k - 1][r];
#pragma unroll
    for (int k = 0; k <= 2 * RZ; ++k)
    {
      const int dz = k - RZ; // input plane i is plane dz of output i - k
#pragma unroll
      for (int r = 0; r < kRowsPerThread; ++r)
      {
        bool first = k == 0;
#pragma unroll
        for (int dy = -RY; dy <= RY; ++dy)
        {
          const int w = S::halfWidth(dz, dy);
          if (w < 0)
            continue;
          const T t = alongX[r + RY + dy][w];
          acc[k][r] = first ? t : better<T, Minimum>(acc[k][r], t);
          first = false;
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r)
      if (i >= 2 * RZ && x < g.dims[0] && y + r < g.dims[1])
        to[r * g.dims[0]] = acc[2 * RZ][r];
  }
  if (special && sawSpecial)
    *sawSpecial = 1;
}

// Launches shape S's kernel; false when the grid is too tall.
template <typename T, class S>
bool launchShape(const GridView& image, const int centre[3], bool minimum, int mode, T cv, T* out, int* sawSpecial)
{
  Grid g{};
  for (int a = 0; a < 3; ++a)
  {
    g.dims[a] = image.dims[a];
    g.strides[a] = image.strides[a];
    g.centre[a] = centre[a];
  }
  g.mode = mode;
  const int64_t tiles =
    ((image.dims[0] + kLanes - 1) / kLanes) * ((image.dims[1] + S::tileRows - 1) / S::tileRows);
  // Deep columns of planes read the z halo less often; enough blocks for two
  // full waves keep every multiprocessor busy to the end.
  const int64_t wanted = 2 * int64_t(cuda::multiprocessorCount()) * S::blocksPerSM;
  g.depth = 64;
  while (g.depth > 8 && tiles * ((image.dims[2] + g.depth - 1) / g.depth) < wanted)
    g.depth /= 2;
  const dim3 blocks(static_cast<unsigned>((image.dims[0] + kLanes - 1) / kLanes),
    static_cast<unsigned>((image.dims[1] + S::tileRows - 1) / S::tileRows),
    static_cast<unsigned>((image.dims[2] + g.depth - 1) / g.depth));
  if (blocks.y > 65535 || blocks.z > 65535)
    return false;
  const T* data = static_cast<const T*>(image.data);
  const dim3 threads(kLanes, kWarps);
  (minimum ? registerKernel<T, true, S> : registerKernel<T, false, S>)<<<blocks, threads>>>(data, g, cv, out, sawSpecial);
  cuda::check(cudaGetLastError(), "grey morphology kernel");
  return true;
}

// Launches the kernel when `e` is one of the shapes above and the image is
// 2D or 3D; false, having launched nothing, otherwise.
template <typename T>
bool launch(const GridView& image, const ElementOffsets& e, bool minimum, int mode, T cv, T* out, int* sawSpecial)
{
  if (image.dims[1] == 1 || !e.flat)
    return false;
  int centre[3];
  if (matches<Box3>(e, centre))
    return launchShape<T, Box3>(image, centre, minimum, mode, cv, out, sawSpecial);
  if (matches<Square3>(e, centre))
    return launchShape<T, Square3>(image, centre, minimum, mode, cv, out, sawSpecial);
  if (matches<Ball2>(e, centre))
    return launchShape<T, Ball2>(image, centre, minimum, mode, cv, out, sawSpecial);
  if (matches<Disk2>(e, centre))
    return launchShape<T, Disk2>(image, centre, minimum, mode, cv, out, sawSpecial);
  return false;
}
} // namespace registers
} // namespace morphology
} // namespace topovox
