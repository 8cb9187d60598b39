// EdtSquaredOnDevice.cuh - the GPU's exact Euclidean distances when the
// sampling is 1 on every axis and no indices are asked for (scipy's default
// call). Every squared distance is then an integer, so a pass carries one
// uint32 a voxel, the squared distance so far, instead of the feature path's
// features and doubles, and the result sqrt(d^2) is the same double
// whichever nearest background voxel a tie picks: scipy's bits, and the
// CPU's (DistanceTransform.cpp), without following features back.
//  * along x, the ballots of EdtPassesOnDevice.cuh store (p - q)^2;
//  * along y and z, one block takes 32 neighbouring lines whole into shared
//    memory (position q of line `lane` at tile[32 q + lane]: every read is
//    free of bank conflicts whatever the position), classifies them on
//    each value's excess over its line's least (a value at or past
//    kSquaredWindowLimit, or more than half at or past kSquaredCrowdAt in a
//    pass of many lines, makes a line wide) and answers every voxel of the
//    other lines by a window that grows until the least value plus d^2
//    reaches the best sum, or, on a line with a few finite values only, by
//    the least over them. The lines are read once, where the feature path
//    reads them to classify and again for the windows;
//  * the wide lines go through the same lower envelopes as the feature
//    path, on these integers as doubles (exact: all below 2^32).
// Lines that a block's shared memory does not hold, or too few groups of
// them to fill the device (a 2D image's), are classified and answered the
// same way by three kernels over global memory (tallyAndAnswer). Images of
// one row take the feature path (squaredPathTakes).
#pragma once

#include "EdtPassesOnDevice.cuh"
#include "EdtSquaredLine.h"

#include <cstdint>
#include <cstdlib>

namespace topovox
{
namespace distance
{
namespace
{
constexpr int kSquaredWarps = 16;

// The x pass's value for voxel p whose nearest background voxel on the row
// is q: (p - q)^2, or kNoBackground (-1 as int32) on a row without one.
struct NearestSquared
{
  __device__ int32_t operator()(int p, int q) const
  {
    if (q < 0)
      return -1;
    const uint32_t d = static_cast<uint32_t>(p > q ? p - q : q - p);
    return static_cast<int32_t>(d * d);
  }
};

// Writes an answer: the squared distance for the next pass or, in the last
// (where no line is empty: the image has a background voxel, which every
// line of that pass has reached), the distance.
template <bool Last>
__device__ __forceinline__ void putSquared(int64_t at, uint32_t best, uint32_t* next, double* distances)
{
  if (Last)
    distances[at] = sqrt(static_cast<double>(best));
  else
    next[at] = best;
}

// The squared distances so far, as the envelopes read them.
struct SquaredIn
{
  const uint32_t* g;
  __device__ double operator()(int64_t k, int64_t) const { return envelopeValue(g[k]); }
};

// The envelopes' answers, written as the other lines' are: the squared
// distance for the next pass, or in the last the distance.
template <bool Last>
struct EnvelopeOut
{
  uint32_t* g;
  double* distances;
  int64_t first, step, x, other;
  __device__ void take(int64_t p, int64_t, double gp) const
  {
    putSquared<Last>(first + p * step, squaredOfEnvelope(gp), g, distances);
  }
};

// Adds a run's tally into its line's (shared or global memory).
__device__ __forceinline__ void mergeTally(const LineTally& run, uint32_t* lo, uint32_t* hi, uint32_t* finite)
{
  atomicMin(lo, run.lo);
  atomicMax(hi, run.hi);
  if (run.finite)
    atomicAdd(finite, run.finite);
}

// A block's bookkeeping of its 32 lines, lane by lane: the least and the
// greatest value, the count of values at kSquaredCrowdAt past the least or
// more, the count of finite
// values and, on a line with at most kSparseSeeds of them, their positions
// (the next free one in filled).
struct SquaredLineCounts
{
  unsigned lowest[32], highest[32], crowd[32], finite[32], filled[32], seeds[kSparseSeeds][32];
};
constexpr int kSquaredStaticShared = sizeof(SquaredLineCounts);

// The lines in shared memory: one block a group of 32 lines (x = 32
// blockIdx.x + lane, line group `other` from blockIdx.y on) loads them,
// classifies them, then answers every line that is not wide (squaredAnswer).
// wide[x + nx * other] is written for every line. Not Last: the squared
// distances into `next`; Last: the distances. The line kinds are
// EdtSquaredLine.h's; the wide lines' envelopes come after.
template <bool Last>
__global__ void __launch_bounds__(32 * kSquaredWarps) squaredLinesKernel(const uint32_t* __restrict__ g, Pass pass,
  bool crowdRule, uint32_t* __restrict__ next, double* __restrict__ distances, int* __restrict__ wide)
{
  extern __shared__ uint32_t tile[];
  __shared__ SquaredLineCounts counts;
  const int lane = threadIdx.x, warp = threadIdx.y;
  const int64_t x = blockIdx.x * int64_t(32) + lane;
  const bool inside = x < pass.nx;
  const int len = static_cast<int>(pass.len);
  for (int64_t other = blockIdx.y; other < pass.others; other += gridDim.y)
  {
    if (warp == 0)
    {
      counts.lowest[lane] = kNoBackground, counts.highest[lane] = 0;
      counts.crowd[lane] = 0, counts.finite[lane] = 0, counts.filled[lane] = 0;
    }
    __syncthreads();
    const int64_t first = x + other * pass.otherStride;
    LineTally run;
    for (int q = warp; q < len; q += kSquaredWarps)
    {
      const uint32_t v = inside ? g[first + q * pass.step] : 0;
      tile[q * 32 + lane] = v;
      run.add(v);
    }
    mergeTally(run, counts.lowest + lane, counts.highest + lane, counts.finite + lane);
    __syncthreads();
    const uint32_t lo = counts.lowest[lane], hi = counts.highest[lane];
    const unsigned finite = counts.finite[lane];
    const bool empty = finite == 0, sparse = sparseLine(hi, finite), windows = windowsLine(lo, hi);
    if (sparse)
    {
      for (int q = warp; q < len; q += kSquaredWarps)
        if (tile[q * 32 + lane] != kNoBackground)
          counts.seeds[atomicAdd(counts.filled + lane, 1u)][lane] = static_cast<unsigned>(q);
    }
    else if (crowdRule && windows)
    {
      unsigned far = 0;
      for (int q = warp; q < len; q += kSquaredWarps)
        far += tile[q * 32 + lane] - lo >= kSquaredCrowdAt ? 1 : 0;
      if (far)
        atomicAdd(counts.crowd + lane, far);
    }
    __syncthreads();
    const bool isWide = wideLine(empty, sparse, windows, counts.crowd[lane], len);
    if (warp == 0 && inside)
      wide[x + pass.nx * other] = isWide ? 1 : 0;
    if (inside && !isWide)
      for (int p = warp; p < len; p += kSquaredWarps)
      {
        const uint32_t best = squaredAnswer(
          p, len, lo, empty, sparse, finite, [&](int q) { return tile[q * 32 + lane]; },
          [&](unsigned k) { return static_cast<int>(counts.seeds[k][lane]); });
        putSquared<Last>(first + p * pass.step, best, next, distances);
      }
    __syncthreads(); // the tile and the counts serve the next group
  }
}

// The same classification and answers for lines that shared memory does
// not hold, or too few of them to fill the device in groups of 32 (a 2D
// image's), in three kernels: the lines' least and greatest values and
// finite counts, then their seeds or crowd counts, then one voxel a
// thread. LineStats holds a pass's per-line tallies, each `lines` long
// (seeds: kSparseSeeds times, seed k of line l at k * lines + l).
struct LineStats
{
  uint32_t *lowest, *highest, *finite, *crowd, *filled, *seeds;
  int64_t lines;
};
constexpr int kStatsRun = 16; // positions a thread of the tally kernels

// Calls f(line, first, p0, p1) for each run of kStatsRun positions of the
// thread (x from threadIdx.x, runs from y, line groups from z).
template <typename F>
__device__ void forEachRun(const Pass& pass, F f)
{
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (x >= pass.nx)
    return;
  for (int64_t other = blockIdx.z; other < pass.others; other += gridDim.z)
    for (int64_t p0 = (blockIdx.y * int64_t(blockDim.y) + threadIdx.y) * kStatsRun; p0 < pass.len;
         p0 += int64_t(gridDim.y) * blockDim.y * kStatsRun)
      f(x + pass.nx * other, x + other * pass.otherStride, p0, min(p0 + kStatsRun, pass.len));
}

__global__ void lineStatsKernel(const uint32_t* __restrict__ g, Pass pass, LineStats s)
{
  forEachRun(pass, [&](int64_t line, int64_t first, int64_t p0, int64_t p1) {
    LineTally run;
    for (int64_t p = p0; p < p1; ++p)
      run.add(g[first + p * pass.step]);
    mergeTally(run, s.lowest + line, s.highest + line, s.finite + line);
  });
}

__global__ void lineDetailKernel(const uint32_t* __restrict__ g, Pass pass, LineStats s, bool crowdRule)
{
  forEachRun(pass, [&](int64_t line, int64_t first, int64_t p0, int64_t p1) {
    const uint32_t lo = s.lowest[line], hi = s.highest[line];
    if (sparseLine(hi, s.finite[line]))
    {
      for (int64_t p = p0; p < p1; ++p)
        if (g[first + p * pass.step] != kNoBackground)
          s.seeds[atomicAdd(s.filled + line, 1u) * s.lines + line] = static_cast<uint32_t>(p);
    }
    else if (crowdRule && windowsLine(lo, hi))
    {
      unsigned far = 0;
      for (int64_t p = p0; p < p1; ++p)
        far += g[first + p * pass.step] - lo >= kSquaredCrowdAt ? 1 : 0;
      if (far)
        atomicAdd(s.crowd + line, far);
    }
  });
}

// One voxel a thread, x from threadIdx.x (a warp's loads are neighbouring
// words), the position from y, the line group from z; the thread of
// position 0 writes its line's wide flag.
template <bool Last>
__global__ void lineAnswerKernel(const uint32_t* __restrict__ g, Pass pass, LineStats s, uint32_t* __restrict__ next,
  double* __restrict__ distances, int* __restrict__ wide)
{
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (x >= pass.nx)
    return;
  const int len = static_cast<int>(pass.len);
  for (int64_t other = blockIdx.z; other < pass.others; other += gridDim.z)
  {
    const int64_t line = x + pass.nx * other, first = x + other * pass.otherStride;
    const uint32_t lo = s.lowest[line], hi = s.highest[line];
    const unsigned finite = s.finite[line];
    const bool empty = finite == 0, sparse = sparseLine(hi, finite);
    const bool isWide = wideLine(empty, sparse, windowsLine(lo, hi), s.crowd[line], len);
    const int p0 = static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
    if (p0 == 0)
      wide[line] = isWide ? 1 : 0;
    if (isWide)
      continue;
    for (int p = p0; p < len; p += gridDim.y * blockDim.y)
    {
      const uint32_t best = squaredAnswer(
        p, len, lo, empty, sparse, finite, [&](int q) { return g[first + int64_t(q) * pass.step]; },
        [&](unsigned k) { return static_cast<int>(s.seeds[k * s.lines + line]); });
      putSquared<Last>(first + p * pass.step, best, next, distances);
    }
  }
}

// The shared memory a block needs for lines of `len` positions.
inline size_t squaredTileBytes(int64_t len)
{
  return static_cast<size_t>(len) * 32 * sizeof(uint32_t);
}

// The dynamic shared memory a block of squaredLinesKernel may have (0 when
// the device cannot be asked).
inline size_t squaredSharedRoom()
{
  int device = 0, optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess ||
      optin < kSquaredStaticShared)
    return 0;
  return static_cast<size_t>(optin) - kSquaredStaticShared;
}

// Whether this path takes the transform (no indices asked for).
inline bool squaredPathTakes(const int64_t dims[3], const double sampling[3], const int32_t* indices)
{
  return !indices && squaredPathApplies(dims, sampling);
}

// Whether a pass runs its lines in shared memory (squaredLinesKernel): they
// fit, and their groups of 32 are at least four a multiprocessor.
// TOPOVOX_EDT_SHARED_LINES=0 or 1 forces the choice (the tests run both).
inline bool sharedLines(const Pass& pass)
{
  const char* forced = std::getenv("TOPOVOX_EDT_SHARED_LINES");
  const bool fits = squaredTileBytes(pass.len) <= squaredSharedRoom();
  if (forced && (forced[0] == '0' || forced[0] == '1') && !forced[1])
    return forced[0] == '1' && fits;
  const int64_t groups = (pass.nx + 31) / 32 * pass.others;
  return fits && groups >= 4 * int64_t(cuda::multiprocessorCount());
}

// The lines of a pass by the three kernels above.
template <bool Last>
void tallyAndAnswer(const uint32_t* g, const Pass& pass, uint32_t* next, double* distances, int* wide)
{
  const int64_t lines = pass.nx * pass.others;
  cuda::PooledArray<uint32_t> tallies(static_cast<size_t>(lines) * (5 + kSparseSeeds));
  LineStats s{ tallies.ptr, tallies.ptr + lines, tallies.ptr + 2 * lines, tallies.ptr + 3 * lines,
    tallies.ptr + 4 * lines, tallies.ptr + 5 * lines, lines };
  cuda::check(cudaMemset(s.lowest, 0xff, static_cast<size_t>(lines) * sizeof(uint32_t)), "cudaMemset");
  cuda::check(cudaMemset(s.highest, 0, static_cast<size_t>(lines) * 4 * sizeof(uint32_t)), "cudaMemset");
  const auto planes = static_cast<unsigned>(std::min<int64_t>(pass.others, 65535));
  const int64_t runs = (pass.len + kStatsRun - 1) / kStatsRun;
  const dim3 tallyBlock(32, 8),
    tallyGrid(cuda::blocksFor(pass.nx, 32), static_cast<unsigned>(std::min<int64_t>((runs + 7) / 8, 65535)), planes);
  lineStatsKernel<<<tallyGrid, tallyBlock>>>(g, pass, s);
  cuda::check(cudaGetLastError(), "distance transform line tallies");
  lineDetailKernel<<<tallyGrid, tallyBlock>>>(g, pass, s, crowdRuleHolds(lines));
  cuda::check(cudaGetLastError(), "distance transform line tallies");
  const dim3 block(32, 4),
    grid(cuda::blocksFor(pass.nx, 32), static_cast<unsigned>(std::min<int64_t>((pass.len + 3) / 4, 65535)), planes);
  lineAnswerKernel<Last><<<grid, block>>>(g, pass, s, next, distances, wide);
  cuda::check(cudaGetLastError(), "distance transform windows");
}

// One pass along y or z from the squared distances g: into `next`, or the
// distances when Last.
template <bool Last>
void squaredPass(const uint32_t* g, const Pass& pass, uint32_t* next, double* distances)
{
  const int64_t lines = pass.nx * pass.others;
  cuda::PooledArray<int> wide(static_cast<size_t>(lines)); // the kernels write every line's flag
  if (sharedLines(pass))
  {
    const size_t shared = squaredTileBytes(pass.len);
    cuda::check(cudaFuncSetAttribute(squaredLinesKernel<Last>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                  static_cast<int>(shared)),
      "cudaFuncSetAttribute");
    const dim3 block(32, kSquaredWarps);
    const dim3 grid(cuda::blocksFor(pass.nx, 32), static_cast<unsigned>(std::min<int64_t>(pass.others, 65535)));
    squaredLinesKernel<Last><<<grid, block, shared>>>(g, pass, crowdRuleHolds(lines), next, distances, wide.ptr);
    cuda::check(cudaGetLastError(), "distance transform windows");
  }
  else
    tallyAndAnswer<Last>(g, pass, next, distances, wide.ptr);
  envelopeLines(SquaredIn{ g }, pass, EnvelopeOut<Last>{ next, distances, 0, 0, 0, 0 }, wide.ptr);
}

// The distances of the image whose background `background` tells, when
// squaredPathTakes; false, with nothing written, when it has no background.
template <typename Background>
bool squaredEdtOnDevice(Background background, const int64_t dims[3], double* distances)
{
  const int64_t nx = dims[0], ny = dims[1], nz = dims[2];
  const size_t count = static_cast<size_t>(nx * ny * nz);
  cuda::PooledArray<uint32_t> alongX(count), alongXY(ny > 1 && nz > 1 ? count : 0);
  if (!xPass(background, dims, NearestSquared(), reinterpret_cast<int32_t*>(alongX.ptr)))
    return false;
  const Pass alongY{ nx, ny, nz, nx, nx * ny, 1.0 };
  const Pass alongZ{ nx, nz, ny, nx * ny, nx, 1.0 };
  if (ny > 1 && nz > 1)
  {
    squaredPass<false>(alongX.ptr, alongY, alongXY.ptr, nullptr);
    squaredPass<true>(alongXY.ptr, alongZ, nullptr, distances);
  }
  else if (ny > 1)
    squaredPass<true>(alongX.ptr, alongY, nullptr, distances);
  else
    squaredPass<true>(alongX.ptr, alongZ, nullptr, distances);
  return true;
}
} // namespace
} // namespace distance
} // namespace topovox
