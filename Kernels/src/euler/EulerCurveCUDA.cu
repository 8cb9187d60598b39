// EulerCurveCUDA.cu - the GPU path, as the specification asks: one launch
// over the whole grid, one thread per voxel; each block stages a 32x8 tile
// of order keys with a one-voxel halo in shared memory, three z-planes at a
// time while it marches along z (rows of 32 consecutive x: coalesced loads);
// each block accumulates a private shared-memory histogram and flushes it
// with one round of global atomics. Histograms too large for shared memory
// (Exact mode on data with many distinct values) go to global atomics.
// The cell counting itself is EulerCells.h, shared with the CPU path.
#include "EulerBackends.h"
#include "EulerCells.h"
#include "OrderKeys.cuh"

#include "../common/ScalarDispatch.h"

#include <cuda_runtime.h>
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/remove.h>
#include <thrust/sort.h>
#include <thrust/transform_reduce.h>
#include <thrust/unique.h>
#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <limits>
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
constexpr int kTileX = 32, kTileY = 8, kTileZ = 16;
constexpr int kPlaneX = kTileX + 2, kPlaneY = kTileY + 2, kPlane = kPlaneX * kPlaneY;
// Bins kept in shared memory per block (thresholds and histogram together
// stay under the 48 KiB a block gets without opting in).
constexpr int kSharedBins = 2048;

void check(cudaError_t err, const char* what)
{
  if (err != cudaSuccess)
  {
    cudaGetLastError();
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
  }
}

// Owns a device allocation for the duration of a call.
struct DeviceBuffer
{
  void* ptr = nullptr;
  explicit DeviceBuffer(size_t bytes)
  {
    if (bytes)
      check(cudaMalloc(&ptr, bytes), "cudaMalloc");
  }
  ~DeviceBuffer()
  {
    if (ptr)
      cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

struct KernelGrid
{
  int64_t nx, ny, nz;       // grid extent
  int64_t sx, sy, sz;       // strides in elements
  int64_t lo[3], hi[3];     // owned box
};

template <typename T, bool Super, bool TC, bool SharedHist>
__global__ void __launch_bounds__(kTileX* kTileY)
  eulerKernel(const T* __restrict__ data, KernelGrid g, const KeyOf<T>* __restrict__ thresholds,
    int count, int skipped, unsigned axes, unsigned long long* __restrict__ hist)
{
  using K = KeyOf<T>;
  __shared__ K plane[3][kPlane];
  __shared__ K sThr[SharedHist ? kSharedBins : 1];
  __shared__ uint32_t sHist[SharedHist ? 2 * (kSharedBins + 1) : 1];

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTileX + tx;
  const int64_t x0 = g.lo[0] + int64_t(blockIdx.x) * kTileX;
  const int64_t y0 = g.lo[1] + int64_t(blockIdx.y) * kTileY;
  const int64_t z0 = g.lo[2] + int64_t(blockIdx.z) * kTileZ;
  const int64_t z1 = min(z0 + kTileZ, g.hi[2]);
  const int nBins = skipped + count + 1;

  if (SharedHist)
  {
    for (int i = tid; i < count; i += kTileX * kTileY)
      sThr[i] = thresholds[i];
    for (int i = tid; i < 2 * nBins; i += kTileX * kTileY)
      sHist[i] = 0;
  }
  const K* thr = SharedHist ? sThr : thresholds;

  // Loads plane z (with its halo) into ring slot s. Voxels outside the grid
  // are never read by the counting below (their neighbour bit is invalid).
  auto load = [&](int s, int64_t z) {
    if (z < 0 || z >= g.nz)
      return;
    for (int i = tid; i < kPlane; i += kTileX * kTileY)
    {
      const int64_t gx = x0 - 1 + i % kPlaneX, gy = y0 - 1 + i / kPlaneX;
      if (gx >= 0 && gx < g.nx && gy >= 0 && gy < g.ny)
        plane[s][i] = orderKey<T, Super>(data[gx * g.sx + gy * g.sy + z * g.sz]);
    }
  };
  load(0, z0 - 1);
  load(1, z0);

  const int64_t x = x0 + tx, y = y0 + ty;
  const bool mine = x < g.hi[0] && y < g.hi[1];
  // Which neighbour offsets exist along x and y, for this thread.
  const bool xb = x > 0, xa = x + 1 < g.nx, yb = y > 0, ya = y + 1 < g.ny;

  for (int64_t z = z0; z < z1; ++z)
  {
    const int sBelow = int((z - z0) % 3), sHere = int((z - z0 + 1) % 3),
              sAbove = int((z - z0 + 2) % 3);
    load(sAbove, z + 1);
    __syncthreads();
    if (mine)
    {
      const int c = (ty + 1) * kPlaneX + (tx + 1);
      const K v = plane[sHere][c];
      const bool nanVoxel = std::is_floating_point<T>::value && v == ~K(0);
      if (!nanVoxel)
      {
        const bool zb = z > 0, za = z + 1 < g.nz;
        uint32_t preceding = 0;
#pragma unroll
        for (int b = 0; b < 27; ++b)
        {
          if (b == kCenterBit)
            continue;
          const int dx = choiceAxis(b, 0), dy = choiceAxis(b, 1), dz = choiceAxis(b, 2);
          const bool exists = (dx == 0 || (dx < 0 ? xb : xa)) && (dy == 0 || (dy < 0 ? yb : ya)) &&
            (dz == 0 || (dz < 0 ? zb : za));
          const int s = dz < 0 ? sBelow : (dz > 0 ? sAbove : sHere);
          const K q = plane[s][c + dy * kPlaneX + dx];
          // Ties: a neighbour with a smaller linear index (bit < 13) precedes.
          const bool before = b < kCenterBit ? (q <= v) : (q < v);
          preceding |= uint32_t(exists && before) << b;
        }
        const uint32_t packed = ownedCellCounts<TC>(preceding, axes);
        const int bin = skipped + thresholdBin<false>(v, thr, count);
        if (SharedHist)
        {
          // Two 16-bit counters per word: a block adds at most
          // 32*8*16 voxels * 12 cells < 2^16 to one counter.
          const uint32_t lo = (packed & 0xFF) | ((packed >> 8) & 0xFF) << 16;
          const uint32_t hi = ((packed >> 16) & 0xFF) | (packed >> 24) << 16;
          if (lo)
            atomicAdd(&sHist[2 * bin], lo);
          if (hi)
            atomicAdd(&sHist[2 * bin + 1], hi);
        }
        else
        {
          for (int k = 0; k < 4; ++k)
          {
            const unsigned long long n = (packed >> (8 * k)) & 0xFF;
            if (n)
              atomicAdd(&hist[4 * bin + k], n);
          }
        }
      }
    }
    __syncthreads(); // the slot of z-1 is overwritten next iteration
  }
  if (SharedHist)
  {
    for (int i = tid; i < nBins; i += kTileX * kTileY)
    {
      const uint32_t lo = sHist[2 * i], hi = sHist[2 * i + 1];
      if (lo & 0xFFFF)
        atomicAdd(&hist[4 * i + 0], (unsigned long long)(lo & 0xFFFF));
      if (lo >> 16)
        atomicAdd(&hist[4 * i + 1], (unsigned long long)(lo >> 16));
      if (hi & 0xFFFF)
        atomicAdd(&hist[4 * i + 2], (unsigned long long)(hi & 0xFFFF));
      if (hi >> 16)
        atomicAdd(&hist[4 * i + 3], (unsigned long long)(hi >> 16));
    }
  }
}

// Host copy of a strided grid into one contiguous buffer (x fastest).
template <typename T>
std::vector<T> packContiguous(const GridView& g)
{
  std::vector<T> out(static_cast<size_t>(g.voxelCount()));
  const T* d = static_cast<const T*>(g.data);
  size_t i = 0;
  for (int64_t z = 0; z < g.dims[2]; ++z)
    for (int64_t y = 0; y < g.dims[1]; ++y)
      for (int64_t x = 0; x < g.dims[0]; ++x)
        out[i++] = d[x * g.strides[0] + y * g.strides[1] + z * g.strides[2]];
  return out;
}

// The grid on the device: the caller's pointer when it is there already,
// else a copy (packed first when the host layout is strided).
template <typename T>
struct DeviceGrid
{
  std::unique_ptr<DeviceBuffer> owned;
  const T* ptr = nullptr;
  KernelGrid kg{};

  DeviceGrid(const GridView& g, const Box& box)
  {
    kg.nx = g.dims[0];
    kg.ny = g.dims[1];
    kg.nz = g.dims[2];
    for (int a = 0; a < 3; ++a)
    {
      kg.lo[a] = box.lo[a];
      kg.hi[a] = box.hi[a];
    }
    if (g.memory == MemorySpace::Device)
    {
      ptr = static_cast<const T*>(g.data);
      kg.sx = g.strides[0];
      kg.sy = g.strides[1];
      kg.sz = g.strides[2];
      return;
    }
    const size_t bytes = sizeof(T) * static_cast<size_t>(g.voxelCount());
    owned.reset(new DeviceBuffer(bytes));
    if (g.isContiguous())
      check(cudaMemcpy(owned->ptr, g.data, bytes, cudaMemcpyHostToDevice), "copy to GPU");
    else
    {
      const std::vector<T> packed = packContiguous<T>(g);
      check(cudaMemcpy(owned->ptr, packed.data(), bytes, cudaMemcpyHostToDevice), "copy to GPU");
    }
    ptr = static_cast<const T*>(owned->ptr);
    kg.sx = 1;
    kg.sy = g.dims[0];
    kg.sz = g.dims[0] * g.dims[1];
  }
};

template <typename T, bool Super, bool TC>
void launchTyped(const HistogramRequest& rq, std::vector<int64_t>& hist)
{
  using K = KeyOf<T>;
  const GridView& g = rq.grid;
  const Box& ob = rq.owned;
  const int nBins = rq.skipped + rq.count + 1;
  hist.assign(static_cast<size_t>(nBins) * 4, 0);
  if (ob.count() == 0)
    return;

  DeviceGrid<T> dg(g, ob);
  const T* thrNative = static_cast<const T*>(rq.thresholds);
  std::vector<K> keys(rq.count);
  for (int i = 0; i < rq.count; ++i)
    keys[i] = orderKey<T, Super>(thrNative[i]);
  DeviceBuffer dThr(sizeof(K) * keys.size());
  DeviceBuffer dHist(sizeof(unsigned long long) * hist.size());
  if (!keys.empty())
    check(cudaMemcpy(dThr.ptr, keys.data(), sizeof(K) * keys.size(), cudaMemcpyHostToDevice),
      "copy thresholds");
  check(cudaMemset(dHist.ptr, 0, sizeof(unsigned long long) * hist.size()), "clear histogram");

  const dim3 block(kTileX, kTileY, 1);
  const dim3 blocks(static_cast<unsigned>((ob.hi[0] - ob.lo[0] + kTileX - 1) / kTileX),
    static_cast<unsigned>((ob.hi[1] - ob.lo[1] + kTileY - 1) / kTileY),
    static_cast<unsigned>((ob.hi[2] - ob.lo[2] + kTileZ - 1) / kTileZ));
  if (blocks.y > 65535 || blocks.z > 65535)
    throw std::runtime_error("image too large along y or z for one launch");
  const unsigned axes = activeAxes(g);
  auto* h = static_cast<unsigned long long*>(dHist.ptr);
  const K* t = static_cast<const K*>(dThr.ptr);
  if (nBins <= kSharedBins)
    eulerKernel<T, Super, TC, true><<<blocks, block>>>(dg.ptr, dg.kg, t, rq.count, rq.skipped, axes, h);
  else
    eulerKernel<T, Super, TC, false><<<blocks, block>>>(dg.ptr, dg.kg, t, rq.count, rq.skipped, axes, h);
  check(cudaGetLastError(), "Euler kernel launch");
  std::vector<unsigned long long> out(hist.size());
  check(cudaMemcpy(out.data(), dHist.ptr, sizeof(unsigned long long) * out.size(),
          cudaMemcpyDeviceToHost),
    "copy histogram");
  for (size_t i = 0; i < out.size(); ++i)
    hist[i] = static_cast<int64_t>(out[i]);
  if (rq.progress)
    rq.progress(1.0);
}

// Owned voxel number i (x fastest) -> its value.
template <typename T>
struct OwnedValue
{
  const T* data;
  KernelGrid g;
  __host__ __device__ T operator()(int64_t i) const
  {
    const int64_t nx = g.hi[0] - g.lo[0], ny = g.hi[1] - g.lo[1];
    const int64_t x = g.lo[0] + i % nx, y = g.lo[1] + (i / nx) % ny, z = g.lo[2] + i / (nx * ny);
    return data[x * g.sx + y * g.sy + z * g.sz];
  }
};

struct GpuSummary
{
  double min, max, fmin, fmax;
  long long voxels, nans, finite;
};

template <typename T>
struct SummarizeOne
{
  OwnedValue<T> value;
  __host__ __device__ GpuSummary operator()(int64_t i) const
  {
    const T v = value(i);
    const double inf = INFINITY;
    if (isNan(v))
      return GpuSummary{ inf, -inf, inf, -inf, 1, 1, 0 };
    const double d = static_cast<double>(v);
    const bool fin = d - d == 0.0;
    return GpuSummary{ d, d, fin ? d : inf, fin ? d : -inf, 1, 0, fin ? 1 : 0 };
  }
};

struct CombineSummary
{
  __host__ __device__ GpuSummary operator()(const GpuSummary& a, const GpuSummary& b) const
  {
    return GpuSummary{ fmin(a.min, b.min), fmax(a.max, b.max), fmin(a.fmin, b.fmin),
      fmax(a.fmax, b.fmax), a.voxels + b.voxels, a.nans + b.nans, a.finite + b.finite };
  }
};

template <typename T>
struct IsNanValue
{
  __host__ __device__ bool operator()(T v) const { return isNan(v); }
};
} // namespace

void histogramGPU(const HistogramRequest& rq, std::vector<int64_t>& hist)
{
  dispatchScalarType(rq.grid.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const bool super = rq.filtration == Filtration::Superlevel;
    const bool tc = rq.construction == Construction::T;
    if (super)
      tc ? launchTyped<T, true, true>(rq, hist) : launchTyped<T, true, false>(rq, hist);
    else
      tc ? launchTyped<T, false, true>(rq, hist) : launchTyped<T, false, false>(rq, hist);
  });
}

ValueSummary summarizeGPU(const GridView& g, const Box& box)
{
  return dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    DeviceGrid<T> dg(g, box);
    const double inf = std::numeric_limits<double>::infinity();
    const GpuSummary init{ inf, -inf, inf, -inf, 0, 0, 0 };
    GpuSummary s = init;
    if (box.count() > 0)
      s = thrust::transform_reduce(thrust::device, thrust::counting_iterator<int64_t>(0),
        thrust::counting_iterator<int64_t>(box.count()), SummarizeOne<T>{ { dg.ptr, dg.kg } }, init,
        CombineSummary{});
    check(cudaGetLastError(), "summary");
    return ValueSummary{ s.min, s.max, s.fmin, s.fmax, s.voxels, s.nans, s.finite };
  });
}

void distinctGPU(const GridView& g, const Box& box, std::vector<double>& out)
{
  dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    DeviceGrid<T> dg(g, box);
    thrust::device_vector<T> values(static_cast<size_t>(box.count()));
    thrust::transform(thrust::device, thrust::counting_iterator<int64_t>(0),
      thrust::counting_iterator<int64_t>(box.count()), values.begin(), OwnedValue<T>{ dg.ptr, dg.kg });
    auto end = thrust::remove_if(values.begin(), values.end(), IsNanValue<T>{});
    thrust::sort(values.begin(), end);
    end = thrust::unique(values.begin(), end);
    std::vector<T> host(static_cast<size_t>(end - values.begin()));
    thrust::copy(values.begin(), end, host.begin());
    check(cudaGetLastError(), "distinct values");
    out.assign(host.begin(), host.end());
  });
}
}
}
