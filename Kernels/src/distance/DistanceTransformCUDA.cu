// DistanceTransformCUDA.cu - the exact Euclidean distance transform on the
// GPU, axis by axis as on the CPU (EdtLine.h), but carrying one int32 per
// voxel and axis instead of the CPU's squared distance and features:
//  * along x, one warp per row finds each voxel's nearest background voxel
//    on the row with ballots: fx;
//  * along y, the row fy whose x feature is nearest; the squared distance so
//    far, g2, is kept for the next axis (g1 is recomputed from fx);
//  * along z, the plane fz, and at once the result: the nearest background
//    voxel of (x, y, z) is (fx at (x, fy', fz), fy' = fy at (x, y, fz), fz),
//    from which the distance is computed as scipy computes it (the last
//    pass, along y for an image of one plane, writes the result itself).
// Along y and z a thread handles one voxel: neighbouring threads hold
// neighbouring x and try the same positions of their lines at once
// (nearestInWindow, coalesced). A first kernel chooses, line by line as the
// CPU does (lineTakesWindows), so that both give the same bits: a line with
// a voxel farther than kWindowRadius from every background candidate, or
// with most voxels farther than kCrowdRadius, goes through the lower
// envelope instead: one thread a line builds it (buildEnvelope), one thread
// a segment of it answers (envelopeEntry).
#include "topovox/Device.h"
#include "topovox/DistanceTransformOnDevice.h"

#include "DistanceBackends.h"
#include "EdtLine.h"

#include "../common/CudaUtil.cuh"
#include "../common/HostCopy.h"
#include "../common/ScalarDispatch.h"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

namespace topovox
{
namespace distance
{
namespace
{
using cuda::check;
using cuda::PooledArray;
constexpr int kThreads = 128;

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
// background. *anyBackground set (once per warp) when a row has one.
constexpr unsigned kAll = 0xffffffffu;
template <typename Background>
__global__ void xPassKernel(Background background, int64_t nx, int64_t ny, int64_t rows, int32_t* fx, int* anyBackground)
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
        to[p] = static_cast<int32_t>(nearestOf(p, to[p], right));
      if (bits)
        next = c + __ffs(bits) - 1;
    }
  }
  if (__any_sync(kAll, seen) && lane == 0)
    *anyBackground = 1;
}

// The squared distances so far, voxel k on the line of x coordinate x:
// after the x pass recomputed from fx as the CPU computes them, after the y
// pass stored.
struct FromX
{
  const int32_t* fx;
  double s2;
  __device__ double operator()(int64_t k, int64_t x) const
  {
    const int32_t f = fx[k];
    return f < 0 ? INFINITY : firstAxisG(s2, x, f);
  }
};
struct Stored
{
  const double* g;
  __device__ double operator()(int64_t k, int64_t) const { return g[k]; }
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

// Where a pass puts its answers (take(p, q, g): position p's nearest is
// position q of the line, at squared distance g). Not the last pass: q
// itself, and g for the next pass when it needs it.
struct FeatureOut
{
  int32_t* feature;
  double* g; // null when no later pass reads it
  int64_t first, step, x, other; // the line, set per line
  __device__ void take(int64_t p, int64_t q, double gp) const
  {
    const int64_t at = first + p * step;
    feature[at] = static_cast<int32_t>(q);
    if (g)
      g[at] = gp;
  }
};

// The last pass (along z, or along y for an image of one plane): the
// nearest background voxel, followed back through the earlier passes'
// features, its distance as scipy computes it and, when asked, its
// coordinates (n x, then n y, then n z).
struct ResultOut
{
  const int32_t* fx;
  const int32_t* fy; // null: no pass along y before this one
  int64_t nx, ny, n;
  double sampling[3];
  double* distances;
  int32_t* indices;
  bool alongZ;
  int64_t first, step, x, other;
  __device__ void take(int64_t p, int64_t q, double) const
  {
    int64_t c[3];
    int32_t f[3];
    if (alongZ)
    {
      c[0] = x, c[1] = other, c[2] = p;
      f[2] = static_cast<int32_t>(q);
      f[1] = fy ? fy[x + nx * (other + ny * q)] : 0;
    }
    else
    {
      c[0] = x, c[1] = p, c[2] = other;
      f[1] = static_cast<int32_t>(q);
      f[2] = static_cast<int32_t>(other);
    }
    f[0] = fx[x + nx * (f[1] + ny * f[2])];
    const int64_t k = first + p * step;
    distances[k] = edtDistance(f, c, sampling);
    if (indices)
      for (int a = 0; a < 3; ++a)
        indices[a * n + k] = f[a];
  }
};

// nearestInWindow's vote on the GPU: whether any thread of the warp needs
// another step.
struct WarpVote
{
  __device__ bool operator()(bool b) const { return __any_sync(kAll, b) != 0; }
};

// The line choice (lineTakesWindows, the CPU's), counted in parallel: a
// thread takes kClassifyRun positions of a line (x from threadIdx.x, so
// that neighbouring threads read neighbouring voxels), sets far[line] when
// one of them reaches windowLimit and adds those reaching crowdLimit to
// crowd[line]; decideKernel then sets far[line] = 1 for every line that goes
// through the envelope. (One thread a whole line would leave a 2D image's
// few thousand threads waiting on one load after another.)
constexpr int kClassifyRun = 16;
template <typename Values>
__global__ void classifyKernel(Values values, Pass pass, int* far, int* crowd)
{
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (x >= pass.nx)
    return;
  const double limit = windowLimit(pass.s2),
               crowdAt = crowdRuleHolds(pass.nx * pass.others) ? crowdLimit(pass.s2) : INFINITY;
  for (int64_t other = blockIdx.z; other < pass.others; other += gridDim.z)
  {
    const PassIn<Values> in = lineIn(values, pass, x, other);
    for (int64_t p0 = (blockIdx.y * int64_t(blockDim.y) + threadIdx.y) * kClassifyRun; p0 < pass.len;
         p0 += int64_t(gridDim.y) * blockDim.y * kClassifyRun)
    {
      bool anyFar = false;
      int count = 0;
      for (int64_t p = p0; p < p0 + kClassifyRun && p < pass.len; ++p)
      {
        const double g = in.g(p);
        anyFar = anyFar || !(g < limit);
        count += g >= crowdAt ? 1 : 0;
      }
      const int64_t line = x + pass.nx * other;
      if (anyFar)
        far[line] = 1;
      if (count)
        atomicAdd(crowd + line, count);
    }
  }
}

__global__ void decideKernel(int64_t lines, int64_t len, int* far, const int* crowd)
{
  for (int64_t line = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; line < lines;
       line += int64_t(gridDim.x) * blockDim.x)
    if (2 * int64_t(crowd[line]) > len)
      far[line] = 1;
}

// One voxel a thread of the lines that take windows: x from threadIdx.x,
// the position along the line from y, the line's other coordinate from z.
// A warp's 32 threads share their position and read the same window at
// once.
template <typename Values, typename Out>
__global__ void windowKernel(Values values, Pass pass, Out out, const __grid_constant__ WindowSteps steps,
  const int* wide)
{
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  for (int64_t other = blockIdx.z; other < pass.others; other += gridDim.z)
  {
    const bool active = x < pass.nx && !wide[x + pass.nx * other];
    if (!__any_sync(kAll, active))
      continue;
    for (int64_t p = blockIdx.y * int64_t(blockDim.y) + threadIdx.y; p < pass.len; p += int64_t(gridDim.y) * blockDim.y)
    {
      const PassIn<Values> in = lineIn(values, pass, x, other);
      const double gp = active ? in.g(p) : 0.0;
      double best;
      const int64_t q = nearestInWindow(p, gp, pass.len, steps, in, active, WarpVote(), &best);
      if (active)
      {
        Out o = out;
        o.first = in.first, o.step = pass.step, o.x = x, o.other = other;
        o.take(p, q, best);
      }
    }
  }
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

// Runs one pass along y or z into `out`: windows, then the envelopes of the
// wide lines, if any.
template <typename Values, typename Out>
void runPass(Values values, const Pass& pass, const Out& out)
{
  const int64_t lines = pass.nx * pass.others;
  PooledArray<int> wide(static_cast<size_t>(lines), true), crowd(static_cast<size_t>(lines), true);
  {
    const dim3 block(32, 8);
    const int64_t runs = (pass.len + kClassifyRun - 1) / kClassifyRun;
    const dim3 grid(cuda::blocksFor(pass.nx, 32), static_cast<unsigned>(std::min<int64_t>((runs + 7) / 8, 65535)),
      static_cast<unsigned>(std::min<int64_t>(pass.others, 65535)));
    classifyKernel<<<grid, block>>>(values, pass, wide.ptr, crowd.ptr);
    check(cudaGetLastError(), "distance transform line choice");
    decideKernel<<<cuda::blocksFor(lines, kThreads, 1 << 20), kThreads>>>(lines, pass.len, wide.ptr, crowd.ptr);
    check(cudaGetLastError(), "distance transform line choice");
  }
  const dim3 block(32, 4);
  const dim3 grid(cuda::blocksFor(pass.nx, 32), static_cast<unsigned>(std::min<int64_t>((pass.len + 3) / 4, 65535)),
    static_cast<unsigned>(std::min<int64_t>(pass.others, 65535)));
  windowKernel<<<grid, block>>>(values, pass, out, windowSteps(pass.s2), wide.ptr);
  check(cudaGetLastError(), "distance transform windows");
  // The wide lines in increasing order (CUB's stream compaction).
  PooledArray<int64_t> wideLines(static_cast<size_t>(lines));
  PooledArray<int64_t> wideCount(1);
  size_t tempBytes = 0;
  const thrust::counting_iterator<int64_t> all(0);
  check(cub::DeviceSelect::Flagged(nullptr, tempBytes, all, wide.ptr, wideLines.ptr, wideCount.ptr, lines),
    "cub::DeviceSelect::Flagged");
  {
    PooledArray<char> temp(tempBytes);
    check(cub::DeviceSelect::Flagged(temp.ptr, tempBytes, all, wide.ptr, wideLines.ptr, wideCount.ptr, lines),
      "cub::DeviceSelect::Flagged");
  }
  int64_t count = 0;
  check(cudaMemcpy(&count, wideCount.ptr, sizeof count, cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (!count)
    return;
  // Batches of lines whose stacks fill up to 1 GiB.
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

// The result of an image of one row (or column of rows of one voxel): the
// x pass's features only.
__global__ void xResultKernel(const int32_t* __restrict__ fx, int64_t nx, int64_t n, double sx, double sy, double sz,
  double* distances, int32_t* indices)
{
  const double sampling[3] = { sx, sy, sz };
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t c[3] = { k % nx, k / nx, 0 };
    const int32_t f[3] = { fx[k], static_cast<int32_t>(c[1]), 0 };
    distances[k] = edtDistance(f, c, sampling);
    if (indices)
      for (int a = 0; a < 3; ++a)
        indices[a * n + k] = f[a];
  }
}
} // namespace

// The transform of the image whose background `background` tells, into
// device buffers; false, with nothing written, when it has no background.
template <typename Background>
bool edtOnDevice(Background background, const int64_t dims[3], const double sampling[3], double* distances,
  int32_t* indices)
{
  const int64_t nx = dims[0], ny = dims[1], nz = dims[2], n = nx * ny * nz;
  if (std::max(nx, std::max(ny, nz)) > INT_MAX)
    throw std::runtime_error("the GPU distance transform takes images of up to 2^31 - 1 voxels a side");
  const size_t count = static_cast<size_t>(n);
  PooledArray<int32_t> fx(count), fy(ny > 1 && nz > 1 ? count : 0);
  PooledArray<double> g2(ny > 1 && nz > 1 ? count : 0);
  PooledArray<int> anyBackground(1, true);
  const int64_t rows = ny * nz;
  const int64_t xBlocks = std::min<int64_t>((rows + 7) / 8, int64_t(cuda::multiprocessorCount()) * 16);
  xPassKernel<<<static_cast<unsigned>(xBlocks), 256>>>(background, nx, ny, rows, fx.ptr, anyBackground.ptr);
  check(cudaGetLastError(), "distance transform along x");
  int any = 0;
  check(cudaMemcpy(&any, anyBackground.ptr, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (!any)
    return false;
  const FromX fromX{ fx.ptr, sampling[0] * sampling[0] };
  ResultOut result{ fx.ptr, nullptr, nx, ny, n, { sampling[0], sampling[1], sampling[2] }, distances, indices, true,
    0, 0, 0, 0 };
  const Pass alongY{ nx, ny, nz, nx, nx * ny, sampling[1] * sampling[1] };
  const Pass alongZ{ nx, nz, ny, nx * ny, nx, sampling[2] * sampling[2] };
  if (nz > 1 && ny > 1)
  {
    runPass(fromX, alongY, FeatureOut{ fy.ptr, g2.ptr, 0, 0, 0, 0 });
    result.fy = fy.ptr;
    runPass(Stored{ g2.ptr }, alongZ, result);
  }
  else if (nz > 1)
    runPass(fromX, alongZ, result);
  else if (ny > 1)
  {
    result.alongZ = false;
    runPass(fromX, alongY, result);
  }
  else
  {
    xResultKernel<<<cuda::blocksFor(n, kThreads, 1 << 20), kThreads>>>(
      fx.ptr, nx, n, sampling[0], sampling[1], sampling[2], distances, indices);
    check(cudaGetLastError(), "distance transform results");
  }
  return true;
}

void edtGPU(const uint8_t* fg, const int64_t dims[3], const double sampling[3], bool withIndices, DistanceTransform& out)
{
  const size_t count = static_cast<size_t>(dims[0] * dims[1] * dims[2]);
  PooledArray<uint8_t> foreground(count);
  PooledArray<double> distances(count);
  PooledArray<int32_t> indices(withIndices ? 3 * count : 0);
  const int threads = defaultThreadCount();
  cuda::copyToDevice(foreground.ptr, fg, count, threads);
  if (!edtOnDevice(ZeroByte{ foreground.ptr, dims[0], dims[1] }, dims, sampling, distances.ptr,
        withIndices ? indices.ptr : nullptr))
    throw std::runtime_error("the distance transform needs a background voxel");
  out.distances.resize(count);
  cuda::copyToHost(out.distances.data(), distances.ptr, count * sizeof(double), threads);
  if (withIndices)
    for (int a = 0; a < 3; ++a)
    {
      out.indices[a].resize(count);
      cuda::copyToHost(out.indices[a].data(), indices.ptr + a * count, count * sizeof(int32_t), threads);
    }
}
} // namespace distance

namespace
{
using cuda::check;
using cuda::PooledArray;

// scipy's answer without background: the nearest "background" voxel is index
// -1 on numpy's first axis and 0 on the others (DistanceTransform.h).
__global__ void noBackgroundKernel(int64_t nx, int64_t ny, int64_t nz, int first, double sx, double sy, double sz,
  double* distances, int32_t* indices)
{
  const double sampling[3] = { sx, sy, sz };
  const int64_t n = nx * ny * nz;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t c[3] = { k % nx, (k / nx) % ny, k / (nx * ny) };
    int32_t f[3];
    for (int a = 0; a < 3; ++a)
    {
      f[a] = a == first ? -1 : 0;
      if (indices)
        indices[a * n + k] = f[a];
    }
    distances[k] = distance::edtDistance(f, c, sampling);
  }
}
} // namespace

void distanceTransformEdtOnDevice(const GridView& image, const double sampling[3], double* distances, int32_t* indices)
{
  const std::string why = validateGrid(image);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (image.memory != MemorySpace::Device)
    throw std::invalid_argument("the device distance API needs the image in GPU memory (DistanceTransform.h takes "
                                "host memory)");
  if (!distances)
    throw std::invalid_argument("no output buffer for the distances");
  for (int a = 0; a < 3; ++a)
    if (!(sampling[a] > 0) || !std::isfinite(sampling[a]))
      throw std::invalid_argument("the sampling must be positive and finite");
  const int64_t* dims = image.dims;
  const int64_t n = image.voxelCount();
  bool any = false;
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const distance::ZeroValue<T> background{ static_cast<const T*>(image.data), image.strides[0], image.strides[1],
      image.strides[2] };
    any = distance::edtOnDevice(background, dims, sampling, distances, indices);
  });
  if (!any)
  {
    int first = 0;
    for (int a = 2; a > 0 && first == 0; --a)
      if (dims[a] > 1)
        first = a;
    noBackgroundKernel<<<cuda::blocksFor(n, distance::kThreads, 1 << 20), distance::kThreads>>>(
      dims[0], dims[1], dims[2], first, sampling[0], sampling[1], sampling[2], distances, indices);
    check(cudaGetLastError(), "distance transform without background");
  }
  check(cudaDeviceSynchronize(), "distance transform");
}
}
