// GridPlaneKernels.cuh - the grid Sinkhorn's kernel on small 2D grids
// (up to 512 x 512 and 2^16 voxels) in one launch per application, with the
// update of v or u fused: GridSinkhornCUDA.cu's DeviceBackend::applyPlane
// and stepV/stepU launch them. On such grids cuBLAS's products are a few
// tiles each and an iteration was nine launches (the scaling method) or
// four direct log-sum-exp passes with an exp a term (the log domain); here
// it is two (three with the log domain's column shift).
#pragma once

#include "GridResultVoxel.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace topovox
{
namespace transport
{
namespace
{
// The log domain plane's input (PlaneLogArgs): c = the maximum of each
// x-column of `in` along y (NaN left out, as the direct maximum leaves it),
// and e = exp(in - c), 0 in a column whose maximum is not finite. A block
// 32 columns wide, its 8 rows of threads taking every 8th y.
__global__ void columnShiftKernel(const double* __restrict__ in, double* __restrict__ columnMax,
  double* __restrict__ e, int nx, int ny)
{
  __shared__ double tops[8][32];
  const int x = blockIdx.x * 32 + threadIdx.x;
  double m = -INFINITY;
  if (x < nx)
    for (int y = threadIdx.y; y < ny; y += 8)
      m = fmax(m, in[x + static_cast<int64_t>(y) * nx]);
  tops[threadIdx.y][threadIdx.x] = m;
  __syncthreads();
  m = tops[0][threadIdx.x];
  for (int g = 1; g < 8; ++g)
    m = fmax(m, tops[g][threadIdx.x]);
  if (x >= nx)
    return;
  if (threadIdx.y == 0)
    columnMax[x] = m;
  for (int y = threadIdx.y; y < ny; y += 8)
  {
    const int64_t k = x + static_cast<int64_t>(y) * nx;
    e[k] = isfinite(m) ? exp(__dsub_rn(in[k], m)) : 0.0;
  }
}

// The scaling method's kernel on a small 2D grid in one launch (see
// DeviceBackend::applyPlane): out = F_x in F_y^T, the block of rows
// y0 .. y0 + kRows - 1 of out from all of `in` (in L2) in two steps with no
// work repeated across blocks: S = the rows' combinations of in's x-lines
// (sum_y F_y[y'][y] in[., y]), then out[x][y'] = sum_x' F_x[x][x'] S[y'][x']
// with F_x read by columns (it is symmetric: F_x[x][x'] = F_x[x'][x]), so
// that the threads' loads are contiguous. The loads' latency, not the sums,
// bounds it (a block or two per SM): each thread issues kBatch loads before
// it sums them (measured under ncu for 128^2 on an H200: 50 us with one
// load at a time, 18 us with 8 and 256 threads), and the block's threads are `lanes` along x times `groups` that
// each sum a share of y (then of x'), their partial sums added in shared
// memory in group order (a fixed order for a given nx).
constexpr int kBatch = 16;

// acc[r] += sum over j in [first, last) of coefficient(r, j) * load(j), the
// loads kBatch at a time.
template <int kRows, typename Load, typename Coefficient>
__device__ inline void batchedSums(double (&acc)[kRows], int first, int last, Load load, Coefficient coefficient)
{
  int j = first;
  for (; j + kBatch <= last; j += kBatch)
  {
    double value[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
      value[k] = load(j + k);
#pragma unroll
    for (int k = 0; k < kBatch; ++k)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        acc[r] = fma(coefficient(r, j + k), value[k], acc[r]);
  }
  for (; j < last; ++j)
  {
    const double value = load(j);
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      acc[r] = fma(coefficient(r, j), value, acc[r]);
  }
}

// What a plane launch does with each output t besides storing it: nothing;
// the update of v (after K^T u); or that of u (after K v): GridResultVoxel.h's
// formulas, with updateVKernel's and updateUKernel's failedAt and iteration
// rules.
enum class PlaneUpdate
{
  None,
  V,
  U
};
// The log domain's plane (kLog): its input is exp(x - c), c the maximum of
// each x-column of x along y (columnShiftKernel), and the factors are the
// kernel's E = exp(F - m) (FactoredLogSumExp.h), so that both axes are the
// scaling method's sums: T = m_y + c + log(E_y rows . input) between the
// two, and out = m_x + c2 + log(E_x . exp(T - c2)) at the end, c2 each
// output row's maximum of T (found in the block, which holds the row).
struct PlaneLogArgs
{
  const double* columnMax = nullptr; // c, nx values
  const double* rowMaxX = nullptr;   // m_x
  const double* rowMaxY = nullptr;   // m_y
};

struct PlaneUpdateArgs
{
  double* scaling = nullptr;           // v or u: written
  const double* marginal = nullptr;    // b or a (log domain: log b or log a)
  const double* ktu = nullptr;         // U: K^T u, for the checks
  const double* v = nullptr;           // U: the new v, for the checks
  int* failedAt = nullptr;
  int* iteration = nullptr;
};

template <int kRows, PlaneUpdate kUpdate, bool kLog>
__global__ void planeKernel(const double* __restrict__ in, double* __restrict__ out, const double* __restrict__ Fx,
  const double* __restrict__ Fy, int nx, int ny, int lanes, PlaneUpdateArgs update, PlaneLogArgs logArgs)
{
  bool frozen = false;
  if (kUpdate != PlaneUpdate::None)
  {
    if (kUpdate == PlaneUpdate::V && blockIdx.x == 0 && threadIdx.x == 0)
      ++*update.iteration; // read by the U launch that follows, not by this one
    frozen = *update.failedAt >= 0;
  }
  // partial sums (groups x kRows x nx), S (kRows x nx), the block's rows of
  // F_y (kRows x ny; rows past the grid's are 0)
  extern __shared__ double shared[];
  const int groups = blockDim.x / lanes, lane = threadIdx.x % lanes, group = threadIdx.x / lanes;
  double* partial = shared;
  double* S = partial + static_cast<size_t>(groups) * kRows * nx;
  double* fy = S + kRows * nx;
  double* rowTop = fy + kRows * ny; // kLog: c2 per row, and the warps' maxima (kRows x 32)
  const int y0 = blockIdx.x * kRows;
  const int rows = min(kRows, ny - y0);
  for (int i = threadIdx.x; i < kRows * ny; i += blockDim.x)
    fy[i] = i / ny < rows ? Fy[static_cast<int64_t>(y0) * ny + i] : 0.0;
  __syncthreads();
  auto reduce = [&](double* to) {
    __syncthreads();
    for (int i = threadIdx.x; i < kRows * nx; i += blockDim.x)
    {
      double sum = partial[i];
      for (int g = 1; g < groups; ++g)
        sum += partial[static_cast<size_t>(g) * kRows * nx + i];
      to[i] = sum;
    }
    __syncthreads();
  };
  // S = F_y's rows times in
  {
    const int share = (ny + groups - 1) / groups, first = group * share, last = min(ny, first + share);
    for (int x = lane; x < nx; x += lanes)
    {
      double acc[kRows] = {};
      batchedSums<kRows>(
        acc, first, last, [&](int y) { return in[x + static_cast<int64_t>(y) * nx]; },
        [&](int r, int y) { return fy[r * ny + y]; });
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        partial[(static_cast<size_t>(group) * kRows + r) * nx + x] = acc[r];
    }
  }
  reduce(S);
  if (kLog)
  {
    // T = m_y + c + log S, its row maxima c2, then exp(T - c2) in place.
    double top[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      top[r] = -INFINITY;
    for (int i = threadIdx.x; i < kRows * nx; i += blockDim.x)
    {
      const int r = i / nx, xp = i % nx;
      const double t = r < rows ? __dadd_rn(__dadd_rn(logArgs.rowMaxY[y0 + r], logArgs.columnMax[xp]), log(S[i]))
                                : -INFINITY;
      S[i] = t;
#pragma unroll
      for (int q = 0; q < kRows; ++q)
        if (q == r)
          top[q] = fmax(top[q], t);
    }
    const int warp = threadIdx.x / 32, warpLane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < kRows; ++r)
    {
      for (int offset = 16; offset > 0; offset /= 2)
        top[r] = fmax(top[r], __shfl_xor_sync(0xffffffffu, top[r], offset));
      if (warpLane == 0)
        rowTop[kRows + r * 32 + warp] = top[r];
    }
    __syncthreads();
    if (threadIdx.x < kRows)
    {
      double m = -INFINITY;
      for (int w = 0; w < static_cast<int>(blockDim.x / 32); ++w)
        m = fmax(m, rowTop[kRows + threadIdx.x * 32 + w]);
      rowTop[threadIdx.x] = m;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < kRows * nx; i += blockDim.x)
    {
      const double c2 = rowTop[i / nx];
      S[i] = isfinite(c2) ? exp(__dsub_rn(S[i], c2)) : 0.0;
    }
    __syncthreads();
  }
  // out = F_x S
  {
    const int share = (nx + groups - 1) / groups, first = group * share, last = min(nx, first + share);
    for (int x = lane; x < nx; x += lanes)
    {
      double acc[kRows] = {};
      batchedSums<kRows>(
        acc, first, last, [&](int xp) { return Fx[static_cast<int64_t>(xp) * nx + x]; },
        [&](int r, int xp) { return S[r * nx + xp]; });
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        partial[(static_cast<size_t>(group) * kRows + r) * nx + x] = acc[r];
    }
  }
  reduce(partial); // in place: the sums over groups into group 0's share
  bool bad = false;
  for (int i = threadIdx.x; i < rows * nx; i += blockDim.x)
  {
    const int64_t k = static_cast<int64_t>(y0) * nx + i;
    double t = partial[i];
    if (kLog)
    {
      // as transport::factoredLse: -inf for a zero sum; a row whose maximum
      // is not finite keeps it (-inf: every term -inf)
      const double c2 = rowTop[i / nx];
      t = !isfinite(c2) ? c2 : t > 0 ? __dadd_rn(__dadd_rn(logArgs.rowMaxX[i % nx], c2), log(t)) : t == 0 ? -INFINITY : t;
    }
    out[k] = t;
    if (kUpdate == PlaneUpdate::V && !frozen)
      update.scaling[k] = updatedV(update.marginal[k], t, kLog);
    if (kUpdate == PlaneUpdate::U && !frozen)
    {
      const double u = updatedU(update.marginal[k], t, kLog);
      update.scaling[k] = u;
      bad = bad || (!kLog && updateWentBad(update.ktu[k], u, update.v[k]));
    }
  }
  if (bad)
    *update.failedAt = *update.iteration;
}
} // namespace
} // namespace transport
} // namespace topovox
