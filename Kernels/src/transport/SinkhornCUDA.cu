// SinkhornCUDA.cu - Sinkhorn's iterations (Sinkhorn.h) on the GPU for all
// pairs at once, so that the cost matrix is streamed once per iteration for
// the whole batch rather than once per pair:
// * scaling method: K^T u and K v of every pair are two cuBLAS DGEMMs
//   (pairs x d scalings against the d x d kernel), the divisions and the
//   numerical-error test small element-wise kernels;
// * log domain: one warp per row of -M / reg (or of its transpose) and a
//   tile of pairs, each lane a one-pass log-sum-exp over its share of the
//   row, the warp combining them: the row is read once for the tile.
// Each pair stops on its own (converged, or a numerical error that restores
// its previous scalings), as in POT; the others go on. Ten iterations (one
// checked, nine not: the stopping rule's period) are captured once as a CUDA
// graph and replayed, so a long run costs one launch per ten iterations;
// the host reads one counter of pairs still running per replay. The same
// updates as the CPU path, in double; sums in another order.
#include "SinkhornBackends.h"

#include "../common/CudaUtil.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
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
constexpr int kWarps = kThreads / 32;
constexpr int kPairTile = 4;   // pairs a warp of the log domain serves per row read
constexpr int kCheckPeriod = 10; // POT checks the marginal every 10 iterations

unsigned blocksFor(int64_t n)
{
  return static_cast<unsigned>(std::min<int64_t>((n + kThreads - 1) / kThreads, 65535));
}

#define TOPOVOX_GRID_LOOP(k, n)                                                                             \
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < (n); k += int64_t(gridDim.x) * blockDim.x)

// --- set-up ---------------------------------------------------------------

__global__ void gibbsKernel(const double* M, double reg, int64_t n, double* K)
{
  TOPOVOX_GRID_LOOP(k, n)
  K[k] = exp(M[k] / (-reg));
}

// Mr = -M / reg and its transpose (the CPU's values: one division each).
__global__ void scaledCostKernel(const double* M, double reg, int d, double* Mr, double* MrT)
{
  TOPOVOX_GRID_LOOP(k, int64_t(d) * d)
  {
    const double x = -M[k] / reg;
    Mr[k] = x;
    MrT[(k % d) * d + k / d] = x;
  }
}

__global__ void fillKernel(double* x, int64_t n, double value)
{
  TOPOVOX_GRID_LOOP(k, n)
  x[k] = value;
}

__global__ void logKernel(const double* x, int64_t n, double* out)
{
  TOPOVOX_GRID_LOOP(k, n)
  out[k] = log(x[k]);
}

// --- scaling method --------------------------------------------------------

// v = b / K^T u for the running pairs, the previous v kept.
__global__ void scalingVKernel(const double* ktu, const double* B, double* V, double* Vp, const int* active,
  int64_t n, int d)
{
  TOPOVOX_GRID_LOOP(k, n)
  {
    if (!active[k / d])
      continue;
    Vp[k] = V[k];
    V[k] = B[k] / ktu[k];
  }
}

// u = 1 / ((K / a) v), the previous u kept, and the numerical-error test of
// the iteration (a zero in K^T u, a NaN or inf in u or v). Where 1 / a_i is
// infinite the row is summed as the CPU does, term by term ((inf K_ij) v_j:
// NaN where a product is 0), so that the same rows fail; elsewhere 1 / a_i
// scales the GEMM's row sum.
__global__ void scalingUKernel(const double* kv, const double* ktu, const double* A, const double* K, const double* V,
  double* U, double* Up, const int* active, int* bad, int64_t n, int d)
{
  TOPOVOX_GRID_LOOP(k, n)
  {
    const int64_t p = k / d, i = k % d;
    if (!active[p])
      continue;
    Up[k] = U[k];
    const double inverse = 1.0 / A[k];
    double s = 0;
    if (isinf(inverse))
      for (int j = 0; j < d; ++j)
        s += (inverse * K[i * d + j]) * V[p * d + j];
    else
      s = inverse * kv[k];
    U[k] = 1.0 / s;
    if (ktu[k] == 0 || !isfinite(U[k]) || !isfinite(V[k]))
      bad[p] = 1;
  }
}

__global__ void restoreKernel(double* U, double* V, const double* Up, const double* Vp, const int* active,
  const int* bad, int64_t n, int d)
{
  TOPOVOX_GRID_LOOP(k, n)
  {
    const int64_t p = k / d;
    if (active[p] && bad[p])
    {
      U[k] = Up[k];
      V[k] = Vp[k];
    }
  }
}

// --- log domain ------------------------------------------------------------

// Warp w takes row k = w % d of X (d x d) and pairs p0 .. p0 + kPairTile - 1:
// * Lse: out[p][k] = mass[p][k] - logsumexp_l (X[k][l] + s[p][l]), with
//   mass the log marginal; -inf when every term is -inf;
// * else: out[p][k] = sum_l exp(X[k][l] + s[p][l] + t[p][k]) - mass[p][k],
//   the marginal's residual (mass the marginal itself).
template <bool Lse>
__global__ void rowKernel(const double* __restrict__ X, const double* __restrict__ s, const double* __restrict__ t,
  const double* __restrict__ mass, const int* __restrict__ active, int n, int d, double* out)
{
  const int64_t warp = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  const int64_t tiles = (n + kPairTile - 1) / kPairTile;
  if (warp >= tiles * d)
    return;
  const int64_t k = warp % d, p0 = (warp / d) * kPairTile;
  bool run[kPairTile];
  double m[kPairTile], sum[kPairTile], shift[kPairTile];
  bool any = false;
  for (int q = 0; q < kPairTile; ++q)
  {
    run[q] = p0 + q < n && active[p0 + q];
    any = any || run[q];
    m[q] = -INFINITY;
    sum[q] = 0;
    shift[q] = (!Lse && run[q]) ? t[(p0 + q) * d + k] : 0.0;
  }
  if (!any)
    return;
  const double* row = X + k * d;
  for (int l = lane; l < d; l += 32)
  {
    const double x = row[l];
    for (int q = 0; q < kPairTile; ++q)
    {
      if (!run[q])
        continue;
      const double term = x + s[(p0 + q) * d + l];
      if (!Lse)
        sum[q] += exp(term + shift[q]);
      else if (term > m[q])
      {
        // One pass: a new maximum rescales what was summed so far.
        sum[q] = (m[q] == -INFINITY ? 0.0 : sum[q] * exp(m[q] - term)) + 1.0;
        m[q] = term;
      }
      else if (term != -INFINITY)
        sum[q] += exp(term - m[q]);
    }
  }
  for (int q = 0; q < kPairTile; ++q)
  {
    if (!run[q])
      continue;
    for (int o = 16; o > 0; o >>= 1)
    {
      const double m2 = __shfl_down_sync(0xffffffffu, m[q], o), s2 = __shfl_down_sync(0xffffffffu, sum[q], o);
      if (!Lse)
        sum[q] += s2;
      else if (m2 > m[q])
      {
        sum[q] = (m[q] == -INFINITY ? 0.0 : sum[q] * exp(m[q] - m2)) + s2;
        m[q] = m2;
      }
      else if (m2 != -INFINITY)
        sum[q] += s2 * exp(m2 - m[q]);
    }
    if (lane == 0)
    {
      const int64_t at = (p0 + q) * d + k;
      if (Lse)
        out[at] = mass[at] - (m[q] == -INFINITY ? m[q] : m[q] + log(sum[q]));
      else
        out[at] = sum[q] - mass[at];
    }
  }
}

// --- stopping rule -----------------------------------------------------------

__device__ double blockSum(double v, double* scratch)
{
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0)
    scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  double total = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kWarps; ++w)
      total += scratch[w];
  return total; // thread 0's
}

// One block per running pair: ||r||_2 with r = ktu v - b (scaling method)
// or the residual the row kernel left in ktu (log domain, v null).
__global__ void errorKernel(const double* ktu, const double* V, const double* B, const int* active, int d, double* err)
{
  __shared__ double scratch[kWarps];
  const int64_t p = blockIdx.x;
  if (!active[p])
    return;
  double s = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x)
  {
    const int64_t k = p * d + j;
    const double r = V ? ktu[k] * V[k] - B[k] : ktu[k];
    s += r * r;
  }
  s = blockSum(s, scratch);
  if (threadIdx.x == 0)
    err[p] = sqrt(s);
}

// The end of an iteration, per pair: a numerical error stops it (status 2),
// a checked marginal below stopThr too (status 0); the iteration counter
// advances and the count of running pairs is left for the host.
__global__ void stepKernel(int* active, int* bad, int* status, int* iterations, double* errors, const double* err,
  int n, bool checked, double stopThr, int* counter, int* running)
{
  __shared__ int alive;
  if (threadIdx.x == 0)
    alive = 0;
  __syncthreads();
  const int ii = *counter;
  int mine = 0;
  for (int p = threadIdx.x; p < n; p += blockDim.x)
  {
    if (!active[p])
      continue;
    if (bad[p])
    {
      status[p] = 2;
      iterations[p] = ii + 1;
      active[p] = 0;
      bad[p] = 0;
      continue;
    }
    if (checked)
    {
      errors[p] = err[p];
      if (err[p] < stopThr)
      {
        status[p] = 0;
        iterations[p] = ii + 1;
        active[p] = 0;
        continue;
      }
    }
    ++mine;
  }
  atomicAdd(&alive, mine);
  __syncthreads();
  if (threadIdx.x == 0)
  {
    *counter = ii + 1;
    *running = alive;
  }
}

// --- results -----------------------------------------------------------------

// Per pair (blockIdx.y on), block sums of P_ij M_ij, the plan written when
// asked.
__global__ void costKernel(const double* U, const double* V, const double* K, const double* Mr, const double* M,
  int n, int d, bool logDomain, double* plans, double* partials)
{
  __shared__ double scratch[kWarps];
  const int64_t dd = int64_t(d) * d;
  for (int64_t p = blockIdx.y; p < n; p += gridDim.y)
  {
    const double* u = U + p * d;
    const double* v = V + p * d;
    double s = 0;
    for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < dd; k += int64_t(gridDim.x) * blockDim.x)
    {
      const int64_t i = k / d, j = k % d;
      const double x = logDomain ? exp(Mr[k] + u[i] + v[j]) : u[i] * K[k] * v[j];
      s += x * M[k];
      if (plans)
        plans[p * dd + k] = x;
    }
    s = blockSum(s, scratch);
    if (threadIdx.x == 0)
      partials[p * gridDim.x + blockIdx.x] = s;
    __syncthreads(); // scratch is reused for the next pair
  }
}

__global__ void costSumKernel(const double* partials, int parts, int n, double* costs)
{
  for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += gridDim.x * blockDim.x)
  {
    double s = 0;
    for (int q = 0; q < parts; ++q)
      s += partials[int64_t(p) * parts + q];
    costs[p] = s;
  }
}

// --- host side -----------------------------------------------------------------

void checkBlas(cublasStatus_t status, const char* what)
{
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
}

// One stream and cuBLAS handle (with its workspace, so that cuBLAS
// allocates nothing while a graph is captured) per host thread and device,
// made on first use and kept for the process: cublasCreate takes
// milliseconds, more than a small solve. Never destroyed: at exit the CUDA
// runtime may be gone before thread-local destructors would run.
struct BlasContext
{
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
};
BlasContext blasContext()
{
  thread_local std::map<int, BlasContext> contexts;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const auto found = contexts.find(device);
  if (found != contexts.end())
    return found->second;
  constexpr size_t kWorkspace = size_t(16) << 20;
  BlasContext c;
  void* workspace = nullptr;
  check(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaMalloc(&workspace, kWorkspace), "cudaMalloc");
  checkBlas(cublasCreate(&c.blas), "cublasCreate");
  checkBlas(cublasSetStream(c.blas, c.stream), "cublasSetStream");
  checkBlas(cublasSetWorkspace(c.blas, workspace, kWorkspace), "cublasSetWorkspace");
  return contexts[device] = c;
}

// The device arrays of one solve, carved from one allocation (one
// cudaMalloc and cudaFree per solve instead of twenty).
class DeviceSlab
{
public:
  template <typename T>
  void add(T*& ptr, size_t count)
  {
    const size_t bytes = (count * sizeof(T) + 255) / 256 * 256; // each array 256-byte aligned
    parts_.push_back({ total_, [&ptr](char* base, size_t at) { ptr = reinterpret_cast<T*>(base + at); } });
    total_ += bytes;
  }
  void allocate()
  {
    memory_.reset(new DeviceArray<char>(total_));
    for (const Part& p : parts_)
      p.place(memory_->ptr, p.offset);
  }

private:
  struct Part
  {
    size_t offset;
    std::function<void(char*, size_t)> place;
  };
  std::vector<Part> parts_;
  size_t total_ = 0;
  std::unique_ptr<DeviceArray<char>> memory_;
};

// Ten iterations captured once and replayed.
struct Graph
{
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  Graph() = default;
  ~Graph()
  {
    if (exec)
      cudaGraphExecDestroy(exec);
    if (graph)
      cudaGraphDestroy(graph);
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Captures what `body` enqueues on `stream`; false (and no graph) when the
  // capture fails, the caller then launches directly.
  bool capture(cudaStream_t stream, const std::function<void()>& body)
  {
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
    {
      cudaGetLastError();
      return false;
    }
    bool ok = true;
    try
    {
      body();
    }
    catch (const std::runtime_error&)
    {
      ok = false;
    }
    cudaGraph_t g = nullptr;
    ok = cudaStreamEndCapture(stream, &g) == cudaSuccess && ok;
    if (ok && cudaGraphInstantiate(&exec, g, 0) == cudaSuccess)
    {
      graph = g;
      return true;
    }
    if (g)
      cudaGraphDestroy(g);
    exec = nullptr;
    cudaGetLastError();
    return false;
  }
};
} // namespace

SinkhornResult sinkhornGPU(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& M,
  int64_t pairs, int64_t d64, const SinkhornOptions& o)
{
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
  {
    cudaGetLastError();
    throw std::runtime_error("no CUDA device");
  }
  const bool logDomain = o.method == SinkhornMethod::SinkhornLog;
  const int d = static_cast<int>(d64), n = static_cast<int>(pairs);
  const size_t dd = size_t(d64 * d64), nd = size_t(pairs * d64), ns = static_cast<size_t>(pairs);
  // Memory: M and K (or M, -M / reg and its transpose), eight pairs x d
  // arrays, the plans when asked.
  const double need = 8.0 * ((logDomain ? 3.0 : 2.0) * double(dd) + 8.0 * double(nd) +
    (o.computePlans ? double(nd) * double(d) : 0.0));
  size_t freeBytes = 0, totalBytes = 0;
  check(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  if (d64 > (int64_t(1) << 30) / d64 || need > 0.9 * double(freeBytes))
    throw std::runtime_error("not enough GPU memory for " + std::to_string(pairs) + " pairs of d = " +
      std::to_string(d64) + " (" + std::to_string(static_cast<long long>(need / (1 << 20))) + " MiB)");

  const BlasContext ctx = blasContext();
  cudaStream_t s = ctx.stream;
  const int parts = static_cast<int>(std::min<int64_t>(64, (int64_t(dd) + kThreads - 1) / kThreads));
  double *dA, *dB, *dM, *dK = nullptr, *dMr = nullptr, *dMrT = nullptr, *dLA = nullptr, *dLB = nullptr, *dU, *dV,
    *dUp = nullptr, *dVp = nullptr, *dT1, *dT2, *dErr, *dErrors, *dCosts, *dPartials, *dPlans = nullptr;
  int *dActive, *dBad, *dStatus, *dIterations, *dCounter, *dRunning;
  DeviceSlab slab;
  for (double** x : { &dA, &dB, &dU, &dV, &dT1, &dT2 })
    slab.add(*x, nd);
  slab.add(dM, dd);
  if (logDomain)
  {
    slab.add(dMr, dd);
    slab.add(dMrT, dd);
    slab.add(dLA, nd);
    slab.add(dLB, nd);
  }
  else
  {
    slab.add(dK, dd);
    slab.add(dUp, nd);
    slab.add(dVp, nd);
  }
  for (double** x : { &dErr, &dErrors, &dCosts })
    slab.add(*x, ns);
  slab.add(dPartials, ns * size_t(parts));
  if (o.computePlans)
    slab.add(dPlans, nd * size_t(d));
  for (int** x : { &dActive, &dBad, &dStatus, &dIterations })
    slab.add(*x, ns);
  slab.add(dCounter, 1);
  slab.add(dRunning, 1);
  slab.allocate();
  check(cudaMemsetAsync(dBad, 0, ns * sizeof(int), s), "cudaMemset");
  check(cudaMemsetAsync(dCounter, 0, sizeof(int), s), "cudaMemset");
  check(cudaMemcpyAsync(dA, a.data(), nd * sizeof(double), cudaMemcpyHostToDevice, s), "cudaMemcpy");
  check(cudaMemcpyAsync(dB, b.data(), nd * sizeof(double), cudaMemcpyHostToDevice, s), "cudaMemcpy");
  check(cudaMemcpyAsync(dM, M.data(), dd * sizeof(double), cudaMemcpyHostToDevice, s), "cudaMemcpy");
  {
    // Every pair running, not converged, numItermax iterations, error 1,
    // until it stops.
    const std::vector<int> ones(size_t(n), 1), items(size_t(n), o.numItermax);
    const std::vector<double> unit(size_t(n), 1.0);
    check(cudaMemcpyAsync(dActive, ones.data(), ones.size() * sizeof(int), cudaMemcpyHostToDevice, s), "cudaMemcpy");
    check(cudaMemcpyAsync(dStatus, ones.data(), ones.size() * sizeof(int), cudaMemcpyHostToDevice, s), "cudaMemcpy");
    check(cudaMemcpyAsync(dIterations, items.data(), items.size() * sizeof(int), cudaMemcpyHostToDevice, s),
      "cudaMemcpy");
    check(cudaMemcpyAsync(dErrors, unit.data(), unit.size() * sizeof(double), cudaMemcpyHostToDevice, s),
      "cudaMemcpy");
    check(cudaStreamSynchronize(s), "upload"); // the host vectors go out of scope
  }
  if (logDomain)
  {
    scaledCostKernel<<<blocksFor(int64_t(dd)), kThreads, 0, s>>>(dM, o.reg, d, dMr, dMrT);
    logKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dA, int64_t(nd), dLA);
    logKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dB, int64_t(nd), dLB);
  }
  else
    gibbsKernel<<<blocksFor(int64_t(dd)), kThreads, 0, s>>>(dM, o.reg, int64_t(dd), dK);
  fillKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dU, int64_t(nd), logDomain ? 0.0 : 1.0 / d);
  fillKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dV, int64_t(nd), logDomain ? 0.0 : 1.0 / d);
  check(cudaGetLastError(), "Sinkhorn set-up");

  const double one = 1.0, zero = 0.0;
  const unsigned rowBlocks =
    static_cast<unsigned>(((n + kPairTile - 1) / kPairTile * int64_t(d) + kWarps - 1) / kWarps);
  // One iteration for every running pair; `checked`: the marginal too.
  auto iteration = [&](bool checked) {
    if (logDomain)
    {
      rowKernel<true><<<rowBlocks, kThreads, 0, s>>>(dMrT, dU, nullptr, dLB, dActive, n, d, dV);
      rowKernel<true><<<rowBlocks, kThreads, 0, s>>>(dMr, dV, nullptr, dLA, dActive, n, d, dU);
      if (checked)
      {
        rowKernel<false><<<rowBlocks, kThreads, 0, s>>>(dMrT, dU, dV, dB, dActive, n, d, dT1);
        errorKernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(dT1, nullptr, dB, dActive, d, dErr);
      }
    }
    else
    {
      // Row-major pairs x d scalings are column-major d x pairs for cuBLAS,
      // and K's rows its columns: K^T u is op N, K v is op T.
      checkBlas(cublasDgemm(ctx.blas, CUBLAS_OP_N, CUBLAS_OP_N, d, n, d, &one, dK, d, dU, d, &zero, dT1, d),
        "cublasDgemm");
      scalingVKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dT1, dB, dV, dVp, dActive,
        int64_t(nd), d);
      checkBlas(cublasDgemm(ctx.blas, CUBLAS_OP_T, CUBLAS_OP_N, d, n, d, &one, dK, d, dV, d, &zero, dT2, d),
        "cublasDgemm");
      scalingUKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dT2, dT1, dA, dK, dV, dU,
        dUp, dActive, dBad, int64_t(nd), d);
      restoreKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dU, dV, dUp, dVp, dActive,
        dBad, int64_t(nd), d);
      if (checked)
      {
        checkBlas(cublasDgemm(ctx.blas, CUBLAS_OP_N, CUBLAS_OP_N, d, n, d, &one, dK, d, dU, d, &zero, dT2,
                    d),
          "cublasDgemm");
        errorKernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(dT2, dV, dB, dActive, d, dErr);
      }
    }
    stepKernel<<<1, kThreads, 0, s>>>(dActive, dBad, dStatus, dIterations, dErrors, dErr, n,
      checked, o.stopThr, dCounter, dRunning);
  };
  auto period = [&]() {
    for (int q = 0; q < kCheckPeriod; ++q)
      iteration(q == 0);
  };
  auto stillRunning = [&]() {
    int running = 0;
    check(cudaMemcpyAsync(&running, dRunning, sizeof(int), cudaMemcpyDeviceToHost, s), "cudaMemcpy");
    check(cudaStreamSynchronize(s), "Sinkhorn iterations");
    return running > 0;
  };
  const int periods = o.numItermax / kCheckPeriod, tail = o.numItermax % kCheckPeriod;
  Graph graph;
  const bool replay = periods > 1 && graph.capture(s, period);
  bool running = true;
  for (int r = 0; r < periods && running; ++r)
  {
    if (replay)
      check(cudaGraphLaunch(graph.exec, s), "cudaGraphLaunch");
    else
      period();
    check(cudaGetLastError(), "Sinkhorn iterations");
    running = stillRunning();
  }
  for (int q = 0; q < tail && running; ++q)
    iteration(q == 0); // the tail starts a period: checked first
  check(cudaGetLastError(), "Sinkhorn iterations");

  // Costs (and plans) from the final scalings.
  costKernel<<<dim3(static_cast<unsigned>(parts), static_cast<unsigned>(std::min(n, 65535))), kThreads, 0, s>>>(
    dU, dV, dK, dMr, dM, n, d, logDomain, o.computePlans ? dPlans : nullptr, dPartials);
  costSumKernel<<<blocksFor(n), kThreads, 0, s>>>(dPartials, parts, n, dCosts);
  check(cudaGetLastError(), "Sinkhorn cost");

  SinkhornResult r;
  r.costs.resize(size_t(n));
  r.errors.resize(size_t(n));
  r.iterations.resize(size_t(n));
  std::vector<int> status(ns);
  check(cudaMemcpyAsync(r.costs.data(), dCosts, r.costs.size() * sizeof(double), cudaMemcpyDeviceToHost, s),
    "cudaMemcpy");
  check(cudaMemcpyAsync(r.errors.data(), dErrors, r.errors.size() * sizeof(double), cudaMemcpyDeviceToHost, s),
    "cudaMemcpy");
  check(cudaMemcpyAsync(r.iterations.data(), dIterations, r.iterations.size() * sizeof(int),
          cudaMemcpyDeviceToHost, s),
    "cudaMemcpy");
  check(cudaMemcpyAsync(status.data(), dStatus, status.size() * sizeof(int), cudaMemcpyDeviceToHost, s),
    "cudaMemcpy");
  if (o.computePlans)
  {
    r.plans.resize(nd * size_t(d));
    check(cudaMemcpyAsync(r.plans.data(), dPlans, r.plans.size() * sizeof(double), cudaMemcpyDeviceToHost, s),
      "cudaMemcpy");
  }
  check(cudaStreamSynchronize(s), "Sinkhorn results");
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
