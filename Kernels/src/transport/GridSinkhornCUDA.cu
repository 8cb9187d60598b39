// GridSinkhornCUDA.cu - the GPU backend of the convolutional Sinkhorn
// (GridSinkhornSolver.h): every vector on the device, the kernel applied
// axis by axis, elementwise steps in place. Nothing crosses to the host
// during the iterations but the marginal error every tenth one (a sum of
// block sums) and, with it, whether an update went bad.
//
// Applying an axis's n x n factor F is, for the scaling method, a batch of
// matrix products, out[b][i][c] = sum_j F[i][j] in[b][j][c] over the lines
// c along the axis: cuBLAS's (strided batched) DGEMM, on the FP64 tensor
// cores where the GPU has them. It sums in its own order, so the scaling
// method equals the CPU's within rounding (the tests: 1e-12 relative), as
// the log domain does (exp and log differ in the last bit). The log domain
// factors its log-sum-exp into the same products where that is exact (an
// axis's rows of -C / reg spanning at most 600) and worth four launches
// (2^24 terms an axis or more): the line's maximum, an exp per voxel, the
// product, a log per voxel (applyFactored). Elsewhere it keeps one thread
// per output: two passes of exp per term, bound by the exponentials.
//
// A numerical error (POT: a zero in K^T u, or a non-finite scaling) is
// flagged on the device with its iteration; from then on the updates and
// saves are no-ops, so the state saved before that iteration is intact when
// the host, at the next check, restores it. The result is POT's (stop at
// the failing iteration, keep the scalings before it) without a host round
// trip per iteration.
#include "GridResultVoxel.h"
#include "FactoredLogSumExp.h"
#include "GridSinkhornSolver.h"

#include "../common/CudaUtil.cuh"

#include "CublasLibrary.h"

#include <array>
#include <climits>
#include <cstdlib>
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

unsigned blocksFor(int64_t n)
{
  return cuda::blocksFor(n, kThreads, 65535 * 16);
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

// The log domain's factored axis (see DeviceBackend::applyFactored): the
// line a voxel lies on along an axis of stride `stride` and length `na`.
__device__ inline int64_t lineOf(int64_t p, int64_t stride, int64_t na)
{
  return p / (stride * na) * stride + p % stride;
}

// c = the maximum of `in` along each line (fmax: NaN ignored, as the direct
// path's maximum does).
__global__ void lineMaxKernel(const double* in, double* lineMax, int64_t lines, int64_t stride, int64_t na)
{
  for (int64_t L = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; L < lines; L += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t first = L / stride * stride * na + L % stride;
    double m = -INFINITY;
    for (int64_t j = 0; j < na; ++j)
      m = fmax(m, in[first + j * stride]);
    lineMax[L] = m;
  }
}

// e = exp(in - c) on lines whose maximum is finite (0 elsewhere: those
// lines are summed directly by finishFactoredKernel).
__global__ void shiftedExpKernel(const double* in, const double* lineMax, double* e, int64_t n, int64_t stride,
  int64_t na)
{
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x)
  {
    const double c = lineMax[lineOf(p, stride, na)];
    e[p] = isfinite(c) ? exp(__dsub_rn(in[p], c)) : 0.0;
  }
}

// out = rowMax_i + c + log(product), -inf for a zero product; a line whose
// maximum is not finite (all -inf, or +inf) by the direct log-sum-exp over
// `in`, as applyAxis computes it.
__global__ void finishFactoredKernel(double* out, const double* in, const double* lineMax, const double* rowMax,
  const double* F, int64_t n, int64_t stride, int64_t na)
{
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n; p += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t i = (p / stride) % na;
    const double c = lineMax[lineOf(p, stride, na)];
    if (isfinite(c))
    {
      const double t = out[p];
      out[p] = t > 0 ? __dadd_rn(__dadd_rn(rowMax[i], c), log(t)) : (t == 0 ? -INFINITY : NAN);
      continue;
    }
    const int64_t first = p - i * stride;
    const double* row = F + i * na;
    double m = -INFINITY;
    for (int64_t j = 0; j < na; ++j)
      m = fmax(m, __dadd_rn(row[j], in[first + j * stride]));
    double r = -INFINITY;
    if (m != -INFINITY)
    {
      double sum = 0;
      for (int64_t j = 0; j < na; ++j)
        sum = __dadd_rn(sum, exp(__dsub_rn(__dadd_rn(row[j], in[first + j * stride]), m)));
      r = __dadd_rn(m, log(sum));
    }
    out[p] = r;
  }
}

// failedAt: -1, or the first iteration whose update went bad; once set,
// the updates and saves below do nothing.
__global__ void updateVKernel(
  double* v, const double* ktu, const double* b, const double* logB, int64_t n, bool logDomain, const int* failedAt)
{
  if (*failedAt >= 0)
    return;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
    v[k] = logDomain ? __dsub_rn(logB[k], ktu[k]) : __ddiv_rn(b[k], ktu[k]);
}

__global__ void updateUKernel(double* u, const double* kv, const double* v, const double* ktu, const double* a,
  const double* logA, int64_t n, bool logDomain, int iteration, int* failedAt)
{
  if (*failedAt >= 0)
    return;
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
    *failedAt = iteration; // every writer writes the same value
}

// u, v saved before an iteration (skipped once an update went bad).
__global__ void saveKernel(double* prevU, double* prevV, const double* u, const double* v, int64_t n, const int* failedAt)
{
  if (*failedAt >= 0)
    return;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    prevU[k] = u[k];
    prevV[k] = v[k];
  }
}

// The start: u = v = 1/n (log domain: 0), and log a, log b.
__global__ void startKernel(double* u, double* v, double* logA, double* logB, const double* a, const double* b,
  int64_t n, bool logDomain)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    u[k] = v[k] = logDomain ? 0.0 : 1.0 / static_cast<double>(n);
    if (logDomain)
    {
      logA[k] = log(a[k]);
      logB[k] = log(b[k]);
    }
  }
}

__global__ void potentialsKernel(double* source, double* target, const double* u, const double* v, int64_t n,
  double reg, bool logDomain)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    source[k] = potentialOf(u[k], reg, logDomain);
    target[k] = potentialOf(v[k], reg, logDomain);
  }
}

// Block sums of costTermOf(u, term).
__global__ void costKernel(const double* u, const double* term, int64_t n, bool logDomain, double* sums)
{
  __shared__ double part[kThreads];
  double s = 0;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
    s += costTermOf(u[k], term[k], logDomain);
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

__global__ void displaceKernel(double* displacement, const double* mass, const double* moved, const double* rowSum,
  int64_t n, int axis, int64_t stride, int64_t length, double spacing, bool logDomain)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    const double here = spacing * static_cast<double>((k / stride) % length);
    displacement[3 * k + axis] = displacementOf(mass[k], moved[k], rowSum[k], here, logDomain);
  }
}

void checkBlas(cublasStatus_t status, const char* what)
{
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
}

// The calling thread's cuBLAS handle, made at its first solve and kept:
// cublasCreate takes milliseconds, more than a small grid's whole solve.
// (A handle serves one host thread at a time; solves on several threads
// each get their own.)
cublasHandle_t blasHandle()
{
  struct Handle
  {
    cublasHandle_t h = nullptr;
    Handle() { checkBlas(cuda::cublasLibrary().create(&h), "cublasCreate"); }
    ~Handle() { cuda::cublasLibrary().destroy(h); }
  };
  thread_local Handle handle;
  return handle.h;
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
    , failedAt_(1)
  {
    check(cudaMemset(failedAt_.ptr, 0xff, sizeof(int)), "cudaMemset"); // -1
    for (int k = 0; k < 3; ++k)
      dims_[k] = dims[k];
    for (auto& buffer : buffers_)
      buffer = std::make_unique<DeviceArray<double>>(a.size());
    upload(a_.ptr, a);
    upload(b_.ptr, b);
    startKernel<<<blocksFor(n_), kThreads>>>(
      buf(Buffer::U), buf(Buffer::V), logA_.ptr, logB_.ptr, a_.ptr, b_.ptr, n_, logDomain);
    check(cudaGetLastError(), "grid Sinkhorn start");
    for (int axis = 0; axis < 3; ++axis)
      for (int kind = 0; kind < 3; ++kind)
      {
        const std::vector<double>& F =
          kind == 0 ? factors.kernel[axis] : kind == 1 ? factors.cost[axis] : factors.position[axis];
        factors_[kind][axis] = std::make_unique<DeviceArray<double>>(F.size());
        upload(factors_[kind][axis]->ptr, F);
      }
    for (int axis = 0; axis < 3; ++axis)
    {
      const std::vector<double>& F = factors.kernel[axis];
      identity_[axis] = F.size() == 1 && F[0] == (logDomain ? 0.0 : 1.0);
      if (logDomain)
        factorLogKernel(axis, F);
    }
    if (factored_[0] || factored_[1] || factored_[2])
    {
      lineMax_ = std::make_unique<DeviceArray<double>>(a.size());
      shifted_ = std::make_unique<DeviceArray<double>>(a.size());
    }
  }

  // Set `set`'s factor of axis `axis` (GridFactors::of's on the device).
  const double* factor(int set, int axis) const { return factors_[factorKind(set, axis)][axis]->ptr; }

  void apply(FactorSet set, Buffer in, Buffer out)
  {
    // x, y, z in turn, through two buffers of its own (in may be out), as
    // the CPU does line by line.
    double* stages[3] = { work_.ptr, work2_.ptr, buf(out) };
    const double* from = buf(in);
    for (int axis = 0; axis < 3; ++axis)
    {
      const bool kernel = factorKind(set, axis) == 0;
      if (kernel && identity_[axis])
      {
        // An axis of one voxel: its kernel factor is 1 (0 in the log
        // domain), exactly the input; copied only into the last stage.
        if (axis == 2 && from != stages[axis])
          check(cudaMemcpyAsync(stages[axis], from, static_cast<size_t>(n_) * sizeof(double),
                  cudaMemcpyDeviceToDevice),
            "cudaMemcpy");
        else
          continue;
      }
      else if (kernel && factored_[axis])
        applyFactored(from, stages[axis], axis);
      else if (log_ || !multiply(from, stages[axis], factor(set, axis), axis))
        applyAxis<<<blocksFor(n_), kThreads>>>(
          from, stages[axis], factor(set, axis), dims_[0], dims_[1], dims_[2], axis, log_);
      check(cudaGetLastError(), "grid Sinkhorn kernel");
      from = stages[axis];
    }
  }
  void updateV()
  {
    updateVKernel<<<blocksFor(n_), kThreads>>>(
      buf(Buffer::V), buf(Buffer::KTU), b_.ptr, logB_.ptr, n_, log_, failedAt_.ptr);
    check(cudaGetLastError(), "grid Sinkhorn update");
  }
  // A bad update is found at the next failedIteration(), not here.
  bool updateU(int iteration)
  {
    updateUKernel<<<blocksFor(n_), kThreads>>>(buf(Buffer::U), buf(Buffer::KV), buf(Buffer::V), buf(Buffer::KTU),
      a_.ptr, logA_.ptr, n_, log_, iteration, failedAt_.ptr);
    check(cudaGetLastError(), "grid Sinkhorn update");
    return false;
  }
  int failedIteration()
  {
    int at = -1;
    check(cudaMemcpy(&at, failedAt_.ptr, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return at;
  }
  void save()
  {
    saveKernel<<<blocksFor(n_), kThreads>>>(
      prevU_.ptr, prevV_.ptr, buf(Buffer::U), buf(Buffer::V), n_, failedAt_.ptr);
    check(cudaGetLastError(), "grid Sinkhorn save");
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
    return std::sqrt(sumOfBlockSums());
  }
  void potentials(double reg, std::vector<double>& source, std::vector<double>& target)
  {
    potentialsKernel<<<blocksFor(n_), kThreads>>>(work_.ptr, work2_.ptr, buf(Buffer::U), buf(Buffer::V), n_, reg, log_);
    check(cudaGetLastError(), "grid Sinkhorn potentials");
    source = download(work_.ptr, n_);
    target = download(work2_.ptr, n_);
  }
  double costAlong(Buffer term)
  {
    costKernel<<<kErrorBlocks, kThreads>>>(buf(Buffer::U), buf(term), n_, log_, sums_.ptr);
    check(cudaGetLastError(), "grid Sinkhorn cost");
    return sumOfBlockSums();
  }
  void displaceAlong(int axis, Buffer moved, Buffer rowSum, const double spacing[3])
  {
    if (!displacement_)
      displacement_ = std::make_unique<DeviceArray<double>>(3 * static_cast<size_t>(n_));
    const int64_t stride = axis == 0 ? 1 : axis == 1 ? dims_[0] : dims_[0] * dims_[1];
    displaceKernel<<<blocksFor(n_), kThreads>>>(displacement_->ptr, a_.ptr, buf(moved), buf(rowSum), n_, axis, stride,
      dims_[axis], spacing[axis], log_);
    check(cudaGetLastError(), "grid Sinkhorn displacement");
  }
  std::vector<double> displacement() { return download(displacement_->ptr, 3 * n_); }

private:
  double* buf(Buffer b) { return buffers_[static_cast<int>(b)]->ptr; }
  // The scaling method's product along one axis by cuBLAS (column-major:
  // a row-major n x n F is F^T to it; a volume's lines along x are the
  // columns of an nx x (ny nz) matrix, its y-z planes (nx x ny) or
  // (nx ny) x nz matrices whose columns run along y or z). false for sizes
  // beyond cuBLAS's 32-bit ones (the kernel above runs).
  bool multiply(const double* in, double* out, const double* F, int axis)
  {
    const int64_t nx = dims_[0], ny = dims_[1], nz = dims_[2], N = dims_[axis];
    if (nx * ny > INT_MAX || ny * nz > INT_MAX || N > INT_MAX)
      return false;
    const double one = 1.0, zero = 0.0;
    const int n = static_cast<int>(N);
    if (axis == 0)
    {
      // out (nx x ny nz) = F (nx x nx) in
      checkBlas(cuda::cublasLibrary().dgemm(blas_, CUBLAS_OP_T, CUBLAS_OP_N, n, static_cast<int>(ny * nz), n, &one, F, n, in, n,
                  &zero, out, n),
        "cublasDgemm");
      return true;
    }
    // per plane: out (m x N) = in (m x N) F^T, m the voxels of a line's stride
    const int64_t m = axis == 1 ? nx : nx * ny, planes = axis == 1 ? nz : 1;
    checkBlas(cuda::cublasLibrary().dgemmStridedBatched(blas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m), n, n, &one, in,
                static_cast<int>(m), m * N, F, n, 0, &zero, out, static_cast<int>(m), m * N, static_cast<int>(planes)),
      "cublasDgemmStridedBatched");
    return true;
  }
  static std::vector<double> download(const double* from, int64_t count)
  {
    std::vector<double> out(static_cast<size_t>(count));
    check(cudaMemcpy(out.data(), from, out.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return out;
  }
  // The kErrorBlocks block sums, added on the host in a fixed order.
  double sumOfBlockSums()
  {
    std::vector<double> sums(kErrorBlocks);
    check(cudaMemcpy(sums.data(), sums_.ptr, sums.size() * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
    double s = 0;
    for (double x : sums)
      s += x;
    return s;
  }
  static void upload(double* to, const std::vector<double>& from)
  {
    if (!from.empty())
      check(cudaMemcpy(to, from.data(), from.size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  void copy(double* to, const double* from)
  {
    check(cudaMemcpy(to, from, static_cast<size_t>(n_) * sizeof(double), cudaMemcpyDeviceToDevice), "cudaMemcpy");
  }

  // The log domain's kernel factor F of one axis (-C / reg), factored where
  // that is exact (factorRows, FactoredLogSumExp.h):
  //   logsumexp_j (F_ij + in_j) = m_i + c + log sum_j E_ij exp(in_j - c),
  // m_i the row's maximum, E = exp(F - m) (made here, once), c the line's
  // maximum of `in`. The sum is then a matrix product (cuBLAS, as the
  // scaling method's) and an exp per voxel instead of one per term.
  static constexpr int64_t kFactorMinTerms = int64_t(1) << 24;
  void factorLogKernel(int axis, const std::vector<double>& F)
  {
    const int64_t na = dims_[axis];
    if (na == 1 || na > INT_MAX || dims_[0] * dims_[1] > INT_MAX || dims_[1] * dims_[2] > INT_MAX)
      return; // as multiply(): cuBLAS's sizes are 32-bit
    // Four launches an axis instead of one: measured on an H200, 128^2 at
    // reg 50 took 0.161 ms an iteration factored against 0.137 direct (2
    // million terms an axis), 512^2 0.252 against 3.51 (134 million).
    const char* least = std::getenv("TOPOVOX_GRID_FACTOR_MIN_TERMS"); // for the tests: 0 factors every axis
    if (n_ * na < (least && *least ? std::atoll(least) : kFactorMinTerms))
      return;
    std::vector<double> rowMax, E;
    if (!factorRows(F, na, E, rowMax))
      return;
    rowMax_[axis] = std::make_unique<DeviceArray<double>>(rowMax.size());
    upload(rowMax_[axis]->ptr, rowMax);
    exps_[axis] = std::make_unique<DeviceArray<double>>(E.size());
    upload(exps_[axis]->ptr, E);
    factored_[axis] = true;
  }
  void applyFactored(const double* in, double* out, int axis)
  {
    const int64_t na = dims_[axis], stride = axis == 0 ? 1 : axis == 1 ? dims_[0] : dims_[0] * dims_[1];
    const int64_t lines = n_ / na;
    lineMaxKernel<<<blocksFor(lines), kThreads>>>(in, lineMax_->ptr, lines, stride, na);
    shiftedExpKernel<<<blocksFor(n_), kThreads>>>(in, lineMax_->ptr, shifted_->ptr, n_, stride, na);
    if (!multiply(shifted_->ptr, out, exps_[axis]->ptr, axis))
      throw std::runtime_error("grid Sinkhorn: an axis too long for cuBLAS was factored"); // excluded above
    finishFactoredKernel<<<blocksFor(n_), kThreads>>>(out, in, lineMax_->ptr, rowMax_[axis]->ptr,
      factor(Kernel, axis), n_, stride, na);
  }

  int64_t n_;
  int64_t dims_[3];
  bool log_;
  bool identity_[3] = { false, false, false }, factored_[3] = { false, false, false };
  std::unique_ptr<DeviceArray<double>> rowMax_[3], exps_[3], lineMax_, shifted_;
  DeviceArray<double> a_, b_, logA_, logB_, prevU_, prevV_, work_, work2_, sums_;
  DeviceArray<int> failedAt_;
  cublasHandle_t blas_ = blasHandle();
  std::unique_ptr<DeviceArray<double>> displacement_; // x, y, z per voxel, made at the end
  std::unique_ptr<DeviceArray<double>> buffers_[5];
  std::unique_ptr<DeviceArray<double>> factors_[3][3]; // kernel, cost, position; per axis
};
} // namespace

GridSinkhornResult sinkhornGridGPU(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
  const double spacing[3], const SinkhornOptions& options, const GridFactors& factors)
{
  DeviceBackend be(a, b, dims, factors, options.method == SinkhornMethod::SinkhornLog);
  return solveGrid(be, a, b, spacing, options);
}
}
}
