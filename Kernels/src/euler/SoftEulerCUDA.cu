// SoftEulerCUDA.cu - the differentiable Euler curve on the GPU: blocks walk
// tiles of voxels, a thread a voxel, the tile's heights computed once into
// shared memory by SoftEulerVoxel.h (the CPU path's own code), and each
// voxel's signed cell count from its neighbours' there; then the lanes
// turn to the thresholds (32 to 128 a block, more in blocks along z): each
// voxel of the warp with a nonzero count is broadcast, and every lane adds
// the terms of its own thresholds. Sums go through shared-memory double
// accumulators, with one round of global atomics per block. Float images'
// terms are computed in float (double images' in double): the GPU's float
// rate is many times its double rate. Every input stays in GPU memory: the
// direction, alpha and thresholds are read by the kernels themselves.
#include "SoftEulerBackends.h"

#include "../common/CudaUtil.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace topovox
{
namespace euler
{
namespace
{
constexpr int kThreads = 256;

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

// The arithmetic of the per-threshold terms sigmoid(lambda (t - h)).
// Double images: in double (softSigmoid, the CPU's). Float images: in
// float, with no double operation and one special-function instruction a
// term. The H200's special-function unit does 16 operations a cycle on a
// multiprocessor against 128 float ones, and the form before (lambda
// (t - h) in double, converted to float, then __expf and __fdividef) took
// three of its instructions a term (the conversion from double is one).
// Now:
//  * a height h is split once a voxel into hi + lo, two floats (hi the
//    float nearest h, lo the float nearest h - hi), so that (t - hi) - lo
//    keeps the double's argument to float's rounding (t is a float; large
//    heights lose nothing, as before: test_soft_euler's heights near 1e5);
//  * exp by the hardware's ex2 (what __expf uses: about 2 ulp), its
//    argument scaled by -lambda log2(e) once a call;
//  * 1 / (1 + e) by three Newton steps from an integer guess (error 5% ->
//    6e-8 relative over [1, 2^126], checked on a sweep of 300,000 values
//    in numpy) in fused multiply-adds, not the special-function unit's
//    reciprocal. e is capped at 2^126 (the term there is under 1e-37; the
//    guess then is subnormal and the steps, flushing it, give 0, as
//    __fdividef gave for large e).
// The 4096^2 forward (64 thresholds) went from 0.87 to 0.71 ms, the
// 256^3 one from 1.06 to 0.97 ms (bench/README.md, twenty-fifth session);
// results agree with the old form's to float's rounding (test_soft_euler's
// most sensitive value, a dL/du that cancels to 1e-3: -9.09713854e-4
// before, -9.09713795e-4 now, -8.49e-4 in double).
template <typename T>
struct TermMath
{
  using Acc = double;
  using Tau = double;
  struct Height
  {
    double h;
  };
  __device__ static Height height(double h) { return { h }; }
  __device__ static Height broadcast(const Height& h, int src) { return { __shfl_sync(0xffffffffu, h.h, src) }; }
  __device__ static double scale(double lambda) { return lambda; }
  __device__ static double sigmoid(double scale, Tau t, const Height& h) { return softSigmoid(scale * (t - h.h)); }
};
template <>
struct TermMath<float>
{
  using Acc = float;
  using Tau = float;
  struct Height
  {
    float hi, lo;
  };
  __device__ static Height height(double h)
  {
    const float hi = __double2float_rn(h);
    return { hi, isfinite(hi) ? __double2float_rn(h - static_cast<double>(hi)) : 0.0f };
  }
  __device__ static Height broadcast(const Height& h, int src)
  {
    return { __shfl_sync(0xffffffffu, h.hi, src), __shfl_sync(0xffffffffu, h.lo, src) };
  }
  // -lambda log2(e): e^(-lambda (t - h)) = 2^(scale (t - h)); finite (a
  // lambda past float's range would make 0 * infinity, NaN, at t = h).
  __device__ static float scale(double lambda)
  {
    return static_cast<float>(fmax(-lambda * 1.4426950408889634, -3.4028234663852886e38));
  }
  __device__ static float sigmoid(float scale, Tau t, const Height& h)
  {
    const float p = scale * ((t - h.hi) - h.lo);
    float e; // (a NaN threshold's NaN goes through, as on the CPU)
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(p > 126.0f ? 126.0f : p));
    const float x = 1.0f + e;
    float r = __int_as_float(0x7EF311C7 - __float_as_int(x));
#pragma unroll
    for (int k = 0; k < 3; ++k)
      r = fmaf(r, fmaf(-x, r, 1.0f), r);
    return r;
  }
};

// The tiles the kernels walk: 32 x 8 voxels of an image of one plane, or
// 32 x 4 x 2 of a volume, a warp a row of 32 voxels. The heights of a tile
// and of its one-voxel border are computed once into shared memory, and a
// voxel's count reads its neighbours' there: before, each height was
// computed again by each of the 9 (27) voxels around it, with its value's
// load and its position's double arithmetic, which were most of a kernel's
// instructions (H200, 256^2, 64 directions: issue-bound, 63% of the SMs'
// throughput, memory under 10%). Every height comes from softHeight, the
// CPU's code, so the order of the heights is the same.
template <bool Volume>
struct Tile
{
  static constexpr int X = 32, Y = Volume ? 4 : 8, Z = Volume ? 2 : 1;
  static constexpr int HX = X + 2, HY = Y + 2, HZ = Volume ? Z + 2 : 1, Heights = HX * HY * HZ;
  static_assert(X * Y * Z == kThreads, "a thread a voxel of the tile");
  int64_t across[3]; // tiles along each axis

  __host__ __device__ explicit Tile(const SoftVoxelParams& P)
  {
    const int64_t side[3] = { X, Y, Z };
    for (int a = 0; a < 3; ++a)
      across[a] = (P.dims[a] + side[a] - 1) / side[a];
  }
  __host__ __device__ int64_t count() const { return across[0] * across[1] * across[2]; }

  // The first voxel of tile t: in 32 bits where the tiles allow (64-bit
  // divisions cost tens of instructions each, a voxel's share of a tile's).
  __device__ void origin(int64_t t, int64_t o[3]) const
  {
    if (count() <= int64_t(UINT32_MAX))
    {
      const uint32_t w = static_cast<uint32_t>(t), ax = static_cast<uint32_t>(across[0]),
                     ay = static_cast<uint32_t>(across[1]);
      const uint32_t row = w / ax;
      o[0] = int64_t(w - row * ax) * X;
      o[1] = int64_t(row % ay) * Y;
      o[2] = int64_t(row / ay) * Z;
      return;
    }
    o[0] = (t % across[0]) * X;
    o[1] = ((t / across[0]) % across[1]) * Y;
    o[2] = (t / (across[0] * across[1])) * Z;
  }

  // The heights of the tile at o and its border into hs (0 outside the image).
  template <typename T>
  __device__ static void fill(const T* image, const SoftVoxelParams& P, const int64_t o[3], double* hs)
  {
    for (int e = threadIdx.x; e < Heights; e += blockDim.x)
    {
      const int64_t i = o[0] - 1 + e % HX, j = o[1] - 1 + (e / HX) % HY, k = o[2] - (Volume ? 1 : 0) + e / (HX * HY);
      const bool in = i >= 0 && i < P.dims[0] && j >= 0 && j < P.dims[1] && k >= 0 && k < P.dims[2];
      hs[e] = in ? softHeight(image, P, i, j, k) : 0.0;
    }
  }

  // This thread's voxel of the tile at o: false when it is outside the
  // image; else its coordinates, height and signed count.
  __device__ static bool voxel(const double* hs, const SoftVoxelParams& P, const int64_t o[3], int64_t& i,
    int64_t& j, int64_t& k, double& h, int& c)
  {
    const int lx = threadIdx.x & 31, ly = (threadIdx.x >> 5) % Y, lz = (threadIdx.x >> 5) / Y;
    i = o[0] + lx, j = o[1] + ly, k = o[2] + lz;
    if (i >= P.dims[0] || j >= P.dims[1] || k >= P.dims[2])
      return false;
    const double* at = hs + (lx + 1) + HX * ((ly + 1) + HY * (lz + (Volume ? 1 : 0)));
    h = *at;
    c = 0;
    if (h != h)
      return true;
    // Volumes: all 27 neighbours; one plane: its 9 (EulerCells.h's bits).
    const uint32_t mask = precedingByHeights<Volume ? 0 : 9, Volume ? 27 : 18>(P, i, j, k, h,
      [at](int b) { return at[choiceAxis(b, 0) + HX * (choiceAxis(b, 1) + HY * choiceAxis(b, 2))]; });
    c = signedCountOfMask<!Volume>(mask, P);
    return true;
  }

  // Calls f(i, j, k, h, c, in) for this thread's voxel of each tile the
  // block walks (voxel's values; `in` false outside the image, h 0 and c 0
  // there). Every thread of the block calls it: the tiles' heights are
  // shared.
  template <typename T, typename F>
  __device__ void walk(const T* image, const SoftVoxelParams& P, double* hs, F f) const
  {
    for (int64_t tile = blockIdx.x; tile < count(); tile += gridDim.x)
    {
      int64_t o[3], i = 0, j = 0, k = 0;
      origin(tile, o);
      __syncthreads(); // the tile before is read
      fill(image, P, o, hs);
      __syncthreads();
      double h = 0;
      int c = 0;
      const bool in = voxel(hs, P, o, i, j, k, h, c);
      f(i, j, k, h, c, in);
    }
  }
};

// Calls f(src, h, c) for each lane src of the warp whose voxel has a
// nonzero count, lowest first, with that voxel's height (as Math keeps it,
// made by its own lane) and count (by shuffle: every lane gets them, and
// takes its own thresholds' terms).
template <typename Math, typename F>
__device__ __forceinline__ void forLiveVoxels(double h, int c, F f)
{
  const typename Math::Height mine = Math::height(h);
  for (unsigned live = __ballot_sync(0xffffffffu, c != 0); live; live &= live - 1)
  {
    const int src = __ffs(live) - 1;
    f(src, Math::broadcast(mine, src), __shfl_sync(0xffffffffu, c, src));
  }
}

// The forward's threshold groups: a block handles up to kGroup thresholds
// (blockIdx.z picks the group), lane l of every warp the thresholds
// group + l + 32 q, q < kChunks.
constexpr int kMaxChunks = 4, kGroup = 32 * kMaxChunks;

// The end of a launch whose blocks add their sums into `acc` (all zero
// before the launch; cuda::zeroedStreamScratch): the last block to arrive
// (cuda::lastBlockToArrive, on the counter just past acc) takes acc[0..n)
// out, writes it to out[0..n) as T (where `out` is not null) and leaves
// acc zero for the next call. So one launch does what a memset, the kernel
// and a cast kernel did: for a small image the launches were the time.
template <typename T>
__device__ inline void takeSums(double* acc, int64_t n, T* out)
{
  for (int64_t k = threadIdx.x; k < n; k += blockDim.x)
  {
    const double v = __longlong_as_double(
      static_cast<long long>(atomicExch(reinterpret_cast<unsigned long long*>(acc + k), 0ull)));
    if (out)
      out[k] = static_cast<T>(v);
  }
}

// acc[(b * D + d) * nt + t] += sum over voxels c sigmoid(lambda (t - h)),
// direction d = blockIdx.y (of D = gridDim.y). Blocks walk the tiles
// (Tile), each lane finding its voxel's height and signed count; then the
// lanes turn to the thresholds: for each voxel of the warp's row with a
// nonzero count (most voxels of a smooth image have none, about 40% of a
// noise image's), its height and count go to every lane by shuffle and
// lane l adds the terms of its own thresholds. No sigmoid is evaluated for
// a zero count and no sum crosses lanes; a row's terms (at most 32 a
// threshold) are summed in Acc, the rows' sums in double, the warps' in
// shared memory, the blocks' by global atomics. Float images: six blocks
// an SM for planes (40 registers), five for volumes with up to 64
// thresholds a group (48), four otherwise (at fewer registers those
// variants spill); measured on an H200 at 256^2, 64 directions: 4 blocks
// 108.7 us, 5 93.5 us, 6 87.7 us.
template <typename T, int kChunks, bool Volume>
__global__ void __launch_bounds__(kThreads, sizeof(T) != 4 ? 3 : !Volume ? 6 : kChunks <= 2 ? 5 : 4)
  forwardKernel(const T* __restrict__ images, SoftVoxelParams P0, const T* direction, const T* alpha,
    const T* __restrict__ thresholds, int nt, int64_t batch, double* acc, T* chi)
{
  using Math = TermMath<T>;
  using Acc = typename Math::Acc;
  using Walk = Tile<Volume>;
  __shared__ double sums[32 * kChunks];
  __shared__ double heights[Walk::Heights];
  const int d = blockIdx.y, nd = gridDim.y, group = blockIdx.z * kGroup;
  const SoftVoxelParams P = withInputs(P0, direction + 3 * d, alpha);
  const int64_t voxels = P.dims[0] * P.dims[1] * P.dims[2];
  const Walk tiles(P);
  const int lane = threadIdx.x & 31;
  const auto scale = Math::scale(P.lambda);
  typename Math::Tau tau[kChunks]; // this lane's thresholds (NaN past the last: no term)
#pragma unroll
  for (int q = 0; q < kChunks; ++q)
  {
    const int t = group + lane + 32 * q;
    tau[q] = t < nt ? static_cast<typename Math::Tau>(thresholds[t]) : NAN;
  }
  for (int64_t b = 0; b < batch; ++b)
  {
    for (int t = threadIdx.x; t < 32 * kChunks; t += blockDim.x)
      sums[t] = 0;
    const T* image = images + b * voxels;
    double total[kChunks] = {};
    tiles.walk(image, P, heights, [&](int64_t, int64_t, int64_t, double h, int c, bool) {
      Acc step[kChunks] = {};
      forLiveVoxels<Math>(h, c, [&](int, const typename Math::Height& hs, int count) {
        const Acc cs = static_cast<Acc>(count);
#pragma unroll
        for (int q = 0; q < kChunks; ++q)
          step[q] += cs * Math::sigmoid(scale, tau[q], hs);
      });
#pragma unroll
      for (int q = 0; q < kChunks; ++q)
        total[q] += static_cast<double>(step[q]);
    });
    __syncthreads(); // sums zeroed
#pragma unroll
    for (int q = 0; q < kChunks; ++q)
      if (group + lane + 32 * q < nt && total[q] != 0)
        atomicAdd(&sums[lane + 32 * q], total[q]);
    __syncthreads();
    for (int t = threadIdx.x; t < 32 * kChunks && group + t < nt; t += blockDim.x)
      if (sums[t] != 0)
        atomicAdd(&acc[(b * nd + d) * nt + group + t], sums[t]);
    __syncthreads();
  }
  const int64_t curves = batch * nd * nt;
  if (cuda::lastBlockToArrive(reinterpret_cast<unsigned*>(acc + curves), gridDim.x * gridDim.y * gridDim.z))
    takeSums(acc, curves, chi);
}

// The backward, direction d = blockIdx.y of D = gridDim.y, thresholds of
// group blockIdx.z, with the forward's mapping: per warp row each lane
// finds its voxel's height and count, then every voxel with a nonzero count
// is broadcast, lane l evaluates the terms d_t = dL/dchi_t c lambda s (1 - s)
// of its own thresholds (adding them to its dL/dt) and a warp sum gives the
// voxel's dL/dh = -sum_t d_t, which its own lane keeps. Then per voxel
// gradImages (added atomically when `accumulate`: several directions or
// threshold groups; the caller zeroes it), and the parts of dL/du and
// dL/dalpha. acc[0..nt) dL/dt, acc[nt + 3 d ..] dL/du_d, acc[nt + 3 D]
// dL/dalpha; the block's sums in shared memory first. Float images: five
// blocks an SM for planes with up to 64 thresholds a group (48 registers),
// four otherwise (64; with more thresholds or a volume, 48 spill); double
// images need more registers. Measured on an H200 at 256^2, 64 directions:
// 3 blocks 159 us, 4 131 us, 5 114 us.
template <typename T, int kChunks, bool Volume>
__global__ void __launch_bounds__(kThreads, sizeof(T) != 4 ? 2 : (!Volume && kChunks <= 2) ? 5 : 4)
  backwardKernel(const T* __restrict__ images, SoftVoxelParams P0, const T* direction, const T* alpha,
    const T* __restrict__ thresholds, int nt, int64_t batch, const T* __restrict__ gradChi, T* gradImages,
    bool accumulate, double* acc, T* gradThresholds, T* gradDirection, T* gradAlpha)
{
  using Math = TermMath<T>;
  using Acc = typename Math::Acc;
  using Walk = Tile<Volume>;
  __shared__ double sums[32 * kChunks + 4]; // dL/dt of the group, dL/du (3), dL/dalpha
  __shared__ double heights[Walk::Heights];
  const int d = blockIdx.y, nd = gridDim.y, group = blockIdx.z * kGroup;
  const SoftVoxelParams P = withInputs(P0, direction + 3 * d, alpha);
  for (int k = threadIdx.x; k < 32 * kChunks + 4; k += blockDim.x)
    sums[k] = 0;
  const int64_t voxels = P.dims[0] * P.dims[1] * P.dims[2];
  const Walk tiles(P);
  const int lane = threadIdx.x & 31;
  const Acc lambda = static_cast<Acc>(P.lambda);
  const auto scale = Math::scale(P.lambda);
  typename Math::Tau tau[kChunks]; // this lane's thresholds (NaN past the last)
#pragma unroll
  for (int q = 0; q < kChunks; ++q)
  {
    const int t = group + lane + 32 * q;
    tau[q] = t < nt ? static_cast<typename Math::Tau>(thresholds[t]) : NAN;
  }
  double dT[kChunks] = {};
  double dU[4] = {}; // this lane's parts of dL/du and dL/dalpha
  for (int64_t b = 0; b < batch; ++b)
  {
    const T* image = images + b * voxels;
    Acc gq[kChunks]; // dL/dchi of this lane's thresholds (0 past the last)
#pragma unroll
    for (int q = 0; q < kChunks; ++q)
    {
      const int t = group + lane + 32 * q;
      gq[q] = t < nt ? static_cast<Acc>(gradChi[(b * nd + d) * nt + t]) : Acc(0);
    }
    tiles.walk(image, P, heights, [&](int64_t i, int64_t j, int64_t k, double h, int c, bool in) {
      double dh = 0;
      Acc step[kChunks] = {};
      forLiveVoxels<Math>(h, c, [&](int src, const typename Math::Height& hs, int count) {
        const Acc cl = static_cast<Acc>(count) * lambda;
        Acc mine = 0;
#pragma unroll
        for (int q = 0; q < kChunks; ++q)
        {
          const Acc s = Math::sigmoid(scale, tau[q], hs);
          const Acc term = group + lane + 32 * q < nt ? gq[q] * cl * s * (Acc(1) - s) : Acc(0);
          step[q] += term;
          mine += term;
        }
        for (int offset = 16; offset > 0; offset >>= 1)
          mine += __shfl_xor_sync(0xffffffffu, mine, offset);
        if (lane == src)
          dh = -static_cast<double>(mine);
      });
#pragma unroll
      for (int q = 0; q < kChunks; ++q)
        dT[q] += static_cast<double>(step[q]);
      if (in && gradImages)
      {
        const int64_t v = b * voxels + i + P.dims[0] * (j + P.dims[1] * k);
        if (!accumulate)
          gradImages[v] = static_cast<T>(P.weight * dh);
        else if (dh != 0 && P.weight != 0) // the caller zeroed gradImages
          atomicAdd(&gradImages[v], static_cast<T>(P.weight * dh));
      }
      if (dh != 0)
      {
        double pos[3];
        softPosition(P, i, j, k, pos);
        for (int a = 0; a < 3; ++a)
          dU[a] += dh * P.alpha * pos[a];
        dU[3] += dh * (P.u[0] * pos[0] + P.u[1] * pos[1] + P.u[2] * pos[2]);
      }
    });
  }
  __syncthreads(); // sums zeroed
#pragma unroll
  for (int q = 0; q < kChunks; ++q)
    if (group + lane + 32 * q < nt && dT[q] != 0)
      atomicAdd(&sums[lane + 32 * q], dT[q]);
  for (int a = 0; a < 4; ++a)
  {
    const double part = warpSum(dU[a]);
    if (lane == 0 && part != 0)
      atomicAdd(&sums[32 * kChunks + a], part);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < 32 * kChunks + 4; k += blockDim.x)
  {
    if (sums[k] == 0)
      continue;
    if (k < 32 * kChunks)
    {
      if (group + k < nt)
        atomicAdd(&acc[group + k], sums[k]);
    }
    else
      atomicAdd(&acc[k - 32 * kChunks < 3 ? nt + 3 * d + (k - 32 * kChunks) : nt + 3 * nd], sums[k]);
  }
  if (cuda::lastBlockToArrive(reinterpret_cast<unsigned*>(acc + nt + 3 * nd + 1), gridDim.x * gridDim.y * gridDim.z))
  {
    takeSums(acc, nt, gradThresholds);
    takeSums(acc + nt, 3 * nd, gradDirection);
    takeSums(acc + nt + 3 * nd, 1, gradAlpha);
  }
}

// Calls launch(std::integral_constant<int, chunks>) with the chunks of 32
// thresholds a lane takes for nt thresholds (up to kMaxChunks; more go to
// further threshold groups).
template <typename Launch>
void withChunks(int nt, Launch launch)
{
  if (nt <= 32)
    launch(std::integral_constant<int, 1>());
  else if (nt <= 64)
    launch(std::integral_constant<int, 2>());
  else
    launch(std::integral_constant<int, kMaxChunks>());
}

// Blocks along x: a tile each, up to 8 a multiprocessor (they then walk
// the tiles).
unsigned tileBlocks(const SoftVoxelParams& P)
{
  const int64_t tiles = P.dims[2] > 1 ? Tile<true>(P).count() : Tile<false>(P).count();
  return static_cast<unsigned>(std::min<int64_t>(tiles, 8 * int64_t(cuda::multiprocessorCount())));
}

// Calls launch(std::integral_constant<bool, volume>): volumes (more than one
// plane) and images of one plane walk different tiles.
template <typename Launch>
void withTiles(const SoftVoxelParams& P, Launch launch)
{
  if (P.dims[2] > 1)
    launch(std::integral_constant<bool, true>());
  else
    launch(std::integral_constant<bool, false>());
}

template <typename T>
void forwardTyped(const SoftEulerProblem& p, T* chi)
{
  const double zero[3] = { 0, 0, 0 };
  const SoftVoxelParams P = softParams(p, zero, 0.0);
  const int nt = p.thresholdCount, nd = p.directionCount;
  const int64_t curves = p.batch * nd * nt;
  const cudaStream_t stream = static_cast<cudaStream_t>(p.stream);
  {
    // The curves' sums and the arrivals counter, zero (lastBlockToArrive).
    double* acc = static_cast<double*>(
      cuda::zeroedStreamScratch(static_cast<size_t>(curves) * sizeof(double) + sizeof(unsigned), stream));
    // Directions along y (a small image still fills the GPU with many),
    // threshold groups along z.
    const dim3 grid(tileBlocks(P), static_cast<unsigned>(nd), static_cast<unsigned>((nt + kGroup - 1) / kGroup));
    withChunks(nt, [&](auto chunks) {
      withTiles(P, [&](auto volume) {
        forwardKernel<T, decltype(chunks)::value, decltype(volume)::value><<<grid, kThreads, 0, stream>>>(
          static_cast<const T*>(p.images), P, static_cast<const T*>(p.direction), static_cast<const T*>(p.alpha),
          static_cast<const T*>(p.thresholds), nt, p.batch, acc, chi);
      });
    });
    check(cudaGetLastError(), "soft Euler forward kernel");
  }
  if (!stream)
    check(cudaStreamSynchronize(0), "soft Euler forward");
}

template <typename T>
void backwardTyped(const SoftEulerProblem& p, const T* gradChi, T* gradImages, T* gradThresholds, T* gradDirection,
  T* gradAlpha)
{
  const double zero[3] = { 0, 0, 0 };
  const SoftVoxelParams P = softParams(p, zero, 0.0);
  const int nt = p.thresholdCount, nd = p.directionCount;
  const int64_t voxels = p.dims[0] * p.dims[1] * p.dims[2];
  const size_t slots = static_cast<size_t>(nt + 3 * nd + 1); // dL/dt, dL/du per direction, dL/dalpha
  const cudaStream_t stream = static_cast<cudaStream_t>(p.stream);
  {
    // The sums and the arrivals counter, zero (lastBlockToArrive).
    double* acc = static_cast<double*>(cuda::zeroedStreamScratch(slots * sizeof(double) + sizeof(unsigned), stream));
    if (gradImages && (nd > 1 || nt > kGroup)) // the directions and threshold groups add their parts
      check(cudaMemsetAsync(gradImages, 0, static_cast<size_t>(p.batch * voxels) * sizeof(T), stream), "cudaMemset");
    const int groups = (nt + kGroup - 1) / kGroup;
    const dim3 grid(tileBlocks(P), static_cast<unsigned>(nd), static_cast<unsigned>(groups));
    const bool accumulate = nd > 1 || groups > 1; // several blocks add to a voxel's gradient
    withChunks(nt, [&](auto chunks) {
      withTiles(P, [&](auto volume) {
        backwardKernel<T, decltype(chunks)::value, decltype(volume)::value><<<grid, kThreads, 0, stream>>>(
          static_cast<const T*>(p.images), P, static_cast<const T*>(p.direction), static_cast<const T*>(p.alpha),
          static_cast<const T*>(p.thresholds), nt, p.batch, gradChi, gradImages, accumulate, acc, gradThresholds,
          gradDirection, gradAlpha);
      });
    });
    check(cudaGetLastError(), "soft Euler backward kernel");
  }
  if (!stream)
    check(cudaStreamSynchronize(0), "soft Euler backward");
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
