#include "CudaBackend.h"

#include <cuda_runtime.h>

namespace topovox
{
namespace cuda
{
int deviceCount()
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess)
  {
    cudaGetLastError(); // clear the sticky "no device" error
    return 0;
  }
  return n;
}

void startContext()
{
  if (cudaFree(nullptr) != cudaSuccess)
    cudaGetLastError();
}

std::string deviceDescription()
{
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess)
  {
    cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorString(err);
  }
  if (n == 0)
    return "no CUDA device";
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  return std::string(prop.name) + ", " + std::to_string(prop.totalGlobalMem >> 20) + " MiB, sm_" +
    std::to_string(prop.major) + std::to_string(prop.minor);
}
}
}
