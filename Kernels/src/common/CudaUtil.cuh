// CudaUtil.cuh - what every CUDA file of the kernels needs: an error check
// that throws std::runtime_error (the callers fall back to the CPU or report
// it), and a device allocation owned for the duration of a call.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

namespace topovox
{
namespace cuda
{
inline void check(cudaError_t err, const char* what)
{
  if (err != cudaSuccess)
  {
    cudaGetLastError(); // clear it, so that the CPU fallback starts clean
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(err));
  }
}

// The number of multiprocessors of the current device, asked once per
// device (the query costs more than the launches it sizes).
inline int multiprocessorCount()
{
  static std::mutex lock;
  static std::map<int, int> counts;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> hold(lock);
  auto found = counts.find(device);
  if (found != counts.end())
    return found->second;
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  counts[device] = sms;
  return sms;
}

// Blocks of `perBlock` threads for `n` work items: one item a thread, at
// least one block, at most `cap` (grid-stride kernels cap their grids).
inline unsigned blocksFor(int64_t n, int perBlock, int64_t cap = (int64_t(1) << 31) - 1)
{
  const int64_t wanted = (n + perBlock - 1) / perBlock;
  return static_cast<unsigned>(wanted < 1 ? 1 : (wanted > cap ? cap : wanted));
}

// A grid over the rows of an image: `columns` threads a row in blocks of
// `perBlock`, rows y and z on the grid's own axes (kernels stride over what
// the limits leave out), so that no index is divided per voxel.
inline dim3 rowGrid(int64_t columns, int64_t ny, int64_t nz, int perBlock)
{
  return dim3(blocksFor(columns, perBlock), static_cast<unsigned>(ny < 65535 ? ny : 65535),
    static_cast<unsigned>(nz < 65535 ? nz : 65535));
}

// The default memory pool of the current device, told once to keep up to
// an eighth of the device's memory (at least 1 GiB) idle between calls, as
// cupy's and torch's allocators keep theirs, instead of returning it at
// every synchronisation: mapping the 2 GB of scratch of a 512^3 distance
// transform again at every call costs more than its kernels.
inline void keepPoolWarm()
{
  static std::mutex lock;
  static std::set<int> configured;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard<std::mutex> hold(lock);
  if (!configured.insert(device).second)
    return;
  cudaMemPool_t pool;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  uint64_t keep = std::max<uint64_t>(uint64_t(1) << 30, total / 8);
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
}

// `count` elements of T in GPU memory, optionally zeroed; freed on scope
// exit. Pooled: from the device's default memory pool, allocated and freed
// in the order of `stream` (by default the legacy default stream, the one
// most callers' kernels and copies use), so that a later call reuses the
// blocks instead of mapping new memory (a 16 MiB cudaMalloc costs more than
// a pass of a binary erosion over it); otherwise cudaMalloc and cudaFree.
template <typename T, bool Pooled = false>
struct DeviceArray
{
  T* ptr = nullptr;
  cudaStream_t stream = 0;
  explicit DeviceArray(size_t count, bool zero = false, cudaStream_t order = 0)
    : stream(order)
  {
    if (!count)
      return;
    if (Pooled)
    {
      keepPoolWarm();
      check(cudaMallocAsync(reinterpret_cast<void**>(&ptr), count * sizeof(T), stream), "cudaMallocAsync");
    }
    else
      check(cudaMalloc(&ptr, count * sizeof(T)), "cudaMalloc");
    if (zero)
      check(Pooled ? cudaMemsetAsync(ptr, 0, count * sizeof(T), stream) : cudaMemset(ptr, 0, count * sizeof(T)),
        "cudaMemset");
  }
  ~DeviceArray()
  {
    if (ptr && Pooled)
      cudaFreeAsync(ptr, stream);
    else if (ptr)
      cudaFree(ptr);
  }
  DeviceArray(DeviceArray&& other) noexcept
    : ptr(other.ptr)
    , stream(other.stream)
  {
    other.ptr = nullptr;
  }
  // (The arrays trade places: this one's old memory goes with `other`.)
  DeviceArray& operator=(DeviceArray&& other) noexcept
  {
    std::swap(ptr, other.ptr);
    std::swap(stream, other.stream);
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

template <typename T>
using PooledArray = DeviceArray<T, true>;

// A device buffer of at least `bytes` for the calling host thread, the
// current device and `stream`, all zero, reused by the thread's later calls
// on that stream (which the stream itself orders after the earlier ones'
// kernels) and grown when too small: for the small accumulators of kernels
// that run many times a second, where an allocation, a free, or even a
// memset per call cost more than the launch. Zeroed when allocated; every
// user's kernels leave it zero again when done (the last block to finish
// reads the sums out and clears them), so no call pays a memset. Kept for
// the process, never freed: at exit the CUDA runtime may be gone before
// thread-local destructors would run. Valid until the thread's next call
// for the same device and stream.
inline void* zeroedStreamScratch(size_t bytes, cudaStream_t stream)
{
  struct Buffer
  {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  static thread_local std::map<std::pair<int, cudaStream_t>, Buffer> buffers;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  Buffer& b = buffers[{ device, stream }];
  if (b.bytes < bytes)
  {
    if (b.ptr)
      cudaFree(b.ptr); // waits for the device: the old buffer may still be in use
    b = Buffer{};
    check(cudaMalloc(&b.ptr, bytes), "cudaMalloc");
    b.bytes = bytes;
    check(cudaMemsetAsync(b.ptr, 0, bytes, stream), "cudaMemset");
  }
  return b.ptr;
}

// A kernel's "the last block finishes" step: this block's global writes
// are made visible, then it arrives at `counter`; true, in every thread,
// for the block that arrives `expected`-th, which also resets the counter
// for the next launch and sees every other block's writes.
template <typename Count>
__device__ inline bool lastBlockToArrive(Count* counter, Count expected)
{
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
  {
    last = atomicAdd(counter, Count(1)) == expected - 1;
    if (last)
      *counter = 0;
  }
  __syncthreads();
  if (last)
    __threadfence();
  return last;
}
}
}
