// EulerCurveCUDA.cu - the GPU path. One launch covers the whole grid with
// one thread per voxel column of a tile:
//  * a block owns a 32x8 tile of (x, y) and marches along z through a chunk
//    of kTileZ planes; each plane of order keys, with a one-voxel halo, is
//    staged once in shared memory by coalesced row loads (32 consecutive x);
//    each thread keeps the 3x3 neighbourhood of the planes below, at and above
//    its voxel in registers, so a step along z reads 9 new keys, not 26;
//  * blocks are persistent (about as many as fit on the GPU at once) and take
//    tile chunks in turn, so each keeps one private shared-memory histogram
//    for the whole launch: one 64-bit shared atomic per voxel (four 16-bit
//    counters, folded into 64-bit per-block totals after every chunk), and a
//    single round of global atomics per block at the end;
//  * histograms too large for shared memory (Exact mode on data with many
//    distinct values) go straight to global atomics.
// The cell counting itself is EulerCells.h, shared with the CPU path.
#include "EulerBackends.h"
#include "EulerCells.h"
#include "OrderKeys.cuh"

#include "../common/CudaUtil.cuh"
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

#include <algorithm>
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
// Bins kept in shared memory per block: 40 bytes a bin (packed counters and
// 64-bit totals) plus the threshold keys; beyond, global atomics.
constexpr int kSharedBins = 1024;

using cuda::check;
// A byte allocation on the GPU for the duration of a call.
using DeviceBuffer = cuda::DeviceArray<unsigned char>;

struct KernelGrid
{
  int64_t nx, ny, nz;       // grid extent
  int64_t sx, sy, sz;       // strides in elements
  int64_t lo[3], hi[3];     // owned box
};

// The threshold bin of key v among `count` ascending threshold keys: a guess
// by linear interpolation in value space, made exact by comparing keys.
template <typename T, bool Super>
__device__ __forceinline__ int findBin(
  KeyOf<T> v, const KeyOf<T>* thr, int count, double origin, double scale)
{
  return thresholdBinFrom<false>(
    v, thr, count, guessBin(keyValue<T, Super>(v), origin, scale, count));
}

template <typename T, bool Super, bool TC, bool SharedHist>
// Eight resident blocks per SM (32 registers a thread) measured 10-20% faster
// on an H200 than the compiler's own choice (64 registers, 4 blocks).
#ifndef TOPOVOX_EULER_MIN_BLOCKS
#define TOPOVOX_EULER_MIN_BLOCKS 8
#endif
__global__ void __launch_bounds__(kTileX* kTileY, TOPOVOX_EULER_MIN_BLOCKS)
  eulerKernel(const T* __restrict__ data, KernelGrid g, const KeyOf<T>* __restrict__ thresholds,
    int count, int skipped, unsigned axes, unsigned long long* __restrict__ hist, int tilesX,
    int tilesY, int64_t tasks, double guessOrigin, double guessScale)
{
  using K = KeyOf<T>;
  // Shared memory: [planes 3 x kPlane keys][thresholds][packed counters]
  // [per-block totals, 4 per bin]; the last three only when SharedHist.
  extern __shared__ __align__(16) unsigned char shared[];
  const int nBins = skipped + count + 1;
  unsigned long long* sTotal = reinterpret_cast<unsigned long long*>(shared);
  uint32_t* sPacked = reinterpret_cast<uint32_t*>(sTotal + (SharedHist ? 4 * nBins : 0));
  K* plane = reinterpret_cast<K*>(sPacked + (SharedHist ? 2 * nBins : 0));
  K* sThr = plane + 3 * kPlane;

  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTileX + tx;
  constexpr int kThreads = kTileX * kTileY;
  if (SharedHist)
  {
    for (int i = tid; i < count; i += kThreads)
      sThr[i] = thresholds[i];
    for (int i = tid; i < 4 * nBins; i += kThreads)
      sTotal[i] = 0;
    for (int i = tid; i < 2 * nBins; i += kThreads)
      sPacked[i] = 0;
  }
  const K* thr = SharedHist ? sThr : thresholds;
  constexpr K kNan = ~K(0);

  // Neighbour bits on each side of each axis (compile-time constants).
  constexpr uint32_t kAll = ((1u << 27) - 1) & ~(1u << kCenterBit);
  constexpr uint32_t kLowX = sideBits(0, -1), kHighX = sideBits(0, 1);
  constexpr uint32_t kLowY = sideBits(1, -1), kHighY = sideBits(1, 1);
  constexpr uint32_t kLowZ = sideBits(2, -1), kHighZ = sideBits(2, 1);

  for (int64_t task = blockIdx.x; task < tasks; task += gridDim.x)
  {
    const int64_t tileX = task % tilesX, tileY = (task / tilesX) % tilesY,
                  tileZ = task / (int64_t(tilesX) * tilesY);
    const int64_t x0 = g.lo[0] + tileX * kTileX, y0 = g.lo[1] + tileY * kTileY;
    const int64_t z0 = g.lo[2] + tileZ * kTileZ;
    const int64_t z1 = min(z0 + kTileZ, g.hi[2]);

    // Stages plane z (keys, with halo) in ring slot s. Each thread stages at
    // most two fixed entries of the plane; their offsets are worked out once
    // per chunk. Voxels outside the grid are never counted (their neighbour
    // bit is masked off below), so their entries are left as they are.
    constexpr int kLoads = (kPlane + kThreads - 1) / kThreads;
    int64_t rowOffset[kLoads];
    bool inGrid[kLoads];
#pragma unroll
    for (int l = 0; l < kLoads; ++l)
    {
      const int i = tid + l * kThreads;
      const int64_t gx = x0 - 1 + i % kPlaneX, gy = y0 - 1 + i / kPlaneX;
      inGrid[l] = i < kPlane && gx >= 0 && gx < g.nx && gy >= 0 && gy < g.ny;
      rowOffset[l] = gx * g.sx + gy * g.sy;
    }
    auto load = [&](int s, int64_t z) {
      if (z < 0 || z >= g.nz)
        return;
      K* dst = plane + s * kPlane;
      const T* src = data + z * g.sz;
#pragma unroll
      for (int l = 0; l < kLoads; ++l)
        if (inGrid[l])
          dst[tid + l * kThreads] = orderKey<T, Super>(src[rowOffset[l]]);
    };
    __syncthreads(); // the previous chunk's readers are done with the ring
    load(0, z0 - 1);
    load(1, z0);
    __syncthreads();

    const int64_t x = x0 + tx, y = y0 + ty;
    const bool mine = x < g.hi[0] && y < g.hi[1];
    uint32_t validXY = kAll;
    if (x == 0)
      validXY &= ~kLowX;
    if (x + 1 >= g.nx)
      validXY &= ~kHighX;
    if (y == 0)
      validXY &= ~kLowY;
    if (y + 1 >= g.ny)
      validXY &= ~kHighY;

    const int c = (ty + 1) * kPlaneX + (tx + 1);
    K below[9], here[9], above[9];
#pragma unroll
    for (int k = 0; k < 9; ++k)
    {
      const int off = (k / 3 - 1) * kPlaneX + (k % 3 - 1);
      below[k] = plane[0 * kPlane + c + off];
      here[k] = plane[1 * kPlane + c + off];
    }

    for (int64_t z = z0; z < z1; ++z)
    {
      const int sAbove = int((z - z0 + 2) % 3);
      load(sAbove, z + 1);
      __syncthreads();
#pragma unroll
      for (int k = 0; k < 9; ++k)
        above[k] = plane[sAbove * kPlane + c + (k / 3 - 1) * kPlaneX + (k % 3 - 1)];

      const K v = here[4];
      if (mine && !(std::is_floating_point<T>::value && v == kNan))
      {
        uint32_t valid = validXY;
        if (z == 0)
          valid &= ~kLowZ;
        if (z + 1 >= g.nz)
          valid &= ~kHighZ;
        uint32_t preceding = 0;
#pragma unroll
        for (int b = 0; b < 27; ++b)
        {
          if (b == kCenterBit)
            continue;
          const int k = b % 9; // (dy + 1) * 3 + (dx + 1)
          const K q = b < 9 ? below[k] : (b < 18 ? here[k] : above[k]);
          // Ties: a neighbour with a smaller linear index (bit < 13) precedes.
          preceding |= uint32_t(b < kCenterBit ? (q <= v) : (q < v)) << b;
        }
        preceding &= valid;
        const uint32_t counts = ownedCellCounts<TC>(preceding, axes);
        const int bin = skipped + findBin<T, Super>(v, thr, count, guessOrigin, guessScale);
        if (SharedHist)
        {
          // Two 16-bit counters per word: a chunk adds at most
          // 32*8*16 voxels * 12 cells < 2^16 to one counter.
          const uint32_t low = (counts & 0xFF) | ((counts << 8) & 0xFF0000);
          const uint32_t high = ((counts >> 16) & 0xFF) | ((counts >> 8) & 0xFF0000);
          if (low)
            atomicAdd(&sPacked[2 * bin], low);
          if (high)
            atomicAdd(&sPacked[2 * bin + 1], high);
        }
        else
        {
          for (int k = 0; k < 4; ++k)
          {
            const unsigned long long n = (counts >> (8 * k)) & 0xFF;
            if (n)
              atomicAdd(&hist[4 * bin + k], n);
          }
        }
      }
#pragma unroll
      for (int k = 0; k < 9; ++k)
      {
        below[k] = here[k];
        here[k] = above[k];
      }
    }
    if (SharedHist)
    {
      // Fold the 16-bit counters into the block's totals before they can
      // overflow.
      __syncthreads();
      for (int i = tid; i < 2 * nBins; i += kThreads)
      {
        const uint32_t p = sPacked[i];
        if (p)
        {
          sPacked[i] = 0;
          sTotal[2 * i] += p & 0xFFFF;
          sTotal[2 * i + 1] += p >> 16;
        }
      }
    }
  }
  if (SharedHist)
  {
    __syncthreads();
    for (int i = tid; i < 4 * nBins; i += kThreads)
      if (sTotal[i])
        atomicAdd(&hist[i], sTotal[i]);
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
    ptr = reinterpret_cast<const T*>(owned->ptr);
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

  const int tilesX = static_cast<int>((ob.hi[0] - ob.lo[0] + kTileX - 1) / kTileX);
  const int tilesY = static_cast<int>((ob.hi[1] - ob.lo[1] + kTileY - 1) / kTileY);
  const int64_t tilesZ = (ob.hi[2] - ob.lo[2] + kTileZ - 1) / kTileZ;
  const int64_t tasks = int64_t(tilesX) * tilesY * tilesZ;
  const unsigned axes = activeAxes(g);
  auto* h = reinterpret_cast<unsigned long long*>(dHist.ptr);
  const K* t = reinterpret_cast<const K*>(dThr.ptr);
  const dim3 block(kTileX, kTileY, 1);
  // Linear interpolation through the first and last thresholds.
  double origin = 0, scale = 0;
  if (rq.count >= 2)
  {
    origin = static_cast<double>(thrNative[0]);
    const double span = static_cast<double>(thrNative[rq.count - 1]) - origin;
    scale = span != 0 && std::isfinite(span) ? (rq.count - 1) / span : 0;
  }
  auto launch = [&](auto kernel, size_t sharedBytes) {
    if (sharedBytes > 48 * 1024)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
              static_cast<int>(sharedBytes)),
        "shared memory size");
    // Persistent blocks: as many as can be resident at once.
    const int sms = cuda::multiprocessorCount();
    int perSm = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kTileX * kTileY, sharedBytes),
      "occupancy");
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(tasks, int64_t(sms) * std::max(perSm, 1)));
    kernel<<<static_cast<unsigned>(blocks), block, sharedBytes>>>(
      dg.ptr, dg.kg, t, rq.count, rq.skipped, axes, h, tilesX, tilesY, tasks, origin, scale);
  };
  const size_t planeBytes = 3 * kPlane * sizeof(K);
  if (nBins <= kSharedBins)
    launch(eulerKernel<T, Super, TC, true>,
      (4 * sizeof(unsigned long long) + 2 * sizeof(uint32_t)) * nBins + planeBytes +
        sizeof(K) * rq.count);
  else
    launch(eulerKernel<T, Super, TC, false>, planeBytes);
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
struct SummarizeValue
{
  __host__ __device__ GpuSummary operator()(T v) const
  {
    const double inf = INFINITY;
    if (isNan(v))
      return GpuSummary{ inf, -inf, inf, -inf, 1, 1, 0 };
    const double d = static_cast<double>(v);
    const bool fin = d - d == 0.0;
    return GpuSummary{ d, d, fin ? d : inf, fin ? d : -inf, 1, 0, fin ? 1 : 0 };
  }
};

template <typename T>
struct SummarizeOne
{
  OwnedValue<T> value;
  __host__ __device__ GpuSummary operator()(int64_t i) const { return SummarizeValue<T>{}(value(i)); }
};

// flags[key] = 1 for every owned value (racing stores all write 1).
template <typename T>
__global__ void markPresent(OwnedValue<T> value, int64_t n, uint8_t* flags)
{
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    flags[orderKey<T, false>(value(i))] = 1;
}

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

std::shared_ptr<void> uploadGrid(const GridView& g, GridView& deviceView)
{
  return dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto grid = std::make_shared<DeviceGrid<T>>(g, g.wholeBox());
    deviceView = GridView::contiguous(
      grid->ptr, g.type, g.dims[0], g.dims[1], g.dims[2], MemorySpace::Device);
    return std::shared_ptr<void>(grid);
  });
}

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
    const bool whole = box.count() == g.voxelCount() &&
      (g.memory == MemorySpace::Host || g.isContiguous());
    if (box.count() > 0 && whole)
      // The common case: the whole contiguous image, read straight through.
      s = thrust::transform_reduce(thrust::device, thrust::device_pointer_cast(dg.ptr),
        thrust::device_pointer_cast(dg.ptr) + box.count(), SummarizeValue<T>{}, init,
        CombineSummary{});
    else if (box.count() > 0)
      s = thrust::transform_reduce(thrust::device, thrust::counting_iterator<int64_t>(0),
        thrust::counting_iterator<int64_t>(box.count()), SummarizeOne<T>{ { dg.ptr, dg.kg } }, init,
        CombineSummary{});
    check(cudaGetLastError(), "summary");
    return ValueSummary{ s.min, s.max, s.fmin, s.fmax, s.voxels, s.nans, s.finite };
  });
}

void distinctGPU(const GridView& g, const Box& box, std::vector<double>& out,
  std::vector<unsigned char>* native)
{
  dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    DeviceGrid<T> dg(g, box);
    if constexpr (sizeof(T) <= 2 && !std::is_floating_point<T>::value)
    {
      // 8- and 16-bit integers: mark the values present, no sort.
      constexpr int kValues = 1 << (8 * sizeof(T));
      DeviceBuffer flags(kValues);
      check(cudaMemset(flags.ptr, 0, kValues), "clear flags");
      const int64_t n = box.count();
      if (n > 0)
        markPresent<T><<<static_cast<unsigned>(std::min<int64_t>((n + 255) / 256, 1 << 20)), 256>>>(
          OwnedValue<T>{ dg.ptr, dg.kg }, n, static_cast<uint8_t*>(flags.ptr));
      check(cudaGetLastError(), "distinct values");
      std::vector<uint8_t> host(kValues);
      check(cudaMemcpy(host.data(), flags.ptr, kValues, cudaMemcpyDeviceToHost), "copy flags");
      std::vector<T> present;
      for (int k = 0; k < kValues; ++k) // keys ascend with the values
        if (host[k])
          present.push_back(static_cast<T>(std::is_signed<T>::value ? k - kValues / 2 : k));
      out.assign(present.begin(), present.end());
      if (native)
        native->assign(reinterpret_cast<const unsigned char*>(present.data()),
          reinterpret_cast<const unsigned char*>(present.data() + present.size()));
    }
    else
    {
      thrust::device_vector<T> values(static_cast<size_t>(box.count()));
      thrust::transform(thrust::device, thrust::counting_iterator<int64_t>(0),
        thrust::counting_iterator<int64_t>(box.count()), values.begin(),
        OwnedValue<T>{ dg.ptr, dg.kg });
      auto end = thrust::remove_if(values.begin(), values.end(), IsNanValue<T>{});
      thrust::sort(values.begin(), end);
      end = thrust::unique(values.begin(), end);
      std::vector<T> host(static_cast<size_t>(end - values.begin()));
      thrust::copy(values.begin(), end, host.begin());
      check(cudaGetLastError(), "distinct values");
      out.assign(host.begin(), host.end());
      if (native)
        native->assign(reinterpret_cast<const unsigned char*>(host.data()),
          reinterpret_cast<const unsigned char*>(host.data() + host.size()));
    }
  });
}
}
}
