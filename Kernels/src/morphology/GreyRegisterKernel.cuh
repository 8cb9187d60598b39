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
// kernel on one shared-memory look per element and output. Here a warp
// reads 32 columns and writes the middle 32 - 2 rx, each thread 4 output
// rows, and the block marches along z:
//  * per plane a thread reads, at its own column, the input rows its outputs
//    need (a warp reads 128 contiguous bytes per row of floats); the columns
//    up to `rx` either side come from the neighbouring lanes by shuffles
//    (the rx lanes at either end only read: no lane holds a halo of its
//    own, in registers or in a path of its own);
//  * each element row (dz, dy) is an x interval centred on the column, of
//    half width w (Shape::halfWidth): per input row the minima over the
//    intervals of half width 0 .. rx, then per plane and dz the minimum over
//    the element's rows of that plane, folded into the outputs of the planes
//    it belongs to (one accumulator per output plane in flight);
//  * the next plane's loads are issued before the current plane is reduced,
//    so that a thread has two planes in flight.
// A NaN or a -0 anywhere the kernel reads (the border's constant included)
// is reported through `sawSpecial`, and the output is then to be discarded
// (isNanOrNegativeZero): the caller runs the direct rule, which keeps the
// first of equal values in raster order (the ball's), or scipy's separable
// passes, which keep the last (the box's). Without them equal values have
// equal bits, so a floating-point minimum folds with one instruction
// (fminf) what the rule's strict comparisons fold.
#pragma once

#include "ElementOffsets.h"
#include "MorphologyVoxel.h"
#include "RegisterShapes.cuh"

#include "../common/CudaUtil.cuh"

#include "topovox/Grid.h"

#include <algorithm>
#include <type_traits>

namespace topovox
{
namespace morphology
{
namespace registers
{
// The float kernels' shapes (ptxas -v: no spills for float). The ball: 4
// rows in 78 registers, three blocks per multiprocessor (0.57 ms at 512^3
// on the H200). Measured before the folds took fminf: 0.67 ms so, against
// 0.73 in two blocks, 0.79 for 2 rows in four and 0.81 for 3 rows in three
// (8 box rows in three: 0.57 against 0.53).
using Box3 = Shape<1, 1, false, 4, 4>;
using Square3 = Shape<1, 0, false, 4, 4>;
using Ball2 = Shape<2, 2, true, 4, 3>;
using Disk2 = Shape<2, 0, true, 4, 3>;

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

// One input plane's samples of a thread: its own column per input row.
template <typename T, class S>
struct PlaneSamples
{
  static constexpr int rows = S::rowsPerThread + 2 * S::ry;
  T at[rows];
};

// Columns a warp writes: the rx lanes at either end only read (their
// columns are the others' halo).
template <class S>
constexpr int outputLanes()
{
  return kLanes - 2 * S::rx;
}

// A sample at offsets the border mode gave (-1: outside, the constant).
template <typename T>
__device__ __forceinline__ T sample(const T* __restrict__ data, int64_t plane, int64_t row, int64_t column, T cv)
{
  return plane < 0 || row < 0 || column < 0 ? cv : data[plane + row + column];
}

// `earlier`, unless `later` is strictly better. Floating-point values
// here are neither NaN nor -0 in any output that is kept (see above), so
// fmin and fmax give the same bits in one instruction.
template <typename T, bool Minimum>
__device__ __forceinline__ T better(T earlier, T later)
{
  if constexpr (std::is_floating_point<T>::value)
    return Minimum ? fmin(earlier, later) : fmax(earlier, later);
  else
    return (Minimum ? later < earlier : later > earlier) ? later : earlier;
}

template <typename T, bool Minimum, class S>
__global__ void __launch_bounds__(kLanes * kWarps, S::blocksPerSM)
  registerKernel(const T* __restrict__ data, Grid g, T cv, T* __restrict__ out, int* sawSpecial)
{
  constexpr int RX = S::rx, RY = S::ry, RZ = S::rz;
  constexpr int kInputRows = PlaneSamples<T, S>::rows, kRowsPerThread = S::rowsPerThread;
  const int lane = threadIdx.x;
  // Lane l reads column x (output column x where it writes): lanes 0 .. rx
  // - 1 and the last rx read the columns either side of the warp's
  // outputs, which the others take by shuffles.
  const int64_t x = int64_t(blockIdx.x) * outputLanes<S>() + lane - RX;
  const bool writes = lane >= RX && lane < kLanes - RX && x < g.dims[0];
  const int64_t y = int64_t(blockIdx.y) * S::tileRows + int64_t(threadIdx.y) * kRowsPerThread;
  const int64_t z0 = int64_t(blockIdx.z) * g.depth;
  // The column's offset (the element's centre column), through the border
  // mode where the warp's columns leave the image; -1: the constant.
  int64_t column = x + g.centre[0];
  const int64_t warpFirst = int64_t(blockIdx.x) * outputLanes<S>() - RX + g.centre[0];
  if (g.strides[0] != 1 || warpFirst < 0 || warpFirst + kLanes > g.dims[0])
  {
    const int64_t q = extendIndex(column, g.dims[0], g.mode);
    column = q < 0 ? -1 : q * g.strides[0];
  }
  // The input rows j = 0 .. kInputRows - 1 are rows firstRow + j; where
  // all of them lie inside (every block but those at the y ends) they are
  // read without the border mode.
  const int64_t firstRow = y + g.centre[1] - RY;
  const bool rowsInside = firstRow >= 0 && firstRow + kInputRows <= g.dims[1];
  auto planeAt = [&](int64_t z) {
    const int64_t q = extendIndex(z, g.dims[2], g.mode);
    return q < 0 ? int64_t(-1) : q * g.strides[2];
  };
  auto fetch = [&](int64_t plane, PlaneSamples<T, S>& p) {
    if (rowsInside && plane >= 0 && column >= 0)
    {
      const T* at = data + plane + column + firstRow * g.strides[1];
#pragma unroll
      for (int j = 0; j < kInputRows; ++j, at += g.strides[1])
        p.at[j] = *at;
      return;
    }
#pragma unroll
    for (int j = 0; j < kInputRows; ++j)
    {
      const int64_t q = extendIndex(firstRow + j, g.dims[1], g.mode);
      p.at[j] = sample(data, plane, q < 0 ? -1 : q * g.strides[1], column, cv);
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
      // (Every lane checks its samples: the end lanes' are the others'
      // halo.)
      special |= isNanOrNegativeZero(p.at[j]);
      alongX[j][0] = p.at[j];
#pragma unroll
      for (int w = 1; w <= RX; ++w)
      {
        // The end lanes get their own sample back: their outputs are unused.
        const T left = shuffled(p.at[j], w), right = shuffled(p.at[j], -w);
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
      if (i >= 2 * RZ && writes && y + r < g.dims[1])
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
  const int64_t tiles = ((image.dims[0] + outputLanes<S>() - 1) / outputLanes<S>()) *
    ((image.dims[1] + S::tileRows - 1) / S::tileRows);
  // From 16 planes a radius (at 512^3 on the H200 the box 0.43 ms at 16,
  // 0.45 at 32, 0.51 at 64; the ball 0.55 at 32 and 0.56 at 64).
  g.depth = marchDepth<S>(tiles, image.dims[2], 16);
  const dim3 blocks(static_cast<unsigned>((image.dims[0] + outputLanes<S>() - 1) / outputLanes<S>()),
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
