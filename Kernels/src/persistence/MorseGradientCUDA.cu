// MorseGradientCUDA.cu - the discrete gradient on the GPU: one thread per
// voxel runs GradientGroups.h's gradientOfVoxel, the very code of the CPU
// loop, so both give the same gradient bit for bit. Groups write disjoint
// cells (each cell has one owner), so no synchronisation is needed.
//
// Memory on the device: the image (packed) and three bytes a cell; the
// arrays come back to the host, where the paths, pairing and boundaries run.
#include "MorseGradient.h"

#include "../common/CudaUtil.cuh"
#include "../common/ScalarDispatch.h"
#include "../euler/EulerBackends.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace topovox
{
namespace morse
{
namespace
{
using cuda::check;

struct VoxelGrid
{
  int64_t dims[3];
  int64_t strides[3];
  int64_t offset[27];
};

template <typename T, bool Super>
__global__ void gradientKernel(const T* __restrict__ data, VoxelGrid grid, CornerTables tab, GradientArrays g)
{
  const int64_t n = grid.dims[0] * grid.dims[1] * grid.dims[2];
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t p[3] = { i % grid.dims[0], (i / grid.dims[0]) % grid.dims[1], i / (grid.dims[0] * grid.dims[1]) };
    gradientOfVoxel<T, Super>(data, grid.strides, grid.dims, grid.offset, p, tab, g);
  }
}
} // namespace

void buildGradientGPU(const GridView& image, Gradient& g, Filtration filtration)
{
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
  {
    cudaGetLastError();
    throw std::runtime_error("no CUDA device");
  }
  GridView onDevice;
  const std::shared_ptr<void> keep = euler::uploadGrid(image, onDevice);
  const size_t cells = g.state.size();
  cuda::DeviceArray<uint8_t> state(cells, true), step(cells, true), owner(cells, true), cut0(g.cut[0].size()),
    cut1(g.cut[1].size()), cut2(g.cut[2].size());
  GradientArrays arrays;
  arrays.state = state.ptr;
  arrays.step = step.ptr;
  arrays.ownerCode = owner.ptr;
  const cuda::DeviceArray<uint8_t>* cut[3] = { &cut0, &cut1, &cut2 };
  for (int a = 0; a < 3; ++a)
  {
    arrays.cut[a] = g.cut[a].empty() ? nullptr : cut[a]->ptr;
    arrays.cutSize[a] = static_cast<int64_t>(g.cut[a].size());
    if (!g.cut[a].empty())
      check(cudaMemcpy(cut[a]->ptr, g.cut[a].data(), g.cut[a].size(), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  VoxelGrid grid;
  for (int a = 0; a < 3; ++a)
  {
    grid.dims[a] = onDevice.dims[a];
    grid.strides[a] = onDevice.strides[a];
  }
  for (int b = 0; b < 27; ++b)
    grid.offset[b] = euler::choiceAxis(b, 0) * grid.strides[0] + euler::choiceAxis(b, 1) * grid.strides[1] +
      euler::choiceAxis(b, 2) * grid.strides[2];
  const CornerTables tab = makeCornerTables(g.cells);
  const int sms = cuda::multiprocessorCount();
  const int threads = 256;
  const int64_t voxels = image.voxelCount();
  const int blocks = static_cast<int>(std::min<int64_t>((voxels + threads - 1) / threads, int64_t(sms) * 16));
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = static_cast<const T*>(onDevice.data);
    if (filtration == Filtration::Superlevel)
      gradientKernel<T, true><<<blocks, threads>>>(data, grid, tab, arrays);
    else
      gradientKernel<T, false><<<blocks, threads>>>(data, grid, tab, arrays);
  });
  check(cudaGetLastError(), "gradient kernel launch");
  check(cudaMemcpy(g.state.data(), state.ptr, cells, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(g.step.data(), step.ptr, cells, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(g.ownerCode.data(), owner.ptr, cells, cudaMemcpyDeviceToHost), "cudaMemcpy");
}
}
}
