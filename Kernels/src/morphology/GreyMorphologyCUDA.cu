// GreyMorphologyCUDA.cu - the grey operators on the GPU, four kernels:
//  * the 3 x 3 (x 3) box and the ball of radius 2, flat, over a type double
//    holds exactly (2D, 3D): registers and warp shuffles
//    (GreyRegisterKernel.cuh);
//  * other flat boxes over such a type (2D, 3D): separable minima marching
//    along z through shared memory (greyBoxKernel, below);
//  * any other element: a block computes a tile of outputs (x 32 by y 8 by
//    z 8 in 3D, 32 by 64 in 2D, 2048 in 1D) from the input tile around it
//    held in shared memory, read from global memory once per block with the
//    border mode applied as it is loaded, so that the per-voxel loop has no
//    bounds to check; the element's offsets are offsets in that tile;
//  * elements whose tile does not fit in shared memory: one thread per
//    voxel over global memory, running MorphologyVoxel.h's greyVoxel.
// The rule per voxel is greyVoxel's, term for term: a flat element over a
// type that double holds exactly compares in the type, keeping the first of
// equal values in raster order; otherwise the first term in double plus its
// value, the others in the type. A NaN under a flat box is left to scipy's
// separable passes on the CPU (the kernels report seeing one).
#include "topovox/MorphologyOnDevice.h"

#include "GreyRegisterKernel.cuh"
#include "MorphologyBackends.h"
#include "SeparableMinMax.h"

#include "../common/CudaUtil.cuh"
#include "../common/HostCopy.h"
#include "../common/ImageOnDevice.cuh"
#include "../common/ScalarDispatch.h"

#include <cmath>
#include <type_traits>

namespace topovox
{
namespace morphology
{
namespace
{
using cuda::check;
using cuda::PooledArray;
constexpr int kThreads = 256;
constexpr int kTileColumns = 32, kTileRows = kThreads / kTileColumns;
constexpr size_t kSharedBytes = 48 * 1024;      // without asking
constexpr size_t kMostSharedBytes = 100 * 1024; // asked for: still two blocks per SM

struct TileGrid
{
  int64_t dims[3], strides[3];
  int mode;
  int tile[3]; // outputs per block per axis
  int halo[3]; // input tile per axis: tile + element span
  int lo[3];   // the element's smallest offset per axis
  int count;   // elements
  // Each thread computes kColumn outputs, `step` apart in the tile and
  // `outStep` apart in the output (z in 3D, y in 2D, x in 1D).
  int step;
  int64_t outStep;
};

// Outputs per thread: a thread's outputs share each element offset it reads.
constexpr int kColumn = 8;

template <typename T>
constexpr bool exactInDouble()
{
  return sizeof(T) < 8 || static_cast<T>(0.5) != T(0);
}

// One sample of the input tile: the border mode applied (x per sample, y
// and z already resolved for the row: q1 or q2 < 0 is the constant).
template <typename T>
__device__ __forceinline__ T tileSample(const T* __restrict__ row, int64_t q1, int64_t q2, int64_t x, bool xInside,
  const int64_t dims[3], const int64_t strides[3], int mode, T cv)
{
  if (q1 < 0 || q2 < 0)
    return cv;
  if (xInside)
    return row[x];
  const int64_t q0 = extendIndex(x, dims[0], mode);
  return q0 < 0 ? cv : row[q0 * strides[0]];
}

// Rows of the tile a thread loads at once, and columns per row: their loads
// are all issued before the first is stored, so that several are in flight
// (one at a time left the kernels waiting on memory latency).
constexpr int kRowsInFlight = 4, kColumnsPerRow = 2;

// The input tile around the block's outputs, the border mode applied as it
// is read: per row for y and z, per sample for x only in blocks whose tile
// crosses the image's x border (the others read their rows straight).
// Returns whether this thread read a special value: one only scipy's
// separable passes get right under a box (a NaN or a -0,
// isNanOrNegativeZero); the caller looks at it only for boxes.
template <typename T>
__device__ bool loadTile(const T* __restrict__ data, const TileGrid& g, const int64_t base[3], T cv, T* tile)
{
  bool special = false;
  const int hx = g.halo[0], hy = g.halo[1];
  const int64_t x0 = base[0] + g.lo[0];
  const bool xInside = x0 >= 0 && x0 + hx <= g.dims[0] && g.strides[0] == 1;
  const int rows = hy * g.halo[2];
  if (hx <= kColumnsPerRow * kTileColumns)
  {
    for (int first = threadIdx.y; first < rows; first += kRowsInFlight * kTileRows)
    {
      T v[kRowsInFlight][kColumnsPerRow];
#pragma unroll
      for (int k = 0; k < kRowsInFlight; ++k)
      {
        const int r = first + k * kTileRows;
        if (r >= rows)
          break;
        const int lz = r / hy, ly = r - lz * hy;
        const int64_t q2 = extendIndex(base[2] + g.lo[2] + lz, g.dims[2], g.mode);
        const int64_t q1 = extendIndex(base[1] + g.lo[1] + ly, g.dims[1], g.mode);
        const T* row = data + q1 * g.strides[1] + q2 * g.strides[2] + (xInside ? x0 : 0);
#pragma unroll
        for (int c = 0; c < kColumnsPerRow; ++c)
        {
          const int lx = threadIdx.x + c * kTileColumns;
          if (lx < hx)
            v[k][c] = tileSample(row, q1, q2, xInside ? lx : x0 + lx, xInside, g.dims, g.strides, g.mode, cv);
        }
      }
#pragma unroll
      for (int k = 0; k < kRowsInFlight; ++k)
      {
        const int r = first + k * kTileRows;
        if (r >= rows)
          break;
#pragma unroll
        for (int c = 0; c < kColumnsPerRow; ++c)
        {
          const int lx = threadIdx.x + c * kTileColumns;
          if (lx < hx)
          {
            special = special || isNanOrNegativeZero(v[k][c]);
            tile[r * hx + lx] = v[k][c];
          }
        }
      }
    }
    return special;
  }
  for (int r = threadIdx.y; r < rows; r += kTileRows)
  {
    const int lz = r / hy, ly = r - lz * hy;
    const int64_t q2 = extendIndex(base[2] + g.lo[2] + lz, g.dims[2], g.mode);
    const int64_t q1 = extendIndex(base[1] + g.lo[1] + ly, g.dims[1], g.mode);
    const T* row = data + q1 * g.strides[1] + q2 * g.strides[2] + (xInside ? x0 : 0);
    for (int lx = threadIdx.x; lx < hx; lx += kTileColumns)
    {
      const T v = tileSample(row, q1, q2, xInside ? lx : x0 + lx, xInside, g.dims, g.strides, g.mode, cv);
      special = special || isNanOrNegativeZero(v);
      tile[r * hx + lx] = v;
    }
  }
  return special;
}

// Where this thread's first output lies: in the tile (returned) and in the
// image (`first`, x y z); its others follow g.step / g.outStep apart.
__device__ __forceinline__ int firstOutput(const TileGrid& g, const int64_t base[3], int64_t first[3])
{
  const int hx = g.halo[0];
  int ox = threadIdx.x, oy = threadIdx.y;
  if (g.tile[1] == 1) // 1D: the whole block along x
    ox += kTileColumns * threadIdx.y, oy = 0;
  first[0] = base[0] + ox;
  first[1] = base[1] + oy;
  first[2] = base[2];
  return ox + hx * oy;
}

// Whether output j of the thread's column lies in the image.
__device__ __forceinline__ bool inImage(const TileGrid& g, const int64_t first[3], int j)
{
  if (g.tile[2] > 1)
    return first[0] < g.dims[0] && first[1] < g.dims[1] && first[2] + j < g.dims[2];
  if (g.tile[1] > 1)
    return first[0] < g.dims[0] && first[1] + kTileRows * j < g.dims[1];
  return first[0] + kThreads * j < g.dims[0];
}

// Any element: a column of kColumn outputs per thread, each element offset
// read once for all of them. The rule per output is greyVoxel's (see the
// file's comment), term for term.
template <typename T, bool Minimum>
__global__ void __launch_bounds__(kThreads, 3) greyTileKernel(const T* __restrict__ data, TileGrid g,
  const int* __restrict__ offsets, const double* __restrict__ values, T cv, T* __restrict__ out, int* sawSpecial)
{
  extern __shared__ __align__(16) unsigned char shared[];
  int* tileOffsets = reinterpret_cast<int*>(shared);
  T* tile = reinterpret_cast<T*>(shared + ((g.count * sizeof(int) + 15) / 16) * 16);
  const int tid = threadIdx.x + kTileColumns * threadIdx.y;
  for (int k = tid; k < g.count; k += kThreads)
    tileOffsets[k] = offsets[k];
  const int64_t base[3] = { int64_t(blockIdx.x) * g.tile[0], int64_t(blockIdx.y) * g.tile[1],
    int64_t(blockIdx.z) * g.tile[2] };
  const bool special = loadTile(data, g, base, cv, tile);
  if (__syncthreads_or(special) && sawSpecial && tid == 0)
    *sawSpecial = 1;
  int64_t first[3];
  const T* at = tile + firstOutput(g, base, first);
  const int64_t o0 = first[0] + g.dims[0] * (first[1] + g.dims[1] * first[2]);
  if (exactInDouble<T>() && !values)
  {
    T best[kColumn];
#pragma unroll
    for (int j = 0; j < kColumn; ++j)
      best[j] = at[tileOffsets[0] + j * g.step];
    for (int k = 1; k < g.count; ++k)
    {
      const T* e = at + tileOffsets[k];
#pragma unroll
      for (int j = 0; j < kColumn; ++j)
      {
        const T t = e[j * g.step];
        if (Minimum ? (t < best[j]) : (t > best[j]))
          best[j] = t;
      }
    }
#pragma unroll
    for (int j = 0; j < kColumn; ++j)
      if (inImage(g, first, j))
        out[o0 + j * g.outStep] = best[j];
    return;
  }
  double best[kColumn];
#pragma unroll
  for (int j = 0; j < kColumn; ++j)
    best[j] = static_cast<double>(at[tileOffsets[0] + j * g.step]) + (values ? values[0] : 0.0);
  for (int k = 1; k < g.count; ++k)
  {
    const T* e = at + tileOffsets[k];
    const double v = values ? values[k] : 0.0;
#pragma unroll
    for (int j = 0; j < kColumn; ++j)
    {
      T t = e[j * g.step];
      if (values)
        t = static_cast<T>(static_cast<double>(t) + v);
      if (Minimum ? (static_cast<double>(t) < best[j]) : (static_cast<double>(t) > best[j]))
        best[j] = static_cast<double>(t);
    }
  }
#pragma unroll
  for (int j = 0; j < kColumn; ++j)
    if (inImage(g, first, j))
      out[o0 + j * g.outStep] = static_cast<T>(best[j]);
}

// Allows `bytes` of dynamic shared memory to `kernel` (above 48 KB only on
// request); false when the device has less.
template <typename Kernel>
bool allowShared(Kernel kernel, size_t bytes)
{
  if (bytes <= kSharedBytes)
    return true;
  int device = 0, most = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "cudaDeviceGetAttribute");
  if (bytes > static_cast<size_t>(most) || bytes > kMostSharedBytes)
    return false;
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)),
    "cudaFuncSetAttribute");
  return true;
}

// A flat box over a type double holds exactly, in 2D and 3D: separable
// minima, marching along z. A block owns a column of kBoxRows x kTileColumns
// outputs (y, x) over kBoxDepth planes; per input plane it loads the plane's
// tile (border mode applied as it loads), takes the minimum along x, then
// along y, into a ring of the last planes, and each thread ends an output
// from the ring entries of its own (x, y) (no barrier needed for the ring).
// Every input plane is read once per block and each pass costs one look per
// box length, where a tile of the whole neighbourhood would cost one per
// element and read the z halo again per block. With strict comparisons each
// pass keeps the first of equal values, so the survivor is the first in
// (z, y, x) order, raster order, as the direct rule; no NaN reaches here
// (the caller checks).
constexpr int kBoxRows = 16;   // output rows per block: two per thread
constexpr int kBoxDepth = 64;  // output planes per block

struct BoxGrid
{
  int64_t dims[3], strides[3];
  int mode;
  int lo[3];   // the box's smallest offset per axis
  int span[3]; // its length - 1 per axis
};

// One input plane's samples of this thread (rows threadIdx.y + 8 k,
// columns threadIdx.x + 32 c), loaded into registers while the block works
// on the plane before.
template <typename T>
struct PlaneSamples
{
  T v[kRowsInFlight][kColumnsPerRow];
};

// The rows (y) of every plane a thread loads are the same: their offsets,
// border mode applied, are found once per block (-1: outside, the
// constant), where finding them per plane was most of the kernel's
// integer work.
struct ThreadRows
{
  int64_t at[kRowsInFlight];
};

__device__ __forceinline__ ThreadRows threadRows(const BoxGrid& g, int64_t ys, int hy)
{
  ThreadRows r;
#pragma unroll
  for (int k = 0; k < kRowsInFlight; ++k)
  {
    const int ly = threadIdx.y + k * kTileRows;
    const int64_t q1 = ly < hy ? extendIndex(ys + ly, g.dims[1], g.mode) : -1;
    r.at[k] = q1 < 0 ? -1 : q1 * g.strides[1];
  }
  return r;
}

template <typename T>
__device__ __forceinline__ void fetchPlane(const T* __restrict__ data, const BoxGrid& g, int64_t q2,
  const ThreadRows& rows, int64_t xs, bool xInside, int hx, int hy, T cv, PlaneSamples<T>& p)
{
  const int64_t planeAt = q2 < 0 ? -1 : q2 * g.strides[2];
#pragma unroll
  for (int k = 0; k < kRowsInFlight; ++k)
  {
    const int ly = threadIdx.y + k * kTileRows;
    if (ly >= hy)
      break;
    const bool constant = planeAt < 0 || rows.at[k] < 0;
    const T* row = data + (constant ? 0 : rows.at[k] + planeAt) + (xInside ? xs : 0);
#pragma unroll
    for (int c = 0; c < kColumnsPerRow; ++c)
    {
      const int lx = threadIdx.x + c * kTileColumns;
      if (lx < hx)
        p.v[k][c] = tileSample(row, constant ? -1 : 0, 0, xInside ? lx : xs + lx, xInside, g.dims, g.strides,
          g.mode, cv);
    }
  }
}

// (The 3 x 3 x 3 box, which had its own unrolled instance here, takes the
// register kernel.)
template <typename T, bool Minimum>
__global__ void __launch_bounds__(kThreads, 4) greyBoxKernel(const T* __restrict__ data, BoxGrid g, T cv,
  T* __restrict__ out, int* sawSpecial)
{
  extern __shared__ __align__(16) unsigned char shared[];
  const int sx = g.span[0], sy = g.span[1], sz = g.span[2];
  const int hx = kTileColumns + sx, hy = kBoxRows + sy, length = sz + 1;
  T* plane = reinterpret_cast<T*>(shared);          // hy x hx
  T* alongX = plane + hx * hy;                      // hy x kTileColumns
  T* ring = alongX + kTileColumns * hy;             // length x kBoxRows x kTileColumns
  const int64_t x0 = int64_t(blockIdx.x) * kTileColumns, y0 = int64_t(blockIdx.y) * kBoxRows;
  const int64_t z0 = int64_t(blockIdx.z) * kBoxDepth;
  const int64_t planes = min(int64_t(kBoxDepth), g.dims[2] - z0) + sz;
  const int64_t xs = x0 + g.lo[0], ys = y0 + g.lo[1], zs = z0 + g.lo[2];
  const bool xInside = xs >= 0 && xs + hx <= g.dims[0] && g.strides[0] == 1;
  const int x = threadIdx.x;
  auto better = [](T t, T best) { return Minimum ? (t < best) : (t > best); };
  bool special = false;
  int slot = 0; // the ring entry the next plane fills
  const ThreadRows rows = threadRows(g, ys, hy);
  PlaneSamples<T> next;
  fetchPlane(data, g, extendIndex(zs, g.dims[2], g.mode), rows, xs, xInside, hx, hy, cv, next);
  for (int64_t i = 0; i < planes; ++i)
  {
#pragma unroll
    for (int k = 0; k < kRowsInFlight; ++k)
    {
      const int ly = threadIdx.y + k * kTileRows;
      if (ly >= hy)
        break;
#pragma unroll
      for (int c = 0; c < kColumnsPerRow; ++c)
        if (x + c * kTileColumns < hx)
        {
          special = special || isNanOrNegativeZero(next.v[k][c]);
          plane[ly * hx + x + c * kTileColumns] = next.v[k][c];
        }
    }
    __syncthreads();
    if (i + 1 < planes)
      fetchPlane(data, g, extendIndex(zs + i + 1, g.dims[2], g.mode), rows, xs, xInside, hx, hy, cv, next);
    for (int ly = threadIdx.y; ly < hy; ly += kTileRows)
    {
      const T* in = plane + ly * hx + x;
      T best = in[0];
#pragma unroll
      for (int d = 1; d <= sx; ++d)
        if (better(in[d], best))
          best = in[d];
      alongX[ly * kTileColumns + x] = best;
    }
    __syncthreads();
    for (int y = threadIdx.y; y < kBoxRows; y += kTileRows)
    {
      const T* in = alongX + y * kTileColumns + x;
      T best = in[0];
#pragma unroll
      for (int d = 1; d <= sy; ++d)
        if (better(in[d * kTileColumns], best))
          best = in[d * kTileColumns];
      ring[(slot * kBoxRows + y) * kTileColumns + x] = best;
    }
    slot = slot + 1 == length ? 0 : slot + 1;
    if (i < sz)
      continue;
    // Planes i - span .. i are in the ring, the oldest at `slot`.
    const int64_t z = z0 + i - sz;
    for (int y = threadIdx.y; y < kBoxRows; y += kTileRows)
    {
      int k = slot;
      T best = ring[(k * kBoxRows + y) * kTileColumns + x];
#pragma unroll
      for (int d = 1; d < length; ++d)
      {
        k = k + 1 == length ? 0 : k + 1;
        const T t = ring[(k * kBoxRows + y) * kTileColumns + x];
        if (better(t, best))
          best = t;
      }
      if (x0 + x < g.dims[0] && y0 + y < g.dims[1])
        out[x0 + x + g.dims[0] * (y0 + y + g.dims[1] * z)] = best;
    }
  }
  if (__syncthreads_or(special) && sawSpecial && threadIdx.x == 0 && threadIdx.y == 0)
    *sawSpecial = 1;
}

// Launches the box kernel for a 2D or 3D image; false when its shared
// memory does not fit or the grid is too tall.
template <typename T>
bool launchBox(const GridView& image, const ElementOffsets& e, bool minimum, const GreyOptions& o, T* out,
  int* sawSpecial)
{
  BoxGrid g{};
  for (int a = 0; a < 3; ++a)
  {
    g.dims[a] = image.dims[a];
    g.strides[a] = image.strides[a];
    g.lo[a] = static_cast<int>(e.reach[a][0]);
    g.span[a] = static_cast<int>(e.reach[a][1] - e.reach[a][0]);
  }
  g.mode = static_cast<int>(o.mode);
  const dim3 blocks(static_cast<unsigned>((image.dims[0] + kTileColumns - 1) / kTileColumns),
    static_cast<unsigned>((image.dims[1] + kBoxRows - 1) / kBoxRows),
    static_cast<unsigned>((image.dims[2] + kBoxDepth - 1) / kBoxDepth));
  const size_t hx = kTileColumns + g.span[0], hy = kBoxRows + g.span[1];
  // 2D and 3D, and a plane this thread block's registers hold (boxes up to
  // 33 x 17 in x and y; larger ones take the tile kernel).
  if (image.dims[1] == 1 || blocks.y > 65535 || blocks.z > 65535 || hx > kColumnsPerRow * kTileColumns ||
    hy > kRowsInFlight * kTileRows)
    return false;
  const size_t bytes = sizeof(T) * (hx * hy + kTileColumns * hy + size_t(g.span[2] + 1) * kBoxRows * kTileColumns);
  auto kernel = minimum ? greyBoxKernel<T, true> : greyBoxKernel<T, false>;
  if (!allowShared(kernel, bytes))
    return false;
  kernel<<<blocks, dim3(kTileColumns, kTileRows), bytes>>>(static_cast<const T*>(image.data), g,
    static_cast<T>(o.cval), out, sawSpecial);
  check(cudaGetLastError(), "grey morphology kernel");
  return true;
}

// The fallback: one thread per voxel over global memory.
template <typename T>
__global__ void greyKernel(const T* __restrict__ data, GreyGrid g, ElementView e, bool minimum, T cv, T* out)
{
  const int64_t n = g.dims[0] * g.dims[1] * g.dims[2];
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < n; v += int64_t(gridDim.x) * blockDim.x)
    out[v] = greyVoxel(
      data, g, e, minimum, cv, v % g.dims[0], (v / g.dims[0]) % g.dims[1], v / (g.dims[0] * g.dims[1]));
}

template <typename T>
void upload(PooledArray<T>& to, const std::vector<T>& from)
{
  if (!from.empty())
    check(cudaMemcpy(to.ptr, from.data(), from.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
}

// The tile of outputs a block of 32 x 8 threads computes: kColumn per
// thread, along z in 3D, y in 2D, x in 1D.
void chooseTile(const int64_t dims[3], TileGrid& g)
{
  if (dims[2] > 1)
    g.tile[0] = kTileColumns, g.tile[1] = kTileRows, g.tile[2] = kColumn;
  else if (dims[1] > 1)
    g.tile[0] = kTileColumns, g.tile[1] = kTileRows * kColumn, g.tile[2] = 1;
  else
    g.tile[0] = kThreads * kColumn, g.tile[1] = 1, g.tile[2] = 1;
}


// The tiled kernels (the register kernel or the box's separable one where
// they apply). Returns false, having launched nothing, when the tile does
// not fit; sets *special when `watchSpecial` (a floating-point image under
// a box) and the image holds a special value (a NaN or a -0: the output is
// then to be discarded by the caller, for scipy's passes).
template <typename T>
bool launchTiled(const GridView& image, const ElementOffsets& e, bool box, bool minimum, const GreyOptions& o,
  T* out, bool watchSpecial, bool* special)
{
  TileGrid g{};
  chooseTile(image.dims, g);
  for (int a = 0; a < 3; ++a)
  {
    g.dims[a] = image.dims[a];
    g.strides[a] = image.strides[a];
    g.lo[a] = static_cast<int>(e.reach[a][0]);
    g.halo[a] = g.tile[a] + static_cast<int>(e.reach[a][1] - e.reach[a][0]);
  }
  g.mode = static_cast<int>(o.mode);
  g.count = static_cast<int>(e.delta.size());
  if (image.dims[2] > 1)
    g.step = g.halo[0] * g.halo[1], g.outStep = image.dims[0] * image.dims[1];
  else if (image.dims[1] > 1)
    g.step = kTileRows * g.halo[0], g.outStep = kTileRows * image.dims[0];
  else
    g.step = kThreads, g.outStep = kThreads;
  const dim3 blocks(static_cast<unsigned>((image.dims[0] + g.tile[0] - 1) / g.tile[0]),
    static_cast<unsigned>((image.dims[1] + g.tile[1] - 1) / g.tile[1]),
    static_cast<unsigned>((image.dims[2] + g.tile[2] - 1) / g.tile[2]));
  if (blocks.y > 65535 || blocks.z > 65535)
    return false;
  const size_t tileBytes = sizeof(T) * size_t(g.halo[0]) * g.halo[1] * g.halo[2];
  const T* data = static_cast<const T*>(image.data);
  const T cv = static_cast<T>(o.cval);
  const dim3 threads(kTileColumns, kTileRows);
  PooledArray<int> flag(1, true);
  int* sawSpecial = watchSpecial ? flag.ptr : nullptr;
  auto raised = [&] {
    int any = 0;
    check(cudaMemcpy(&any, flag.ptr, sizeof(int), cudaMemcpyDeviceToHost), "grey morphology kernel");
    return any != 0;
  };
  if constexpr (exactInDouble<T>())
  {
    // The register kernel always reports a special value (a NaN or a -0):
    // under a box for the caller, as the others; under the ball the tile
    // kernel below, the direct rule, filters the image again.
    if (registers::launch<T>(image, e, minimum, static_cast<int>(o.mode), cv, out, flag.ptr))
    {
      if (!raised())
        return true;
      if (watchSpecial)
        return *special = true;
      check(cudaMemset(flag.ptr, 0, sizeof(int)), "grey morphology kernel");
    }
    else if (box && e.flat && launchBox<T>(image, e, minimum, o, out, sawSpecial))
    {
      *special = watchSpecial && raised();
      return true;
    }
  }
  const size_t offsetBytes = ((g.count * sizeof(int) + 15) / 16) * 16;
  const size_t bytes = offsetBytes + tileBytes;
  auto kernel = minimum ? greyTileKernel<T, true> : greyTileKernel<T, false>;
  if (!allowShared(kernel, bytes))
    return false;
  std::vector<int> offsets;
  for (const auto& d : e.delta)
    offsets.push_back(static_cast<int>(
      (d[0] - g.lo[0]) + g.halo[0] * ((d[1] - g.lo[1]) + int64_t(g.halo[1]) * (d[2] - g.lo[2]))));
  PooledArray<int> dOffsets(offsets.size());
  PooledArray<double> dValues(e.values.size());
  upload(dOffsets, offsets);
  upload(dValues, e.values);
  kernel<<<blocks, threads, bytes>>>(data, g, dOffsets.ptr, e.flat ? nullptr : dValues.ptr, cv, out, sawSpecial);
  check(cudaGetLastError(), "grey morphology kernel");
  *special = watchSpecial && raised();
  return true;
}

template <typename T>
void launchPerVoxel(const GridView& image, const ElementOffsets& e, bool minimum, const GreyOptions& o, T* out)
{
  const FlatElement host(e, image.strides);
  PooledArray<int64_t> delta(host.delta.size()), direct(host.direct.size());
  PooledArray<double> values(host.values.size());
  upload(delta, host.delta);
  upload(direct, host.direct);
  upload(values, host.values);
  ElementView view = host.view;
  view.delta = delta.ptr;
  view.direct = direct.ptr;
  view.values = e.flat ? nullptr : values.ptr;
  GreyGrid g;
  for (int a = 0; a < 3; ++a)
  {
    g.dims[a] = image.dims[a];
    g.strides[a] = image.strides[a];
  }
  g.mode = static_cast<int>(o.mode);
  const int64_t n = image.voxelCount();
  greyKernel<T><<<cuda::blocksFor(n, kThreads, 1 << 20), kThreads>>>(
    static_cast<const T*>(image.data), g, view, minimum, static_cast<T>(o.cval), out);
  check(cudaGetLastError(), "grey morphology kernel");
  check(cudaDeviceSynchronize(), "grey morphology kernel");
}

// Rows on (blockIdx.y, blockIdx.z) strides, x along the threads.
template <typename T>
__global__ void specialKernel(const T* __restrict__ data, int64_t nx, int64_t ny, int64_t nz, int64_t sx, int64_t sy,
  int64_t sz, int* found)
{
  bool any = false;
  for (int64_t z = blockIdx.z; z < nz; z += gridDim.z)
    for (int64_t y = blockIdx.y; y < ny; y += gridDim.y)
      for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < nx; x += int64_t(gridDim.x) * blockDim.x)
      {
        const T t = data[x * sx + y * sy + z * sz];
        any = any || isNanOrNegativeZero(t);
      }
  if (any)
    *found = 1;
}

// A contiguous copy (x fastest) of a device view, in device memory.
template <typename T>
__global__ void gatherKernel(const T* __restrict__ data, int64_t nx, int64_t ny, int64_t nz, int64_t sx,
  int64_t sy, int64_t sz, T* __restrict__ out)
{
  const int64_t n = nx * ny * nz;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < n; v += int64_t(gridDim.x) * blockDim.x)
    out[v] = data[(v % nx) * sx + ((v / nx) % ny) * sy + (v / (nx * ny)) * sz];
}


unsigned gridFor(int64_t n)
{
  return cuda::blocksFor(n, kThreads, 1 << 20);
}

// Whether a floating-point image in GPU memory holds a NaN or a -0
// (isNanOrNegativeZero).
bool needsSeparableOnDevice(const GridView& image)
{
  if (!scalarTypeIsFloating(image.type))
    return false;
  PooledArray<int> found(1, true);
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    specialKernel<T><<<cuda::rowGrid(image.dims[0], image.dims[1], image.dims[2], kThreads), kThreads>>>(
      static_cast<const T*>(image.data), image.dims[0], image.dims[1], image.dims[2], image.strides[0],
      image.strides[1], image.strides[2], found.ptr);
  });
  check(cudaGetLastError(), "special-value scan");
  int any = 0;
  check(cudaMemcpy(&any, found.ptr, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  return any != 0;
}
} // namespace

bool greyGPU(const GridView& image, const StructuringElement& prepared, const ElementOffsets& e, bool minimum,
  const GreyOptions& o, void* out, MemorySpace outMemory)
{
  const bool box = isSeparableBox(prepared);
  // A NaN or a -0 under a flat box is the CPU's to filter (scipy's passes,
  // isNanOrNegativeZero): the tiled kernels watch for one as they load (no
  // pass of its own), the per-voxel one does not; a -0 border is known now.
  const bool watchSpecial = box && scalarTypeIsFloating(image.type);
  if (watchSpecial && negativeZeroBorder(o))
    return false;
  const cuda::ImageOnDevice input(image);
  const size_t bytes = static_cast<size_t>(image.voxelCount()) * scalarTypeSize(image.type);
  PooledArray<unsigned char> staged(outMemory == MemorySpace::Host ? bytes : 0);
  void* result = outMemory == MemorySpace::Host ? static_cast<void*>(staged.ptr) : out;
  bool special = false;
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* typed = static_cast<T*>(result);
    if (launchTiled<T>(input.view, e, box, minimum, o, typed, watchSpecial, &special))
      return;
    if (watchSpecial && needsSeparableOnDevice(input.view))
      special = true;
    else
      launchPerVoxel<T>(input.view, e, minimum, o, typed);
  });
  if (special)
    return false;
  if (outMemory == MemorySpace::Host)
    cuda::copyToHost(out, staged.ptr, bytes, defaultThreadCount());
  return true;
}
} // namespace morphology

namespace
{
using cuda::check;
using cuda::PooledArray;

// scipy's separable passes for a floating-point image with NaN or -0 under
// a flat box (SeparableMinMax.h), which run on the CPU: the image there and back.
void separableOnHost(const GridView& image, const StructuringElement& e, bool minimum, const GreyOptions& o, void* out)
{
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point<T>::value)
    {
      const int64_t n = image.voxelCount();
      PooledArray<T> packed(static_cast<size_t>(n));
      morphology::gatherKernel<T><<<morphology::gridFor(n), morphology::kThreads>>>(static_cast<const T*>(image.data),
        image.dims[0], image.dims[1], image.dims[2], image.strides[0], image.strides[1], image.strides[2], packed.ptr);
      check(cudaGetLastError(), "gather");
      std::vector<T> values(static_cast<size_t>(n));
      check(cudaMemcpy(values.data(), packed.ptr, values.size() * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
      morphology::separableMinOrMax(values, image.dims, e, minimum, o);
      check(cudaMemcpy(out, values.data(), values.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    }
  });
}

void greyOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, bool minimum, void* out)
{
  morphology::checkImage(image, MemorySpace::Device);
  if (!out)
    throw std::invalid_argument("no output buffer");
  const StructuringElement e = morphology::greyElement(s, minimum);
  const morphology::ElementOffsets offsets = morphology::greyOffsets(e);
  if (!morphology::greyGPU(image, e, offsets, minimum, o, out, MemorySpace::Device))
    separableOnHost(image, e, minimum, o, out);
}

// Opening (erosion, then dilation) or closing (the other way round), the
// intermediate image on the device.
void sequenceOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, bool erodeFirst,
  void* out)
{
  morphology::checkImage(image, MemorySpace::Device);
  PooledArray<unsigned char> middle(static_cast<size_t>(image.voxelCount()) * scalarTypeSize(image.type));
  greyOnDevice(image, s, o, erodeFirst, middle.ptr);
  const GridView between =
    GridView::contiguous(middle.ptr, image.type, image.dims[0], image.dims[1], image.dims[2], MemorySpace::Device);
  greyOnDevice(between, s, o, !erodeFirst, out);
}
} // namespace

void greyErosionOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, void* out)
{
  greyOnDevice(image, s, o, true, out);
}

void greyDilationOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, void* out)
{
  greyOnDevice(image, s, o, false, out);
}

void greyOpeningOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, void* out)
{
  sequenceOnDevice(image, s, o, true, out);
}

void greyClosingOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, void* out)
{
  sequenceOnDevice(image, s, o, false, out);
}
} // namespace topovox
