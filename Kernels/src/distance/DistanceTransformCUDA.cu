// DistanceTransformCUDA.cu - the exact Euclidean distance transform on the
// GPU: one thread per line of voxels runs EdtLine.h, the CPU threads' own
// line code, axis after axis between two device buffers (the envelope reads
// positions a line's output has already overwritten on the CPU, which copies
// the line first; here the other buffer is the copy). The lines' scratch is
// interleaved so that neighbouring threads touch neighbouring words.
#include "DistanceBackends.h"
#include "EdtLine.h"

#include "../common/CudaUtil.cuh"

#include <utility>

namespace topovox
{
namespace distance
{
namespace
{
using cuda::check;
using cuda::DeviceArray;
constexpr int kThreads = 128;

struct Features
{
  int32_t* axis[3];
};

int blocksFor(int64_t n)
{
  const int64_t wanted = (n + kThreads - 1) / kThreads;
  return static_cast<int>(wanted < 1 ? 1 : (wanted > (1 << 30) ? (1 << 30) : wanted));
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

void edtGPU(const uint8_t* fg, const int64_t dims[3], const double sampling[3], bool withIndices, DistanceTransform& out)
{
  const int64_t n = dims[0] * dims[1] * dims[2];
  const size_t count = static_cast<size_t>(n);
  DeviceArray<uint8_t> foreground(count);
  DeviceArray<double> g0(count), g1(count);
  DeviceArray<int32_t> f0(3 * count), f1(3 * count), v(count);
  DeviceArray<double> z(count);
  check(cudaMemcpy(foreground.ptr, fg, count, cudaMemcpyHostToDevice), "cudaMemcpy");
  Features in{ { f0.ptr, f0.ptr + count, f0.ptr + 2 * count } };
  Features to{ { f1.ptr, f1.ptr + count, f1.ptr + 2 * count } };
  double *gIn = g0.ptr, *gTo = g1.ptr;
  startKernel<<<blocksFor(n), kThreads>>>(foreground.ptr, dims[0], dims[1], n, gIn, in);
  check(cudaGetLastError(), "distance transform start");
  for (int a = 0; a < 3; ++a)
  {
    if (dims[a] == 1)
      continue;
    lineKernel<<<blocksFor(n / dims[a]), kThreads>>>(
      gIn, in, gTo, to, v.ptr, z.ptr, dims[0], dims[1], dims[2], a, sampling[a] * sampling[a]);
    check(cudaGetLastError(), "distance transform lines");
    std::swap(gIn, gTo);
    std::swap(in, to);
  }
  // The squared distances are no longer needed: their buffer takes the result.
  double* distances = gTo;
  distanceKernel<<<blocksFor(n), kThreads>>>(in, dims[0], dims[1], n, sampling[0], sampling[1], sampling[2], distances);
  check(cudaGetLastError(), "distance transform distances");
  out.distances.resize(count);
  check(cudaMemcpy(out.distances.data(), distances, count * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (withIndices)
    for (int a = 0; a < 3; ++a)
    {
      out.indices[a].resize(count);
      check(cudaMemcpy(out.indices[a].data(), in.axis[a], count * sizeof(int32_t), cudaMemcpyDeviceToHost),
        "cudaMemcpy");
    }
}
}
}
