// GridSinkhornCUDA.cu - the GPU backend of the convolutional Sinkhorn
// (GridSinkhornSolver.h): every vector on the device, the kernel applied
// axis by axis with one thread per voxel (each sums its line in the CPU's
// order, roundings spelled out, so the scaling method's products equal the
// CPU's bit for bit), elementwise steps in place; only the marginal error
// (a sum of block sums) crosses to the host during the iterations.
#include "GridSinkhornSolver.h"

#include "../common/CudaUtil.cuh"

#include <array>
#include <memory>

namespace topovox
{
namespace transport
{
namespace
{
using cuda::check;
using cuda::DeviceArray;
constexpr int kThreads = 256;
constexpr int kErrorBlocks = 1024; // fixed, so that the error is summed the same way every time

int blocksFor(int64_t n)
{
  const int64_t wanted = (n + kThreads - 1) / kThreads;
  return static_cast<int>(wanted < 1 ? 1 : (wanted > 65535 * 16 ? 65535 * 16 : wanted));
}

__global__ void applyAxis(const double* __restrict__ in, double* __restrict__ out, const double* __restrict__ F,
  int64_t nx, int64_t ny, int64_t nz, int axis, bool logDomain)
{
  const int64_t dims[3] = { nx, ny, nz };
  const int64_t stride[3] = { 1, nx, nx * ny };
  const int64_t n = nx * ny * nz, na = dims[axis];
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t i = (p / stride[axis]) % na;
    const int64_t first = p - i * stride[axis];
    const double* row = F + i * na;
    double r;
    if (!logDomain)
    {
      r = 0;
      for (int64_t j = 0; j < na; ++j)
        r = __dadd_rn(r, __dmul_rn(row[j], in[first + j * stride[axis]]));
    }
    else
    {
      double m = -INFINITY;
      for (int64_t j = 0; j < na; ++j)
        m = fmax(m, __dadd_rn(row[j], in[first + j * stride[axis]]));
      if (m == -INFINITY)
        r = -INFINITY;
      else
      {
        double s = 0;
        for (int64_t j = 0; j < na; ++j)
          s = __dadd_rn(s, exp(__dsub_rn(__dadd_rn(row[j], in[first + j * stride[axis]]), m)));
        r = __dadd_rn(m, log(s));
      }
    }
    out[p] = r;
  }
}

__global__ void updateVKernel(double* v, const double* ktu, const double* b, const double* logB, int64_t n, bool logDomain)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
    v[k] = logDomain ? __dsub_rn(logB[k], ktu[k]) : __ddiv_rn(b[k], ktu[k]);
}

__global__ void updateUKernel(double* u, const double* kv, const double* v, const double* ktu, const double* a,
  const double* logA, int64_t n, bool logDomain, int* bad)
{
  bool any = false;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    if (logDomain)
      u[k] = __dsub_rn(logA[k], kv[k]);
    else
    {
      u[k] = __ddiv_rn(1.0, __dmul_rn(__ddiv_rn(1.0, a[k]), kv[k]));
      any = any || ktu[k] == 0 || !isfinite(u[k]) || !isfinite(v[k]);
    }
  }
  if (any)
    *bad = 1;
}

// Block sums of (ktu v - b)^2, or (exp(ktu + v) - b)^2.
__global__ void errorKernel(const double* ktu, const double* v, const double* b, int64_t n, bool logDomain, double* sums)
{
  __shared__ double part[kThreads];
  double s = 0;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    const double t = logDomain ? __dsub_rn(exp(__dadd_rn(ktu[k], v[k])), b[k]) : __dsub_rn(__dmul_rn(ktu[k], v[k]), b[k]);
    s = __dadd_rn(s, __dmul_rn(t, t));
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2)
  {
    if (threadIdx.x < w)
      part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    sums[blockIdx.x] = part[0];
}

class DeviceBackend
{
public:
  DeviceBackend(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
    const GridFactors& factors, bool logDomain)
    : n_(static_cast<int64_t>(a.size()))
    , log_(logDomain)
    , a_(a.size())
    , b_(a.size())
    , logA_(logDomain ? a.size() : 0)
    , logB_(logDomain ? a.size() : 0)
    , prevU_(a.size())
    , prevV_(a.size())
    , work_(a.size())
    , work2_(a.size())
    , sums_(kErrorBlocks)
    , bad_(1)
  {
    for (int k = 0; k < 3; ++k)
      dims_[k] = dims[k];
    for (auto& buffer : buffers_)
      buffer = std::make_unique<DeviceArray<double>>(a.size());
    upload(a_.ptr, a);
    upload(b_.ptr, b);
    if (logDomain)
    {
      std::vector<double> la(a.size()), lb(a.size());
      for (size_t k = 0; k < a.size(); ++k)
      {
        la[k] = std::log(a[k]);
        lb[k] = std::log(b[k]);
      }
      upload(logA_.ptr, la);
      upload(logB_.ptr, lb);
    }
    const std::vector<double> start(a.size(), logDomain ? 0.0 : 1.0 / static_cast<double>(a.size()));
    upload(buf(Buffer::U), start);
    upload(buf(Buffer::V), start);
    for (int set = 0; set < 7; ++set)
      for (int axis = 0; axis < 3; ++axis)
      {
        factors_[set][axis] = std::make_unique<DeviceArray<double>>(factors.of[set][axis].size());
        upload(factors_[set][axis]->ptr, factors.of[set][axis]);
      }
  }

  void apply(FactorSet set, Buffer in, Buffer out)
  {
    // x, y, z in turn, through two buffers of its own (in may be out), as
    // the CPU does line by line.
    double* stages[3] = { work_.ptr, work2_.ptr, buf(out) };
    const double* from = buf(in);
    for (int axis = 0; axis < 3; ++axis)
    {
      applyAxis<<<blocksFor(n_), kThreads>>>(
        from, stages[axis], factors_[set][axis]->ptr, dims_[0], dims_[1], dims_[2], axis, log_);
      check(cudaGetLastError(), "grid Sinkhorn kernel");
      from = stages[axis];
    }
  }
  void updateV()
  {
    updateVKernel<<<blocksFor(n_), kThreads>>>(buf(Buffer::V), buf(Buffer::KTU), b_.ptr, logB_.ptr, n_, log_);
    check(cudaGetLastError(), "grid Sinkhorn update");
  }
  bool updateU()
  {
    check(cudaMemset(bad_.ptr, 0, sizeof(int)), "cudaMemset");
    updateUKernel<<<blocksFor(n_), kThreads>>>(buf(Buffer::U), buf(Buffer::KV), buf(Buffer::V), buf(Buffer::KTU),
      a_.ptr, logA_.ptr, n_, log_, bad_.ptr);
    check(cudaGetLastError(), "grid Sinkhorn update");
    if (log_)
      return false;
    int bad = 0;
    check(cudaMemcpy(&bad, bad_.ptr, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return bad != 0;
  }
  void save()
  {
    copy(prevU_.ptr, buf(Buffer::U));
    copy(prevV_.ptr, buf(Buffer::V));
  }
  void restore()
  {
    copy(buf(Buffer::U), prevU_.ptr);
    copy(buf(Buffer::V), prevV_.ptr);
  }
  double marginalError()
  {
    errorKernel<<<kErrorBlocks, kThreads>>>(buf(Buffer::KTU), buf(Buffer::V), b_.ptr, n_, log_, sums_.ptr);
    check(cudaGetLastError(), "grid Sinkhorn error");
    std::vector<double> sums(kErrorBlocks);
    check(cudaMemcpy(sums.data(), sums_.ptr, sums.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    double s = 0;
    for (double x : sums)
      s += x;
    return std::sqrt(s);
  }
  std::vector<double> download(Buffer which)
  {
    std::vector<double> out(static_cast<size_t>(n_));
    check(cudaMemcpy(out.data(), buf(which), out.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return out;
  }

private:
  double* buf(Buffer b) { return buffers_[static_cast<int>(b)]->ptr; }
  static void upload(double* to, const std::vector<double>& from)
  {
    if (!from.empty())
      check(cudaMemcpy(to, from.data(), from.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  void copy(double* to, const double* from)
  {
    check(cudaMemcpy(to, from, static_cast<size_t>(n_) * sizeof(double), cudaMemcpyDeviceToDevice), "cudaMemcpy");
  }

  int64_t n_;
  int64_t dims_[3];
  bool log_;
  DeviceArray<double> a_, b_, logA_, logB_, prevU_, prevV_, work_, work2_, sums_;
  DeviceArray<int> bad_;
  std::unique_ptr<DeviceArray<double>> buffers_[5];
  std::unique_ptr<DeviceArray<double>> factors_[7][3];
};
} // namespace

GridSinkhornResult sinkhornGridGPU(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
  const double spacing[3], const SinkhornOptions& options, const GridFactors& factors)
{
  DeviceBackend be(a, b, dims, factors, options.method == SinkhornMethod::SinkhornLog);
  return solveGrid(be, a, b, dims, spacing, options);
}
}
}
