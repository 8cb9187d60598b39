// MorphologyCUDA.cu - the morphology operators on the GPU: one thread per
// voxel runs MorphologyVoxel.h, the CPU threads' own code, so both give the
// same bits. Binary iterations run on the device in ping-pong buffers; only
// a "changed" flag comes back per pass when iterating until stable.
#include "MorphologyBackends.h"

#include "../common/CudaUtil.cuh"
#include "../common/ScalarDispatch.h"
#include "../euler/EulerBackends.h"

#include <memory>

namespace topovox
{
namespace morphology
{
namespace
{
using cuda::check;
using cuda::DeviceArray;
constexpr int kThreads = 256;

int blocksFor(int64_t n)
{
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  const int64_t wanted = (n + kThreads - 1) / kThreads;
  return static_cast<int>(wanted < 16 * int64_t(sms) ? (wanted < 1 ? 1 : wanted) : 16 * int64_t(sms));
}

template <typename T>
void upload(DeviceArray<T>& to, const T* from, size_t n)
{
  if (n)
    check(cudaMemcpy(to.ptr, from, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
}

// The element's arrays on the device, for a packed image of `dims`.
struct DeviceElement
{
  DeviceArray<int64_t> delta, direct;
  DeviceArray<double> values;
  ElementView view{};
  DeviceElement(const ElementOffsets& e, const int64_t dims[3])
    : delta(3 * e.delta.size())
    , direct(e.delta.size())
    , values(e.values.size())
  {
    const int64_t strides[3] = { 1, dims[0], dims[0] * dims[1] };
    const FlatElement host(e, strides);
    upload(delta, host.delta.data(), host.delta.size());
    upload(direct, host.direct.data(), host.direct.size());
    upload(values, host.values.data(), host.values.size());
    view = host.view;
    view.delta = delta.ptr;
    view.direct = direct.ptr;
    view.values = e.flat ? nullptr : values.ptr;
  }
};

template <typename T>
__global__ void greyKernel(const T* __restrict__ data, GreyGrid g, ElementView e, bool minimum, T cv, T* out)
{
  const int64_t n = g.dims[0] * g.dims[1] * g.dims[2];
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < n; v += int64_t(gridDim.x) * blockDim.x)
    out[v] = greyVoxel(data, g, e, minimum, cv, v % g.dims[0], (v / g.dims[0]) % g.dims[1], v / (g.dims[0] * g.dims[1]));
}

__global__ void erodeKernel(const uint8_t* __restrict__ in, int64_t nx, int64_t ny, int64_t nz, ElementView e,
  const uint8_t* __restrict__ mask, bool center, bool border, uint8_t T, uint8_t F, uint8_t* out, int* changed)
{
  const int64_t dims[3] = { nx, ny, nz };
  const int64_t n = nx * ny * nz;
  bool any = false;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < n; v += int64_t(gridDim.x) * blockDim.x)
  {
    const uint8_t o = erodeVoxel(in, dims, e, mask, center, border, T, F, v % nx, (v / nx) % ny, v / (nx * ny), v);
    out[v] = o;
    any = any || o != in[v];
  }
  if (any)
    *changed = 1;
}
} // namespace

void greyGPU(const GridView& image, const ElementOffsets& e, bool minimum, const GreyOptions& o, unsigned char* out)
{
  GridView onDevice;
  const std::shared_ptr<void> keep = euler::uploadGrid(image, onDevice);
  const DeviceElement element(e, image.dims);
  GreyGrid g;
  for (int a = 0; a < 3; ++a)
  {
    g.dims[a] = image.dims[a];
    g.strides[a] = onDevice.strides[a];
  }
  g.mode = static_cast<int>(o.mode);
  const int64_t n = image.voxelCount();
  const size_t bytes = static_cast<size_t>(n) * scalarTypeSize(image.type);
  DeviceArray<unsigned char> result(bytes);
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    greyKernel<T><<<blocksFor(n), kThreads>>>(static_cast<const T*>(onDevice.data), g, element.view, minimum,
      static_cast<T>(o.cval), reinterpret_cast<T*>(result.ptr));
  });
  check(cudaGetLastError(), "grey morphology kernel");
  check(cudaMemcpy(out, result.ptr, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

BinaryImage binaryGPU(const BinaryImage& start, const int64_t dims[3], const ElementOffsets& e, bool center,
  const uint8_t* mask, bool border, bool invert, int iterations)
{
  const size_t n = start.size();
  DeviceArray<uint8_t> a(n), b(n), dmask(mask ? n : 0);
  DeviceArray<int> changed(1);
  upload(a, start.data(), n);
  if (mask)
    upload(dmask, mask, n);
  const DeviceElement element(e, dims);
  const uint8_t T = invert ? 0 : 1, F = invert ? 1 : 0;
  const bool bdr = invert ? !border : border;
  uint8_t *in = a.ptr, *out = b.ptr;
  for (int done = 0;; ++done)
  {
    check(cudaMemset(changed.ptr, 0, sizeof(int)), "cudaMemset");
    erodeKernel<<<blocksFor(static_cast<int64_t>(n)), kThreads>>>(in, dims[0], dims[1], dims[2], element.view,
      mask ? dmask.ptr : nullptr, center, bdr, T, F, out, changed.ptr);
    check(cudaGetLastError(), "binary morphology kernel");
    std::swap(in, out);
    if (iterations >= 1)
    {
      if (done + 1 >= iterations)
        break;
      continue;
    }
    int any = 0;
    check(cudaMemcpy(&any, changed.ptr, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (!any)
      break;
  }
  BinaryImage result(n);
  check(cudaMemcpy(result.data(), in, n, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return result;
}
}
}
