// HostCopy.cu - see HostCopy.h.
#include "HostCopy.h"

#include "CudaUtil.cuh"
#include "Parallel.h"

#include <algorithm>
#include <cstring>

namespace topovox
{
namespace cuda
{
namespace
{
constexpr size_t kChunk = size_t(32) << 20; // for copies of two chunks and more
constexpr size_t kSmallChunk = size_t(4) << 20; // for copies of 8 to 64 MB

// Two pinned chunks, a stream and two events, made on a thread's first
// staged copy and kept for its later ones (a series, a training loop, a
// solver called again). Pinning costs about as much as copying through the
// pages once (25 ms for 64 MB), so only the first call pays it, and a
// thread whose copies stay below 64 MB pins two small chunks (8 MB). Never
// freed: a thread_local's destructor could run after the CUDA runtime has
// shut down at process exit. filled[k] marks the end of the last DMA that
// used chunk k, either way: the host touches chunk k only after it.
struct Staging
{
  char* chunk[2] = { nullptr, nullptr };
  size_t size = 0; // of each chunk
  cudaStream_t stream = nullptr;
  cudaEvent_t filled[2] = { nullptr, nullptr };
  // Chunks of at least `bytes` each.
  void ensure(size_t bytes)
  {
    if (!stream)
    {
      // A blocking stream: it waits for the legacy default stream's work.
      check(cudaStreamCreate(&stream), "cudaStreamCreate");
      for (int k = 0; k < 2; ++k)
        check(cudaEventCreateWithFlags(&filled[k], cudaEventDisableTiming), "cudaEventCreate");
    }
    if (size >= bytes)
      return;
    for (int k = 0; k < 2; ++k)
    {
      if (chunk[k])
      {
        check(cudaEventSynchronize(filled[k]), "cudaEventSynchronize");
        check(cudaFreeHost(chunk[k]), "cudaFreeHost");
        chunk[k] = nullptr;
      }
      size = 0;
    }
    for (int k = 0; k < 2; ++k)
      check(cudaHostAlloc(reinterpret_cast<void**>(&chunk[k]), bytes, cudaHostAllocDefault), "cudaHostAlloc");
    size = bytes;
  }
};

// The calling thread's staging, with chunks for a copy of `bytes`.
Staging& threadStaging(size_t bytes)
{
  static thread_local Staging staging;
  staging.ensure(bytes >= 2 * kChunk ? kChunk : kSmallChunk);
  return staging;
}

// Below 8 MB the driver's own staging (from pageable memory: 0.6 to 1.2 ms
// for 8 MB on an H200 machine, against 0.19 ms from pinned memory,
// HostCopy.h) costs less than the round trips of the chunks.
bool staged(size_t bytes)
{
  return bytes >= 2 * kSmallChunk;
}

void copyChunk(char* to, const char* from, size_t n, int threads)
{
  parallelFor(static_cast<int64_t>(n), threads, [&](int, int64_t k0, int64_t k1) {
    std::memcpy(to + k0, from + k0, static_cast<size_t>(k1 - k0));
  });
}
} // namespace

void copyToDeviceThrough(void* pinned, void* device, const void* host, size_t bytes, int threads, cudaStream_t stream)
{
  const int64_t slices =
    static_cast<int64_t>(std::max<size_t>(1, std::min<size_t>({ size_t(threads), 4, bytes >> 20 })));
  parallelFor(slices, static_cast<int>(slices), [&](int, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
    {
      const size_t from = bytes * size_t(i) / size_t(slices), to = bytes * size_t(i + 1) / size_t(slices);
      std::memcpy(static_cast<char*>(pinned) + from, static_cast<const char*>(host) + from, to - from);
      check(cudaMemcpyAsync(static_cast<char*>(device) + from, static_cast<const char*>(pinned) + from, to - from,
              cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync");
    }
  });
}

void* pinnedScratch(size_t bytes)
{
  // Never freed at exit, as the staging above.
  struct Scratch
  {
    char* memory = nullptr;
    size_t size = 0;
  };
  static thread_local Scratch scratch;
  if (bytes > scratch.size)
  {
    if (scratch.memory)
      check(cudaFreeHost(scratch.memory), "cudaFreeHost");
    scratch.memory = nullptr;
    scratch.size = 0;
    check(cudaHostAlloc(reinterpret_cast<void**>(&scratch.memory), bytes, cudaHostAllocDefault), "cudaHostAlloc");
    scratch.size = bytes;
  }
  return scratch.memory;
}

void copyToHost(void* host, const void* device, size_t bytes, int threads)
{
  if (!staged(bytes))
  {
    // Small: the threads fault the pages in first, then the driver's own
    // staging copies at its speed.
    if (bytes >= (size_t(1) << 20))
      parallelFor(static_cast<int64_t>(bytes >> 12), threads, [&](int, int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p)
          static_cast<volatile char*>(host)[p << 12] = 0;
      });
    if (bytes)
      check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return;
  }
  Staging& staging = threadStaging(bytes);
  const size_t chunk = staging.size;
  // (A copy to the device may still be reading a chunk: the DMAs below
  // follow it on the staging stream.)
  const size_t chunks = (bytes + chunk - 1) / chunk;
  auto issue = [&](size_t i) {
    const size_t at = i * chunk, n = std::min(chunk, bytes - at);
    check(cudaMemcpyAsync(staging.chunk[i & 1], static_cast<const char*>(device) + at, n, cudaMemcpyDeviceToHost,
            staging.stream),
      "cudaMemcpyAsync");
    check(cudaEventRecord(staging.filled[i & 1], staging.stream), "cudaEventRecord");
  };
  issue(0);
  for (size_t i = 0; i < chunks; ++i)
  {
    // Chunk i - 1's buffer is free again: the threads copied it out.
    if (i + 1 < chunks)
      issue(i + 1);
    check(cudaEventSynchronize(staging.filled[i & 1]), "cudaEventSynchronize");
    const size_t at = i * chunk, n = std::min(chunk, bytes - at);
    copyChunk(static_cast<char*>(host) + at, staging.chunk[i & 1], n, threads);
  }
}

void copyToDevice(void* device, const void* host, size_t bytes, int threads)
{
  if (!staged(bytes))
  {
    if (bytes)
      check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    return;
  }
  Staging& staging = threadStaging(bytes);
  const size_t chunk = staging.size;
  // The staging stream is a blocking one: work the caller then queues on
  // the legacy default stream waits for these copies.
  const size_t chunks = (bytes + chunk - 1) / chunk;
  for (size_t i = 0; i < chunks; ++i)
  {
    const size_t at = i * chunk, n = std::min(chunk, bytes - at);
    // The DMA that last used this chunk (two chunks ago, or a copy of an
    // earlier call) is done with it.
    check(cudaEventSynchronize(staging.filled[i & 1]), "cudaEventSynchronize");
    copyChunk(staging.chunk[i & 1], static_cast<const char*>(host) + at, n, threads);
    check(cudaMemcpyAsync(static_cast<char*>(device) + at, staging.chunk[i & 1], n, cudaMemcpyHostToDevice,
            staging.stream),
      "cudaMemcpyAsync");
    check(cudaEventRecord(staging.filled[i & 1], staging.stream), "cudaEventRecord");
  }
}
}
}
