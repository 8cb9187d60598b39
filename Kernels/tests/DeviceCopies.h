// DeviceCopies.h - test arrays copied to the GPU and results copied back,
// for the suites that call the device APIs (link CUDA::cudart and define
// TOPOVOX_TEST_CUDA). Every buffer is freed with the object.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

struct OnDevice
{
  std::vector<void*> owned;
  OnDevice() = default;
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
  ~OnDevice()
  {
    for (void* p : owned)
      cudaFree(p);
  }
  // A device copy of `v`.
  template <typename T>
  T* copy(const std::vector<T>& v)
  {
    T* p = make<T>(v.size());
    cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
    return p;
  }
  // An uninitialised device array of n values.
  template <typename T>
  T* make(size_t n)
  {
    void* p = nullptr;
    cudaMalloc(&p, std::max<size_t>(1, n) * sizeof(T));
    owned.push_back(p);
    return static_cast<T*>(p);
  }
  template <typename T>
  std::vector<T> back(const T* p, size_t n)
  {
    std::vector<T> v(n);
    cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
  }
};
