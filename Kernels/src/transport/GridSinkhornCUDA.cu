// GridSinkhornCUDA.cu - the GPU backend of the convolutional Sinkhorn
// (GridSinkhornSolver.h): every vector on the device (from the pool), the
// kernel applied axis by axis, elementwise updates into the spare copies of
// u and v. Nothing crosses to the host during the iterations but the
// marginal error every tenth one (a sum of block sums) and, with it,
// whether an update went bad; the nine iterations in between are one CUDA
// graph. Small 2D grids apply both axes in one launch with the update fused
// (GridPlaneKernels.cuh).
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
// flagged on the device with its iteration; from then on the updates are
// no-ops, so the copies of u and v from before that iteration are intact
// when the host, at the next check, restores them. The result is POT's (stop at
// the failing iteration, keep the scalings before it) without a host round
// trip per iteration.
#include "GridResultVoxel.h"
#include "FactoredLogSumExp.h"
#include "GridSinkhornSolver.h"

#include "../common/CudaUtil.cuh"
#include "../common/HostCopy.h"

#include "CublasLibrary.h"
#include "GridPlaneKernels.cuh"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>

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
// the updates below do nothing (the copies of u and v before that
// iteration stay as they were: GridSinkhornSolver.h).
// iteration: the number of the iteration under way, counted on the device
// (-1 at the start, one more at each updateV), so that a captured graph of
// iterations records the right one in failedAt.
__global__ void updateVKernel(double* v, const double* ktu, const double* marginal, int64_t n, bool logDomain,
  const int* failedAt, int* iteration)
{
  if (blockIdx.x == 0 && threadIdx.x == 0)
    ++*iteration;
  if (*failedAt >= 0)
    return;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
    v[k] = updatedV(marginal[k], ktu[k], logDomain);
}

// marginal: a, or log a in the log domain (as updateVKernel's b or log b).
__global__ void updateUKernel(double* u, const double* kv, const double* v, const double* ktu, const double* marginal,
  int64_t n, bool logDomain, const int* iteration, int* failedAt)
{
  if (*failedAt >= 0)
    return;
  bool any = false;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    u[k] = updatedU(marginal[k], kv[k], logDomain);
    any = any || (!logDomain && updateWentBad(ktu[k], u[k], v[k]));
  }
  if (any)
    *failedAt = *iteration; // every writer writes the same value
}

// An axis's three n x n factors from their diagonals (GridDiagonals): the
// same operations as gridFactors' on the host, so the same values.
__global__ void expandFactorsKernel(double* kernel, double* cost, double* position, const double* kd,
  const double* cd, const double* x, int64_t n, bool logDomain)
{
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n * n; p += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t i = p / n, j = p % n, t = i - j + n - 1;
    const double k = kd[t];
    kernel[p] = k;
    cost[p] = cd[t];
    position[p] = logDomain ? __dadd_rn(k, x[j]) : __dmul_rn(k, x[j]);
  }
}

// The log domain's factored kernel (FactoredLogSumExp.h): E = exp(F - m),
// m the row maxima (found on the host from the diagonal).
__global__ void factoredExpKernel(double* E, const double* kd, const double* rowMax, int64_t n)
{
  for (int64_t p = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; p < n * n; p += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t i = p / n, j = p % n;
    E[p] = exp(__dsub_rn(kd[i - j + n - 1], rowMax[i]));
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

// The calling thread's cuBLAS handle, the stream its solves iterate on and
// cuBLAS's workspace, made at its first solve and kept: cublasCreate takes
// milliseconds, more than a small grid's whole solve. (A handle serves one
// host thread at a time; solves on several threads each get their own.)
// The stream is a blocking one, so that the work the solver queues on the
// legacy default stream (uploads, results, pool allocations) and on it stay
// in order; the workspace is cuBLAS's own size for the H100 class, given
// so that cuBLAS allocates nothing while a graph is captured. The stream
// and the workspace are never freed, as HostCopy.cu's staging: a
// thread_local's destructor could run after the CUDA runtime has shut down.
struct ThreadContext
{
  cublasHandle_t blas = nullptr;
  cudaStream_t stream = nullptr;
  ThreadContext()
  {
    checkBlas(cuda::cublasLibrary().create(&blas), "cublasCreate");
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    constexpr size_t kWorkspace = size_t(32) << 20;
    void* workspace = nullptr;
    check(cudaMalloc(&workspace, kWorkspace), "cudaMalloc");
    checkBlas(cuda::cublasLibrary().setWorkspace(blas, workspace, kWorkspace), "cublasSetWorkspace");
    checkBlas(cuda::cublasLibrary().setStream(blas, stream), "cublasSetStream");
  }
  ~ThreadContext() { cuda::cublasLibrary().destroy(blas); }
};

ThreadContext& threadContext()
{
  thread_local ThreadContext context;
  return context;
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
    const GridDiagonals& diagonals, bool logDomain, int threads)
    : n_(static_cast<int64_t>(a.size()))
    , log_(logDomain)
    , threads_(threads)
    , a_(a.size())
    , b_(a.size())
    , logA_(logDomain ? a.size() : 0)
    , logB_(logDomain ? a.size() : 0)
    , work_(a.size())
    , work2_(a.size())
    , sums_(kErrorBlocks)
    , failedAt_(2)
  {
    // Every array from the device's pool, in the legacy stream's order: a
    // later solve reuses the blocks instead of mapping new memory. The set-up
    // and the results run on the legacy stream too, the iterations on the
    // thread's stream (ThreadContext), which a graph can capture; the
    // blocking streams' rules keep the two in order.
    check(cudaMemsetAsync(failedAt_.ptr, 0xff, 2 * sizeof(int)), "cudaMemset"); // failed at, iteration: -1
    for (int k = 0; k < 3; ++k)
      dims_[k] = dims[k];
    for (Buffer t : { Buffer::KTU, Buffer::KV, Buffer::Scratch })
      buffers_[workIndex(t)] = std::make_unique<Array>(a.size());
    for (int k = 0; k < 2; ++k)
    {
      u_[k] = std::make_unique<Array>(a.size());
      v_[k] = std::make_unique<Array>(a.size());
    }
    cuda::copyToDevice(a_.ptr, a.data(), a.size() * sizeof(double), threads_);
    cuda::copyToDevice(b_.ptr, b.data(), b.size() * sizeof(double), threads_);
    startKernel<<<blocksFor(n_), kThreads>>>(u_[0]->ptr, v_[0]->ptr, logA_.ptr, logB_.ptr, a_.ptr, b_.ptr, n_, logDomain);
    check(cudaGetLastError(), "grid Sinkhorn start");
    expandFactors(diagonals);
  }

  // Set `set`'s factor of axis `axis` (GridFactors::of's on the device).
  const double* factor(int set, int axis) const { return factors_[factorKind(set, axis)][axis]->ptr; }

  void apply(FactorSet set, Buffer in, Buffer out)
  {
    if (set == Kernel && plane_ && in != out)
    {
      applyPlane(buf(in), buf(out)); // x and y at once; z, of one voxel, is the identity
      return;
    }
    // x, y, z in turn, as the CPU does line by line, skipping the axes of
    // one voxel (their kernel factor is 1, or 0 in the log domain: exactly
    // the input): through two buffers of its own, the last axis straight
    // into out (unless out is the input: in may be out).
    int axes[3], count = 0;
    for (int axis = 0; axis < 3; ++axis)
      if (!(factorKind(set, axis) == 0 && identity_[axis]))
        axes[count++] = axis;
    const double* from = buf(in);
    double* const to = buf(out);
    for (int k = 0; k < count; ++k)
    {
      const int axis = axes[k];
      double* stage = k + 1 == count && from != to ? to : k % 2 == 0 ? work_.ptr : work2_.ptr;
      if (factorKind(set, axis) == 0 && factored_[axis])
        applyFactored(from, stage, axis);
      else if (log_ || !multiply(from, stage, factor(set, axis), axis))
        applyAxis<<<blocksFor(n_), kThreads, 0, stream_>>>(
          from, stage, factor(set, axis), dims_[0], dims_[1], dims_[2], axis, log_);
      check(cudaGetLastError(), "grid Sinkhorn kernel");
      from = stage;
    }
    if (from != to)
      check(cudaMemcpyAsync(to, from, static_cast<size_t>(n_) * sizeof(double), cudaMemcpyDeviceToDevice, stream_),
        "cudaMemcpy");
  }
  // K^T u, then v; K v, then u: one launch each on small 2D grids
  // (applyPlane with the update), else the product and the update.
  void stepV()
  {
    if (!plane_)
    {
      apply(Kernel, Buffer::U, Buffer::KTU);
      updateV();
      return;
    }
    const double* u = buf(Buffer::U);
    vSlot_ ^= 1;
    PlaneUpdateArgs args;
    args.scaling = buf(Buffer::V);
    args.marginal = log_ ? logB_.ptr : b_.ptr;
    args.failedAt = failedAt_.ptr;
    args.iteration = failedAt_.ptr + 1;
    applyPlane(u, buf(Buffer::KTU), PlaneUpdate::V, args);
  }
  bool stepU(int iteration)
  {
    if (!plane_)
    {
      apply(Kernel, Buffer::V, Buffer::KV);
      return updateU(iteration);
    }
    uSlot_ ^= 1;
    PlaneUpdateArgs args;
    args.scaling = buf(Buffer::U);
    args.marginal = log_ ? logA_.ptr : a_.ptr;
    args.ktu = buf(Buffer::KTU);
    args.v = buf(Buffer::V);
    args.failedAt = failedAt_.ptr;
    args.iteration = failedAt_.ptr + 1;
    applyPlane(buf(Buffer::V), buf(Buffer::KV), PlaneUpdate::U, args);
    return false;
  }
  void updateV()
  {
    vSlot_ ^= 1; // into the spare copy (GridSinkhornSolver.h)
    updateVKernel<<<blocksFor(n_), kThreads, 0, stream_>>>(
      buf(Buffer::V), buf(Buffer::KTU), log_ ? logB_.ptr : b_.ptr, n_, log_, failedAt_.ptr, failedAt_.ptr + 1);
    check(cudaGetLastError(), "grid Sinkhorn update");
  }
  // A bad update is found at the next failedIteration(), not here.
  bool updateU(int)
  {
    uSlot_ ^= 1;
    updateUKernel<<<blocksFor(n_), kThreads, 0, stream_>>>(buf(Buffer::U), buf(Buffer::KV), buf(Buffer::V),
      buf(Buffer::KTU), log_ ? logA_.ptr : a_.ptr, n_, log_, failedAt_.ptr + 1, failedAt_.ptr);
    check(cudaGetLastError(), "grid Sinkhorn update");
    return false;
  }
  // Iterations first .. first + count - 1, none of them checked (the solver
  // checks every tenth), as one CUDA graph: one launch for the 18 to 108
  // of 9 iterations (two to twelve each), as the issue asks of long runs. The
  // graph is captured at the first such run of each (count, copy of u)
  // and replayed after; false where graphs are off (TOPOVOX_GRID_GRAPHS=0)
  // or a capture failed (the solver then steps as usual).
  bool iterate(int first, int count)
  {
    if (!graphs_ || uSlot_ != vSlot_)
      return false;
    const int parity = uSlot_;
    Graph* graph = nullptr;
    for (Graph& g : graphs_list_)
      if (g.count == count && g.parity == parity)
        graph = &g;
    if (!graph)
    {
      cudaGraph_t captured = nullptr;
      check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
      try
      {
        for (int ii = first; ii < first + count; ++ii)
        {
          stepV();
          stepU(ii);
        }
      }
      catch (const std::runtime_error& e)
      {
        cudaStreamEndCapture(stream_, &captured);
        if (captured)
          cudaGraphDestroy(captured);
        cudaGetLastError();
        if (graphsRequired_)
          throw std::runtime_error(std::string("grid Sinkhorn: capturing the iterations failed: ") + e.what());
        uSlot_ = vSlot_ = parity;
        graphs_ = false;
        return false;
      }
      cudaGraphExec_t exec = nullptr;
      const cudaError_t ended = cudaStreamEndCapture(stream_, &captured);
      const cudaError_t made = ended == cudaSuccess ? cudaGraphInstantiate(&exec, captured, 0) : ended;
      if (captured)
        cudaGraphDestroy(captured);
      if (made != cudaSuccess)
      {
        cudaGetLastError();
        if (graphsRequired_)
          throw std::runtime_error(std::string("grid Sinkhorn: capturing the iterations failed: ") +
            cudaGetErrorString(made));
        uSlot_ = vSlot_ = parity;
        graphs_ = false;
        return false;
      }
      graphs_list_.push_back(Graph{ count, parity, exec });
      graph = &graphs_list_.back();
    }
    else if (count % 2)
    {
      uSlot_ ^= 1; // as the captured updates flip them
      vSlot_ ^= 1;
    }
    check(cudaGraphLaunch(graph->exec, stream_), "cudaGraphLaunch");
    return true;
  }
  ~DeviceBackend()
  {
    for (Graph& g : graphs_list_)
      cudaGraphExecDestroy(g.exec);
  }

  int failedIteration()
  {
    int at = -1;
    check(cudaMemcpy(&at, failedAt_.ptr, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return at;
  }
  // The updates froze at the failing iteration, so its copies before it
  // are intact.
  void restore(int iteration) { uSlot_ = vSlot_ = iteration % 2; }
  double marginalError()
  {
    errorKernel<<<kErrorBlocks, kThreads>>>(buf(Buffer::KTU), buf(Buffer::V), b_.ptr, n_, log_, sums_.ptr);
    check(cudaGetLastError(), "grid Sinkhorn error");
    return std::sqrt(sumOfBlockSums());
  }
  void potentials(double reg, GridField& source, GridField& target)
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
      displacement_ = std::make_unique<Array>(3 * static_cast<size_t>(n_));
    const int64_t stride = axis == 0 ? 1 : axis == 1 ? dims_[0] : dims_[0] * dims_[1];
    displaceKernel<<<blocksFor(n_), kThreads>>>(displacement_->ptr, a_.ptr, buf(moved), buf(rowSum), n_, axis, stride,
      dims_[axis], spacing[axis], log_);
    check(cudaGetLastError(), "grid Sinkhorn displacement");
  }
  GridField displacement() { return download(displacement_->ptr, 3 * n_); }

private:
  using Array = cuda::PooledArray<double>;
  // The kernel on 2D grids of up to 2^16 voxels (128^2, 256^2), where
  // cuBLAS's products are a few tiles each and the launches (three products
  // and a copy; in the log domain, two direct axes of an exp a term) cost
  // more than the sums: one planeKernel launch (log domain: after
  // columnShiftKernel). Its sums are fmas in y and x order. The log domain
  // needs both axes' factors factorable (FactoredLogSumExp.h) with equal
  // row maxima (so E_x is symmetric, as the plane reads it by columns:
  // true of -C / reg, whose rows all peak at 0 on the diagonal).
  static constexpr int64_t kPlaneMaxVoxels = int64_t(1) << 16;
  bool planeFits()
  {
    const char* off = std::getenv("TOPOVOX_GRID_PLANE"); // 0: the products as on larger grids (tests, benchmarks)
    if (off && std::string(off) == "0")
      return false;
    // nx and ny up to 512: the shared memory stays within the 48 KB a
    // launch gets without asking (applyPlane).
    if (!(dims_[2] == 1 && dims_[1] > 1 && dims_[0] > 1 && dims_[0] <= 512 && dims_[1] <= 512 &&
          dims_[0] * dims_[1] <= kPlaneMaxVoxels))
      return false;
    if (!log_)
      return true;
    for (int axis = 0; axis < 2; ++axis)
    {
      const std::vector<double>& rowMax = kernelRowMax_[axis];
      if (!factorable_[axis] || std::any_of(rowMax.begin(), rowMax.end(), [&](double m) { return m != rowMax[0]; }))
        return false;
      if (!exps_[axis])
        makeFactoredExp(axis, diagonals_->ptr + diagonalAt_[axis]);
    }
    columnMax_ = std::make_unique<Array>(static_cast<size_t>(dims_[0]));
    if (!shifted_)
      shifted_ = std::make_unique<Array>(static_cast<size_t>(n_));
    return true;
  }
  void applyPlane(const double* in, double* out, PlaneUpdate update = PlaneUpdate::None,
    const PlaneUpdateArgs& args = PlaneUpdateArgs())
  {
    const int nx = static_cast<int>(dims_[0]), ny = static_cast<int>(dims_[1]);
    // Up to 512 threads, at most 8 groups: (groups + 1) x 4 x nx + 4 x ny
    // doubles of shared memory stay within 48 KB for nx <= 512, ny <= 512.
    const int lanes = std::min(512, (nx + 31) / 32 * 32), groups = std::min(8, 512 / lanes);
    // Rows per block: enough blocks to fill the device, and fewer passes
    // over `in` (read once a block) where ny is large.
    const int rows = ny >= 512 ? 4 : ny >= 256 ? 2 : 1;
    const unsigned blocks = static_cast<unsigned>((ny + rows - 1) / rows);
    // (+ the log domain's row maxima and the warps': rows x 33)
    const size_t shared =
      (static_cast<size_t>(groups + 1) * rows * nx + static_cast<size_t>(rows) * ny + rows * 33) * sizeof(double);
    const int threads = lanes * groups;
    const double *Fx = factor(Kernel, 0), *Fy = factor(Kernel, 1);
    PlaneLogArgs logArgs;
    if (log_)
    {
      // The input shifted by its columns' maxima; E for the factors.
      columnShiftKernel<<<(nx + 31) / 32, dim3(32, 8), 0, stream_>>>(in, columnMax_->ptr, shifted_->ptr, nx, ny);
      check(cudaGetLastError(), "grid Sinkhorn plane");
      in = shifted_->ptr;
      Fx = exps_[0]->ptr;
      Fy = exps_[1]->ptr;
      logArgs.columnMax = columnMax_->ptr;
      logArgs.rowMaxX = rowMax_[0]->ptr;
      logArgs.rowMaxY = rowMax_[1]->ptr;
    }
    auto launch = [&](auto rowsConstant, auto logConstant) {
      constexpr int kRows = decltype(rowsConstant)::value;
      constexpr bool kLog = decltype(logConstant)::value;
      if (update == PlaneUpdate::V)
        planeKernel<kRows, PlaneUpdate::V, kLog>
          <<<blocks, threads, shared, stream_>>>(in, out, Fx, Fy, nx, ny, lanes, args, logArgs);
      else if (update == PlaneUpdate::U)
        planeKernel<kRows, PlaneUpdate::U, kLog>
          <<<blocks, threads, shared, stream_>>>(in, out, Fx, Fy, nx, ny, lanes, args, logArgs);
      else
        planeKernel<kRows, PlaneUpdate::None, kLog>
          <<<blocks, threads, shared, stream_>>>(in, out, Fx, Fy, nx, ny, lanes, args, logArgs);
    };
    auto launchRows = [&](auto logConstant) {
      if (rows == 4)
        launch(std::integral_constant<int, 4>(), logConstant);
      else if (rows == 2)
        launch(std::integral_constant<int, 2>(), logConstant);
      else
        launch(std::integral_constant<int, 1>(), logConstant);
    };
    if (log_)
      launchRows(std::true_type());
    else
      launchRows(std::false_type());
    check(cudaGetLastError(), "grid Sinkhorn plane");
  }
  double* buf(Buffer b)
  {
    return b == Buffer::U ? u_[uSlot_]->ptr : b == Buffer::V ? v_[vSlot_]->ptr : buffers_[workIndex(b)]->ptr;
  }
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
  // Into fresh host memory that all threads fill (HostCopy.h).
  GridField download(const double* from, int64_t count)
  {
    GridField out(static_cast<size_t>(count));
    cuda::copyToHost(out.data(), from, out.size() * sizeof(double), threads_);
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

  // Each axis's kernel, cost and position factors, expanded on the device
  // from the diagonals (uploaded in one copy: per axis the 2 n - 1 kernel
  // and cost values and the n positions); the log domain's kernel factored
  // where that is exact and pays (factorLogKernel).
  void expandFactors(const GridDiagonals& g)
  {
    std::vector<double> packed;
    size_t at[3];
    for (int axis = 0; axis < 3; ++axis)
    {
      at[axis] = diagonalAt_[axis] = packed.size();
      for (const std::vector<double>* part : { &g.kernel[axis], &g.cost[axis], &g.position[axis] })
        packed.insert(packed.end(), part->begin(), part->end());
    }
    diagonals_ = std::make_unique<Array>(packed.size());
    check(cudaMemcpy(diagonals_->ptr, packed.data(), packed.size() * sizeof(double), cudaMemcpyHostToDevice),
      "cudaMemcpy");
    for (int axis = 0; axis < 3; ++axis)
    {
      const int64_t n = dims_[axis];
      for (auto& kind : factors_)
        kind[axis] = std::make_unique<Array>(static_cast<size_t>(n * n));
      const double* kd = diagonals_->ptr + at[axis];
      expandFactorsKernel<<<blocksFor(n * n), kThreads>>>(factors_[0][axis]->ptr, factors_[1][axis]->ptr,
        factors_[2][axis]->ptr, kd, kd + (2 * n - 1), kd + 2 * (2 * n - 1), n, log_);
      check(cudaGetLastError(), "grid Sinkhorn factors");
      identity_[axis] = n == 1 && g.kernel[axis][0] == (log_ ? 0.0 : 1.0);
      if (log_)
      {
        // the row maxima, found once for factorLogKernel and planeFits
        factorable_[axis] = toeplitzRowMaxima(g.kernel[axis], n, kernelRowMax_[axis]);
        factorLogKernel(axis, kd);
      }
    }
    plane_ = planeFits();
    if (factored_[0] || factored_[1] || factored_[2])
    {
      lineMax_ = std::make_unique<Array>(static_cast<size_t>(n_));
      if (!shifted_)
        shifted_ = std::make_unique<Array>(static_cast<size_t>(n_));
    }
  }

  // The log domain's kernel factor F of one axis (-C / reg), factored where
  // that is exact (toeplitzRowMaxima, FactoredLogSumExp.h):
  //   logsumexp_j (F_ij + in_j) = m_i + c + log sum_j E_ij exp(in_j - c),
  // m_i the row's maximum, E = exp(F - m) (made here, once), c the line's
  // maximum of `in`. The sum is then a matrix product (cuBLAS, as the
  // scaling method's) and an exp per voxel instead of one per term.
  static constexpr int64_t kFactorMinTerms = int64_t(1) << 24;
  void factorLogKernel(int axis, const double* deviceDiagonal)
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
    if (!factorable_[axis])
      return;
    makeFactoredExp(axis, deviceDiagonal);
    factored_[axis] = true;
  }
  // The row maxima (on the device) and E of an axis's log-domain kernel factor.
  void makeFactoredExp(int axis, const double* deviceDiagonal)
  {
    const std::vector<double>& rowMax = kernelRowMax_[axis];
    const int64_t na = dims_[axis];
    rowMax_[axis] = std::make_unique<Array>(rowMax.size());
    check(cudaMemcpy(rowMax_[axis]->ptr, rowMax.data(), rowMax.size() * sizeof(double), cudaMemcpyHostToDevice),
      "cudaMemcpy");
    exps_[axis] = std::make_unique<Array>(static_cast<size_t>(na * na));
    factoredExpKernel<<<blocksFor(na * na), kThreads>>>(exps_[axis]->ptr, deviceDiagonal, rowMax_[axis]->ptr, na);
    check(cudaGetLastError(), "grid Sinkhorn factors");
  }
  void applyFactored(const double* in, double* out, int axis)
  {
    const int64_t na = dims_[axis], stride = axis == 0 ? 1 : axis == 1 ? dims_[0] : dims_[0] * dims_[1];
    const int64_t lines = n_ / na;
    lineMaxKernel<<<blocksFor(lines), kThreads, 0, stream_>>>(in, lineMax_->ptr, lines, stride, na);
    shiftedExpKernel<<<blocksFor(n_), kThreads, 0, stream_>>>(in, lineMax_->ptr, shifted_->ptr, n_, stride, na);
    if (!multiply(shifted_->ptr, out, exps_[axis]->ptr, axis))
      throw std::runtime_error("grid Sinkhorn: an axis too long for cuBLAS was factored"); // excluded above
    finishFactoredKernel<<<blocksFor(n_), kThreads, 0, stream_>>>(out, in, lineMax_->ptr, rowMax_[axis]->ptr,
      factor(Kernel, axis), n_, stride, na);
  }

  int64_t n_;
  int64_t dims_[3];
  bool log_;
  int threads_; // CPU threads for the copies
  bool identity_[3] = { false, false, false }, factored_[3] = { false, false, false };
  // The log domain: whether each axis's kernel factor can be factored
  // exactly (toeplitzRowMaxima), and its row maxima where it can.
  bool factorable_[3] = { false, false, false };
  std::vector<double> kernelRowMax_[3];
  bool plane_ = false; // applyPlane for the kernel
  struct Graph
  {
    int count, parity;
    cudaGraphExec_t exec;
  };
  // TOPOVOX_GRID_GRAPHS: 0 a launch at a time (tests, benchmarks);
  // "require" a failed capture is an error (the tests: that graphs run).
  const char* graphsSetting_ = std::getenv("TOPOVOX_GRID_GRAPHS");
  bool graphs_ = !(graphsSetting_ && std::string(graphsSetting_) == "0");
  bool graphsRequired_ = graphsSetting_ && std::string(graphsSetting_) == "require";
  std::vector<Graph> graphs_list_;
  std::unique_ptr<Array> rowMax_[3], exps_[3], lineMax_, shifted_, diagonals_, columnMax_;
  size_t diagonalAt_[3] = { 0, 0, 0 }; // each axis's diagonals in diagonals_
  Array a_, b_, logA_, logB_, work_, work2_, sums_;
  cuda::PooledArray<int> failedAt_; // the iteration whose update went bad (or -1), the iteration under way
  ThreadContext& context_ = threadContext();
  cublasHandle_t blas_ = context_.blas; // on stream_
  cudaStream_t stream_ = context_.stream;
  std::unique_ptr<Array> displacement_; // x, y, z per voxel, made at the end
  std::unique_ptr<Array> buffers_[kWorkBuffers]; // KTU, KV, Scratch (workIndex); U, V below
  std::unique_ptr<Array> u_[2], v_[2];  // two copies each (GridSinkhornSolver.h)
  int uSlot_ = 0, vSlot_ = 0;
  std::unique_ptr<Array> factors_[3][3]; // kernel, cost, position; per axis
};
} // namespace

GridSinkhornResult sinkhornGridGPU(const std::vector<double>& a, const std::vector<double>& b, const int64_t dims[3],
  const double spacing[3], const SinkhornOptions& options, const GridDiagonals& diagonals)
{
  DeviceBackend be(a, b, dims, diagonals, options.method == SinkhornMethod::SinkhornLog,
    threadCount(options.threads));
  return solveGrid(be, a, b, spacing, options);
}
}
}
