// EulerTransformCUDA.cu - the Euler characteristic transform on the GPU in
// one launch for all directions, and for a batch of images all directions
// of all images (blockIdx.y picks the image): each image is read once (each thread loads
// its voxel's 3x3x3 neighbourhood once), and for every direction the thread
// computes the heights, the cells its voxel owns in that order
// (EulerCells.h, as the CPU path) and their threshold bin, counted in a
// shared-memory histogram per block (global atomics when it does not fit).
// Heights are computed with explicitly rounded operations (no fused
// multiply-add), so they are bit for bit the CPU's (TransformHeights.h).
#include "EulerBackends.h"
#include "EulerCells.h"
#include "EulerTransformBackends.h"

#include "../common/CudaUtil.cuh"
#include "../common/ScalarDispatch.h"

#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace topovox
{
namespace euler
{
namespace
{
constexpr int kThreads = 256;
constexpr size_t kSharedBytes = 48 * 1024;

using cuda::check;

struct TransformGrid
{
  int64_t dims[3], lo[3], hi[3];
  unsigned axes;
  bool tConstruction, useShape;
  double weight, alpha, shapeLevel;
  double origin[3], spacing[3];
  int directions, thresholds;
};

// TransformHeights.h's transformHeight, rounding each operation alone.
__device__ __forceinline__ double heightOf(double x, const double* u, const double p[3], const TransformGrid& g)
{
  if (x != x || (g.useShape && !(x >= g.shapeLevel)))
    return __longlong_as_double(0x7ff8000000000000LL); // NaN
  const double along = __dadd_rn(__dadd_rn(__dmul_rn(u[0], p[0]), __dmul_rn(u[1], p[1])), __dmul_rn(u[2], p[2]));
  return __dadd_rn(g.weight != 0 ? __dmul_rn(g.weight, x) : 0.0, __dmul_rn(g.alpha, along));
}

// images: the first image of the launch, the next ones imageStride
// elements apart; image blockIdx.y's counts start at blockIdx.y * entries.
template <typename T>
__global__ void transformKernel(const T* __restrict__ images, int64_t imageStride, TransformGrid g,
  const double* __restrict__ directions, const double* __restrict__ thresholds,
  unsigned long long* __restrict__ allCounts, bool sharedHist)
{
  extern __shared__ unsigned int hist[];
  const int bins = g.thresholds + 1;
  const int entries = g.directions * bins * 4;
  const T* __restrict__ image = images + int64_t(blockIdx.y) * imageStride;
  unsigned long long* __restrict__ counts = allCounts + int64_t(blockIdx.y) * entries;
  if (sharedHist)
  {
    for (int k = threadIdx.x; k < entries; k += blockDim.x)
      hist[k] = 0;
    __syncthreads();
  }
  const int64_t nx = g.hi[0] - g.lo[0], ny = g.hi[1] - g.lo[1], nz = g.hi[2] - g.lo[2];
  const int64_t total = nx * ny * nz;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < total; v += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t c[3] = { g.lo[0] + v % nx, g.lo[1] + (v / nx) % ny, g.lo[2] + v / (nx * ny) };
    // The neighbourhood's values and positions, once for all directions.
    double x[27], pos[27][3];
    uint32_t exists = 0;
    for (int b = 0; b < 27; ++b)
    {
      int64_t q[3];
      bool in = true;
      for (int a = 0; a < 3; ++a)
      {
        q[a] = c[a] + choiceAxis(b, a);
        in = in && q[a] >= 0 && q[a] < g.dims[a];
      }
      if (!in)
        continue;
      exists |= 1u << b;
      x[b] = static_cast<double>(image[q[0] + g.dims[0] * (q[1] + g.dims[1] * q[2])]);
      for (int a = 0; a < 3; ++a)
        pos[b][a] = __dadd_rn(g.origin[a], __dmul_rn(g.spacing[a], static_cast<double>(q[a])));
    }
    for (int d = 0; d < g.directions; ++d)
    {
      const double* u = directions + 3 * d;
      const double h = heightOf(x[kCenterBit], u, pos[kCenterBit], g);
      if (h != h)
        continue; // absent: owns nothing
      uint32_t preceding = 0;
      for (int b = 0; b < 27; ++b)
        if (b != kCenterBit && ((exists >> b) & 1u) && precedes<false>(heightOf(x[b], u, pos[b], g), h, b))
          preceding |= 1u << b;
      const uint32_t packed =
        g.tConstruction ? ownedCellCounts<true>(preceding, g.axes) : ownedCellCounts<false>(preceding, g.axes);
      const int bin = thresholdBin<false>(h, thresholds, g.thresholds);
      for (int k = 0; k < 4; ++k)
      {
        const unsigned n = (packed >> (8 * k)) & 255u;
        if (!n)
          continue;
        const int at = (d * bins + bin) * 4 + k;
        if (sharedHist)
          atomicAdd(&hist[at], n);
        else
          atomicAdd(&counts[at], static_cast<unsigned long long>(n));
      }
    }
  }
  if (sharedHist)
  {
    __syncthreads();
    for (int k = threadIdx.x; k < entries; k += blockDim.x)
      if (hist[k])
        atomicAdd(&counts[k], static_cast<unsigned long long>(hist[k]));
  }
}
// The launch's constants for one image shape.
TransformGrid transformGrid(const GridView& grid, const EulerTransformOptions& o, const Box& owned,
  const std::vector<std::array<double, 3>>& directions, const std::vector<double>& thresholds)
{
  TransformGrid g{};
  g.axes = 0;
  for (int a = 0; a < 3; ++a)
  {
    g.dims[a] = grid.dims[a];
    g.lo[a] = owned.lo[a];
    g.hi[a] = owned.hi[a];
    g.axes |= grid.dims[a] > 1 ? 1u << a : 0u;
    g.origin[a] = o.origin[a];
    g.spacing[a] = o.spacing[a];
  }
  g.tConstruction = o.construction == Construction::T;
  g.useShape = o.shapeLevel == o.shapeLevel;
  g.shapeLevel = o.shapeLevel;
  g.weight = o.weight;
  g.alpha = o.alpha;
  g.directions = static_cast<int>(directions.size());
  g.thresholds = static_cast<int>(thresholds.size());
  return g;
}

// The directions (3 doubles each) and thresholds on the device.
struct DeviceTables
{
  cuda::DeviceArray<double> directions, thresholds;
  DeviceTables(const std::vector<std::array<double, 3>>& dirs, const std::vector<double>& t)
    : directions(3 * dirs.size())
    , thresholds(std::max<size_t>(1, t.size()))
  {
    std::vector<double> flat;
    for (const auto& u : dirs)
      flat.insert(flat.end(), u.begin(), u.end());
    check(cudaMemcpy(directions.ptr, flat.data(), flat.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
    if (!t.empty())
      check(cudaMemcpy(thresholds.ptr, t.data(), t.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
};

// One image's counts ([direction][bin][dimension]) as histograms.
std::vector<EulerHistogram> histogramsOf(
  const unsigned long long* counts, size_t directions, const std::vector<double>& thresholds)
{
  std::vector<EulerHistogram> out(directions);
  const size_t bins = thresholds.size() + 1;
  for (size_t d = 0; d < directions; ++d)
  {
    out[d].thresholds = thresholds;
    out[d].cells.resize(thresholds.size());
    for (size_t j = 0; j < thresholds.size(); ++j)
      for (int k = 0; k < 4; ++k)
        out[d].cells[j][static_cast<size_t>(k)] = static_cast<int64_t>(counts[(d * bins + j) * 4 + k]);
  }
  return out;
}
} // namespace

std::vector<EulerHistogram> transformHistogramsGPU(const GridView& grid, const EulerTransformOptions& o,
  const std::vector<std::array<double, 3>>& directions, const std::vector<double>& thresholds, const Box& owned)
{
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
  {
    cudaGetLastError();
    throw std::runtime_error("no CUDA device");
  }
  const TransformGrid g = transformGrid(grid, o, owned, directions, thresholds);
  const size_t entries = directions.size() * (thresholds.size() + 1) * 4;
  const DeviceTables tables(directions, thresholds);
  cuda::DeviceArray<unsigned long long> dCounts(entries, true);
  GridView onDevice;
  const std::shared_ptr<void> keep = uploadGrid(grid, onDevice);
  const bool sharedHist = entries * sizeof(unsigned) <= kSharedBytes;
  const int sms = cuda::multiprocessorCount();
  const int64_t voxels = owned.count();
  const int blocks = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>((voxels + kThreads - 1) / kThreads, 8 * sms)));
  if (voxels > 0)
    dispatchScalarType(grid.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      transformKernel<T><<<blocks, kThreads, sharedHist ? entries * sizeof(unsigned) : 0>>>(
        static_cast<const T*>(onDevice.data), 0, g, tables.directions.ptr, tables.thresholds.ptr, dCounts.ptr,
        sharedHist);
    });
  check(cudaGetLastError(), "transform kernel launch");
  std::vector<unsigned long long> counts(entries);
  check(cudaMemcpy(counts.data(), dCounts.ptr, entries * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
    "cudaMemcpy");
  return histogramsOf(counts.data(), directions.size(), thresholds);
}

std::vector<std::vector<EulerHistogram>> transformHistogramsBatchGPU(const std::vector<GridView>& images,
  const EulerTransformOptions& o, const std::vector<std::array<double, 3>>& directions,
  const std::vector<double>& thresholds)
{
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
  {
    cudaGetLastError();
    throw std::runtime_error("no CUDA device");
  }
  const GridView& first = images.front();
  const TransformGrid g = transformGrid(first, o, first.wholeBox(), directions, thresholds);
  const size_t entries = directions.size() * (thresholds.size() + 1) * 4;
  const DeviceTables tables(directions, thresholds);
  const int64_t n = first.voxelCount(), count = static_cast<int64_t>(images.size());
  cuda::DeviceArray<unsigned long long> dCounts(static_cast<size_t>(count) * entries, true);
  const bool sharedHist = entries * sizeof(unsigned) <= kSharedBytes;
  const int sms = cuda::multiprocessorCount();
  // Enough blocks per image to fill the device once with the whole batch.
  const int64_t perImage = std::max<int64_t>(1, std::min<int64_t>((n + kThreads - 1) / kThreads,
    (8 * int64_t(sms) + count - 1) / count));
  dispatchScalarType(first.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // The batch, packed image after image (a non-contiguous view through a
    // contiguous copy on the host).
    cuda::DeviceArray<T> dImages(static_cast<size_t>(count * n));
    std::vector<T> staging;
    for (int64_t k = 0; k < count; ++k)
    {
      const GridView& im = images[static_cast<size_t>(k)];
      const T* from = static_cast<const T*>(im.data);
      if (!im.isContiguous())
      {
        staging.resize(static_cast<size_t>(n));
        for (int64_t z = 0, at = 0; z < im.dims[2]; ++z)
          for (int64_t y = 0; y < im.dims[1]; ++y)
            for (int64_t x = 0; x < im.dims[0]; ++x)
              staging[static_cast<size_t>(at++)] = from[x * im.strides[0] + y * im.strides[1] + z * im.strides[2]];
        from = staging.data();
      }
      check(cudaMemcpy(dImages.ptr + k * n, from, static_cast<size_t>(n) * sizeof(T), cudaMemcpyHostToDevice),
        "cudaMemcpy");
    }
    for (int64_t k0 = 0; k0 < count; k0 += 65535) // CUDA's limit on gridDim.y
    {
      const dim3 grid(static_cast<unsigned>(perImage), static_cast<unsigned>(std::min<int64_t>(65535, count - k0)));
      transformKernel<T><<<grid, kThreads, sharedHist ? entries * sizeof(unsigned) : 0>>>(dImages.ptr + k0 * n, n, g,
        tables.directions.ptr, tables.thresholds.ptr, dCounts.ptr + k0 * static_cast<int64_t>(entries), sharedHist);
      check(cudaGetLastError(), "transform kernel launch");
    }
  });
  std::vector<unsigned long long> counts(static_cast<size_t>(count) * entries);
  check(cudaMemcpy(counts.data(), dCounts.ptr, counts.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost),
    "cudaMemcpy");
  std::vector<std::vector<EulerHistogram>> out(images.size());
  for (size_t k = 0; k < images.size(); ++k)
    out[k] = histogramsOf(counts.data() + k * entries, directions.size(), thresholds);
  return out;
}
}
}
