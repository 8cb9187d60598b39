// SinkhornCUDA.cu - Sinkhorn's iterations (Sinkhorn.h) on the GPU: one
// thread block per pair of histograms runs every iteration, the convergence
// checks included, without returning to the host; the cost matrix is read
// from global memory (L2-resident for the d of histograms), the scalings
// stay in shared memory. The same updates as the CPU path, in double; only
// the order of the sums differs.
#include "SinkhornBackends.h"

#include "../common/CudaUtil.cuh"

#include <cmath>
#include <string>

namespace topovox
{
namespace transport
{
namespace
{
using cuda::check;
using cuda::DeviceArray;
constexpr int kThreads = 256;

// Each shared array's length, padded: the compiler reads the scalings two at
// a time (128-bit loads from 16-byte aligned i), so the last odd element's
// load also reads the next one, unused. Unpadded, that next one was the
// following array's first element, written by another thread: a harmless
// over-read that compute-sanitizer's racecheck rightly reports as a hazard.
__host__ __device__ inline int paddedLength(int d)
{
  return (d + 3) / 4 * 4 + 4;
}

__device__ double blockSum(double v, double* scratch)
{
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  double total = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < (blockDim.x + 31) / 32; ++w)
      total += scratch[w];
  __syncthreads();
  if (threadIdx.x == 0)
    scratch[0] = total;
  __syncthreads();
  return scratch[0];
}

// status per pair: 0 converged, 1 not converged, 2 numerical error.
__global__ void sinkhornKernel(const double* __restrict__ A, const double* __restrict__ B,
  const double* __restrict__ M, const double* __restrict__ K, int d, double reg, bool logDomain, int numItermax,
  double stopThr, double* plans, double* costs, int* iterations, double* errors, int* status)
{
  extern __shared__ double sh[]; // u, v, uprev, vprev, work (paddedLength(d) each), scratch (32)
  const int dp = paddedLength(d);
  double *u = sh, *v = u + dp, *up = v + dp, *vp = up + dp, *work = vp + dp, *scratch = work + dp;
  const int pair = blockIdx.x;
  const double* a = A + size_t(pair) * d;
  const double* b = B + size_t(pair) * d;
  for (int k = threadIdx.x; k < d; k += blockDim.x)
  {
    u[k] = logDomain ? 0.0 : 1.0 / d;
    v[k] = logDomain ? 0.0 : 1.0 / d;
  }
  __syncthreads();
  double err = 1;
  int state = 1, ii = 0;
  for (; ii < numItermax; ++ii)
  {
    int bad = 0; // this thread's; the block agrees by __syncthreads_or below
    for (int k = threadIdx.x; k < d; k += blockDim.x)
    {
      up[k] = u[k];
      vp[k] = v[k];
    }
    __syncthreads();
    for (int j = threadIdx.x; j < d; j += blockDim.x)
    {
      if (logDomain)
      {
        double m = -INFINITY;
        for (int i = 0; i < d; ++i)
          m = fmax(m, -M[size_t(i) * d + j] / reg + u[i]);
        double s = 0;
        if (m != -INFINITY)
          for (int i = 0; i < d; ++i)
            s += exp(-M[size_t(i) * d + j] / reg + u[i] - m);
        v[j] = log(b[j]) - (m == -INFINITY ? m : m + log(s));
      }
      else
      {
        double s = 0;
        for (int i = 0; i < d; ++i)
          s += K[size_t(i) * d + j] * u[i];
        if (s == 0)
          bad = 1;
        v[j] = b[j] / s;
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < d; i += blockDim.x)
    {
      if (logDomain)
      {
        double m = -INFINITY;
        for (int j = 0; j < d; ++j)
          m = fmax(m, -M[size_t(i) * d + j] / reg + v[j]);
        double s = 0;
        if (m != -INFINITY)
          for (int j = 0; j < d; ++j)
            s += exp(-M[size_t(i) * d + j] / reg + v[j] - m);
        u[i] = log(a[i]) - (m == -INFINITY ? m : m + log(s));
      }
      else
      {
        double s = 0;
        for (int j = 0; j < d; ++j)
          s += ((1.0 / a[i]) * K[size_t(i) * d + j]) * v[j];
        u[i] = 1.0 / s;
      }
    }
    __syncthreads();
    if (!logDomain)
      for (int k = threadIdx.x; k < d; k += blockDim.x)
        if (!isfinite(u[k]) || !isfinite(v[k]))
          bad = 1;
    if (__syncthreads_or(bad))
    {
      for (int k = threadIdx.x; k < d; k += blockDim.x)
      {
        u[k] = up[k];
        v[k] = vp[k];
      }
      __syncthreads();
      state = 2;
      ++ii;
      break;
    }
    if (ii % 10 == 0)
    {
      double part = 0;
      for (int j = threadIdx.x; j < d; j += blockDim.x)
      {
        double s = 0;
        for (int i = 0; i < d; ++i)
          s += logDomain ? exp(-M[size_t(i) * d + j] / reg + u[i] + v[j]) : u[i] * K[size_t(i) * d + j];
        const double r = (logDomain ? s : s * v[j]) - b[j];
        part += r * r;
      }
      err = sqrt(blockSum(part, scratch));
      if (err < stopThr)
      {
        state = 0;
        ++ii;
        break;
      }
    }
  }
  double cost = 0;
  for (int k = threadIdx.x; k < d * d; k += blockDim.x)
  {
    const int i = k / d, j = k % d;
    const double p = logDomain ? exp(-M[k] / reg + u[i] + v[j]) : u[i] * K[k] * v[j];
    cost += p * M[k];
    if (plans)
      plans[size_t(pair) * d * d + k] = p;
  }
  cost = blockSum(cost, scratch);
  if (threadIdx.x == 0)
  {
    costs[pair] = cost;
    iterations[pair] = ii < numItermax ? ii : numItermax;
    errors[pair] = err;
    status[pair] = state;
  }
}
} // namespace

size_t sharedBytes(int d)
{
  return (5 * size_t(paddedLength(d)) + 32) * sizeof(double);
}

bool sinkhornFitsGPU(int64_t d)
{
  return d >= 1 && d <= kMaxGpuLength && sharedBytes(static_cast<int>(d)) <= 48 * 1024;
}

SinkhornResult sinkhornGPU(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& M,
  int64_t pairs, int64_t d, const SinkhornOptions& o)
{
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
  {
    cudaGetLastError();
    throw std::runtime_error("no CUDA device");
  }
  if (!sinkhornFitsGPU(d))
    throw std::runtime_error("histograms too long for the GPU path (d = " + std::to_string(d) + ", at most " +
      std::to_string(kMaxGpuLength) + ")");
  const size_t shared = sharedBytes(static_cast<int>(d));
  std::vector<double> K(M.size());
  for (size_t k = 0; k < M.size(); ++k)
    K[k] = std::exp(M[k] / (-o.reg));
  const size_t n = static_cast<size_t>(pairs);
  DeviceArray<double> dA(a.size()), dB(b.size()), dM(M.size()), dK(K.size()),
    dPlans(o.computePlans ? n * static_cast<size_t>(d * d) : 0), dCosts(n), dErrors(n);
  DeviceArray<int> dIterations(n), dStatus(n);
  check(cudaMemcpy(dA.ptr, a.data(), a.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(dB.ptr, b.data(), b.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(dM.ptr, M.data(), M.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  check(cudaMemcpy(dK.ptr, K.data(), K.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  sinkhornKernel<<<static_cast<unsigned>(pairs), kThreads, shared>>>(dA.ptr, dB.ptr, dM.ptr, dK.ptr,
    static_cast<int>(d), o.reg, o.method == SinkhornMethod::SinkhornLog, o.numItermax, o.stopThr,
    o.computePlans ? dPlans.ptr : nullptr, dCosts.ptr, dIterations.ptr, dErrors.ptr, dStatus.ptr);
  check(cudaGetLastError(), "Sinkhorn kernel");
  SinkhornResult r;
  r.costs.resize(n);
  r.errors.resize(n);
  r.iterations.resize(n);
  std::vector<int> status(n);
  check(cudaMemcpy(r.costs.data(), dCosts.ptr, r.costs.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(r.errors.data(), dErrors.ptr, r.errors.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(r.iterations.data(), dIterations.ptr, r.iterations.size() * sizeof(int), cudaMemcpyDeviceToHost),
    "cudaMemcpy");
  check(cudaMemcpy(status.data(), dStatus.ptr, status.size() * sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (o.computePlans)
  {
    r.plans.resize(size_t(pairs * d * d));
    check(cudaMemcpy(r.plans.data(), dPlans.ptr, r.plans.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  for (int64_t p = 0; p < pairs; ++p)
    if (status[size_t(p)])
      r.warnings += (r.warnings.empty() ? "" : "\n") + std::string("pair ") + std::to_string(p) + ": " +
        (status[size_t(p)] == 2 ? "numerical errors at iteration " + std::to_string(r.iterations[size_t(p)] - 1)
                                : "did not converge in " + std::to_string(o.numItermax) +
                                  " iterations (marginal error " + std::to_string(r.errors[size_t(p)]) + ")");
  return r;
}
}
}
