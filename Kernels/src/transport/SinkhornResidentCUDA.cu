// SinkhornResidentCUDA.cu - Sinkhorn's iterations with K and K^T (the log
// domain: E and E^T) held in shared memory (SinkhornResident.h says why
// and when).
//
// Block b holds rows k0 = b * Rows .. k0 + Rows - 1 of K and of K^T for
// the whole launch. A half-iteration is, per block, the small matrix
// product (Rows x d) . (d x pairs) of its rows with the pairs' vectors,
// then the update of its rows (finishRow, as the row kernels do); a
// grid-wide barrier separates the half-iterations, since each needs every
// row of the other's result.
//
// Work of a warp: four pairs over a slice of the columns. Each lane takes
// every 32nd column of the slice, loads the four pairs' values there once
// (global memory: L2) and its rows' values (shared memory) and keeps
// Rows x 4 sums, so that a value loaded serves 4 or Rows products (one
// pair per warp made shared memory the bound: every K value was read once
// per pair). The warp then reduce-scatters its sums (lane L ends with the
// total of sum L: 31 shuffles for 32 sums, not 5 per sum) and the slices'
// totals meet in shared memory, added in slice order.
//
// The log domain sums E's rows with exp(s_l - c), c the pair's maximum of
// s (FactoredLogSumExp.h): each update leaves its pairs' maxima in a slot
// (an atomic max a block and pair, on ordered keys), which the next
// half-iteration reads after the barrier. Every block takes the exps of
// the whole vector it sums (d a pair); the row kernels' one-pass
// log-sum-exp took an exp a term.
//
// The sums run in another order than the row kernels' and the CPU's: the
// results agree within rounding (the tests compare them at 1e-9).
#include "SinkhornResident.h"
#include "SinkhornRows.cuh"

#include "../common/CudaUtil.cuh"

#include <cooperative_groups.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

namespace topovox
{
namespace transport
{
namespace
{
namespace cg = cooperative_groups;
using namespace rows;
using cuda::check;

constexpr int kThreads = 512, kWarps = kThreads / 32;
constexpr int kPairsAWarp = 4;
constexpr int kMaxPairs = 4096; // the pairs' flags live in shared memory
// Columns whose loads a lane issues together: four, two in the log domain
// (whose exps' temporaries beside four columns' values spilled at 8 rows).
template <bool Log>
constexpr int kColumnsAtOnce = Log ? 2 : 4;
constexpr int kStaticShared = 64; // bytes: the kernel's own static shared memory (countRunning's count), rounded up

// Where a block's shared memory goes.
struct Shared
{
  double* kRows;  // Rows x d: the block's rows of K
  double* ktRows; // Rows x d: its rows of K^T
  double* slice;  // kWarps x 32: each warp's totals
  int* sliceVecBad; // kWarps x kPairsAWarp: a pair's vector has a value not > 0 in the warp's slice
  int* rowBad;    // 2 x Rows: a row of K (then of K^T) has a value not > 0
  int* flag;      // per pair: 0 stopped, 1 runs this iteration, 2 stops for a numerical error
};

__host__ __device__ inline size_t sharedBytesFor(int rowsABlock, int d, int n)
{
  return sizeof(double) * (2 * size_t(rowsABlock) * d + kWarps * 32) +
    sizeof(int) * (kWarps * kPairsAWarp + 2 * size_t(rowsABlock) + size_t(n));
}

template <int Rows>
__device__ Shared carve(double* base, int d)
{
  Shared s;
  s.kRows = base;
  s.ktRows = s.kRows + Rows * d;
  s.slice = s.ktRows + Rows * d;
  s.sliceVecBad = reinterpret_cast<int*>(s.slice + kWarps * 32);
  s.rowBad = s.sliceVecBad + kWarps * kPairsAWarp;
  s.flag = s.rowBad + 2 * Rows;
  return s;
}

// One halving step of reduceScatter: with `mask`'s bit set a lane keeps
// the upper half of its values, its partner the lower, each adding the
// partner's copy of the half it keeps; then the next step on that half.
// (Recursion on the template arguments: every index is a constant, so the
// values stay in registers.)
template <int Half, int Mask, int V>
__device__ inline void halve(double (&v)[V], int lane)
{
  if constexpr (Half >= 1)
  {
    const bool upper = lane & Mask;
#pragma unroll
    for (int k = 0; k < Half; ++k)
    {
      const double send = upper ? v[k] : v[k + Half];
      const double keep = upper ? v[k + Half] : v[k];
      v[k] = keep + __shfl_xor_sync(0xffffffffu, send, Mask);
    }
    halve<Half / 2, Mask / 2>(v, lane);
  }
  else
  {
#pragma unroll
    for (int m = Mask; m >= 1; m /= 2) // the lanes that hold the same index
      v[0] += __shfl_xor_sync(0xffffffffu, v[0], m);
  }
}

// Lane L gets the warp's total of v[L >> (5 - log2 V)].
template <int V>
__device__ inline double reduceScatter(double (&v)[V], int lane)
{
  static_assert(V >= 1 && V <= 32 && (V & (V - 1)) == 0, "a power of two up to 32");
  halve<V / 2, 16>(v, lane);
  return v[0];
}

// A pair's state for an iteration: 0 stopped, 1 runs, 2 stops for the
// numerical error of the iteration before.
__device__ inline int pairFlag(const int* active, const int* bad, int p)
{
  return active[p] ? (bad[p] ? 2 : 1) : 0;
}

// One half-iteration on the block's rows (rowsSm: Rows x d) for every pair
// with flag 1: the sums of the rows with the pairs' vectors g.s, then the
// update of each (pair, row) or, for ScaleResidual, the block's sum of
// squared residuals per pair (residualParts[p][block]). TakeFlags (the
// first half of an iteration): the pairs' states are read into sm.flag
// here, their loads overlapping the sums (the round's barrier publishes
// them before the updates read them).
//
// The log domain (LogUpdate, LogResidual): rowsSm holds rows of E, each
// sum is of E_kl exp(s_l - c) with c = fromOrderedKey(g.sMax[pair]), and
// g.rowMax holds the rows' maxima; LogUpdate leaves its pairs' maxima of
// out in g.outMax and block 0 resets g.resetMax for the next update.
template <Row R, int Rows, bool TakeFlags>
__device__ void halfIteration(const RowArgs& g, const double* rowsSm, const int* rowBad, const Shared& sm, int k0,
  double* residualParts)
{
  constexpr bool Log = R == Row::LogUpdate || R == Row::LogResidual;
  constexpr int V = Rows * kPairsAWarp;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int n = g.n, d = g.d;
  const int groups = (n + kPairsAWarp - 1) / kPairsAWarp;
  const int slices = max(1, kWarps / groups), groupsARound = kWarps / slices;
  const int width = ((d + slices - 1) / slices + 31) / 32 * 32;
  if (TakeFlags)
    for (int p = threadIdx.x; p < n; p += kThreads)
      sm.flag[p] = pairFlag(g.active, g.bad, p);
  if (R == Row::LogUpdate && blockIdx.x == 0)
    for (int p = threadIdx.x; p < n; p += kThreads)
      g.resetMax[p] = 0; // written by the update before last, read by the last: no block uses it in this half
  for (int g0 = 0; g0 < groups; g0 += groupsARound)
  {
    // The (pair, row) this thread updates in the round, and the values the
    // update needs, loaded before the sums so that they arrive meanwhile:
    // thread t takes pair j = t / Rows of the round, row r = t % Rows.
    const int j = threadIdx.x / Rows, r = threadIdx.x % Rows;
    const int groupInRound = j / kPairsAWarp, q = j % kPairsAWarp;
    const int pair = (g0 + groupInRound) * kPairsAWarp + q, k = k0 + r;
    const bool pairInRound = groupInRound < groupsARound && g0 + groupInRound < groups && pair < n;
    const bool mine = pairInRound && k < d;
    const int64_t at = int64_t(pair) * d + k;
    const double mass = mine ? g.mass[at] : 0.0;
    const bool residual = R == Row::ScaleResidual || R == Row::LogResidual;
    const double old = mine && R != Row::LogUpdate ? (residual ? g.t[at] : g.out[at]) : 0.0; // t: the residual's v

    const int group = g0 + warp / slices, slice = warp % slices;
    const int p0 = group * kPairsAWarp;
    double sum[V];
#pragma unroll
    for (int i = 0; i < V; ++i)
      sum[i] = 0;
    int vecBad = 0; // bit q: pair p0 + q has a value not > 0 here
    const bool busy = warp < groupsARound * slices && group < groups;
    if (busy)
    {
      const double* s[kPairsAWarp];
      double shift[kPairsAWarp]; // the log domain: each pair's maximum of s
#pragma unroll
      for (int c = 0; c < kPairsAWarp; ++c)
      {
        const int pair = min(p0 + c, n - 1); // past the last pair: a copy, never finished
        s[c] = g.s + int64_t(pair) * d;
        shift[c] = Log ? fromOrderedKey(__ldcg(g.sMax + pair)) : 0.0;
      }
      const int lo = slice * width, hi = min(d, lo + width);
      constexpr int Columns = kColumnsAtOnce<Log>;
      for (int l0 = lo + lane; l0 < hi; l0 += 32 * Columns)
      {
        double y[Columns][kPairsAWarp];
#pragma unroll
        for (int c = 0; c < Columns; ++c)
#pragma unroll
          for (int e = 0; e < kPairsAWarp; ++e)
            y[c][e] = l0 + 32 * c < hi ? s[e][l0 + 32 * c] : 1.0;
#pragma unroll
        for (int c = 0; c < Columns; ++c)
        {
          const int l = l0 + 32 * c;
          if (l >= hi)
            continue;
#pragma unroll
          for (int e = 0; e < kPairsAWarp; ++e)
            if (Log)
            {
              // exp(-inf - c) = 0: a zero mass's potential adds nothing. A
              // copy past the last pair (the warp's branch) is left as it is.
              if (p0 + e < n)
                y[c][e] = exp(y[c][e] - shift[e]);
            }
            else if (!(y[c][e] > 0))
              vecBad |= 1 << e;
#pragma unroll
          for (int i = 0; i < Rows; ++i)
          {
            const double x = rowsSm[i * d + l];
#pragma unroll
            for (int e = 0; e < kPairsAWarp; ++e)
              sum[i * kPairsAWarp + e] += x * y[c][e];
          }
        }
      }
    }
    const double total = reduceScatter<V>(sum, lane);
    vecBad = __reduce_or_sync(0xffffffffu, vecBad);
    if ((lane & (32 / V - 1)) == 0)
      sm.slice[warp * 32 + lane / (32 / V)] = total;
    if (lane == 0)
      for (int e = 0; e < kPairsAWarp; ++e)
        sm.sliceVecBad[warp * kPairsAWarp + e] = (vecBad >> e) & 1;
    __syncthreads();
    // The update: the slices' totals added in slice order.
    const bool runs = pairInRound && sm.flag[pair] == 1;
    double rowSum = 0;
    bool zero = rowBad[r] != 0;
    if (runs && mine)
      for (int sl = 0; sl < slices; ++sl)
      {
        const int w = groupInRound * slices + sl;
        const double part = sm.slice[w * 32 + r * kPairsAWarp + q];
        rowSum = sl == 0 ? part : rowSum + part;
        zero = zero || sm.sliceVecBad[w * kPairsAWarp + q];
      }
    if (R == Row::ScaleV || R == Row::ScaleU)
    {
      if (runs && mine)
      {
        bool bad = false;
        const double x = scaledUpdate<R>(mass, rowSum, zero, bad);
        g.prev[at] = old;
        g.out[at] = x;
        if (bad)
          g.bad[pair] = 1;
      }
    }
    else if (R == Row::LogUpdate)
    {
      // log mass - logsumexp, the row kernels' finishRow from the factored
      // sum; then the pair's maximum over the block's rows (the threads of
      // a pair are Rows consecutive lanes of one warp), NaN above all.
      double x = -INFINITY;
      if (runs && mine)
      {
        const double c = fromOrderedKey(__ldcg(g.sMax + pair));
        x = logUpdated(mass, factoredM(rowSum, g.rowMax[k], c), rowSum);
        g.out[at] = x;
      }
      for (int o = 1; o < Rows; o *= 2)
      {
        const double y = __shfl_down_sync(0xffffffffu, x, o, Rows);
        x = isnan(x) || isnan(y) ? NAN : fmax(x, y);
      }
      if (r == 0 && runs && (isnan(x) || x > -INFINITY))
        atomicMax(g.outMax + pair, isnan(x) ? ~0ull : orderedKey(x));
    }
    else
    {
      // The block's squared residuals of the pair, its rows in order (the
      // threads of a pair are Rows consecutive lanes of one warp). The log
      // domain's sum_l exp(x_kl + u_l + v_k) is exp(m_k + c + v_k) times
      // the factored sum.
      double sq = 0;
      if (runs && mine)
      {
        const double scale = R == Row::LogResidual
          ? exp(g.rowMax[k] + fromOrderedKey(__ldcg(g.sMax + pair)) + old)
          : old;
        const double res = rowSum * scale - mass;
        sq = res * res;
      }
      for (int o = 1; o < Rows; o *= 2)
        sq += __shfl_down_sync(0xffffffffu, sq, o, Rows);
      if (r == 0 && runs)
        residualParts[int64_t(pair) * gridDim.x + blockIdx.x] = sq;
    }
    __syncthreads();
  }
}

// Block 0: the pairs flagged 2 (a numerical error) get their previous
// scalings back and stop, as stepKernel does; `done` iterations counted.
__device__ void stopFlagged(const ResidentArrays& g, const int* flag, int done)
{
  for (int p = 0; p < g.n && g.Up; ++p) // the log domain flags no numerical errors
    if (flag[p] == 2)
      for (int64_t j = int64_t(p) * g.d + threadIdx.x; j < int64_t(p + 1) * g.d; j += blockDim.x)
      {
        g.U[j] = g.Up[j];
        g.V[j] = g.Vp[j];
      }
  for (int p = threadIdx.x; p < g.n; p += blockDim.x)
    if (flag[p] == 2)
      stopForNumericalError(p, done, g.status, g.iterations, g.active);
}

// Snapshot of every pair's state for this block.
__device__ void takeFlags(const ResidentArrays& g, int* flag)
{
  __syncthreads();
  for (int p = threadIdx.x; p < g.n; p += blockDim.x)
    flag[p] = pairFlag(g.active, g.bad, p);
  __syncthreads();
}

// Block 0 after a checked iteration ii: a pair with a numerical error
// stops with its previous scalings (flagged 2 here, stopFlagged); the
// others' marginal error (the blocks' parts, added in block order) is
// recorded and stops them below stopThr.
__device__ void checkedStep(const ResidentArrays& g, int* flag, int ii)
{
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int p = warp; p < g.n; p += kWarps)
  {
    if (flag[p] != 1 || g.bad[p])
      continue;
    double s = 0;
    for (int b = lane; b < gridDim.x; b += 32)
      s += g.residualParts[int64_t(p) * gridDim.x + b];
    for (int o = 16; o > 0; o >>= 1)
      s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0)
      stopIfConverged(p, sqrt(s), ii, g.stopThr, g.errors, g.status, g.iterations, g.active);
  }
  __syncthreads(); // the loop above reads the flags
  for (int p = threadIdx.x; p < g.n; p += blockDim.x)
    if (flag[p] == 1 && g.bad[p])
      flag[p] = 2;
  __syncthreads();
  stopFlagged(g, flag, ii + 1);
}

// Block 0: the number of pairs still running, written to *g.running.
__device__ void countRunning(const ResidentArrays& g)
{
  __shared__ int alive;
  if (threadIdx.x == 0)
    alive = 0;
  __syncthreads();
  int mine = 0;
  for (int p = threadIdx.x; p < g.n; p += kThreads)
    mine += g.active[p] != 0;
  atomicAdd(&alive, mine);
  __syncthreads();
  if (threadIdx.x == 0)
    *g.running = alive;
}

// Flags: bad[p] set in an iteration is left set once the pair has stopped
// (active 0); every reader looks at active first.
template <int Rows, bool Log>
__global__ void __launch_bounds__(kThreads, 1) residentKernel(ResidentArrays g, int iterations, int checkPeriod)
{
  extern __shared__ double sharedBase[];
  cg::grid_group grid = cg::this_grid();
  const int d = g.d, n = g.n, k0 = blockIdx.x * Rows;
  const Shared sm = carve<Rows>(sharedBase, d);
  for (int i = threadIdx.x; i < Rows * d; i += kThreads)
  {
    const int r = i / d;
    const int64_t at = int64_t(k0 + r) * d + i % d;
    const bool in = k0 + r < d;
    sm.kRows[i] = in ? g.K[at] : 0.0;
    sm.ktRows[i] = in ? g.KT[at] : 0.0;
  }
  if (threadIdx.x < 2 * Rows)
    sm.rowBad[threadIdx.x] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < Rows * d && !Log; i += kThreads) // only the scaling method's u asks
  {
    if (!(sm.kRows[i] > 0))
      sm.rowBad[i / d] = 1;
    if (!(sm.ktRows[i] > 0))
      sm.rowBad[Rows + i / d] = 1;
  }
  const int base = *g.counter;
  RowArgs updateV{ g.KT, g.U, nullptr, Log ? g.logB : g.b, g.active, n, d, g.V, g.Vp, g.bad };
  RowArgs updateU{ g.K, g.V, nullptr, Log ? g.logA : g.a, g.active, n, d, g.U, g.Up, g.bad };
  RowArgs residual{ g.KT, g.U, g.V, g.b, g.active, n, d, nullptr, nullptr, g.bad };
  updateV.rowMax = residual.rowMax = g.rowMaxT;
  updateU.rowMax = g.rowMax;
  constexpr Row UpdateV = Log ? Row::LogUpdate : Row::ScaleV, UpdateU = Log ? Row::LogUpdate : Row::ScaleU,
                Residual = Log ? Row::LogResidual : Row::ScaleResidual;
  int done = iterations;
  for (int q = 0; q < iterations; ++q)
  {
    const int ii = base + q;
    if (Log)
    {
      // The maxima's slots (SinkhornResident.h): this iteration's updates
      // are numbered h and h + 1, modulo 3.
      const int h = 2 * (ii % 3);
      auto slot = [&](int i) { return g.maxSlots + int64_t(i % 3) * n; };
      updateV.sMax = slot(h + 2);
      updateV.outMax = slot(h);
      updateV.resetMax = slot(h + 1);
      updateU.sMax = slot(h);
      updateU.outMax = slot(h + 1);
      updateU.resetMax = slot(h + 2);
      residual.sMax = slot(h + 1);
    }
    halfIteration<UpdateV, Rows, true>(updateV, sm.ktRows, sm.rowBad + Rows, sm, k0, nullptr);
    if (blockIdx.x == 0)
      stopFlagged(g, sm.flag, ii); // the errors of iteration ii - 1 (no block reads those pairs now)
    grid.sync();
    halfIteration<UpdateU, Rows, false>(updateU, sm.kRows, sm.rowBad, sm, k0, nullptr);
    grid.sync();
    if (ii % checkPeriod == 0)
    {
      halfIteration<Residual, Rows, false>(residual, sm.ktRows, sm.rowBad + Rows, sm, k0, g.residualParts);
      grid.sync();
      if (blockIdx.x == 0)
      {
        checkedStep(g, sm.flag, ii);
        countRunning(g);
      }
      grid.sync();
      // Every pair stopped (converged, or a numerical error): the later
      // iterations would change nothing, so the launch ends here, as the
      // host's loop would after this period.
      if (*static_cast<volatile int*>(g.running) == 0)
      {
        done = q + 1;
        break;
      }
    }
  }
  if (blockIdx.x != 0)
    return;
  takeFlags(g, sm.flag);
  stopFlagged(g, sm.flag, base + done);
  __syncthreads();
  countRunning(g);
  if (threadIdx.x == 0)
    *g.counter = base + done;
}

template <typename F>
bool withRows(int rows, F f)
{
  switch (rows)
  {
    case 1:
      f(std::integral_constant<int, 1>());
      return true;
    case 2:
      f(std::integral_constant<int, 2>());
      return true;
    case 4:
      f(std::integral_constant<int, 4>());
      return true;
    case 8:
      f(std::integral_constant<int, 8>());
      return true;
  }
  return false;
}

// The kernel for `rows` rows a block, either method, as f's argument.
template <typename F>
bool withKernel(int rows, bool logDomain, F f)
{
  return withRows(rows, [&](auto r) {
    constexpr int Rows = decltype(r)::value;
    if (logDomain)
      f(residentKernel<Rows, true>);
    else
      f(residentKernel<Rows, false>);
  });
}

// How many blocks of `rows` rows an SM holds with `bytes` of shared memory
// each, on the current device. Asked of the runtime once per device and
// shape, not once per solve: a solve of 100 iterations takes about a
// millisecond, and a Python loop over batches makes thousands of them.
int blocksPerSM(int device, int rows, size_t bytes, int optin, bool logDomain)
{
  static std::mutex lock;
  static std::map<std::tuple<int, int, size_t, bool>, int> known;
  std::lock_guard<std::mutex> hold(lock);
  const auto key = std::make_tuple(device, rows, bytes, logDomain);
  const auto found = known.find(key);
  if (found != known.end())
    return found->second;
  int perSM = 0;
  withKernel(rows, logDomain, [&](auto kernel) {
    // The most the device allows (the same value at every miss): every
    // launch's shared memory, which grows with the pairs' flags, is within it.
    check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - kStaticShared),
      "cudaFuncSetAttribute");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSM, kernel, kThreads, bytes), "occupancy");
  });
  return known[key] = perSM;
}
} // namespace

ResidentPlan residentPlan(int n, int d, bool logDomain)
{
  const char* env = std::getenv("TOPOVOX_SINKHORN_RESIDENT");
  if ((env && *env == '0') || n < 1 || n > kMaxPairs || d < 1)
    return {};
  int device = 0, cooperative = 0, optin = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device), "cudaDeviceGetAttribute");
  check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
  if (!cooperative)
    return {};
  const int sms = cuda::multiprocessorCount();
  // The most rows a block that fit, all blocks resident: the fewest blocks,
  // each of which reads every pair's vector a half-iteration, and the
  // fewest to meet at each barrier. TOPOVOX_SINKHORN_RESIDENT=1, 2, 4 or 8
  // asks for that many (to measure).
  const int asked = env ? std::atoi(env) : 0;
  for (int rows = 8; rows >= 1; rows /= 2)
  {
    if (asked > 0 && rows != asked)
      continue;
    const size_t bytes = sharedBytesFor(rows, d, n);
    if (bytes + kStaticShared > size_t(optin))
      continue;
    const int blocks = (d + rows - 1) / rows;
    const int perSM = blocksPerSM(device, rows, bytes, optin, logDomain);
    if (perSM > 0 && blocks <= perSM * sms)
      return ResidentPlan{ rows, blocks, bytes };
  }
  return {};
}

void launchResident(
  const ResidentArrays& g, const ResidentPlan& plan, int iterations, int checkPeriod, cudaStream_t stream)
{
  ResidentArrays args = g;
  void* params[] = { &args, &iterations, &checkPeriod };
  withKernel(plan.rows, g.logA != nullptr, [&](auto kernel) {
    check(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(kernel),
            dim3(static_cast<unsigned>(plan.blocks)), dim3(kThreads), params, plan.sharedBytes, stream),
      "cudaLaunchCooperativeKernel");
  });
}
}
}
