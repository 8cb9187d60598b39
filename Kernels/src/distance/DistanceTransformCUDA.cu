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
// a segment of it answers (envelopeEntry). The x pass and the envelopes are
// in EdtPassesOnDevice.cuh; a call with unit sampling and without indices
// takes EdtSquaredOnDevice.cuh's integer path instead (the same bits).
#include "topovox/Device.h"
#include "topovox/DistanceTransformOnDevice.h"

#include "DistanceBackends.h"
#include "EdtPassesOnDevice.cuh"
#include "EdtSquaredOnDevice.cuh"

#include "../common/CudaUtil.cuh"
#include "../common/HostCopy.h"
#include "../common/ScalarDispatch.h"

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
  envelopeLines(values, pass, out, wide.ptr);
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
  if (squaredPathTakes(dims, sampling, indices))
    return squaredEdtOnDevice(background, dims, distances);
  const size_t count = static_cast<size_t>(n);
  PooledArray<int32_t> fx(count), fy(ny > 1 && nz > 1 ? count : 0);
  PooledArray<double> g2(ny > 1 && nz > 1 ? count : 0);
  if (!xPass(background, dims, NearestFeature(), fx.ptr))
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
