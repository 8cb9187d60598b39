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
//    free of bank conflicts whatever the position), classifies them with
//    the feature path's limits (EdtLine.h) on each value's excess over its
//    line's least (one at or past windowLimit, or more than half past
//    crowdLimit in a pass of many lines, makes a line wide) and answers
//    every voxel of the other lines by a window that grows until the
//    least value plus d^2 reaches the best sum, or, on a line with a few
//    finite values only, by the least over them. The lines are read once,
//    where the feature path reads them to classify and again for the
//    windows;
//  * the wide lines go through the same lower envelopes as the feature
//    path, on these integers as doubles (exact: all below 2^32).
// Lines longer than the shared memory of a block holds take the feature
// path, as do images of one row (squaredPathTakes).
#pragma once

#include "EdtPassesOnDevice.cuh"

#include <cstdint>

namespace topovox
{
namespace distance
{
namespace
{
constexpr uint32_t kNoBackground = 0xffffffffu; // no background voxel reached yet
constexpr int kSquaredWarps = 16;
// The window radius of this path: in the feature path's (EdtLine.h) the
// windows' loads go to global memory, here to shared memory, and 128
// measured best on the H200 (bench/README.md, the twentieth session: 64,
// 128 and 256; 512^3 smooth 2.36, 1.96, 1.95 ms, five balls 3.48, 2.37,
// 2.36 ms). The crowd rule's radius is the feature path's (16, 24 and no
// rule measured the same).
constexpr int kSquaredWindowRadius = 128;
constexpr unsigned kSparseSeeds = 8;

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

// The squared distances so far, as the envelopes read them.
struct SquaredIn
{
  const uint32_t* g;
  __device__ double operator()(int64_t k, int64_t) const
  {
    const uint32_t v = g[k];
    return v == kNoBackground ? INFINITY : static_cast<double>(v);
  }
};

// The envelopes' answers: the squared distance for the next pass, or, in
// the last pass, the distance.
struct SquaredOut
{
  uint32_t* g;
  int64_t first, step, x, other;
  __device__ void take(int64_t p, int64_t, double gp) const
  {
    g[first + p * step] = gp == INFINITY ? kNoBackground : static_cast<uint32_t>(gp);
  }
};
struct DistanceOut
{
  double* distances;
  int64_t first, step, x, other;
  __device__ void take(int64_t p, int64_t, double gp) const { distances[first + p * step] = sqrt(gp); }
};

// A block's bookkeeping of its 32 lines, lane by lane: the least and the
// greatest value, the count of values past crowdLimit, the count of finite
// values and, on a line with at most kSparseSeeds of them, their positions
// (the next free one in filled).
struct SquaredLineCounts
{
  unsigned lowest[32], highest[32], crowd[32], finite[32], filled[32], seeds[kSparseSeeds][32];
};
constexpr int kSquaredStaticShared = sizeof(SquaredLineCounts);

// One block a group of 32 lines (x = 32 blockIdx.x + lane, line group
// `other` from blockIdx.y on): load, classify, then answer every line that
// is not wide. wide[x + nx * other] is written for every line. Not Last:
// the squared distances into `next`; Last: the distances.
//  * Windows: the limits apply to a value's excess over the line's least
//    value, lo: no position q can give position p less than lo + (p - q)^2,
//    so p's window stops once lo + d^2 reaches its best sum. A line of equal
//    values (voxels far from the background along earlier axes, with the
//    background as far from all of the line) takes no step at all, where
//    the plain limits would send it through the envelope.
//  * A line without a finite value (no background in its plane yet) stays
//    so; a line with 1 to kSparseSeeds finite values (sparse seeds, e.g. a
//    few background voxels in the whole image) takes, at every position,
//    the least over them.
//  * The rest is wide: its envelope comes after.
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
  constexpr uint32_t windowLimit = uint32_t(kSquaredWindowRadius + 1) * (kSquaredWindowRadius + 1);
  constexpr uint32_t crowdAt = uint32_t(kCrowdRadius + 1) * (kCrowdRadius + 1);
  for (int64_t other = blockIdx.y; other < pass.others; other += gridDim.y)
  {
    if (warp == 0)
    {
      counts.lowest[lane] = kNoBackground, counts.highest[lane] = 0;
      counts.crowd[lane] = 0, counts.finite[lane] = 0, counts.filled[lane] = 0;
    }
    __syncthreads();
    const int64_t first = x + other * pass.otherStride;
    uint32_t lo = kNoBackground, hi = 0;
    unsigned finite = 0;
    for (int q = warp; q < len; q += kSquaredWarps)
    {
      const uint32_t v = inside ? g[first + q * pass.step] : 0;
      tile[q * 32 + lane] = v;
      lo = min(lo, v);
      hi = max(hi, v);
      finite += v != kNoBackground ? 1 : 0;
    }
    atomicMin(counts.lowest + lane, lo);
    atomicMax(counts.highest + lane, hi);
    if (finite)
      atomicAdd(counts.finite + lane, finite);
    __syncthreads();
    lo = counts.lowest[lane], hi = counts.highest[lane], finite = counts.finite[lane];
    const bool empty = finite == 0, sparse = hi == kNoBackground && finite >= 1 && finite <= kSparseSeeds;
    bool isWide = hi == kNoBackground || hi - lo >= windowLimit;
    if (sparse)
    {
      for (int q = warp; q < len; q += kSquaredWarps)
        if (tile[q * 32 + lane] != kNoBackground)
          counts.seeds[atomicAdd(counts.filled + lane, 1u)][lane] = static_cast<unsigned>(q);
    }
    else if (crowdRule && !isWide)
    {
      unsigned far = 0;
      for (int q = warp; q < len; q += kSquaredWarps)
        far += tile[q * 32 + lane] - lo >= crowdAt ? 1 : 0;
      if (far)
        atomicAdd(counts.crowd + lane, far);
    }
    __syncthreads();
    isWide = !empty && !sparse && (isWide || 2 * counts.crowd[lane] > static_cast<unsigned>(len));
    if (warp == 0 && inside)
      wide[x + pass.nx * other] = isWide ? 1 : 0;
    if (inside && !isWide)
      for (int p = warp; p < len; p += kSquaredWarps)
      {
        uint32_t best = tile[p * 32 + lane];
        if (sparse)
        {
          best = kNoBackground;
          for (unsigned k = 0; k < finite; ++k)
          {
            const int q = static_cast<int>(counts.seeds[k][lane]);
            const uint32_t d = static_cast<uint32_t>(p > q ? p - q : q - p);
            best = min(best, tile[q * 32 + lane] + d * d);
          }
        }
        else if (!empty)
          // Every value of the line is below lo + windowLimit, so d stays
          // within kSquaredWindowRadius and no sum overflows. A position
          // clamped to the line's end repeats one already tried at a
          // smaller d: it cannot win.
          for (int d = 1; lo + static_cast<uint32_t>(d * d) < best; ++d)
          {
            const uint32_t step = static_cast<uint32_t>(d * d);
            best = min(best, tile[max(p - d, 0) * 32 + lane] + step);
            best = min(best, tile[min(p + d, len - 1) * 32 + lane] + step);
          }
        // (The last pass has no empty line: the image has a background
        // voxel, which every line of that pass has reached.)
        const int64_t at = first + p * pass.step;
        if (Last)
          distances[at] = sqrt(static_cast<double>(best));
        else
          next[at] = best;
      }
    __syncthreads(); // the tile and the counts serve the next group
  }
}

// The shared memory a block needs for lines of `len` positions.
inline size_t squaredTileBytes(int64_t len)
{
  return static_cast<size_t>(len) * 32 * sizeof(uint32_t);
}

// Whether this path takes the transform: unit sampling, no indices, an image
// of more than one row, lines along y and z that fit a block's shared
// memory, and every squared distance below kNoBackground.
inline bool squaredPathTakes(const int64_t dims[3], const double sampling[3], const int32_t* indices)
{
  if (indices || sampling[0] != 1 || sampling[1] != 1 || sampling[2] != 1 || (dims[1] == 1 && dims[2] == 1))
    return false;
  int device = 0, optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess)
    return false;
  const size_t room = static_cast<size_t>(optin) - kSquaredStaticShared;
  uint64_t farthest = 0;
  for (int a = 0; a < 3; ++a)
    farthest += static_cast<uint64_t>(dims[a] - 1) * static_cast<uint64_t>(dims[a] - 1);
  return squaredTileBytes(dims[1]) <= room && squaredTileBytes(dims[2]) <= room && farthest < kNoBackground;
}

// One pass along y or z from the squared distances g: into `next`, or the
// distances when Last.
template <bool Last>
void squaredPass(const uint32_t* g, const Pass& pass, uint32_t* next, double* distances)
{
  const int64_t lines = pass.nx * pass.others;
  cuda::PooledArray<int> wide(static_cast<size_t>(lines)); // the kernel writes every line's flag
  const size_t shared = squaredTileBytes(pass.len);
  cuda::check(cudaFuncSetAttribute(squaredLinesKernel<Last>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                static_cast<int>(shared)),
    "cudaFuncSetAttribute");
  const dim3 block(32, kSquaredWarps);
  const dim3 grid(cuda::blocksFor(pass.nx, 32), static_cast<unsigned>(std::min<int64_t>(pass.others, 65535)));
  squaredLinesKernel<Last><<<grid, block, shared>>>(g, pass, crowdRuleHolds(lines), next, distances, wide.ptr);
  cuda::check(cudaGetLastError(), "distance transform windows");
  if (Last)
    envelopeLines(SquaredIn{ g }, pass, DistanceOut{ distances, 0, 0, 0, 0 }, wide.ptr);
  else
    envelopeLines(SquaredIn{ g }, pass, SquaredOut{ next, 0, 0, 0, 0 }, wide.ptr);
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
