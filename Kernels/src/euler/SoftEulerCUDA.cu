// SoftEulerCUDA.cu - the differentiable Euler curve on the GPU: one thread
// per voxel (grid-stride, warps together) runs SoftEulerVoxel.h, the CPU
// path's own code; per-threshold sums are reduced within each warp by
// shuffles, then through shared-memory double accumulators, with one round
// of global atomics per block. Every input stays in GPU memory: the
// direction, alpha and thresholds are read by the kernels themselves.
#include "SoftEulerBackends.h"

#include "../common/CudaUtil.cuh"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace topovox
{
namespace euler
{
namespace
{
constexpr int kThreads = 256;
constexpr int kSharedThresholds = 1024; // beyond, global atomics

using cuda::check;

// The parameters that live in GPU memory (direction, alpha) completed there.
template <typename T>
__device__ SoftVoxelParams withInputs(SoftVoxelParams P, const T* direction, const T* alpha)
{
  for (int a = 0; a < 3; ++a)
    P.u[a] = static_cast<double>(direction[a]);
  P.alpha = static_cast<double>(*alpha);
  return P;
}

// Sum over the 32 lanes of a warp, in lane 0.
__device__ __forceinline__ double warpSum(double v)
{
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// acc[b * nt + t] += sum over voxels c sigmoid(lambda (t - h)). Warps walk
// the voxels together (32 consecutive voxels a step) so that each
// threshold's contributions are summed in registers by shuffles, and lane 0
// alone adds them to the block's shared accumulators: one shared atomic per
// warp and threshold, none at all where the whole warp owns no signed cell.
template <typename T>
__global__ void forwardKernel(const T* __restrict__ images, SoftVoxelParams P0, const T* direction, const T* alpha,
  const T* __restrict__ thresholds, int nt, int64_t batch, double* acc)
{
  extern __shared__ double shared[];
  const SoftVoxelParams P = withInputs(P0, direction, alpha);
  const bool useShared = nt <= kSharedThresholds;
  const int64_t voxels = P.dims[0] * P.dims[1] * P.dims[2];
  const int lane = threadIdx.x & 31;
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x - lane, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = 0; b < batch; ++b)
  {
    if (useShared)
    {
      for (int t = threadIdx.x; t < nt; t += blockDim.x)
        shared[t] = 0;
      __syncthreads();
    }
    const T* image = images + b * voxels;
    for (int64_t base = first; base < voxels; base += stride)
    {
      const int64_t v = base + lane;
      double h = 0;
      int c = 0;
      if (v < voxels)
      {
        const int64_t i = v % P.dims[0], j = (v / P.dims[0]) % P.dims[1], k = v / (P.dims[0] * P.dims[1]);
        h = softHeight(image, P, i, j, k);
        c = softSignedCount(image, P, i, j, k, h);
      }
      if (!__any_sync(0xffffffffu, c != 0))
        continue;
      for (int t = 0; t < nt; ++t)
      {
        const double add = c ? c * softSigmoid(P.lambda * (static_cast<double>(thresholds[t]) - h)) : 0.0;
        const double sum = warpSum(add);
        if (lane == 0 && sum != 0)
          atomicAdd(useShared ? &shared[t] : &acc[b * nt + t], sum);
      }
    }
    if (useShared)
    {
      __syncthreads();
      for (int t = threadIdx.x; t < nt; t += blockDim.x)
        if (shared[t] != 0)
          atomicAdd(&acc[b * nt + t], shared[t]);
      __syncthreads();
    }
  }
}

// gradImages per voxel; acc[0..nt) dL/dt, acc[nt..nt+3) dL/du, acc[nt+3]
// dL/dalpha; sums per warp by shuffles, as in the forward kernel.
template <typename T>
__global__ void backwardKernel(const T* __restrict__ images, SoftVoxelParams P0, const T* direction, const T* alpha,
  const T* __restrict__ thresholds, int nt, int64_t batch, const T* __restrict__ gradChi, T* gradImages, double* acc)
{
  extern __shared__ double shared[];
  const SoftVoxelParams P = withInputs(P0, direction, alpha);
  const bool useShared = nt + 4 <= kSharedThresholds;
  double* sums = useShared ? shared : acc;
  if (useShared)
  {
    for (int t = threadIdx.x; t < nt + 4; t += blockDim.x)
      shared[t] = 0;
    __syncthreads();
  }
  const int64_t voxels = P.dims[0] * P.dims[1] * P.dims[2];
  const int lane = threadIdx.x & 31;
  const int64_t first = blockIdx.x * int64_t(blockDim.x) + threadIdx.x - lane, stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t b = 0; b < batch; ++b)
  {
    const T* image = images + b * voxels;
    const T* g = gradChi + b * nt;
    for (int64_t base = first; base < voxels; base += stride)
    {
      const int64_t v = base + lane;
      double h = 0;
      int c = 0;
      int64_t i = 0, j = 0, k = 0;
      if (v < voxels)
      {
        i = v % P.dims[0], j = (v / P.dims[0]) % P.dims[1], k = v / (P.dims[0] * P.dims[1]);
        h = softHeight(image, P, i, j, k);
        c = softSignedCount(image, P, i, j, k, h);
      }
      double dh = 0;
      if (__any_sync(0xffffffffu, c != 0))
        for (int t = 0; t < nt; ++t)
        {
          double d = 0;
          if (c)
          {
            const double s = softSigmoid(P.lambda * (static_cast<double>(thresholds[t]) - h));
            d = static_cast<double>(g[t]) * c * P.lambda * s * (1.0 - s);
          }
          dh -= d;
          const double sum = warpSum(d);
          if (lane == 0 && sum != 0)
            atomicAdd(&sums[t], sum);
        }
      if (v < voxels && gradImages)
        gradImages[b * voxels + v] = static_cast<T>(P.weight * dh);
      double pos[3] = { 0, 0, 0 };
      if (v < voxels)
        softPosition(P, i, j, k, pos);
      double part[4];
      for (int a = 0; a < 3; ++a)
        part[a] = dh * P.alpha * pos[a];
      part[3] = dh * (P.u[0] * pos[0] + P.u[1] * pos[1] + P.u[2] * pos[2]);
      if (__any_sync(0xffffffffu, dh != 0))
        for (int a = 0; a < 4; ++a)
        {
          const double sum = warpSum(part[a]);
          if (lane == 0 && sum != 0)
            atomicAdd(&sums[nt + a], sum);
        }
    }
  }
  if (useShared)
  {
    __syncthreads();
    for (int t = threadIdx.x; t < nt + 4; t += blockDim.x)
      if (shared[t] != 0)
        atomicAdd(&acc[t], shared[t]);
  }
}

template <typename T>
__global__ void castKernel(const double* in, T* out, int64_t n)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
    out[k] = static_cast<T>(in[k]);
}

int blocksFor(int64_t voxels)
{
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  const int64_t wanted = (voxels + kThreads - 1) / kThreads;
  return static_cast<int>(wanted < 8 * sms ? (wanted < 1 ? 1 : wanted) : 8 * sms);
}

template <typename T>
void forwardTyped(const SoftEulerProblem& p, T* chi)
{
  const double zero[3] = { 0, 0, 0 };
  const SoftVoxelParams P = softParams(p, zero, 0.0);
  const int nt = p.thresholdCount;
  const int64_t voxels = p.dims[0] * p.dims[1] * p.dims[2];
  cuda::DeviceArray<double> acc(static_cast<size_t>(p.batch * nt), true);
  const size_t shared = nt <= kSharedThresholds ? nt * sizeof(double) : 0;
  forwardKernel<T><<<blocksFor(voxels), kThreads, shared>>>(static_cast<const T*>(p.images), P,
    static_cast<const T*>(p.direction), static_cast<const T*>(p.alpha), static_cast<const T*>(p.thresholds), nt,
    p.batch, acc.ptr);
  check(cudaGetLastError(), "soft Euler forward kernel");
  castKernel<T><<<blocksFor(p.batch * nt), kThreads>>>(acc.ptr, chi, p.batch * nt);
  check(cudaGetLastError(), "soft Euler cast kernel");
  check(cudaDeviceSynchronize(), "soft Euler forward");
}

template <typename T>
void backwardTyped(const SoftEulerProblem& p, const T* gradChi, T* gradImages, T* gradThresholds, T* gradDirection,
  T* gradAlpha)
{
  const double zero[3] = { 0, 0, 0 };
  const SoftVoxelParams P = softParams(p, zero, 0.0);
  const int nt = p.thresholdCount;
  const int64_t voxels = p.dims[0] * p.dims[1] * p.dims[2];
  cuda::DeviceArray<double> acc(static_cast<size_t>(nt + 4), true);
  const size_t shared = nt + 4 <= kSharedThresholds ? (nt + 4) * sizeof(double) : 0;
  backwardKernel<T><<<blocksFor(voxels), kThreads, shared>>>(static_cast<const T*>(p.images), P,
    static_cast<const T*>(p.direction), static_cast<const T*>(p.alpha), static_cast<const T*>(p.thresholds), nt,
    p.batch, gradChi, gradImages, acc.ptr);
  check(cudaGetLastError(), "soft Euler backward kernel");
  if (gradThresholds)
    castKernel<T><<<1, kThreads>>>(acc.ptr, gradThresholds, nt);
  if (gradDirection)
    castKernel<T><<<1, kThreads>>>(acc.ptr + nt, gradDirection, 3);
  if (gradAlpha)
    castKernel<T><<<1, kThreads>>>(acc.ptr + nt + 3, gradAlpha, 1);
  check(cudaGetLastError(), "soft Euler cast kernel");
  check(cudaDeviceSynchronize(), "soft Euler backward");
}
} // namespace

void softForwardGPU(const SoftEulerProblem& p, void* chi)
{
  if (p.type == ScalarType::Float32)
    forwardTyped(p, static_cast<float*>(chi));
  else
    forwardTyped(p, static_cast<double*>(chi));
}

void softBackwardGPU(const SoftEulerProblem& p, const void* gradChi, void* gradImages, void* gradThresholds,
  void* gradDirection, void* gradAlpha)
{
  if (p.type == ScalarType::Float32)
    backwardTyped(p, static_cast<const float*>(gradChi), static_cast<float*>(gradImages),
      static_cast<float*>(gradThresholds), static_cast<float*>(gradDirection), static_cast<float*>(gradAlpha));
  else
    backwardTyped(p, static_cast<const double*>(gradChi), static_cast<double*>(gradImages),
      static_cast<double*>(gradThresholds), static_cast<double*>(gradDirection), static_cast<double*>(gradAlpha));
}
}
}
