// DistanceTransformCUDA.cu - the exact Euclidean distance transform on the
// GPU: one thread per line of voxels runs EdtLine.h, the CPU threads' own
// line code, axis after axis between two device buffers (the envelope reads
// positions a line's output has already overwritten on the CPU, which copies
// the line first; here the other buffer is the copy). The lines' scratch is
// interleaved so that neighbouring threads touch neighbouring words. The
// first axis only looks for the nearest background voxel (EdtLine.h): along
// x, where one thread per line would read memory far apart, one thread block
// per line does it with two block-wide scans.
#include "topovox/DistanceTransformOnDevice.h"

#include "DistanceBackends.h"
#include "EdtLine.h"

#include "../common/CudaUtil.cuh"
#include "../common/ScalarDispatch.h"

#include <cub/block/block_scan.cuh>

#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace topovox
{
namespace distance
{
namespace
{
using cuda::check;
using cuda::PooledArray;
constexpr int kThreads = 128;

struct Features
{
  int32_t* axis[3];
};

unsigned blocksFor(int64_t n)
{
  return cuda::blocksFor(n, kThreads, int64_t(1) << 30);
}

__global__ void startKernel(const uint8_t* __restrict__ fg, int64_t nx, int64_t ny, int64_t n, double* g, Features f)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    g[k] = fg[k] ? INFINITY : 0.0;
    f.axis[0][k] = static_cast<int32_t>(k % nx);
    f.axis[1][k] = static_cast<int32_t>((k / nx) % ny);
    f.axis[2][k] = static_cast<int32_t>(k / (nx * ny));
  }
}

struct DeviceIn
{
  const double* values;
  int64_t first, step;
  __device__ double g(int64_t q) const { return values[first + q * step]; }
};

struct DeviceOut
{
  double* g;
  Features to;
  Features from;
  int64_t first, step;
  __device__ void take(int64_t p, int64_t q, double gp)
  {
    const int64_t at = first + p * step, src = first + q * step;
    g[at] = gp;
    for (int b = 0; b < 3; ++b)
      to.axis[b][at] = from.axis[b][src];
  }
};

struct MaxOf
{
  __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};
struct MinOf
{
  __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};

// The first axis along x: line `line` (y + ny z) in tiles of kScanThreads,
// left to right for the nearest background at or before each voxel (kept in
// the x features meanwhile), then right to left for the one at or after.
constexpr int kScanThreads = 256;
__global__ void firstAxisXKernel(const uint8_t* __restrict__ fg, int64_t nx, int64_t ny, int64_t lines, double s2,
  double* g, Features f)
{
  using Scan = cub::BlockScan<int, kScanThreads>;
  __shared__ typename Scan::TempStorage scratch;
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x)
  {
    const int64_t base = line * nx;
    const int32_t y = static_cast<int32_t>(line % ny), z = static_cast<int32_t>(line / ny);
    int carry = -1;
    for (int64_t t0 = 0; t0 < nx; t0 += kScanThreads)
    {
      const int64_t p = t0 + threadIdx.x;
      int key = p < nx && !fg[base + p] ? static_cast<int>(p) : -1, tile;
      Scan(scratch).InclusiveScan(key, key, MaxOf(), tile);
      if (p < nx)
        f.axis[0][base + p] = key > carry ? key : carry;
      carry = tile > carry ? tile : carry;
      __syncthreads(); // the scan's storage is reused
    }
    carry = INT_MAX;
    for (int64_t t1 = nx; t1 > 0; t1 -= kScanThreads)
    {
      const int64_t p = t1 - 1 - threadIdx.x;
      int key = p >= 0 && !fg[base + p] ? static_cast<int>(p) : INT_MAX, tile;
      Scan(scratch).InclusiveScan(key, key, MinOf(), tile);
      if (p >= 0)
      {
        const int right = key < carry ? key : carry;
        const int64_t q = nearestOf(p, f.axis[0][base + p], right == INT_MAX ? -1 : right);
        g[base + p] = q < 0 ? INFINITY : firstAxisG(s2, p, q);
        f.axis[0][base + p] = static_cast<int32_t>(q < 0 ? p : q);
        f.axis[1][base + p] = y;
        f.axis[2][base + p] = z;
      }
      carry = tile < carry ? tile : carry;
      __syncthreads();
    }
  }
}

// The first axis along y or z: one thread per line (neighbouring threads,
// neighbouring x).
__global__ void firstAxisKernel(const uint8_t* __restrict__ fg, Features fIn, double* gOut, Features fOut, int32_t* v,
  int64_t nx, int64_t ny, int64_t nz, int a, double s2)
{
  const int64_t dims[3] = { nx, ny, nz };
  const int64_t stride[3] = { 1, nx, nx * ny };
  const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
  const int64_t lines = dims[b] * dims[c];
  for (int64_t l = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; l < lines; l += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t first = (l % dims[b]) * stride[b] + (l / dims[b]) * stride[c];
    DeviceOut out{ gOut, fOut, fIn, first, stride[a] };
    const auto background = [&](int64_t q) { return !fg[first + q * stride[a]]; };
    firstAxisLine(dims[a], s2, background, out, Strided<int32_t>{ v + l, lines });
  }
}

// Lines along axis a (dims and strides x first); line l starts at the voxel
// whose other two coordinates are (l % n[b], l / n[b]).
__global__ void lineKernel(const double* __restrict__ gIn, Features fIn, double* gOut, Features fOut, int32_t* v,
  double* z, int64_t nx, int64_t ny, int64_t nz, int a, double s2)
{
  const int64_t dims[3] = { nx, ny, nz };
  const int64_t stride[3] = { 1, nx, nx * ny };
  const int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
  const int64_t lines = dims[b] * dims[c];
  for (int64_t l = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; l < lines; l += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t first = (l % dims[b]) * stride[b] + (l / dims[b]) * stride[c];
    const DeviceIn in{ gIn, first, stride[a] };
    DeviceOut out{ gOut, fOut, fIn, first, stride[a] };
    if (!edtLine(dims[a], s2, in, out, Strided<int32_t>{ v + l, lines }, Strided<double>{ z + l, lines }))
      for (int64_t p = 0; p < dims[a]; ++p)
        out.take(p, p, in.g(p)); // nothing reached yet: carried over
  }
}

__global__ void distanceKernel(Features f, int64_t nx, int64_t ny, int64_t n, double sx, double sy, double sz, double* d)
{
  const double sampling[3] = { sx, sy, sz };
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t c[3] = { k % nx, (k / nx) % ny, k / (nx * ny) };
    const int32_t near[3] = { f.axis[0][k], f.axis[1][k], f.axis[2][k] };
    d[k] = edtDistance(near, c, sampling);
  }
}
} // namespace

// The transform of a foreground already on the device (at least one
// background voxel) into device buffers: `distances` (n doubles) and, when
// not null, `indices` (the nearest background voxel: n x, then n y, then n z).
void edtOnDevice(const uint8_t* foreground, const int64_t dims[3], const double sampling[3], double* distances,
  int32_t* indices)
{
  const int64_t n = dims[0] * dims[1] * dims[2];
  const size_t count = static_cast<size_t>(n);
  PooledArray<double> g0(count), g1(count);
  PooledArray<int32_t> f0(3 * count), f1(3 * count), v(count);
  PooledArray<double> z(count);
  Features in{ { f0.ptr, f0.ptr + count, f0.ptr + 2 * count } };
  Features to{ { f1.ptr, f1.ptr + count, f1.ptr + 2 * count } };
  double *gIn = g0.ptr, *gTo = g1.ptr;
  int a = 0;
  if (dims[0] > 1)
  {
    // Every voxel written: no start values needed.
    const int64_t lines = dims[1] * dims[2];
    firstAxisXKernel<<<static_cast<int>(lines < (1 << 30) ? lines : (1 << 30)), kScanThreads>>>(
      foreground, dims[0], dims[1], lines, sampling[0] * sampling[0], gIn, in);
    check(cudaGetLastError(), "distance transform first axis");
    a = 1;
  }
  else
  {
    startKernel<<<blocksFor(n), kThreads>>>(foreground, dims[0], dims[1], n, gIn, in);
    check(cudaGetLastError(), "distance transform start");
    while (a < 2 && dims[a] == 1)
      ++a;
    if (dims[a] > 1)
    {
      firstAxisKernel<<<blocksFor(n / dims[a]), kThreads>>>(
        foreground, in, gTo, to, v.ptr, dims[0], dims[1], dims[2], a, sampling[a] * sampling[a]);
      check(cudaGetLastError(), "distance transform first axis");
      std::swap(gIn, gTo);
      std::swap(in, to);
    }
    ++a;
  }
  for (; a < 3; ++a)
  {
    if (dims[a] == 1)
      continue;
    lineKernel<<<blocksFor(n / dims[a]), kThreads>>>(
      gIn, in, gTo, to, v.ptr, z.ptr, dims[0], dims[1], dims[2], a, sampling[a] * sampling[a]);
    check(cudaGetLastError(), "distance transform lines");
    std::swap(gIn, gTo);
    std::swap(in, to);
  }
  distanceKernel<<<blocksFor(n), kThreads>>>(in, dims[0], dims[1], n, sampling[0], sampling[1], sampling[2], distances);
  check(cudaGetLastError(), "distance transform distances");
  if (indices)
    for (int b = 0; b < 3; ++b)
      check(cudaMemcpy(indices + b * count, in.axis[b], count * sizeof(int32_t), cudaMemcpyDeviceToDevice),
        "cudaMemcpy");
}

void edtGPU(const uint8_t* fg, const int64_t dims[3], const double sampling[3], bool withIndices, DistanceTransform& out)
{
  const size_t count = static_cast<size_t>(dims[0] * dims[1] * dims[2]);
  PooledArray<uint8_t> foreground(count);
  PooledArray<double> distances(count);
  PooledArray<int32_t> indices(withIndices ? 3 * count : 0);
  check(cudaMemcpy(foreground.ptr, fg, count, cudaMemcpyHostToDevice), "cudaMemcpy");
  edtOnDevice(foreground.ptr, dims, sampling, distances.ptr, withIndices ? indices.ptr : nullptr);
  out.distances.resize(count);
  check(cudaMemcpy(out.distances.data(), distances.ptr, count * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (withIndices)
    for (int a = 0; a < 3; ++a)
    {
      out.indices[a].resize(count);
      check(cudaMemcpy(out.indices[a].data(), indices.ptr + a * count, count * sizeof(int32_t),
        cudaMemcpyDeviceToHost), "cudaMemcpy");
    }
}
} // namespace distance

namespace
{
using cuda::check;
using cuda::PooledArray;

// Nonzero voxels (NaN included) as 1 bytes, x fastest; *background set when
// a voxel is zero.
template <typename T>
__global__ void foregroundKernel(const T* __restrict__ data, int64_t nx, int64_t ny, int64_t nz, int64_t sx,
  int64_t sy, int64_t sz, uint8_t* __restrict__ fg, int* background)
{
  bool any = false;
  for (int64_t zz = blockIdx.z; zz < nz; zz += gridDim.z)
    for (int64_t y = blockIdx.y; y < ny; y += gridDim.y)
      for (int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; x < nx; x += int64_t(gridDim.x) * blockDim.x)
      {
        const bool on = data[x * sx + y * sy + zz * sz] != T(0);
        fg[x + nx * (y + ny * zz)] = on ? 1 : 0;
        any = any || !on;
      }
  if (any)
    *background = 1;
}

// scipy's answer without background: the nearest "background" voxel is index
// -1 on numpy's first axis and 0 on the others (DistanceTransform.h).
__global__ void noBackgroundKernel(int64_t nx, int64_t ny, int64_t nz, int first, double sx, double sy, double sz,
  double* distances, int32_t* indices)
{
  const double sampling[3] = { sx, sy, sz };
  const int64_t n = nx * ny * nz;
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < n; k += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t c[3] = { k % nx, (k / nx) % ny, k / (nx * ny) };
    int32_t f[3];
    for (int a = 0; a < 3; ++a)
    {
      f[a] = a == first ? -1 : 0;
      if (indices)
        indices[a * n + k] = f[a];
    }
    distances[k] = distance::edtDistance(f, c, sampling);
  }
}
} // namespace

void distanceTransformEdtOnDevice(const GridView& image, const double sampling[3], double* distances, int32_t* indices)
{
  const std::string why = validateGrid(image);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (image.memory != MemorySpace::Device)
    throw std::invalid_argument("the device distance API needs the image in GPU memory (DistanceTransform.h takes "
                                "host memory)");
  if (!distances)
    throw std::invalid_argument("no output buffer for the distances");
  for (int a = 0; a < 3; ++a)
    if (!(sampling[a] > 0) || !std::isfinite(sampling[a]))
      throw std::invalid_argument("the sampling must be positive and finite");
  const int64_t* dims = image.dims;
  const int64_t n = image.voxelCount();
  PooledArray<uint8_t> foreground(static_cast<size_t>(n));
  PooledArray<int> background(1, true);
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    foregroundKernel<T><<<cuda::rowGrid(dims[0], dims[1], dims[2], distance::kThreads), distance::kThreads>>>(
      static_cast<const T*>(image.data), dims[0], dims[1], dims[2], image.strides[0], image.strides[1],
      image.strides[2], foreground.ptr, background.ptr);
  });
  check(cudaGetLastError(), "distance transform foreground");
  int any = 0;
  check(cudaMemcpy(&any, background.ptr, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (any)
    distance::edtOnDevice(foreground.ptr, dims, sampling, distances, indices);
  else
  {
    int first = 0;
    for (int a = 2; a > 0 && first == 0; --a)
      if (dims[a] > 1)
        first = a;
    noBackgroundKernel<<<cuda::blocksFor(n, distance::kThreads, 1 << 20), distance::kThreads>>>(
      dims[0], dims[1], dims[2], first, sampling[0], sampling[1], sampling[2], distances, indices);
    check(cudaGetLastError(), "distance transform without background");
  }
  check(cudaDeviceSynchronize(), "distance transform");
}
}
