// MorseSummaryCUDA.cu - the Morse summary of whole images on the GPU (see
// MorseSummaryGPU.h): gradient, critical cells, path ends, for a batch of
// images of one size in one set of launches. Image b's cells are the
// doubled-grid indices b * cells + cell; its vertices and top cells are
// numbered b * count + local, so the pointer forests of all images live in
// one array each and jump together.
#include "MorseSummaryGPU.h"
#include "MorseDevice.cuh"

#include "../common/CudaUtil.cuh"
#include "../common/HostCopy.h"
#include "../common/LargeArray.h"
#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace topovox
{
namespace morse
{
namespace
{
using cuda::check;

// The per-critical-cell results, one array each (k: the critical cell's
// rank in the batch's scan order), in I: 32-bit where an image's cells fit,
// so that what crosses the bus is about 25 bytes a critical cell. Indices
// are the image's own; ~I(0) stands for "outside the image".
template <typename I>
struct CriticalOut
{
  I* cell;  // doubled-grid index
  I* voxel; // owner, linear index
  int8_t* dimension;
  I* edgeEnds; // 2 k, 2 k + 1: minima at the - and + ends (dimension 1)
  I* dualEnds; // 2 k, 2 k + 1: maxima beyond the - and + sides (dimension top - 1)
};

template <typename T, bool Super>
__global__ void gradientKernel(
  const T* __restrict__ data, BatchGrid grid, CornerTables tab, GradientArrays g, int64_t images, uint8_t* nan)
{
  const int64_t n = grid.voxels * images;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t b = i / grid.voxels, r = i - b * grid.voxels;
    const int64_t p[3] = { r % grid.voxelDims[0], (r / grid.voxelDims[0]) % grid.voxelDims[1],
      r / (grid.voxelDims[0] * grid.voxelDims[1]) };
    const T* image = data + b * grid.voxels;
    if (euler::isNan(image[r]))
      nan[b] = 1;
    GradientArrays mine = g;
    mine.state += b * grid.cells;
    mine.step += b * grid.cells;
    mine.ownerCode += b * grid.cells;
    gradientOfVoxel<T, Super>(image, grid.voxelStrides, grid.voxelDims, grid.offset, p, tab, mine);
  }
}

// Each vertex points to the other end of its gradient edge; a critical
// vertex (or an absent one, never asked for) to itself.
__global__ void vertexPointers(const uint8_t* __restrict__ state, BatchGrid grid, int64_t images, uint32_t* next)
{
  const int64_t n = grid.vertices * images;
  const int64_t stride[3] = { 1, grid.vertexDims[0], grid.vertexDims[0] * grid.vertexDims[1] };
  for (int64_t u = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; u < n; u += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t b = u / grid.vertices, l = u - b * grid.vertices;
    const int64_t v0 = l % grid.vertexDims[0], v1 = (l / grid.vertexDims[0]) % grid.vertexDims[1],
                  v2 = l / (grid.vertexDims[0] * grid.vertexDims[1]);
    const int64_t cell = 2 * v0 + grid.cellDims[0] * (2 * v1 + grid.cellDims[1] * 2 * v2);
    const uint8_t s = state[b * grid.cells + cell];
    int64_t to = u;
    if (s >= kUp && s < kDown)
    {
      const int code = s - kUp;
      to = (code & 1) ? u + stride[code >> 1] : u - stride[code >> 1];
    }
    next[u] = static_cast<uint32_t>(to);
  }
}

// Each top cell points through the face it is paired with to the top cell
// beyond, or to `outside` (index images * tops) past the image's border; a
// critical top cell to itself. Absent cells (NaN images, whose dual ends
// are not used) point outside.
__global__ void topPointers(const uint8_t* __restrict__ state, BatchGrid grid, int64_t images, uint32_t* next)
{
  const int64_t n = grid.tops * images;
  const int64_t stride[3] = { 1, grid.topDims[0], grid.topDims[0] * grid.topDims[1] };
  if (blockIdx.x == 0 && threadIdx.x == 0)
    next[n] = static_cast<uint32_t>(n); // the outside is a root
  for (int64_t u = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; u < n; u += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t b = u / grid.tops, l = u - b * grid.tops;
    const int64_t t[3] = { l % grid.topDims[0], (l / grid.topDims[0]) % grid.topDims[1],
      l / (grid.topDims[0] * grid.topDims[1]) };
    int64_t c[3];
    for (int a = 0; a < 3; ++a)
      c[a] = grid.active[a] ? 2 * t[a] + 1 : 0;
    const uint8_t s = state[b * grid.cells + c[0] + grid.cellDims[0] * (c[1] + grid.cellDims[1] * c[2])];
    int64_t to = n; // outside
    if (s == kCritical)
      to = u;
    else if (s >= kDown)
    {
      const int code = s - kDown, axis = code >> 1, side = (code & 1) ? 1 : -1;
      const int64_t beyond = c[axis] + 2 * side;
      if (beyond >= 0 && beyond < grid.cellDims[axis])
        to = u + side * stride[axis];
    }
    next[u] = static_cast<uint32_t>(to);
  }
}

// One round of pointer jumping: next[u] = next[next[u]]. Rounds may read
// pointers another thread has just advanced: those are still on u's path.
__global__ void jumpKernel(uint32_t* next, int64_t n, int* changed)
{
  bool moved = false;
  for (int64_t u = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; u < n; u += int64_t(gridDim.x) * blockDim.x)
  {
    const uint32_t a = next[u], c = next[a];
    if (c != a)
    {
      next[u] = c;
      moved = true;
    }
  }
  if (moved)
    *changed = 1;
}

template <typename I>
__global__ void criticalKernel(const int64_t* __restrict__ critical, int64_t count,
  const uint8_t* __restrict__ ownerCode, BatchGrid grid, const uint32_t* __restrict__ vertexRoot,
  const uint32_t* __restrict__ topRoot, int64_t images, CriticalOut<I> out)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < count; k += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t whole = critical[k], b = whole / grid.cells, cell = whole - b * grid.cells;
    const int64_t c[3] = { cell % grid.cellDims[0], (cell / grid.cellDims[0]) % grid.cellDims[1],
      cell / (grid.cellDims[0] * grid.cellDims[1]) };
    const uint8_t code = ownerCode[whole];
    int64_t v[3];
    int dimension = 0, odd = 0, even = 0;
    for (int a = 0; a < 3; ++a)
    {
      v[a] = grid.active[a] ? cubical::firstTouched(c[a], grid.tConstruction) + ((code >> a) & 1) : 0;
      if (grid.active[a] && (c[a] & 1))
      {
        ++dimension;
        odd = a;
      }
      else if (grid.active[a])
        even = a;
    }
    out.cell[k] = static_cast<I>(cell);
    out.voxel[k] = static_cast<I>(v[0] + grid.voxelDims[0] * (v[1] + grid.voxelDims[1] * v[2]));
    out.dimension[k] = static_cast<int8_t>(dimension);
    if (dimension == 1 && grid.top >= 2)
      for (int s = 0; s < 2; ++s)
      {
        int64_t e[3] = { c[0], c[1], c[2] };
        e[odd] += s ? 1 : -1;
        const int64_t number = (e[0] >> 1) + grid.vertexDims[0] * ((e[1] >> 1) + grid.vertexDims[1] * (e[2] >> 1));
        const int64_t root = vertexRoot[b * grid.vertices + number] - b * grid.vertices;
        const int64_t r[3] = { root % grid.vertexDims[0], (root / grid.vertexDims[0]) % grid.vertexDims[1],
          root / (grid.vertexDims[0] * grid.vertexDims[1]) };
        out.edgeEnds[2 * k + s] =
          static_cast<I>(2 * r[0] + grid.cellDims[0] * (2 * r[1] + grid.cellDims[1] * 2 * r[2]));
      }
    if (dimension == grid.top - 1 && grid.top >= 1)
      for (int s = 0; s < 2; ++s)
      {
        int64_t e[3] = { c[0], c[1], c[2] };
        e[even] += s ? 1 : -1;
        I end = ~I(0);
        if (e[even] >= 0 && e[even] < grid.cellDims[even])
        {
          int64_t number = 0;
          for (int a = 2; a >= 0; --a)
            number = number * grid.topDims[a] + (grid.active[a] ? (e[a] - 1) >> 1 : 0);
          const int64_t root = topRoot[b * grid.tops + number];
          if (root != images * grid.tops)
          {
            const int64_t l = root - b * grid.tops;
            int64_t r[3] = { l % grid.topDims[0], (l / grid.topDims[0]) % grid.topDims[1],
              l / (grid.topDims[0] * grid.topDims[1]) };
            for (int a = 0; a < 3; ++a)
              r[a] = grid.active[a] ? 2 * r[a] + 1 : 0;
            end = static_cast<I>(r[0] + grid.cellDims[0] * (r[1] + grid.cellDims[1] * r[2]));
          }
        }
        out.dualEnds[2 * k + s] = end;
      }
  }
}

// A critical cell's place in the filtration order (value, dimension,
// cell), for images of values of up to 32 bits: the value's order in bits
// 2 to 33 (-0.0 and 0.0 as one, the order reversed for the superlevel
// filtration: as MorsePairing compares the doubles), the dimension in bits
// 0 and 1. CUB's radix sort is stable, so cells of one key keep their index
// order: the order of MorsePairing's sortCritical.
template <typename T, bool Floating = std::is_floating_point<T>::value>
struct OrderKey
{
  static_assert(sizeof(T) <= 4, "values of up to 32 bits");
  __device__ static uint32_t of(T value, bool super) { return orderedIntegerKey(value, super); }
};
template <typename T>
struct OrderKey<T, true>
{
  static_assert(sizeof(T) == 4, "float");
  __device__ static uint32_t of(T value, bool super)
  {
    const float v = value == 0 ? 0.0f : super ? -value : value;
    const uint32_t b = __float_as_uint(v);
    return (b >> 31) ? ~b : (b | 0x80000000u);
  }
};

template <typename T, typename I>
__global__ void orderKeyKernel(const T* __restrict__ image, const I* __restrict__ voxel,
  const int8_t* __restrict__ dimension, int64_t count, bool super, uint64_t* key, uint32_t* index)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < count; k += int64_t(gridDim.x) * blockDim.x)
  {
    key[k] = (uint64_t(OrderKey<T>::of(image[voxel[k]], super)) << 2) | uint64_t(dimension[k]);
    index[k] = static_cast<uint32_t>(k);
  }
}

// to's entry k is from's entry order[k] (the path ends of cells of other
// dimensions, never written, are carried as they are: never read).
template <typename I>
__global__ void gatherCriticalKernel(const uint32_t* __restrict__ order, int64_t count, CriticalOut<I> from,
  CriticalOut<I> to)
{
  for (int64_t k = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; k < count; k += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t j = order[k];
    to.cell[k] = from.cell[j];
    to.voxel[k] = from.voxel[j];
    to.dimension[k] = from.dimension[j];
    to.edgeEnds[2 * k] = from.edgeEnds[2 * j];
    to.edgeEnds[2 * k + 1] = from.edgeEnds[2 * j + 1];
    to.dualEnds[2 * k] = from.dualEnds[2 * j];
    to.dualEnds[2 * k + 1] = from.dualEnds[2 * j + 1];
  }
}

// 1 for a critical cell, 0 otherwise: the flag CUB counts and, as a
// predicate, selects by.
struct CriticalFlag
{
  const uint8_t* state;
  __device__ int64_t operator()(int64_t i) const { return state[i] == kCritical ? 1 : 0; }
};

// Jumps until every pointer is a root; two rounds a check of the flag.
void jumpToRoots(uint32_t* next, int64_t n, int* changed)
{
  const unsigned blocks = cuda::blocksFor(n, 256, int64_t(cuda::multiprocessorCount()) * 16);
  for (int flag = 1; flag;)
  {
    check(cudaMemsetAsync(changed, 0, sizeof(int), 0), "cudaMemsetAsync");
    jumpKernel<<<blocks, 256>>>(next, n, changed);
    jumpKernel<<<blocks, 256>>>(next, n, changed);
    check(cudaGetLastError(), "pointer jumping launch");
    check(cudaMemcpy(&flag, changed, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
}

// The images, packed one after the other on the device.
void upload(const std::vector<GridView>& images, int64_t voxels, char* device)
{
  const size_t elem = scalarTypeSize(images[0].type), bytes = static_cast<size_t>(voxels) * elem;
  auto packed = [&](const GridView& g) {
    return g.strides[0] == 1 && g.strides[1] == g.dims[0] && g.strides[2] == g.dims[0] * g.dims[1];
  };
  bool consecutive = true;
  for (size_t b = 0; b < images.size() && consecutive; ++b)
    consecutive = packed(images[b]) && images[b].data == static_cast<const char*>(images[0].data) + b * bytes;
  if (consecutive)
  {
    check(cudaMemcpy(device, images[0].data, bytes * images.size(), cudaMemcpyHostToDevice), "cudaMemcpy");
    return;
  }
  std::vector<char> staging;
  for (size_t b = 0; b < images.size(); ++b)
  {
    const GridView& g = images[b];
    const char* from = static_cast<const char*>(g.data);
    if (!packed(g))
    {
      staging.resize(bytes);
      char* to = staging.data();
      for (int64_t z = 0; z < g.dims[2]; ++z)
        for (int64_t y = 0; y < g.dims[1]; ++y)
          for (int64_t x = 0; x < g.dims[0]; ++x, to += elem)
            std::memcpy(to, from + (x * g.strides[0] + y * g.strides[1] + z * g.strides[2]) * int64_t(elem), elem);
      from = staging.data();
    }
    check(cudaMemcpy(device + b * bytes, from, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  }
}

// The device bytes an image takes in buildPiecesGPU, by phase (one model
// for gpuSlabSpan's whole image and piecesPerLaunchGPU's batches). The
// image and its gradient (three bytes a cell) stay throughout; then come,
// one after the other, the summary's arrays (the paths' roots, four bytes
// a vertex and a top cell; per critical cell its index in the list and its
// results: cell, voxel, two edge ends and two dual ends as 32- or 64-bit
// indices, and a dimension byte) and the boundaries' (made for 3D images,
// and 2D ones with NaN): a 2-byte word a cell; the voxels' ranks, while
// they are sorted, with the keys (RankKey: the value's width for integers
// of up to 32 bits, else 8 bytes) and indices double-buffered; then the
// ranks and, where cellKeysWanted, 4-byte cell keys.
struct WholeImageBytes
{
  double gradient, roots, perCritical, boundaries;

  WholeImageBytes(const GridView& image, const BatchGrid& g)
  {
    const double V = static_cast<double>(g.voxels), C = static_cast<double>(g.cells);
    const size_t width = scalarTypeSize(image.type);
    const double key = !scalarTypeIsFloating(image.type) && width <= 4 ? static_cast<double>(width) : 8.0;
    gradient = static_cast<double>(width) * V + 3 * C;
    roots = 4 * static_cast<double>(g.vertices + g.tops + 1);
    perCritical = 8 + 6 * (g.cells < int64_t(UINT32_MAX) ? 4 : 8) + 1;
    const double sorting = 2 * C + (2 * key + 2 * 4 + 4) * V;
    const double kept = 2 * C + 4 * V + (cellKeysWanted(g.voxels) ? 4 * C : 0);
    boundaries = std::max(sorting, kept);
  }
  double peak(double critical) const { return gradient + std::max(roots + perCritical * critical, boundaries); }
};

// The number of critical cells among the first n of `state` (CUB's sum
// over a flag per cell).
int64_t countCritical(const uint8_t* state, int64_t n)
{
  const auto flags = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), CriticalFlag{ state });
  cuda::DeviceArray<int64_t, true> sum(1);
  size_t tempBytes = 0;
  check(cub::DeviceReduce::Sum(nullptr, tempBytes, flags, sum.ptr, n), "cub::DeviceReduce::Sum");
  cuda::DeviceArray<char, true> temp(tempBytes);
  check(cub::DeviceReduce::Sum(temp.ptr, tempBytes, flags, sum.ptr, n), "cub::DeviceReduce::Sum");
  int64_t count = 0;
  check(cudaMemcpy(&count, sum.ptr, sizeof count, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return count;
}

struct TimesCells
{
  int64_t cells;
  __device__ int64_t operator()(int64_t b) const { return b * cells; }
};

// A critical cell's value in filtration orientation, read from the host's
// image as MorsePiece's OrientedValues reads it (the same double).
template <typename T>
double valueAt(const GridView& image, int64_t voxel, bool super)
{
  const int64_t x = voxel % image.dims[0], y = (voxel / image.dims[0]) % image.dims[1],
                z = voxel / (image.dims[0] * image.dims[1]);
  const double v = static_cast<double>(
    static_cast<const T*>(image.data)[x * image.strides[0] + y * image.strides[1] + z * image.strides[2]]);
  return super ? -v : v;
}

// The per-critical-cell results on the host, in one block copied at once.
template <typename I>
struct CriticalHost
{
  LargeArray<char> bytes;
  const int64_t* start; // count + 1: image b's critical cells are start[b] .. start[b + 1] - 1
  const I *cell, *voxel, *edgeEnds, *dualEnds;
  const int8_t* dimension;
};

// Critical cell j of the results, its value read from the host's image.
template <typename T, typename I>
MorseCriticalCell criticalCellAt(const CriticalHost<I>& h, int64_t j, const GridView& image, bool super)
{
  MorseCriticalCell m;
  m.cell = static_cast<int64_t>(h.cell[j]);
  m.voxel = static_cast<int64_t>(h.voxel[j]);
  m.value = valueAt<T>(image, m.voxel, super);
  m.dimension = h.dimension[j];
  return m;
}

// Image b's summary from the results: its critical cells, the ends of its
// critical edges and of its critical (d-1)-cells, in the CPU scan's order,
// or, where `numbered` (numberPathEnds), the ends' numbers as they are,
// one pair a cell. Chunks of the cells on `threads` threads, each chunk's
// entries placed by the counts of the chunks before it.
template <typename I>
void assemble(const CriticalHost<I>& h, int64_t b, const GridView& image, const BatchGrid& grid, bool super,
  int threads, bool numbered, MorsePieceSummary& s)
{
  const int64_t lo = h.start[b], n = h.start[b + 1] - lo;
  // (The results on huge pages: gigabytes at 512^3, written at once.)
  resizeOnHugePages(s.critical, static_cast<size_t>(n));
  const int64_t chunks = chunksOf(n, 8 * int64_t(threads), 4096);
  // (Only 32-bit results are numbered: summarize.)
  if (std::is_same<I, uint32_t>::value && numbered)
  {
    static_assert(sizeof(std::array<int32_t, 2>) == 2 * sizeof(uint32_t), "a pair of numbers");
    const bool withEdges = grid.top >= 2, withDual = grid.top >= 1 && !s.hasNan;
    s.numberedEnds = true;
    resizeOnHugePages(s.edgeEndNumbers, withEdges ? static_cast<size_t>(n) : 0);
    resizeOnHugePages(s.dualEndNumbers, withDual ? static_cast<size_t>(n) : 0);
    dispatchScalarType(image.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      forEachChunk(n, chunks, threads, [&](int64_t i0, int64_t i1, int64_t) {
        for (int64_t j = lo + i0; j < lo + i1; ++j)
          s.critical[static_cast<size_t>(j - lo)] = criticalCellAt<T>(h, j, image, super);
        // (~0 is -1 as a signed number.)
        if (withEdges)
          std::memcpy(s.edgeEndNumbers.data() + i0, h.edgeEnds + 2 * (lo + i0),
            static_cast<size_t>(i1 - i0) * 2 * sizeof(I));
        if (withDual)
          std::memcpy(s.dualEndNumbers.data() + i0, h.dualEnds + 2 * (lo + i0),
            static_cast<size_t>(i1 - i0) * 2 * sizeof(I));
      });
    });
    return;
  }
  std::vector<int64_t> edges(static_cast<size_t>(chunks) + 1, 0), facets(static_cast<size_t>(chunks) + 1, 0);
  forEachChunk(n, chunks, threads, [&](int64_t i0, int64_t i1, int64_t c) {
    for (int64_t j = lo + i0; j < lo + i1; ++j)
    {
      edges[static_cast<size_t>(c) + 1] += h.dimension[j] == 1 ? 1 : 0;
      facets[static_cast<size_t>(c) + 1] += h.dimension[j] == grid.top - 1 ? 1 : 0;
    }
  });
  for (size_t c = 1; c < edges.size(); ++c)
  {
    edges[c] += edges[c - 1];
    facets[c] += facets[c - 1];
  }
  const bool withEdges = grid.top >= 2, withDual = grid.top >= 1 && !s.hasNan;
  const size_t edgeEnds = withEdges ? static_cast<size_t>(3 * edges.back()) : 0,
               dualEnds = withDual ? static_cast<size_t>(4 * facets.back()) : 0;
  resizeOnHugePages(s.edgeEnds, edgeEnds);
  resizeOnHugePages(s.dualEnds, dualEnds);
  auto end = [](I e) { return e == ~I(0) ? int64_t(-1) : static_cast<int64_t>(e); };
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    forEachChunk(n, chunks, threads, [&](int64_t i0, int64_t i1, int64_t c) {
      int64_t* edge = s.edgeEnds.data() + 3 * edges[static_cast<size_t>(c)];
      int64_t* dual = s.dualEnds.data() + 4 * facets[static_cast<size_t>(c)];
      for (int64_t j = lo + i0; j < lo + i1; ++j)
      {
        const MorseCriticalCell& m = s.critical[static_cast<size_t>(j - lo)] = criticalCellAt<T>(h, j, image, super);
        if (withEdges && m.dimension == 1)
        {
          *edge++ = m.cell;
          *edge++ = end(h.edgeEnds[2 * j]);
          *edge++ = end(h.edgeEnds[2 * j + 1]);
        }
        if (withDual && m.dimension == grid.top - 1)
        {
          *dual++ = m.cell;
          *dual++ = end(h.dualEnds[2 * j]);
          *dual++ = m.cell;
          *dual++ = end(h.dualEnds[2 * j + 1]);
        }
      }
    });
  });
}

// Where summarize's block holds what: image starts, cells, voxels, edge
// ends, dual ends, nan flags, dimensions (8-byte items first, so that each
// array is aligned).
template <typename I>
struct CriticalBlock
{
  size_t cellAt, voxelAt, edgeAt, dualAt, nanAt, dimAt, total;

  CriticalBlock(int64_t images, int64_t k)
  {
    cellAt = static_cast<size_t>(images + 1) * sizeof(int64_t);
    voxelAt = cellAt + k * sizeof(I);
    edgeAt = voxelAt + k * sizeof(I);
    dualAt = edgeAt + 2 * k * sizeof(I);
    nanAt = dualAt + 2 * k * sizeof(I);
    dimAt = nanAt + images;
    total = dimAt + k;
  }
  CriticalOut<I> in(char* base) const
  {
    return CriticalOut<I>{ reinterpret_cast<I*>(base + cellAt), reinterpret_cast<I*>(base + voxelAt),
      reinterpret_cast<int8_t*>(base + dimAt), reinterpret_cast<I*>(base + edgeAt),
      reinterpret_cast<I*>(base + dualAt) };
  }
};

// One image's critical cells put in the filtration order on the device:
// CUB's radix sort of their keys (OrderKey), then the results gathered into
// a block of the same layout, which takes `block`'s place. MorsePairing
// finds them in that order (it checks) and sorts nothing: its sort of a
// 512^3 Gaussian field's 85 M critical cells took 1.1 to 2.2 s of the
// H200 machine's 16 threads, the device's sort and gather about 0.3 s. Only for values of up to 32 bits and 32-bit
// indices, and only with the device memory at hand: memory that cannot be
// had skips it (the CPU sorts then), as does TOPOVOX_GPU_SORT_CRITICAL=0.
template <typename I>
bool sortInFiltrationOrder(cuda::DeviceArray<char, true>& block, const CriticalBlock<I>& at, int64_t k,
  const GridView& image, const void* data, bool super)
{
  if (!std::is_same<I, uint32_t>::value || scalarTypeSize(image.type) > 4 || k < 2 || block.stream != 0)
    return false;
  if (const char* env = std::getenv("TOPOVOX_GPU_SORT_CRITICAL"))
    if (std::string(env) == "0")
      return false;
  const unsigned blocks = cuda::blocksFor(k, 256, int64_t(cuda::multiprocessorCount()) * 16);
  const int bits = 2 + 8 * static_cast<int>(scalarTypeSize(image.type));
  const size_t n = static_cast<size_t>(k);
  // The order (kept), then the keys and the sort's spare arrays and room.
  OptionalRoom order(n * sizeof(uint32_t));
  if (!order.ptr)
    return false;
  uint32_t* const orderPtr = reinterpret_cast<uint32_t*>(order.ptr);
  {
    size_t tempBytes = 0;
    cub::DoubleBuffer<uint64_t> sizingKeys(nullptr, nullptr);
    cub::DoubleBuffer<uint32_t> sizingValues(nullptr, nullptr);
    check(cub::DeviceRadixSort::SortPairs(nullptr, tempBytes, sizingKeys, sizingValues, k, 0, bits),
      "cub::DeviceRadixSort::SortPairs");
    const size_t keyBytes = n * sizeof(uint64_t), spareAt = 2 * keyBytes,
                 tempAt = (spareAt + n * sizeof(uint32_t) + 255) / 256 * 256;
    OptionalRoom room(tempAt + tempBytes);
    if (!room.ptr)
      return false;
    uint64_t* const key = reinterpret_cast<uint64_t*>(room.ptr);
    dispatchScalarType(image.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (sizeof(T) <= 4)
      {
        const CriticalOut<I> out = at.in(block.ptr);
        orderKeyKernel<T, I><<<blocks, 256>>>(
          static_cast<const T*>(data), out.voxel, out.dimension, k, super, key, orderPtr);
        check(cudaGetLastError(), "order keys launch");
      }
    });
    cub::DoubleBuffer<uint64_t> keys(key, reinterpret_cast<uint64_t*>(room.ptr + keyBytes));
    cub::DoubleBuffer<uint32_t> values(orderPtr, reinterpret_cast<uint32_t*>(room.ptr + spareAt));
    check(cub::DeviceRadixSort::SortPairs(room.ptr + tempAt, tempBytes, keys, values, k, 0, bits),
      "cub::DeviceRadixSort::SortPairs");
    if (values.Current() != orderPtr)
      check(cudaMemcpyAsync(orderPtr, values.Current(), n * sizeof(uint32_t), cudaMemcpyDeviceToDevice, 0),
        "cudaMemcpyAsync");
  }
  OptionalRoom sorted(at.total);
  if (!sorted.ptr)
    return false;
  // The image starts, then the nan flags, as they are.
  check(cudaMemcpyAsync(sorted.ptr, block.ptr, at.cellAt, cudaMemcpyDeviceToDevice, 0), "cudaMemcpyAsync");
  check(cudaMemcpyAsync(sorted.ptr + at.nanAt, block.ptr + at.nanAt, at.dimAt - at.nanAt, cudaMemcpyDeviceToDevice, 0),
    "cudaMemcpyAsync");
  gatherCriticalKernel<I><<<blocks, 256>>>(orderPtr, k, at.in(block.ptr), at.in(sorted.ptr));
  check(cudaGetLastError(), "critical gather launch");
  std::swap(block.ptr, sorted.ptr); // (the old block is freed with `sorted`)
  return true;
}

// The numbers of a vertex and of a top cell (given as doubled-grid
// indices), as vertexPointers and topPointers count them.
__device__ inline int64_t vertexNumberOf(int64_t cell, const BatchGrid& g)
{
  const int64_t c0 = cell % g.cellDims[0], c1 = (cell / g.cellDims[0]) % g.cellDims[1],
                c2 = cell / (g.cellDims[0] * g.cellDims[1]);
  return (c0 >> 1) + g.vertexDims[0] * ((c1 >> 1) + g.vertexDims[1] * (c2 >> 1));
}
__device__ inline int64_t topNumberOf(int64_t cell, const BatchGrid& g)
{
  const int64_t c[3] = { cell % g.cellDims[0], (cell / g.cellDims[0]) % g.cellDims[1],
    cell / (g.cellDims[0] * g.cellDims[1]) };
  int64_t number = 0;
  for (int a = 2; a >= 0; --a)
    number = number * g.topDims[a] + (g.active[a] ? (c[a] - 1) >> 1 : 0);
  return number;
}

// 1 for a cell of one dimension: what the scan counts.
struct OfDimension
{
  const int8_t* dimension;
  int8_t wanted;
  __device__ uint32_t operator()(int64_t k) const { return dimension[k] == wanted ? 1u : 0u; }
};

// Each cell of dimension `wanted` (the minima, or the maxima where `top`)
// writes its number, how many such cells come before it, at its vertex's
// (top cell's) place in `number`.
__global__ void placeNumbersKernel(const uint32_t* __restrict__ cell, const int8_t* __restrict__ dimension,
  const uint32_t* __restrict__ counted, int64_t k, int8_t wanted, bool top, BatchGrid grid, uint32_t* number)
{
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < k; j += int64_t(gridDim.x) * blockDim.x)
    if (dimension[j] == wanted)
      number[top ? topNumberOf(cell[j], grid) : vertexNumberOf(cell[j], grid)] = counted[j] - 1;
}

// The two ends of each cell of dimension `wanted` replaced by their
// numbers (the outside, ~0, by the count of maxima: counted[k - 1]); the
// other cells' entries, never written before, set to ~0.
__global__ void numberEndsKernel(uint32_t* ends, const int8_t* __restrict__ dimension,
  const uint32_t* __restrict__ counted, const uint32_t* __restrict__ number, int64_t k, int8_t wanted, bool top,
  BatchGrid grid)
{
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < k; j += int64_t(gridDim.x) * blockDim.x)
    for (int s = 0; s < 2; ++s)
    {
      uint32_t out = ~0u;
      if (dimension[j] == wanted)
      {
        const uint32_t e = ends[2 * j + s];
        out = e == ~0u ? counted[k - 1] : number[top ? topNumberOf(e, grid) : vertexNumberOf(e, grid)];
      }
      ends[2 * j + s] = out;
    }
}

// A sorted image's path ends numbered on the device
// (MorsePieceSummary::numberedEnds): the minima and the maxima are counted
// in the filtration order by a scan, each writes its number at its vertex's
// (top cell's) place, and each end reads the number there. The pairing
// then looks up no cell: on the host, translating a 512^3 field's 115 M
// ends through its hash table of 85 M cells, and numbering them, took
// about 1.5 s of its 16 threads (twenty-seventh session). Only after
// sortInFiltrationOrder, with the device memory at hand (false otherwise:
// the ends stay cells), and unless TOPOVOX_GPU_NUMBER_ENDS=0.
bool numberPathEnds(cuda::DeviceArray<char, true>& block, const CriticalBlock<uint32_t>& at, int64_t k,
  const BatchGrid& grid)
{
  if (const char* env = std::getenv("TOPOVOX_GPU_NUMBER_ENDS"))
    if (std::string(env) == "0")
      return false;
  const size_t n = static_cast<size_t>(k);
  const size_t places = static_cast<size_t>(std::max(grid.vertices, grid.tops));
  const CriticalOut<uint32_t> out = at.in(block.ptr);
  const thrust::counting_iterator<int64_t> all(0);
  auto flags = [&](int8_t wanted) { return thrust::make_transform_iterator(all, OfDimension{ out.dimension, wanted }); };
  size_t scanBytes = 0;
  check(cub::DeviceScan::InclusiveSum(nullptr, scanBytes, flags(0), static_cast<uint32_t*>(nullptr), k),
    "cub::DeviceScan::InclusiveSum");
  const size_t placesAt = n * sizeof(uint32_t), scanAt = (placesAt + places * sizeof(uint32_t) + 255) / 256 * 256;
  OptionalRoom room(scanAt + scanBytes);
  if (!room.ptr)
    return false;
  uint32_t* const counted = reinterpret_cast<uint32_t*>(room.ptr);
  uint32_t* const number = reinterpret_cast<uint32_t*>(room.ptr + placesAt);
  const unsigned blocks = cuda::blocksFor(k, 256, int64_t(cuda::multiprocessorCount()) * 16);
  // Edges' ends from 2D up, the dual's from 1D up (with NaN the pairing
  // uses no dual ends; numbering them anyway costs nothing it needs).
  auto numberOne = [&](uint32_t* ends, int8_t endDimension, int8_t cellDimension, bool top) {
    check(cub::DeviceScan::InclusiveSum(room.ptr + scanAt, scanBytes, flags(endDimension), counted, k),
      "cub::DeviceScan::InclusiveSum");
    placeNumbersKernel<<<blocks, 256>>>(out.cell, out.dimension, counted, k, endDimension, top, grid, number);
    numberEndsKernel<<<blocks, 256>>>(ends, out.dimension, counted, number, k, cellDimension, top, grid);
    check(cudaGetLastError(), "path end numbering launch");
  };
  if (grid.top >= 2)
    numberOne(out.edgeEnds, 0, 1, false);
  if (grid.top >= 1)
    numberOne(out.dualEnds, static_cast<int8_t>(grid.top), static_cast<int8_t>(grid.top - 1), true);
  return true;
}

// A numbered image's critical cells in the filtration order, kept on the
// device for its boundaries (DeviceGradient::sortedCells).
struct KeptCells
{
  cuda::PooledArray<uint32_t> cells{ 0 };
  int64_t count = 0;
};

// Keeps the sorted cells where the device can spare them and the map of
// every cell to its position that the boundaries will make (4 bytes a
// cell of the complex) with room to spare; nothing otherwise.
void keepSortedCells(const CriticalOut<uint32_t>& out, int64_t k, const BatchGrid& grid, KeptCells& kept)
{
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  const double wanted = 4.0 * static_cast<double>(k) + 4.0 * static_cast<double>(grid.cells);
  if (2 * wanted > static_cast<double>(free))
    return;
  OptionalRoom room(static_cast<size_t>(k) * sizeof(uint32_t));
  if (!room.ptr)
    return;
  cuda::PooledArray<uint32_t> cells(0);
  cells.ptr = reinterpret_cast<uint32_t*>(room.release());
  check(cudaMemcpyAsync(cells.ptr, out.cell, static_cast<size_t>(k) * sizeof(uint32_t), cudaMemcpyDeviceToDevice, 0),
    "cudaMemcpyAsync");
  kept.cells = std::move(cells);
  kept.count = k;
}

// The critical cells' results computed, brought back in one copy, and laid
// out as each image's summary (a single image's in the filtration order
// where sortInFiltrationOrder can, else in index order).
template <typename I>
std::vector<BuiltPiece> summarize(const std::vector<GridView>& images, const BatchGrid& grid,
  const cubical::CellGrid& cg, bool super, const int64_t* critical, int64_t k, const uint8_t* owner,
  const uint32_t* vertexRoot, const uint32_t* topRoot, const uint8_t* nan, const void* data, KeptCells& kept)
{
  const int64_t count = static_cast<int64_t>(images.size());
  const CriticalBlock<I> at(count, k);
  const size_t cellAt = at.cellAt, voxelAt = at.voxelAt, edgeAt = at.edgeAt, dualAt = at.dualAt, nanAt = at.nanAt,
               dimAt = at.dimAt, total = at.total;
  cuda::DeviceArray<char, true> block(total);
  const auto bounds = thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), TimesCells{ grid.cells });
  thrust::lower_bound(thrust::device, critical, critical + k, bounds, bounds + count + 1,
    reinterpret_cast<int64_t*>(block.ptr));
  if (k)
  {
    criticalKernel<I><<<cuda::blocksFor(k, 256, int64_t(cuda::multiprocessorCount()) * 16), 256>>>(
      critical, k, owner, grid, vertexRoot, topRoot, count, at.in(block.ptr));
    check(cudaGetLastError(), "critical cells launch");
  }
  check(cudaMemcpyAsync(block.ptr + nanAt, nan, static_cast<size_t>(count), cudaMemcpyDeviceToDevice, 0),
    "cudaMemcpyAsync");
  bool numbered = false;
  if (count == 1 && sortInFiltrationOrder<I>(block, at, k, images[0], data, super))
    if constexpr (std::is_same<I, uint32_t>::value)
    {
      numbered = numberPathEnds(block, at, k, grid);
      if (numbered && needsBoundaries(grid.top, false))
        keepSortedCells(at.in(block.ptr), k, grid, kept);
    }
  const int threads = defaultThreadCount();
  CriticalHost<I> h;
  h.bytes = LargeArray<char>(total);
  cuda::copyToHost(h.bytes.data(), block.ptr, total, threads);
  const char* base = h.bytes.data();
  h.start = reinterpret_cast<const int64_t*>(base);
  h.cell = reinterpret_cast<const I*>(base + cellAt);
  h.voxel = reinterpret_cast<const I*>(base + voxelAt);
  h.edgeEnds = reinterpret_cast<const I*>(base + edgeAt);
  h.dualEnds = reinterpret_cast<const I*>(base + dualAt);
  h.dimension = reinterpret_cast<const int8_t*>(base + dimAt);
  std::vector<BuiltPiece> pieces;
  pieces.reserve(images.size());
  for (int64_t b = 0; b < count; ++b)
  {
    pieces.emplace_back(cg);
    pieces.back().summary.hasNan = base[nanAt + b] != 0;
  }
  // Images on the threads; a single image's cells on them.
  if (count == 1)
    assemble(h, 0, images[0], grid, super, threads, numbered, pieces[0].summary);
  else
    parallelFor(count, threads, [&](int, int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        assemble(h, b, images[static_cast<size_t>(b)], grid, super, 1, false, pieces[static_cast<size_t>(b)].summary);
    });
  return pieces;
}
} // namespace

int64_t piecesPerLaunchGPU(const GridView& image, Construction construction)
{
  const BatchGrid g = batchGrid(image, cubical::CellGrid(image, construction));
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  // With one cell in six critical (uniform noise), as gpuSlabSpan assumes;
  // a batch past 2^32 cells would take 8-byte indices, which the quarter's
  // margin covers.
  const double perImage = WholeImageBytes(image, g).peak(static_cast<double>(g.cells) / 6);
  const int64_t byMemory = static_cast<int64_t>(static_cast<double>(free / 4) / std::max(1.0, perImage));
  const int64_t byIndex = (int64_t(INT32_MAX) - 1) / std::max(g.vertices, g.tops + 1);
  int64_t most = std::min(byMemory, byIndex);
  // A user sharing the device (a training loop's tensors) may ask for less.
  if (const char* env = std::getenv("TOPOVOX_GPU_BATCH_IMAGES"))
    if (std::atoll(env) > 0)
      most = std::min<int64_t>(most, std::atoll(env));
  return std::max<int64_t>(1, most);
}

namespace
{
// The images on the device and their gradient (three bytes a cell: state,
// step, owner), and whether each image holds a NaN: the first step of
// buildPiecesGPU, and all that gpuSlabSpan's probe needs to count the
// critical cells.
struct GradientOnDevice
{
  cuda::DeviceArray<char, true> data;
  cuda::DeviceArray<uint8_t, true> state, step, owner, nan;

  GradientOnDevice(const std::vector<GridView>& images, const BatchGrid& grid, const cubical::CellGrid& cg,
    Filtration filtration)
    : data(images.size() * static_cast<size_t>(grid.voxels) * scalarTypeSize(images[0].type))
    , state(images.size() * static_cast<size_t>(grid.cells), true)
    , step(images.size() * static_cast<size_t>(grid.cells), true)
    , owner(images.size() * static_cast<size_t>(grid.cells), true)
    , nan(images.size(), true)
  {
    const int64_t count = static_cast<int64_t>(images.size());
    upload(images, grid.voxels, data.ptr);
    GradientArrays arrays{};
    arrays.state = state.ptr;
    arrays.step = step.ptr;
    arrays.ownerCode = owner.ptr;
    const CornerTables tab = makeCornerTables(cg);
    const int sms = cuda::multiprocessorCount();
    dispatchScalarType(images[0].type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* d = reinterpret_cast<const T*>(data.ptr);
      const unsigned blocks = cuda::blocksFor(count * grid.voxels, 256, int64_t(sms) * 16);
      if (filtration == Filtration::Superlevel)
        gradientKernel<T, true><<<blocks, 256>>>(d, grid, tab, arrays, count, nan.ptr);
      else
        gradientKernel<T, false><<<blocks, 256>>>(d, grid, tab, arrays, count, nan.ptr);
    });
    check(cudaGetLastError(), "gradient kernel launch");
  }
};

// The critical cells in index order (image by image, each in the CPU's
// scan order: CUB's stream compaction, counted first to size the list),
// the roots of the paths from each vertex and top cell, then the summaries.
std::vector<BuiltPiece> summarizeOnDevice(const std::vector<GridView>& images, const BatchGrid& grid,
  const cubical::CellGrid& cg, bool super, int64_t count, size_t cells, const uint8_t* state, const uint8_t* owner,
  const uint8_t* nan, const void* data, KeptCells& kept)
{
  const int sms = cuda::multiprocessorCount();
  const CriticalFlag isCritical{ state };
  const thrust::counting_iterator<int64_t> all(0);
  const int64_t criticalCount = countCritical(state, static_cast<int64_t>(cells));
  cuda::DeviceArray<int64_t, true> critical(static_cast<size_t>(criticalCount));
  {
    cuda::DeviceArray<int64_t, true> selected(1);
    size_t tempBytes = 0;
    check(cub::DeviceSelect::If(nullptr, tempBytes, all, critical.ptr, selected.ptr, static_cast<int64_t>(cells),
            isCritical),
      "cub::DeviceSelect::If");
    cuda::DeviceArray<char, true> temp(tempBytes);
    check(cub::DeviceSelect::If(temp.ptr, tempBytes, all, critical.ptr, selected.ptr, static_cast<int64_t>(cells),
            isCritical),
      "cub::DeviceSelect::If");
  }
  cuda::DeviceArray<int, true> changed(1);
  cuda::DeviceArray<uint32_t, true> vertexNext(grid.top >= 2 ? static_cast<size_t>(count * grid.vertices) : 0);
  if (grid.top >= 2)
  {
    vertexPointers<<<cuda::blocksFor(count * grid.vertices, 256, int64_t(sms) * 16), 256>>>(
      state, grid, count, vertexNext.ptr);
    check(cudaGetLastError(), "vertex pointers launch");
    jumpToRoots(vertexNext.ptr, count * grid.vertices, changed.ptr);
  }
  cuda::DeviceArray<uint32_t, true> topNext(grid.top >= 1 ? static_cast<size_t>(count * grid.tops + 1) : 0);
  if (grid.top >= 1)
  {
    topPointers<<<cuda::blocksFor(count * grid.tops, 256, int64_t(sms) * 16), 256>>>(
      state, grid, count, topNext.ptr);
    check(cudaGetLastError(), "top pointers launch");
    jumpToRoots(topNext.ptr, count * grid.tops + 1, changed.ptr);
  }
  if (grid.cells < int64_t(UINT32_MAX))
    return summarize<uint32_t>(images, grid, cg, super, critical.ptr, criticalCount, owner, vertexNext.ptr,
      topNext.ptr, nan, data, kept);
  return summarize<uint64_t>(images, grid, cg, super, critical.ptr, criticalCount, owner, vertexNext.ptr,
    topNext.ptr, nan, data, kept);
}

std::vector<BuiltPiece> piecesFromGradient(const std::vector<GridView>& images, const cubical::CellGrid& cg,
  const BatchGrid& grid, Filtration filtration, GradientOnDevice& g);
} // namespace

int64_t gpuSlabSpan(
  const GridView& image, Construction construction, Filtration filtration, int* axis, std::vector<BuiltPiece>* whole)
{
  const cubical::CellGrid cells(image, construction);
  const BatchGrid g = batchGrid(image, cells);
  size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  double budget = 0.8 * static_cast<double>(free);
  if (const char* env = std::getenv("TOPOVOX_GPU_MEMORY_LIMIT"))
    if (std::atoll(env) > 0)
      budget = std::min(budget, static_cast<double>(std::atoll(env)));
  const bool indices = g.vertices < INT32_MAX - 1 && g.tops + 1 < INT32_MAX - 1;
  if (indices)
  {
    // Uniform noise makes about one cell in six critical, smooth images
    // far fewer (1,024^3 of an upsampled CT: one in 2,200). Where the
    // image would fit with that many, it goes whole; where it would not,
    // but would with none, the gradient is built once to count them (a
    // fraction of the whole image's time, which the slabs, their rest on
    // the CPU threads, would multiply).
    const WholeImageBytes need(image, g);
    if (need.peak(static_cast<double>(g.cells) / 6) <= budget)
      return 0;
    if (need.peak(0) <= budget)
    {
      GradientOnDevice probe({ image }, g, cells, filtration);
      if (need.peak(static_cast<double>(countCritical(probe.state.ptr, g.cells))) <= budget)
      {
        if (whole)
          *whole = piecesFromGradient({ image }, cells, g, filtration, probe);
        return 0;
      }
    }
  }
  *axis = image.dims[2] > 1 ? 2 : image.dims[1] > 1 ? 1 : 0;
  const int64_t planes = image.dims[*axis];
  // A plane of voxels and the cells between it and the next: a slab of
  // span s holds s + 1 planes and, in the T construction, one below.
  const double perPlane = static_cast<double>(g.voxels / planes) * scalarTypeSize(image.type) +
    3.0 * static_cast<double>(g.cells) / static_cast<double>(planes);
  const int64_t span = static_cast<int64_t>(budget / perPlane) - 2;
  if (span < 1 || planes < 3)
    return -1;
  return std::min(span, (planes - 1 + 1) / 2); // two slabs at least
}

std::vector<BuiltPiece> buildPiecesGPU(
  const std::vector<GridView>& images, Construction construction, Filtration filtration)
{
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
  {
    cudaGetLastError();
    throw std::runtime_error("no CUDA device");
  }
  if (images.empty())
    return {};
  const GridView& first = images[0];
  for (const GridView& g : images)
    if (g.type != first.type || g.dims[0] != first.dims[0] || g.dims[1] != first.dims[1] ||
      g.dims[2] != first.dims[2])
      throw std::invalid_argument("buildPiecesGPU: the images differ in size or type");
  const cubical::CellGrid cg(first, construction);
  const BatchGrid grid = batchGrid(first, cg);
  const int64_t count = static_cast<int64_t>(images.size());
  if (count * grid.vertices >= INT32_MAX || count * grid.tops + 1 >= INT32_MAX)
    throw std::runtime_error("too many vertices for 32-bit path indices");

  GradientOnDevice g(images, grid, cg, filtration);
  return piecesFromGradient(images, cg, grid, filtration, g);
}

namespace
{
// buildPiecesGPU's steps after the gradient (which they take over).
std::vector<BuiltPiece> piecesFromGradient(const std::vector<GridView>& images, const cubical::CellGrid& cg,
  const BatchGrid& grid, Filtration filtration, GradientOnDevice& g)
{
  const GridView& first = images[0];
  const int64_t count = static_cast<int64_t>(images.size());
  const bool super = filtration == Filtration::Superlevel;
  const size_t cells = static_cast<size_t>(count * grid.cells);
  auto& data = g.data;
  auto& state = g.state;
  auto& step = g.step;
  auto& owner = g.owner;
  auto& nan = g.nan;

  // The summaries. Their device arrays (the critical cells, the paths'
  // roots) are freed before the boundaries' arrays are made, so that the
  // two never take the device's memory together (gpuSlabSpan's phases).
  // (A numbered image's sorted cells stay, for its boundaries' positions.)
  KeptCells sorted;
  std::vector<BuiltPiece> pieces =
    summarizeOnDevice(images, grid, cg, super, count, cells, state.ptr, owner.ptr, nan.ptr, data.ptr, sorted);

  // The gradients the Morse boundaries will read stay on the device, with
  // the voxels' ranks; without 32-bit ranks they come to the host.
  bool boundaries = false;
  for (const BuiltPiece& p : pieces)
    boundaries = boundaries || needsBoundaries(grid.top, p.summary.hasNan);
  if (boundaries && count * grid.voxels < int64_t(UINT32_MAX))
  {
    cuda::PooledArray<uint16_t> words = cellWords(state, step, owner, static_cast<int64_t>(cells));
    cuda::PooledArray<uint32_t> ranks = voxelRanks(data.ptr, first.type, count * grid.voxels, super);
    cuda::PooledArray<uint32_t> keys = cellKeys(words, ranks, grid, count);
    auto kept = std::make_shared<DeviceGradient>(DeviceGradient{ grid, count, std::move(state), std::move(step),
      std::move(owner), std::move(ranks), std::move(words), std::move(keys) });
    kept->sortedCells = std::move(sorted.cells);
    kept->sortedCount = sorted.count;
    for (int64_t b = 0; b < count; ++b)
      if (needsBoundaries(grid.top, pieces[static_cast<size_t>(b)].summary.hasNan))
      {
        pieces[static_cast<size_t>(b)].device = kept;
        pieces[static_cast<size_t>(b)].image = b;
      }
  }
  else if (boundaries)
  {
    const DeviceGradient here{ grid, count, std::move(state), std::move(step), std::move(owner),
      cuda::PooledArray<uint32_t>(0), cuda::PooledArray<uint16_t>(0), cuda::PooledArray<uint32_t>(0) };
    for (int64_t b = 0; b < count; ++b)
    {
      BuiltPiece& piece = pieces[static_cast<size_t>(b)];
      if (!needsBoundaries(grid.top, piece.summary.hasNan))
        continue;
      gradientToHost(here, b, piece.gradient);
      piece.gradientOnHost = true;
    }
  }
  return pieces;
}
} // namespace
}
}
