// SinkhornCUDA.cu - Sinkhorn's iterations (Sinkhorn.h) on the GPU for all
// pairs at once. Every half-iteration is one kernel over the rows of the
// d x d matrix (K or its transpose; -M / reg or its transpose in the log
// domain): for each row and pair, a sum over the row (a plain sum for
// K^T u and K v, a one-pass log-sum-exp in the log domain) that the kernel
// turns into the update itself (v = b / K^T u, the numerical-error test,
// ...). One pair: a thread block per row, so that the whole GPU works on
// it; several: a warp per row and two pairs, reading the row once for
// both; four or more in the log domain: tiles of 8 rows and 16 pairs,
// summed as a matrix product through shared memory, the log-sum-exp
// factored into a plain sum where that is exact (rowTileKernel).
// The matrix and its transpose stay in L2 for histograms of thousands of
// bins.
// Each pair stops on its own (converged, or a numerical error that restores
// its previous scalings), as in POT; the others go on. Ten iterations (one
// checked, nine not: the stopping rule's period) are captured once as a CUDA
// graph and replayed, so a long run costs one launch per ten iterations;
// the host reads one counter of pairs still running per replay. The same
// updates as the CPU path, in double; sums in another order.
// Where K and K^T fit in the SMs' shared memory (d up to about 1,000 on an
// H200), up to a thousand iterations run instead per cooperative launch
// with the matrix resident (SinkhornResident.h): the scaling method's K,
// the log domain's factored E where its sums are exact.
#include "FactoredLogSumExp.h"
#include "SinkhornBackends.h"
#include "SinkhornChecks.h"
#include "SinkhornResident.h"
#include "SinkhornRows.cuh"

#include "../common/CudaUtil.cuh"
#include "../common/HostCopy.h"
#include "../common/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

namespace topovox
{
namespace transport
{
namespace
{
using cuda::check;
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kCheckPeriod = 10; // POT checks the marginal every 10 iterations
constexpr int kPeriodsALaunch = 100; // the resident kernel's periods per launch
constexpr size_t kMostStaged = size_t(64) << 20; // bytes of a cost matrix staged in pinned memory

unsigned blocksFor(int64_t n)
{
  return cuda::blocksFor(n, kThreads, 65535);
}

// A grid-stride loop of k over [0, n).
#define TOPOVOX_GRID_LOOP(k, n)                                                                             \
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < (n); k += int64_t(gridDim.x) * blockDim.x)

// --- set-up ---------------------------------------------------------------

// The matrix X the iterations read and its transpose, with the CPU's
// expressions: K = exp(-M / reg), or in the log domain Mr = -M / reg (one
// division each). *notFinite set where M has a value that is not finite
// (the argument check).
template <bool Log>
__global__ void iterationMatrixKernel(const double* M, double reg, int d, double* X, double* XT, int* notFinite)
{
  TOPOVOX_GRID_LOOP(k, int64_t(d) * d)
  {
    if (!isfinite(M[k]))
      *notFinite = 1;
    const double x = Log ? -M[k] / reg : exp(M[k] / (-reg));
    X[k] = x;
    XT[(k % d) * d + k / d] = x;
  }
}

// Every pair's start: running, not converged, numItermax iterations until
// it stops, marginal error 1.
__global__ void startPairsKernel(int n, int numItermax, int* active, int* status, int* iterations, double* errors)
{
  TOPOVOX_GRID_LOOP(p, n)
  {
    active[p] = 1;
    status[p] = 1;
    iterations[p] = numItermax;
    errors[p] = 1.0;
  }
}

template <typename T>
__global__ void fillKernel(T* x, int64_t n, T value)
{
  TOPOVOX_GRID_LOOP(k, n)
  x[k] = value;
}

__global__ void logKernel(const double* x, int64_t n, double* out)
{
  TOPOVOX_GRID_LOOP(k, n)
  out[k] = log(x[k]);
}

// --- the row kernel ----------------------------------------------------------

using namespace rows;

// One pair: block b takes row k = b, its threads sharing the row (every
// thread of the GPU busy on a single pair).
template <Row R>
__global__ void rowBlockKernel(RowArgs g)
{
  __shared__ double sharedM[kWarps], sharedSum[kWarps];
  __shared__ int sharedZero[kWarps];
  if (!g.active[0])
    return;
  const int64_t d = g.d, k = blockIdx.x;
  const double shift = R == Row::LogResidual ? g.t[k] : 0.0;
  double m = -INFINITY, sum = 0;
  bool zero = false;
  const double* row = g.X + k * d;
  for (int64_t l = threadIdx.x; l < d; l += blockDim.x)
    addTerm<R>(row[l], g.s[l], shift, m, sum, zero);
  warpCombine<R>(m, sum, zero);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0)
  {
    sharedM[warp] = m;
    sharedSum[warp] = sum;
    sharedZero[warp] = zero;
  }
  __syncthreads();
  if (threadIdx.x != 0)
    return;
  for (int w = 1; w < kWarps; ++w)
  {
    combine<R == Row::LogUpdate>(m, sum, sharedM[w], sharedSum[w]);
    zero = zero || sharedZero[w];
  }
  finishRow<R>(g, 0, k, m, sum, zero);
}

// Several pairs: warp w takes row k = w % d and pairs p0 .. p0 + Tile - 1
// (p0 = w / d * Tile) that are still running, reading the row once for
// them.
template <Row R, int Tile>
__global__ void rowWarpKernel(RowArgs g)
{
  const int64_t warp = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  const int64_t d = g.d, tiles = (g.n + Tile - 1) / Tile;
  if (warp >= tiles * d)
    return;
  const int64_t k = warp % d, p0 = (warp / d) * Tile;
  bool run[Tile], zero[Tile];
  double m[Tile], sum[Tile], shift[Tile];
  bool any = false;
#pragma unroll
  for (int q = 0; q < Tile; ++q)
  {
    run[q] = p0 + q < g.n && g.active[p0 + q];
    any = any || run[q];
    m[q] = -INFINITY;
    sum[q] = 0;
    zero[q] = false;
    shift[q] = (R == Row::LogResidual && run[q]) ? g.t[(p0 + q) * d + k] : 0.0;
  }
  if (!any)
    return; // the whole warp: its pairs have all stopped
  const double* row = g.X + k * d;
#pragma unroll 4
  for (int64_t l = lane; l < d; l += 32)
  {
    const double x = row[l];
#pragma unroll
    for (int q = 0; q < Tile; ++q)
      if (run[q])
        addTerm<R>(x, g.s[(p0 + q) * d + l], shift[q], m[q], sum[q], zero[q]);
  }
#pragma unroll
  for (int q = 0; q < Tile; ++q)
  {
    if (!run[q])
      continue;
    warpCombine<R>(m[q], sum[q], zero[q]);
    if (lane == 0)
      finishRow<R>(g, p0 + q, k, m[q], sum[q], zero[q]);
  }
}

// Many pairs, as a tiled matrix product: block (x, y, z) takes kTileRows
// rows from k0 = x * kTileRows, kTilePairs pairs from p0 = y * kTilePairs
// and the z-th of gridDim.z ranges of columns. The rows' and the pairs'
// columns pass through shared memory a chunk at a time, so each block reads
// its rows and its pairs' vectors from L2 once (the warp kernel read a
// pair's vector once per row: eight times the traffic at d = 1024 and 16
// pairs). Two threads share each (row, pair), half of every chunk each.
// The column ranges give the GPU enough blocks to hide L2's latency (at
// d = 1024 there are only 128 tiles; one block of 1024 threads an SM, each
// summing whole rows, was slower than the warp kernel): the last block of
// a tile to arrive combines the ranges' partial sums, in range order, and
// finishes the rows.
//
// The log domain's LogUpdate is a plain sum where it can be: with m_k the
// row maximum of X and c the pair's maximum of s,
//   logsumexp_l (x_kl + s_l) = m_k + c + log sum_l E_kl exp(s_l - c),
// E = exp(X - m) computed once. An exp per column and pair instead of one
// per term. Exact as long as the largest term does not underflow: it is at
// least exp(-(max_l x_kl - min_l x_kl)), so the set-up allows it only when
// every row's range is at most kFactorRange (terms that underflow are then
// below 1e-300 of it). A pair whose maximum is not finite (an all-zero
// marginal's -inf potentials, +inf, NaN) takes the one-pass log-sum-exp.
constexpr int kTileRows = 8, kTilePairs = 16, kChunk = 64;
constexpr int kRowLoads = kTileRows * kChunk / kThreads, kPairLoads = kTilePairs * kChunk / kThreads;
constexpr int kOutputs = kTileRows * kTilePairs;
static_assert(kOutputs * 2 == kThreads, "two threads a (row, pair)");
static_assert(kTileRows * kChunk % kThreads == 0 && kTilePairs * kChunk % kThreads == 0, "whole loads");

template <bool Lse>
__device__ inline void combineZero(double& m, double& sum, bool& zero, double m2, double s2, bool zero2)
{
  combine<Lse>(m, sum, m2, s2);
  zero = zero || zero2;
}

template <Row R>
__global__ void __launch_bounds__(kThreads) rowTileKernel(RowArgs g)
{
  // One double of padding a line: the 16 pairs of a warp read banks two
  // apart, without conflicts.
  __shared__ double xs[kTileRows][kChunk + 1], ss[kTilePairs][kChunk + 1];
  __shared__ double mOther[kOutputs], sumOther[kOutputs], shiftOf[kTilePairs];
  __shared__ int zeroOther[kOutputs], running[kTilePairs];
  constexpr bool Log = R == Row::LogUpdate;
  const int t = threadIdx.x;
  // A warp: 16 pairs x 2 rows of one half.
  const int o = t % kOutputs, q = o % kTilePairs, r = o / kTilePairs, half = t / kOutputs;
  const int64_t d = g.d, n = g.n, k0 = int64_t(blockIdx.x) * kTileRows, p0 = int64_t(blockIdx.y) * kTilePairs;
  const int tile = blockIdx.y * gridDim.x + blockIdx.x, splits = gridDim.z, z = blockIdx.z;
  if (Log && g.resetMax && tile == 0 && z == 0)
    for (int64_t p = t; p < n; p += kThreads)
      g.resetMax[p] = 0; // the slot the next kernel fills; no one reads it now
  bool finite = true;
  if (t < kTilePairs)
  {
    running[t] = p0 + t < n && g.active[p0 + t];
    if (Log && g.sMax && running[t])
    {
      shiftOf[t] = fromOrderedKey(g.sMax[p0 + t]);
      finite = isfinite(shiftOf[t]);
    }
  }
  if (!__syncthreads_or(t < kTilePairs && running[t]))
    return; // every pair of the tile has stopped (the whole tile's blocks do)
  const bool factored = __syncthreads_and(finite) && Log && g.E && *g.factorOk;
  const int64_t k = k0 + r, p = p0 + q;
  const bool mine = k < d && running[q];
  const double shift = (R == Row::LogResidual && mine) ? g.t[p * d + k] : 0.0;
  const double* X = factored ? g.E : g.X;
  // This block's columns: whole chunks, the ranges as even as they can be.
  const int64_t chunks = (d + kChunk - 1) / kChunk, per = (chunks + splits - 1) / splits;
  const int64_t begin = std::min(d, z * per * kChunk), end = std::min(d, (z + 1) * per * kChunk);

  double nextX[kRowLoads], nextS[kPairLoads];
  auto fetch = [&](int64_t c0) {
#pragma unroll
    for (int i = 0; i < kRowLoads; ++i)
    {
      const int at = t + i * kThreads, row = at / kChunk;
      const int64_t col = c0 + at % kChunk;
      nextX[i] = (k0 + row < d && col < end) ? X[(k0 + row) * d + col] : 0.0;
    }
#pragma unroll
    for (int i = 0; i < kPairLoads; ++i)
    {
      const int at = t + i * kThreads, pair = at / kChunk;
      const int64_t col = c0 + at % kChunk;
      nextS[i] = (running[pair] && col < end) ? g.s[(p0 + pair) * d + col] : (factored ? -INFINITY : 0.0);
    }
  };
  double m = -INFINITY, sum = 0;
  bool zero = false;
  if (begin < end)
    fetch(begin);
  for (int64_t c0 = begin; c0 < end; c0 += kChunk)
  {
#pragma unroll
    for (int i = 0; i < kRowLoads; ++i)
      xs[(t + i * kThreads) / kChunk][(t + i * kThreads) % kChunk] = nextX[i];
#pragma unroll
    for (int i = 0; i < kPairLoads; ++i)
    {
      const int pair = (t + i * kThreads) / kChunk;
      // exp(-inf - c) = 0: padding and stopped pairs add nothing.
      ss[pair][(t + i * kThreads) % kChunk] = factored ? exp(nextS[i] - shiftOf[pair]) : nextS[i];
    }
    __syncthreads();
    if (c0 + kChunk < end)
      fetch(c0 + kChunk); // in flight while this chunk is summed
    if (mine)
    {
      const int from = half * (kChunk / 2);
      const int to = static_cast<int>(std::min<int64_t>(from + kChunk / 2, end - c0));
      if (factored)
      {
#pragma unroll 8
        for (int c = from; c < to; ++c)
          sum += xs[r][c] * ss[q][c];
      }
      else
      {
#pragma unroll 8
        for (int c = from; c < to; ++c)
          addTerm<R>(xs[r][c], ss[q][c], shift, m, sum, zero);
      }
    }
    __syncthreads();
  }
  const bool lse = Log && !factored;
  if (half == 1)
  {
    mOther[o] = m;
    sumOther[o] = sum;
    zeroOther[o] = zero;
  }
  __syncthreads();
  if (half == 0 && mine)
  {
    if (lse)
      combineZero<true>(m, sum, zero, mOther[o], sumOther[o], zeroOther[o]);
    else
      combineZero<false>(m, sum, zero, mOther[o], sumOther[o], zeroOther[o]);
  }
  if (splits > 1)
  {
    // Publish this range's sums; the last block of the tile finishes.
    const int64_t at = (z * n + p) * d + k;
    if (half == 0 && mine)
    {
      g.partM[at] = m;
      g.partSum[at] = sum;
      g.partZero[at] = zero;
    }
    if (!cuda::lastBlockToArrive(&g.arrivals[tile], static_cast<int>(splits)))
      return;
    if (half == 0 && mine)
    {
      m = -INFINITY;
      sum = 0;
      zero = false;
      for (int64_t w = 0; w < splits; ++w)
      {
        const int64_t from = (w * n + p) * d + k;
        if (lse)
          combineZero<true>(m, sum, zero, __ldcg(g.partM + from), __ldcg(g.partSum + from), __ldcg(g.partZero + from));
        else
          combineZero<false>(m, sum, zero, __ldcg(g.partM + from), __ldcg(g.partSum + from), __ldcg(g.partZero + from));
      }
    }
  }
  if (half == 0 && mine)
  {
    if (factored) // log sum_l E_kl exp(s_l - c) + m_k + c; -inf for a zero sum
      m = factoredM(sum, g.rowMax[k], shiftOf[q]);
    finishRow<R>(g, p, k, m, sum, zero);
  }
  if (Log && g.outMax)
  {
    // The pairs' maxima of out, a block's rows at a time: one atomic a pair
    // and block.
    __syncthreads();
    if (half == 0)
      mOther[o] = mine ? g.out[p * d + k] : -INFINITY;
    __syncthreads();
    if (t < kTilePairs && running[t])
    {
      double best = -INFINITY;
      bool bad = false;
      for (int row = 0; row < kTileRows; ++row)
      {
        const double x = mOther[row * kTilePairs + t];
        bad = bad || isnan(x);
        best = x > best ? x : best;
      }
      if (bad || best > -INFINITY)
        atomicMax(g.outMax + p0 + t, bad ? ~0ull : orderedKey(best));
    }
  }
}

// The row maxima of X (-M / reg) and of its transpose, their ranges, and
// whether every range allows the factored log-sum-exp.
__global__ void rowRangeKernel(const double* X, const double* XT, int d, double* rowMax, double* rowMaxT,
  unsigned long long* widest)
{
  __shared__ double hi[kWarps], lo[kWarps];
  const int64_t k = blockIdx.x % d;
  const double* row = (blockIdx.x < unsigned(d) ? X : XT) + k * d;
  double top = -INFINITY, bottom = INFINITY;
  bool nan = false;
  for (int l = threadIdx.x; l < d; l += blockDim.x)
  {
    nan = nan || isnan(row[l]);
    top = fmax(top, row[l]);
    bottom = fmin(bottom, row[l]);
  }
  nan = __syncthreads_or(nan);
  for (int w = 16; w > 0; w >>= 1)
  {
    top = fmax(top, __shfl_down_sync(0xffffffffu, top, w));
    bottom = fmin(bottom, __shfl_down_sync(0xffffffffu, bottom, w));
  }
  if ((threadIdx.x & 31) == 0)
  {
    hi[threadIdx.x >> 5] = top;
    lo[threadIdx.x >> 5] = bottom;
  }
  __syncthreads();
  if (threadIdx.x != 0)
    return;
  for (int w = 1; w < kWarps; ++w)
  {
    top = fmax(top, hi[w]);
    bottom = fmin(bottom, lo[w]);
  }
  (blockIdx.x < unsigned(d) ? rowMax : rowMaxT)[k] = top;
  const double range = top - bottom; // inf or NaN where the row is not finite
  atomicMax(widest, nan || !(range == range) ? ~0ull : orderedKey(range));
}

__global__ void factorOkKernel(const unsigned long long* widest, int* ok)
{
  const double range = fromOrderedKey(*widest);
  *ok = range <= kFactorRange ? 1 : 0; // NaN (no finite range): no
}

// E = exp(X - rowMax) and its transpose's.
__global__ void factorKernel(const double* X, const double* XT, const double* rowMax, const double* rowMaxT, int d,
  const int* ok, double* E, double* ET)
{
  if (!*ok)
    return;
  TOPOVOX_GRID_LOOP(k, int64_t(d) * d)
  {
    E[k] = exp(X[k] - rowMax[k / d]);
    ET[k] = exp(XT[k] - rowMaxT[k / d]);
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

// One block per running pair: ||r||_2 of its residual r (a row kernel's).
__global__ void errorKernel(const double* residual, const int* active, int d, double* err)
{
  __shared__ double scratch[kWarps];
  const int64_t p = blockIdx.x;
  if (!active[p])
    return;
  double s = 0;
  for (int j = threadIdx.x; j < d; j += blockDim.x)
  {
    const double r = residual[p * d + j];
    s += r * r;
  }
  s = blockSum(s, scratch);
  if (threadIdx.x == 0)
    err[p] = sqrt(s);
}

// The end of an iteration, per pair: a numerical error stops it (status 2),
// a checked marginal below stopThr too (status 0); the iteration counter
// advances and the count of running pairs is left for the host.
// A pair with a numerical error gets back its previous scalings (Up, Vp;
// null in the log domain, which flags none), here rather than in a kernel
// of its own each iteration: errors are rare, a launch each iteration is
// not. (A checked iteration's residual of such a pair is not used.)
__global__ void stepKernel(int* active, int* bad, int* status, int* iterations, double* errors, const double* err,
  int n, int d, bool checked, double stopThr, int advance, int* counter, int* running, double* U, double* V,
  const double* Up, const double* Vp)
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
      if (Up)
        for (int64_t j = int64_t(p) * d; j < int64_t(p + 1) * d; ++j)
        {
          U[j] = Up[j];
          V[j] = Vp[j];
        }
      stopForNumericalError(p, ii + 1, status, iterations, active);
      bad[p] = 0;
      continue;
    }
    if (!(checked && stopIfConverged(p, err[p], ii, stopThr, errors, status, iterations, active)))
      ++mine;
  }
  atomicAdd(&alive, mine);
  __syncthreads();
  if (threadIdx.x == 0)
  {
    *counter = ii + advance;
    *running = alive;
  }
}

// --- results -----------------------------------------------------------------

// Per pair (blockIdx.y on), block sums of P_ij M_ij, the plan written when
// asked.
// X: K, or -M / reg in the log domain.
__global__ void costKernel(const double* U, const double* V, const double* X, int n, int d, bool logDomain,
  double* plans, double* partials, const double* M)
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
      const double x = logDomain ? exp(X[k] + u[i] + v[j]) : u[i] * X[k] * v[j];
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

// One stream per host thread and device, made on first use and kept for
// the process (never destroyed: at exit the CUDA runtime may be gone before
// thread-local destructors would run).
cudaStream_t solverStream()
{
  thread_local std::map<int, cudaStream_t> streams;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  const auto found = streams.find(device);
  if (found != streams.end())
    return found->second;
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  return streams[device] = s;
}

// A row kernel over every row and running pair: one pair, a block per
// row; several, a warp per row and pair of pairs (measured on an H200 at
// d = 1024, 16 pairs: tiles of 2 pairs beat 4 and 8, which leave too few
// warps to hide the latency of the row's reads and exps); four or more in
// the log domain, the tile kernel. (Measured at d = 1024, 1000 iterations:
// in the log domain 4, 16 and 64 pairs took 51.7, 53.1 and 142.3 ms with
// the tile kernel against 75, 182 and 597 with the warp kernel; the
// scaling method's plain sums, 36.2, 40.0 and 108.1 against 20.0, 33.8 and
// 95.0: its blocks wait on L2 more than the warps do.)
constexpr int kPairTile = 2;
// From how many pairs the tile kernel runs; TOPOVOX_SINKHORN_TILE_PAIRS
// overrides it, and makes the scaling method use it too (for measuring the
// kernels against each other, and for the tests).
int tileMinPairs()
{
  static const int pairs = [] {
    const char* v = std::getenv("TOPOVOX_SINKHORN_TILE_PAIRS");
    return v && *v ? std::max(2, std::atoi(v)) : 4;
  }();
  return pairs;
}

// The tile kernel's grid for n pairs of d, or none (z = 0) where it does not
// run. The columns are split so that about four blocks an SM run (256
// threads each: four fit), each range whole chunks.
dim3 tileGrid(int64_t n, int64_t d, bool logDomain)
{
  const int64_t rowTiles = (d + kTileRows - 1) / kTileRows, pairTiles = (n + kTilePairs - 1) / kTilePairs;
  const bool forced = std::getenv("TOPOVOX_SINKHORN_TILE_PAIRS") != nullptr;
  if (n < 2 || n < tileMinPairs() || (!logDomain && !forced) || pairTiles > 65535 ||
    rowTiles > (int64_t(1) << 31) - 1)
    return dim3(1, 1, 0);
  const int64_t chunks = (d + kChunk - 1) / kChunk, tiles = rowTiles * pairTiles;
  const int64_t wanted = std::min(chunks, std::max<int64_t>(1, (4 * cuda::multiprocessorCount() + tiles - 1) / tiles));
  const int64_t per = (chunks + wanted - 1) / wanted;
  return dim3(static_cast<unsigned>(rowTiles), static_cast<unsigned>(pairTiles),
    static_cast<unsigned>(std::min<int64_t>(65535, (chunks + per - 1) / per)));
}

template <Row R>
void launchRows(const RowArgs& g, const dim3& tiles, cudaStream_t s)
{
  if (tiles.z > 0)
    rowTileKernel<R><<<tiles, kThreads, 0, s>>>(g);
  else if (g.n == 1)
    rowBlockKernel<R><<<static_cast<unsigned>(g.d), kThreads, 0, s>>>(g);
  else
  {
    const int64_t warps = (g.n + kPairTile - 1) / kPairTile * int64_t(g.d);
    rowWarpKernel<R, kPairTile><<<static_cast<unsigned>((warps + kWarps - 1) / kWarps), kThreads, 0, s>>>(g);
  }
}

// The device arrays of one solve, carved from one allocation, taken from
// the device's memory pool in the solver stream's order (PooledArray): a
// later solve reuses the memory. A cudaMalloc and cudaFree cost 0.18 to
// 0.25 ms a solve on an H200, a tenth of a solve of 100 iterations at
// d = 1024.
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
  void allocate(cudaStream_t stream)
  {
    memory_.reset(new cuda::PooledArray<char>(total_, false, stream));
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
  std::unique_ptr<cuda::PooledArray<char>> memory_;
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
// Whether every pair's a and b each have an entry above 0 (then every
// log-domain potential vector has a finite maximum: the factored sums'
// shift). The first positive entry ends a scan: a pair costs little.
bool everyPairHasMass(const std::vector<double>& a, const std::vector<double>& b, int n, int d)
{
  for (const auto* h : { &a, &b })
    for (int64_t p = 0; p < n; ++p)
    {
      const double* x = h->data() + p * d;
      if (std::none_of(x, x + d, [](double v) { return v > 0; }))
        return false;
    }
  return true;
}
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
  // Memory: M, K and its transpose (or -M / reg and its transpose), seven
  // pairs x d arrays, the plans when asked; for the tile kernel, its
  // ranges' partial sums, and in the log domain E and its transpose.
  const dim3 tiles = d64 <= (int64_t(1) << 30) / d64 ? tileGrid(pairs, d64, logDomain) : dim3(1, 1, 0);
  // K (the log domain: E) in shared memory where it fits
  // (SinkhornResident.h): one launch a period instead of the row kernels.
  // The log domain's also needs every pair's maxima finite: mass in both
  // marginals (and the factored sums exact: asked of the device below).
  ResidentPlan resident = !logDomain || everyPairHasMass(a, b, n, d) ? residentPlan(n, d, logDomain) : ResidentPlan{};
  const bool split = tiles.z > 1, factor = logDomain && (tiles.z > 0 || resident.blocks);
  const double need = 8.0 * (3.0 * double(dd) + 7.0 * double(nd) + double(ns) * resident.blocks +
    (o.computePlans ? double(nd) * double(d) : 0.0) + (split ? 2.5 * tiles.z * double(nd) : 0.0) +
    (factor ? 2.0 * double(dd) + 4.0 * double(ns) : 0.0));
  size_t freeBytes = 0, totalBytes = 0;
  check(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  if (d64 > (int64_t(1) << 30) / d64 || need > 0.9 * double(freeBytes))
    throw std::runtime_error("not enough GPU memory for " + std::to_string(pairs) + " pairs of d = " +
      std::to_string(d64) + " (" + std::to_string(static_cast<long long>(need / (1 << 20))) + " MiB)");

  cudaStream_t s = solverStream();
  const int parts = static_cast<int>(std::min<int64_t>(64, (int64_t(dd) + kThreads - 1) / kThreads));
  // The matrix X and its transpose XT: K or -M / reg.
  double *dA, *dB, *dM, *dX, *dXT, *dLA = nullptr, *dLB = nullptr, *dU, *dV, *dUp = nullptr, *dVp = nullptr, *dR,
    *dErr, *dErrors, *dCosts, *dPartials, *dPlans = nullptr;
  int *dActive, *dBad, *dStatus, *dIterations, *dCounter, *dRunning, *dNotFinite;
  DeviceSlab slab;
  for (double** x : { &dA, &dB, &dU, &dV, &dR })
    slab.add(*x, nd);
  for (double** x : { &dM, &dX, &dXT })
    slab.add(*x, dd);
  slab.add(logDomain ? dLA : dUp, nd); // log marginals, or the previous scalings
  slab.add(logDomain ? dLB : dVp, nd);
  for (double** x : { &dErr, &dErrors, &dCosts })
    slab.add(*x, ns);
  slab.add(dPartials, ns * size_t(parts));
  double* dResidualParts = nullptr;
  if (resident.blocks)
    slab.add(dResidualParts, ns * size_t(resident.blocks));
  if (o.computePlans)
    slab.add(dPlans, nd * size_t(d));
  for (int** x : { &dActive, &dBad, &dStatus, &dIterations })
    slab.add(*x, ns);
  slab.add(dCounter, 1);
  slab.add(dRunning, 1);
  slab.add(dNotFinite, 1);
  // The tile kernel's partial sums and arrivals; the factored log domain.
  double *dPartM = nullptr, *dPartSum = nullptr, *dE = nullptr, *dET = nullptr, *dRowMax = nullptr,
         *dRowMaxT = nullptr;
  int *dPartZero = nullptr, *dArrivals = nullptr, *dFactorOk = nullptr;
  unsigned long long *dSlots = nullptr, *dWidest = nullptr;
  const size_t tileCount = size_t(tiles.x) * tiles.y;
  if (split)
  {
    slab.add(dPartM, size_t(tiles.z) * nd);
    slab.add(dPartSum, size_t(tiles.z) * nd);
    slab.add(dPartZero, size_t(tiles.z) * nd);
    slab.add(dArrivals, tileCount);
  }
  if (factor)
  {
    slab.add(dE, dd);
    slab.add(dET, dd);
    slab.add(dRowMax, size_t(d));
    slab.add(dRowMaxT, size_t(d));
    slab.add(dFactorOk, 1);
    slab.add(dWidest, 1);
    slab.add(dSlots, 4 * ns);
  }
  // The inputs through this thread's pinned scratch (HostCopy.h), so that
  // the uploads run at the bus's speed (a cost matrix over kMostStaged
  // bytes goes from pageable memory).
  const bool stageM = dd * sizeof(double) <= kMostStaged;
  const size_t mAt = (2 * nd * sizeof(double) + 255) / 256 * 256; // a and b, then M
  check(cudaStreamSynchronize(s), "Sinkhorn set-up"); // an earlier failed call's copies may read the scratch
  char* staged = static_cast<char*>(cuda::pinnedScratch(mAt + (stageM ? dd * sizeof(double) : 0)));
  slab.allocate(s);
  if (split)
    check(cudaMemsetAsync(dArrivals, 0, tileCount * sizeof(int), s), "cudaMemset");
  check(cudaMemsetAsync(dBad, 0, ns * sizeof(int), s), "cudaMemset");
  check(cudaMemsetAsync(dCounter, 0, sizeof(int), s), "cudaMemset");
  check(cudaMemsetAsync(dNotFinite, 0, sizeof(int), s), "cudaMemset");
  startPairsKernel<<<blocksFor(n), kThreads, 0, s>>>(n, o.numItermax, dActive, dStatus, dIterations, dErrors);
  for (int k = 0; k < 2; ++k)
  {
    char* at = staged + k * nd * sizeof(double);
    std::memcpy(at, (k ? b : a).data(), nd * sizeof(double));
    check(cudaMemcpyAsync(k ? dB : dA, at, nd * sizeof(double), cudaMemcpyHostToDevice, s), "cudaMemcpy");
  }
  if (stageM)
  {
    const int threads = threadCount(o.threads);
    cuda::copyToDeviceThrough(staged + mAt, dM, M.data(), dd * sizeof(double), threads, s);
  }
  else
    check(cudaMemcpyAsync(dM, M.data(), dd * sizeof(double), cudaMemcpyHostToDevice, s), "cudaMemcpy");
  if (logDomain)
  {
    iterationMatrixKernel<true><<<blocksFor(int64_t(dd)), kThreads, 0, s>>>(dM, o.reg, d, dX, dXT, dNotFinite);
    logKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dA, int64_t(nd), dLA);
    logKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(dB, int64_t(nd), dLB);
    if (factor)
    {
      check(cudaMemsetAsync(dWidest, 0, sizeof(unsigned long long), s), "cudaMemset");
      rowRangeKernel<<<static_cast<unsigned>(2 * d), kThreads, 0, s>>>(dX, dXT, d, dRowMax, dRowMaxT, dWidest);
      factorOkKernel<<<1, 1, 0, s>>>(dWidest, dFactorOk);
      factorKernel<<<blocksFor(int64_t(dd)), kThreads, 0, s>>>(dX, dXT, dRowMax, dRowMaxT, d, dFactorOk, dE, dET);
      // Slots of the pairs' maxima: the fourth holds the starting u's (0;
      // its key, orderedKey(0.0), is 1 << 63), the one the first update
      // reads.
      check(cudaMemsetAsync(dSlots, 0, 3 * ns * sizeof(unsigned long long), s), "cudaMemset");
      fillKernel<<<blocksFor(int64_t(ns)), kThreads, 0, s>>>(dSlots + 3 * ns, int64_t(ns), 1ull << 63);
      if (resident.blocks)
      {
        int factorOk = 0;
        check(cudaMemcpyAsync(&factorOk, dFactorOk, sizeof(int), cudaMemcpyDeviceToHost, s), "cudaMemcpy");
        check(cudaStreamSynchronize(s), "Sinkhorn set-up");
        if (!factorOk)
          resident = ResidentPlan{}; // the one-pass log-sum-exp of the row kernels
      }
    }
  }
  else
    iterationMatrixKernel<false><<<blocksFor(int64_t(dd)), kThreads, 0, s>>>(dM, o.reg, d, dX, dXT, dNotFinite);
  for (double* x : { dU, dV })
    fillKernel<<<blocksFor(int64_t(nd)), kThreads, 0, s>>>(x, int64_t(nd), logDomain ? 0.0 : 1.0 / d);
  check(cudaGetLastError(), "Sinkhorn set-up");

  // One iteration for every running pair; `checked`: the marginal too.
  auto rows = [&](const double* X, const double* x, const double* t, const double* mass, double* out,
                double* prev) {
    RowArgs g{ X, x, t, mass, dActive, n, d, out, prev, dBad };
    g.partM = dPartM;
    g.partSum = dPartSum;
    g.partZero = dPartZero;
    g.arrivals = dArrivals;
    return g;
  };
  // The factored log domain's updates, numbered: update h reads the maxima
  // of slot (h + 3) % 4, writes slot h % 4 and resets slot (h + 1) % 4
  // (written by update h - 3, read by h - 2: both done). A period has 20
  // updates, so a replayed graph and the tail keep the order.
  int updates = 0;
  auto logUpdate = [&](const double* X, const double* E, const double* rowMax, const double* x,
                     const double* mass, double* out) {
    RowArgs g = rows(X, x, nullptr, mass, out, nullptr);
    if (factor)
    {
      g.E = E;
      g.rowMax = rowMax;
      g.factorOk = dFactorOk;
      g.sMax = dSlots + size_t((updates + 3) % 4) * ns;
      g.outMax = dSlots + size_t(updates % 4) * ns;
      g.resetMax = dSlots + size_t((updates + 1) % 4) * ns;
    }
    ++updates;
    launchRows<Row::LogUpdate>(g, tiles, s);
  };
  auto iteration = [&](bool checked) {
    if (logDomain)
    {
      logUpdate(dXT, dET, dRowMaxT, dU, dLB, dV);
      logUpdate(dX, dE, dRowMax, dV, dLA, dU);
      if (checked)
        launchRows<Row::LogResidual>(rows(dXT, dU, dV, dB, dR, nullptr), tiles, s);
    }
    else
    {
      launchRows<Row::ScaleV>(rows(dXT, dU, nullptr, dB, dV, dVp), tiles, s);
      launchRows<Row::ScaleU>(rows(dX, dV, nullptr, dA, dU, dUp), tiles, s);
      if (checked)
        launchRows<Row::ScaleResidual>(rows(dXT, dU, dV, dB, dR, nullptr), tiles, s);
    }
    if (checked)
      errorKernel<<<static_cast<unsigned>(n), kThreads, 0, s>>>(dR, dActive, d, dErr);
    // The log domain flags no numerical errors: only a checked iteration
    // can stop a pair, and it advances the counter over its period.
    if (checked || !logDomain)
      stepKernel<<<1, kThreads, 0, s>>>(dActive, dBad, dStatus, dIterations, dErrors, dErr, n, d, checked,
        o.stopThr, logDomain ? kCheckPeriod : 1, dCounter, dRunning, dU, dV, dUp, dVp);
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
  bool running = true;
  if (resident.blocks)
  {
    ResidentArrays g{ logDomain ? dE : dX, logDomain ? dET : dXT, dA, dB, dU, dV, dUp, dVp, dResidualParts, dErrors,
      dActive, dBad, dStatus, dIterations, dCounter, dRunning, n, d, o.stopThr };
    if (logDomain)
    {
      // The ring of the maxima's slots: dSlots' last three (the fourth
      // holds the key of 0, u's start, as the ring's slot 2 must).
      g.logA = dLA;
      g.logB = dLB;
      g.rowMax = dRowMax;
      g.rowMaxT = dRowMaxT;
      g.maxSlots = dSlots + ns;
    }
    // Up to kPeriodsALaunch periods a launch (a thousand iterations: tens
    // of milliseconds at d = 1024), each launch ending early when its
    // checks leave no pair running. (The slots' ring goes on from the
    // counter, as the updates' numbers do.)
    for (int done = 0; done < o.numItermax && running; done += kCheckPeriod * kPeriodsALaunch)
    {
      launchResident(g, resident, std::min(o.numItermax - done, kCheckPeriod * kPeriodsALaunch), kCheckPeriod, s);
      running = stillRunning();
    }
  }
  else
  {
    Graph graph;
    const bool replay = periods > 1 && graph.capture(s, period);
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
  }
  check(cudaGetLastError(), "Sinkhorn iterations");

  // Costs (and plans) from the final scalings.
  costKernel<<<dim3(static_cast<unsigned>(parts), static_cast<unsigned>(std::min(n, 65535))), kThreads, 0, s>>>(
    dU, dV, dX, n, d, logDomain, o.computePlans ? dPlans : nullptr, dPartials, dM);
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
  int notFinite = 0;
  check(cudaMemcpyAsync(&notFinite, dNotFinite, sizeof(int), cudaMemcpyDeviceToHost, s), "cudaMemcpy");
  check(cudaStreamSynchronize(s), "Sinkhorn results");
  if (notFinite)
    throwCostNotFinite();
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

#undef TOPOVOX_GRID_LOOP
