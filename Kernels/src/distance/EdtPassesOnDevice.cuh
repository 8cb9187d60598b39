// EdtPassesOnDevice.cuh - the parts of the GPU's exact Euclidean distance
// transform that its two ways share (DistanceTransformCUDA.cu, features and
// any sampling; EdtSquaredOnDevice.cuh, unit sampling and distances only):
// the x pass by ballots, the description of the lines of a pass along y or
// z, and the lower envelopes of the lines that windows do not take.
#pragma once

#include "EdtLine.h"

#include "../common/CudaUtil.cuh"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdint>

namespace topovox
{
namespace distance
{
namespace
{
constexpr int kThreads = 128;
constexpr unsigned kAll = 0xffffffffu;

// Background predicates for the x pass: voxel (x, y, z) is background.
struct ZeroByte
{
  const uint8_t* foreground;
  int64_t nx, ny;
  __device__ bool operator()(int64_t x, int64_t y, int64_t z) const { return !foreground[x + nx * (y + ny * z)]; }
};

template <typename T>
struct ZeroValue
{
  const T* data;
  int64_t sx, sy, sz;
  __device__ bool operator()(int64_t x, int64_t y, int64_t z) const { return data[x * sx + y * sy + z * sz] == T(0); }
};

// Along x: one warp per row, 32 voxels at a time (a ballot of the chunk's
// background voxels): left to right the nearest background voxel at or
// before each voxel (into fx), right to left the one at or after, and the
// nearer of the two (nearestOf: ties to the left); -1 on a row without
// background; what is stored is nearest(p, that voxel) (NearestFeature:
// the voxel itself). *anyBackground set (once per warp) when a row has one.
template <typename Background, typename Nearest>
__global__ void xPassKernel(
  Background background, int64_t nx, int64_t ny, int64_t rows, Nearest nearest, int32_t* fx, int* anyBackground)
{
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  bool seen = false;
  for (int64_t row = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) >> 5; row < rows; row += warps)
  {
    // Positions within a row in int: the row's x features are int32.
    const int64_t y = row % ny, z = row / ny;
    int32_t* to = fx + row * nx;
    const int n = static_cast<int>(nx);
    int last = -1;
    for (int c = 0; c < n; c += 32)
    {
      const int p = c + lane;
      const unsigned bits = __ballot_sync(kAll, p < n && background(p, y, z));
      const unsigned upTo = bits & (lane == 31 ? kAll : (2u << lane) - 1);
      if (p < n)
        to[p] = upTo ? c + 31 - __clz(upTo) : last;
      if (bits)
        last = c + 31 - __clz(bits);
    }
    seen = seen || last >= 0;
    int next = -1;
    for (int c = (n - 1) / 32 * 32; c >= 0; c -= 32)
    {
      const int p = c + lane;
      const unsigned bits = __ballot_sync(kAll, p < n && background(p, y, z));
      const unsigned from = bits & (kAll << lane);
      const int right = from ? c + __ffs(from) - 1 : next;
      if (p < n)
        to[p] = nearest(p, static_cast<int>(nearestOf(p, to[p], right)));
      if (bits)
        next = c + __ffs(bits) - 1;
    }
  }
  if (__any_sync(kAll, seen) && lane == 0)
    *anyBackground = 1;
}

// Runs the x pass into `out` (one int32 a voxel, nearest(p, q) each);
// false when no row has a background voxel.
template <typename Background, typename Nearest>
bool xPass(Background background, const int64_t dims[3], Nearest nearest, int32_t* out)
{
  cuda::PooledArray<int> anyBackground(1, true);
  const int64_t rows = dims[1] * dims[2];
  const int64_t blocks = std::min<int64_t>((rows + 7) / 8, int64_t(cuda::multiprocessorCount()) * 16);
  xPassKernel<<<static_cast<unsigned>(blocks), 256>>>(background, dims[0], dims[1], rows, nearest, out,
    anyBackground.ptr);
  cuda::check(cudaGetLastError(), "distance transform along x");
  int any = 0;
  cuda::check(cudaMemcpy(&any, anyBackground.ptr, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return any != 0;
}

// What the x pass stores for voxel p of a row whose nearest background
// voxel is q (-1: none on the row): q itself.
struct NearestFeature
{
  __device__ int32_t operator()(int p, int q) const { return q; }
};

// The lines along y (or z) of one pass: line (x, other) starts at voxel
// x + other * otherStride, its positions `step` apart.
struct Pass
{
  int64_t nx, len, others, step, otherStride;
  double s2;
};

// A line of the pass: position q is voxel first + q * step.
template <typename Values>
struct PassIn
{
  Values values;
  int64_t first, step, x;
  __device__ double g(int64_t q) const { return values(first + q * step, x); }
};

// The line at column x of line group `other` (kernels that have both), or
// of linear index `line` = x + nx * other.
template <typename Values>
__device__ PassIn<Values> lineIn(Values values, const Pass& pass, int64_t x, int64_t other)
{
  return { values, x + other * pass.otherStride, pass.step, x };
}
template <typename Values>
__device__ PassIn<Values> lineIn(Values values, const Pass& pass, int64_t line)
{
  return lineIn(values, pass, line % pass.nx, line / pass.nx);
}

// The wide lines by the lower envelope, in two kernels over a batch of
// `count` lines (lines[0..count), in increasing order, so that neighbouring
// threads read neighbouring voxels). The stacks lie in global memory,
// interleaved by line of the batch.
__device__ EnvelopeScratch envelopeStacks(char* memory, int64_t count, int64_t len, int64_t i)
{
  double* z = reinterpret_cast<double*>(memory);
  return { { reinterpret_cast<int32_t*>(z + count * len) + i, count }, { z + i, count } };
}
constexpr int64_t kEnvelopeEntryBytes = sizeof(double) + sizeof(int32_t);

// One thread a line: its envelope (buildEnvelope), the stack's top in tops.
template <typename Values>
__global__ void envelopeBuildKernel(Values values, Pass pass, const int64_t* lines, int64_t count, char* stacks,
  int32_t* tops)
{
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= count)
    return;
  const PassIn<Values> in = lineIn(values, pass, lines[i]);
  tops[i] = static_cast<int32_t>(buildEnvelope(pass.len, pass.s2, in, envelopeStacks(stacks, count, pass.len, i)));
}

// The answers from the envelopes: one thread a segment of kSegment
// positions of a line (the line fastest, for coalesced access), which finds
// its first position's entry by bisection (envelopeEntry) and walks on from
// there as the CPU walks its lines; on a line with no finite value, every
// position carried over.
constexpr int64_t kSegment = 32;
template <typename Values, typename Out>
__global__ void envelopeQueryKernel(Values values, Pass pass, Out out, const int64_t* lines, int64_t count,
  char* stacks, const int32_t* tops)
{
  const int64_t segments = (pass.len + kSegment - 1) / kSegment, total = count * segments;
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < total; t += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t i = t % count, p0 = t / count * kSegment, p1 = std::min(p0 + kSegment, pass.len), line = lines[i];
    const PassIn<Values> in = lineIn(values, pass, line);
    Out o = out;
    o.first = in.first, o.step = pass.step, o.x = in.x, o.other = line / pass.nx;
    const int64_t top = tops[i];
    if (top < 0)
    {
      for (int64_t p = p0; p < p1; ++p)
        o.take(p, p, in.g(p)); // nothing reached yet: carried over
      continue;
    }
    const EnvelopeScratch stack = envelopeStacks(stacks, count, pass.len, i);
    int64_t j = envelopeEntry(static_cast<double>(p0), top, stack.z);
    double zNext = j < top ? stack.z[j + 1] : INFINITY;
    for (int64_t p = p0; p < p1; ++p)
    {
      while (zNext < static_cast<double>(p))
      {
        ++j;
        zNext = j < top ? stack.z[j + 1] : INFINITY;
      }
      takeFromEnvelope(p, j, pass.s2, stack, in, o);
    }
  }
}

// The envelopes of the lines flagged in wide[line] (x + nx * other) of a
// pass, into `out`: the flagged lines in increasing order (CUB's stream
// compaction), then in batches whose stacks fill up to 1 GiB.
template <typename Values, typename Out>
void envelopeLines(Values values, const Pass& pass, const Out& out, const int* wide)
{
  using cuda::check;
  using cuda::PooledArray;
  const int64_t lines = pass.nx * pass.others;
  PooledArray<int64_t> wideLines(static_cast<size_t>(lines));
  PooledArray<int64_t> wideCount(1);
  size_t tempBytes = 0;
  const thrust::counting_iterator<int64_t> all(0);
  check(cub::DeviceSelect::Flagged(nullptr, tempBytes, all, wide, wideLines.ptr, wideCount.ptr, lines),
    "cub::DeviceSelect::Flagged");
  {
    PooledArray<char> temp(tempBytes);
    check(cub::DeviceSelect::Flagged(temp.ptr, tempBytes, all, wide, wideLines.ptr, wideCount.ptr, lines),
      "cub::DeviceSelect::Flagged");
  }
  int64_t count = 0;
  check(cudaMemcpy(&count, wideCount.ptr, sizeof count, cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (!count)
    return;
  const int64_t perLine = pass.len * kEnvelopeEntryBytes;
  const int64_t batch = std::max<int64_t>(1, std::min<int64_t>(count, (int64_t(1) << 30) / perLine));
  PooledArray<char> stacks(static_cast<size_t>(batch * perLine));
  PooledArray<int32_t> tops(static_cast<size_t>(batch));
  for (int64_t first = 0; first < count; first += batch)
  {
    const int64_t n = std::min(batch, count - first);
    envelopeBuildKernel<<<cuda::blocksFor(n, kThreads), kThreads>>>(values, pass, wideLines.ptr + first, n,
      stacks.ptr, tops.ptr);
    check(cudaGetLastError(), "distance transform envelopes");
    envelopeQueryKernel<<<cuda::blocksFor(n * ((pass.len + kSegment - 1) / kSegment), 256,
                            int64_t(cuda::multiprocessorCount()) * 16), 256>>>(
      values, pass, out, wideLines.ptr + first, n, stacks.ptr, tops.ptr);
    check(cudaGetLastError(), "distance transform envelope answers");
  }
}
} // namespace
} // namespace distance
} // namespace topovox
