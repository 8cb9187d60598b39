// CudaUtil.cuh - what every CUDA file of the kernels needs: an error check
// that throws std::runtime_error (the callers fall back to the CPU or report
// it), and a device allocation owned for the duration of a call.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>

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

// `count` elements of T in GPU memory, optionally zeroed; freed on scope exit.
template <typename T>
struct DeviceArray
{
  T* ptr = nullptr;
  explicit DeviceArray(size_t count, bool zero = false)
  {
    if (!count)
      return;
    check(cudaMalloc(&ptr, count * sizeof(T)), "cudaMalloc");
    if (zero)
      check(cudaMemset(ptr, 0, count * sizeof(T)), "cudaMemset");
  }
  ~DeviceArray()
  {
    if (ptr)
      cudaFree(ptr);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

// A device buffer of at least `bytes` for the calling host thread on the
// current device, reused by its later calls and grown when too small: for
// the small per-call accumulators of kernels that run many times a second
// (a cudaMalloc / cudaFree pair costs more than their launch). Kept for the
// process, never freed: at exit the CUDA runtime may be gone before
// thread-local destructors would run. Valid until the thread's next call.
inline void* threadScratch(size_t bytes)
{
  struct Buffer
  {
    void* ptr = nullptr;
    size_t bytes = 0;
  };
  thread_local std::map<int, Buffer> buffers;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  Buffer& b = buffers[device];
  if (b.bytes < bytes)
  {
    if (b.ptr)
      cudaFree(b.ptr);
    b = Buffer{};
    check(cudaMalloc(&b.ptr, bytes), "cudaMalloc");
    b.bytes = bytes;
  }
  return b.ptr;
}
}
}
