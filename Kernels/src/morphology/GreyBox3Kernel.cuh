// GreyBox3Kernel.cuh - the grey minimum or maximum over a flat box of 3 x 3
// (x, y) by 3 or 1 (z), any origin and border mode, the common case of
// grey_erosion(size=3) and of opening and closing: a kernel of registers and
// warp shuffles, without shared memory or barriers.
//
// Why a kernel of its own: the general box kernel (greyBoxKernel) stages
// every plane through shared memory in three passes with two barriers, and
// spent most of its time there, not on memory (0.87 TB/s at 512^3). Here a
// warp owns 32 columns and each thread 4 output rows of a 32 x 32 tile,
// marching along z:
//  * per plane a thread reads the 6 input rows of its 4 outputs at its own
//    column (a warp reads 128 contiguous bytes per row of floats); the
//    columns either side come from the neighbouring lanes by shuffles, and
//    lanes 0 and 31 read the one column past the warp's ends;
//  * minima along x, then y (rows in order), then z over the last three
//    planes, kept in registers; the next plane's loads are issued before
//    the current plane is reduced, so that a thread has two planes in
//    flight.
// Each pass compares strictly and in raster order, so among equal values
// (+0 and -0) the first in (z, y, x) order survives, as in the direct rule
// and the general box kernel. A NaN is reported through `sawNaN`; the caller
// then discards the output (scipy's NaN rule is the CPU's).
#pragma once

#include "MorphologyVoxel.h"

#include "../common/CudaUtil.cuh"

#include "topovox/Grid.h"

#include <algorithm>

namespace topovox
{
namespace morphology
{
namespace box3
{
constexpr int kLanes = 32, kWarps = 8;
constexpr int kRowsPerThread = 4;
constexpr int kTileRows = kWarps * kRowsPerThread; // output rows per block
constexpr int kInputRows = kRowsPerThread + 2;     // input rows per thread

struct Grid
{
  int64_t dims[3], strides[3];
  int lo[3];  // the box's smallest offset per axis
  int mode;   // BorderMode
  int depth;  // output planes per block
};

// The value of lane - 1 (up) or lane + 1 (down); sub-word types travel as int.
template <typename T>
__device__ __forceinline__ T fromLane(T v, bool up)
{
  if constexpr (sizeof(T) < 4)
  {
    const int w = static_cast<int>(v);
    return static_cast<T>(up ? __shfl_up_sync(0xffffffffu, w, 1) : __shfl_down_sync(0xffffffffu, w, 1));
  }
  else
    return up ? __shfl_up_sync(0xffffffffu, v, 1) : __shfl_down_sync(0xffffffffu, v, 1);
}

// One input plane's samples of a thread: its own column per row (`at`), and
// for lanes 0 and 31 the column past the warp's end (`edge`).
template <typename T>
struct PlaneSamples
{
  T at[kInputRows], edge[kInputRows];
};

// A sample at element offsets found with the border mode (-1: outside, the
// constant).
template <typename T>
__device__ __forceinline__ T sample(const T* __restrict__ data, int64_t plane, int64_t row, int64_t column, T cv)
{
  return plane < 0 || row < 0 || column < 0 ? cv : data[plane + row + column];
}

template <typename T, bool Minimum>
__device__ __forceinline__ T better(T earlier, T later)
{
  return (Minimum ? later < earlier : later > earlier) ? later : earlier;
}

template <typename T, bool Minimum, int SpanZ>
__global__ void __launch_bounds__(kLanes * kWarps) box3Kernel(const T* __restrict__ data, Grid g, T cv,
  T* __restrict__ out, int* sawNaN)
{
  const int lane = threadIdx.x;
  const int64_t x = int64_t(blockIdx.x) * kLanes + lane;
  const int64_t y = int64_t(blockIdx.y) * kTileRows + int64_t(threadIdx.y) * kRowsPerThread;
  const int64_t z0 = int64_t(blockIdx.z) * g.depth;
  const bool edgeLane = lane == 0 || lane == kLanes - 1;
  // Columns: this lane's is the box's middle one; lanes 0 and 31 also read
  // the box's first (lane 0) or last (lane 31) column.
  int64_t column = x + g.lo[0] + 1, edgeColumn = lane == 0 ? x + g.lo[0] : x + g.lo[0] + 2;
  const int64_t warpFirst = int64_t(blockIdx.x) * kLanes + g.lo[0];
  if (g.strides[0] != 1 || warpFirst < 0 || warpFirst + kLanes + 1 >= g.dims[0])
  {
    const int64_t q = extendIndex(column, g.dims[0], g.mode), e = extendIndex(edgeColumn, g.dims[0], g.mode);
    column = q < 0 ? -1 : q * g.strides[0];
    edgeColumn = e < 0 ? -1 : e * g.strides[0];
  }
  int64_t rows[kInputRows];
#pragma unroll
  for (int j = 0; j < kInputRows; ++j)
  {
    const int64_t q = extendIndex(y + g.lo[1] + j, g.dims[1], g.mode);
    rows[j] = q < 0 ? -1 : q * g.strides[1];
  }
  auto planeAt = [&](int64_t z) {
    const int64_t q = extendIndex(z, g.dims[2], g.mode);
    return q < 0 ? int64_t(-1) : q * g.strides[2];
  };
  auto fetch = [&](int64_t plane, PlaneSamples<T>& p) {
#pragma unroll
    for (int j = 0; j < kInputRows; ++j)
    {
      p.at[j] = sample(data, plane, rows[j], column, cv);
      p.edge[j] = edgeLane ? sample(data, plane, rows[j], edgeColumn, cv) : cv;
    }
  };
  const int64_t planes = min(int64_t(g.depth), g.dims[2] - z0) + SpanZ;
  const int64_t planeStride = g.dims[0] * g.dims[1];
  T* to = out + x + g.dims[0] * y + planeStride * (z0 - SpanZ);
  bool nan = false;
  T older[kRowsPerThread], old[kRowsPerThread];
#pragma unroll
  for (int r = 0; r < kRowsPerThread; ++r)
    older[r] = old[r] = cv;
  PlaneSamples<T> next;
  fetch(planeAt(z0 + g.lo[2]), next);
  for (int64_t i = 0; i < planes; ++i, to += planeStride)
  {
    const PlaneSamples<T> p = next;
    if (i + 1 < planes)
      fetch(planeAt(z0 + g.lo[2] + i + 1), next);
    T alongX[kInputRows];
#pragma unroll
    for (int j = 0; j < kInputRows; ++j)
    {
      nan = nan || p.at[j] != p.at[j] || p.edge[j] != p.edge[j];
      T left = fromLane(p.at[j], true), right = fromLane(p.at[j], false);
      if (lane == 0)
        left = p.edge[j];
      if (lane == kLanes - 1)
        right = p.edge[j];
      alongX[j] = better<T, Minimum>(better<T, Minimum>(left, p.at[j]), right);
    }
#pragma unroll
    for (int r = 0; r < kRowsPerThread; ++r)
    {
      const T inPlane = better<T, Minimum>(better<T, Minimum>(alongX[r], alongX[r + 1]), alongX[r + 2]);
      T result = inPlane;
      if constexpr (SpanZ == 2)
      {
        result = better<T, Minimum>(better<T, Minimum>(older[r], old[r]), inPlane);
        older[r] = old[r];
        old[r] = inPlane;
      }
      if ((SpanZ == 0 || i >= SpanZ) && x < g.dims[0] && y + r < g.dims[1])
        to[r * g.dims[0]] = result;
    }
  }
  if (nan && sawNaN)
    *sawNaN = 1;
}

// Launches the kernel when the box is 3 x 3 by 3 or 1 on a 2D or 3D image
// (`lo`, `span`: the box's smallest offset and length - 1 per axis); false,
// having launched nothing, otherwise.
template <typename T>
bool launch(const GridView& image, const int lo[3], const int span[3], bool minimum, int mode, T cv, T* out,
  int* sawNaN)
{
  if (span[0] != 2 || span[1] != 2 || (span[2] != 2 && span[2] != 0) || image.dims[1] == 1)
    return false;
  Grid g{};
  for (int a = 0; a < 3; ++a)
  {
    g.dims[a] = image.dims[a];
    g.strides[a] = image.strides[a];
    g.lo[a] = lo[a];
  }
  g.mode = mode;
  const int64_t tiles = ((image.dims[0] + kLanes - 1) / kLanes) * ((image.dims[1] + kTileRows - 1) / kTileRows);
  // Deep columns of planes read the z halo less often; enough blocks for two
  // full waves keep every multiprocessor busy to the end.
  const int64_t wanted = 2 * int64_t(cuda::multiprocessorCount()) * (2048 / (kLanes * kWarps));
  g.depth = 64;
  while (g.depth > 8 && tiles * ((image.dims[2] + g.depth - 1) / g.depth) < wanted)
    g.depth /= 2;
  const dim3 blocks(static_cast<unsigned>((image.dims[0] + kLanes - 1) / kLanes),
    static_cast<unsigned>((image.dims[1] + kTileRows - 1) / kTileRows),
    static_cast<unsigned>((image.dims[2] + g.depth - 1) / g.depth));
  if (blocks.y > 65535 || blocks.z > 65535)
    return false;
  const T* data = static_cast<const T*>(image.data);
  const dim3 threads(kLanes, kWarps);
  if (span[2] == 2)
    (minimum ? box3Kernel<T, true, 2> : box3Kernel<T, false, 2>)<<<blocks, threads>>>(data, g, cv, out, sawNaN);
  else
    (minimum ? box3Kernel<T, true, 0> : box3Kernel<T, false, 0>)<<<blocks, threads>>>(data, g, cv, out, sawNaN);
  cuda::check(cudaGetLastError(), "grey morphology kernel");
  return true;
}
} // namespace box3
} // namespace morphology
} // namespace topovox
