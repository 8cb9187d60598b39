// MorseBoundaryCUDA.cu - Morse boundaries on the GPU, from a gradient the
// summary left there (MorseDevice.cuh): one thread a critical cell runs
// MorsePiece's traversal - a max-heap of the chain's cells, the largest
// taken with the parity of its copies, a critical cell kept, a cell paired
// upwards replaced by the other faces of its coface - in the same order
// (rank * 32 + step is MorsePiece's Key), so the boundaries are the same.
//
// Why a thread a cell: on a 256^3 volume 65,000 boundaries take 100 heap
// steps on average, and the largest heap holds 150 cells (bonsai_256), so
// each traversal fits a small scratch of its own; the longest (11,000
// steps, 35,000 on engine_256x256x128, each a few dependent loads) bounds
// the kernel. A traversal that outgrows its scratch, or whose record does
// not fit the output, is retried with a larger one, and what still does not
// fit is handed back to the CPU, which computes it from the gradient copied
// to the host.
#include "MorseDevice.cuh"

#include "../common/HostCopy.h"
#include "../common/LargeArray.h"
#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace topovox
{
namespace morse
{
namespace
{
using cuda::check;

// A chain cell: its order key and its coordinates, 21 bits an axis.
struct Entry
{
  uint64_t key;
  uint64_t at;
};

__device__ __forceinline__ uint64_t pack(const int64_t c[3])
{
  return uint64_t(c[0]) | (uint64_t(c[1]) << 21) | (uint64_t(c[2]) << 42);
}
__device__ __forceinline__ void unpack(uint64_t at, int64_t c[3])
{
  const uint64_t mask = (uint64_t(1) << 21) - 1;
  c[0] = int64_t(at & mask);
  c[1] = int64_t((at >> 21) & mask);
  c[2] = int64_t(at >> 42);
}

struct Traversal
{
  const uint16_t* cellWord; // DeviceGradient::cellWord
  const uint32_t* rank;
  BatchGrid grid;
  int heapCapacity, outCapacity;
};

// One thread's traversal of image b's cell at c (see the file comment).
class Chain
{
public:
  __device__ Chain(const Traversal& t, int64_t b, Entry* heap, uint32_t* out)
    : T(t)
    , CellBase(b * t.grid.cells)
    , VoxelBase(b * t.grid.voxels)
    , Heap(heap)
    , Out(out)
  {
  }
  // The number of entries written to out (sorted), or -1 on overflow.
  __device__ int run(const int64_t c[3])
  {
    pushFaces(c, -1);
    while (Size > 0 && !Overflow)
    {
      const Entry top = pop();
      int parity = 1;
      while (Size > 0 && Heap[0].at == top.at)
      {
        pop();
        ++parity;
      }
      if (!(parity & 1))
        continue;
      int64_t f[3];
      unpack(top.at, f);
      const int64_t cell = index(f);
      const uint8_t s = T.cellWord[CellBase + cell] & 15;
      if (s == kCritical)
      {
        if (Count == T.outCapacity)
          return -1;
        Out[Count++] = static_cast<uint32_t>(cell);
      }
      else if (s >= kUp && s < kDown)
      {
        const int code = s - kUp;
        f[code >> 1] += (code & 1) ? 1 : -1;
        pushFaces(f, cell);
      }
    }
    if (Overflow)
      return -1;
    for (int i = 1; i < Count; ++i) // a few entries: insertion sort
    {
      const uint32_t v = Out[i];
      int j = i - 1;
      for (; j >= 0 && Out[j] > v; --j)
        Out[j + 1] = Out[j];
      Out[j + 1] = v;
    }
    return Count;
  }

private:
  __device__ int64_t index(const int64_t c[3]) const
  {
    return c[0] + T.grid.cellDims[0] * (c[1] + T.grid.cellDims[1] * c[2]);
  }
  // The faces of the cell at c but `except`, those that can reach a
  // critical cell (critical, or paired with a coface), as MorsePiece's.
  // Why in three rounds: a long traversal is a chain of dependent loads
  // (the faces' words, then their owners' ranks); loading all faces'
  // words, then all ranks, keeps up to six loads in flight instead of one.
  __device__ void pushFaces(const int64_t c[3], int64_t except)
  {
    const int64_t stride[3] = { 1, T.grid.cellDims[0], T.grid.cellDims[0] * T.grid.cellDims[1] };
    const int64_t cell = index(c);
    int64_t face[6];
    int side[6];
    uint16_t word[6];
    uint32_t rank[6];
#pragma unroll
    for (int i = 0; i < 6; ++i)
    {
      const int a = i >> 1;
      side[i] = (i & 1) ? 1 : -1;
      face[i] = T.grid.active[a] && (c[a] & 1) ? cell + side[i] * stride[a] : -1;
      if (face[i] == except)
        face[i] = -1;
    }
#pragma unroll
    for (int i = 0; i < 6; ++i)
      word[i] = face[i] >= 0 ? T.cellWord[CellBase + face[i]] : 0;
#pragma unroll
    for (int i = 0; i < 6; ++i)
    {
      const uint8_t state = word[i] & 15;
      if (state != kCritical && !(state >= kUp && state < kDown))
        face[i] = -1;
      if (face[i] < 0)
        continue;
      const uint8_t code = (word[i] >> 9) & 7;
      int64_t v[3];
      for (int a = 0; a < 3; ++a)
      {
        const int64_t f = c[a] + (a == (i >> 1) ? side[i] : 0);
        v[a] = T.grid.active[a] ? cubical::firstTouched(f, T.grid.tConstruction) + ((code >> a) & 1) : 0;
      }
      rank[i] = T.rank[VoxelBase + v[0] + T.grid.voxelDims[0] * (v[1] + T.grid.voxelDims[1] * v[2])];
    }
#pragma unroll
    for (int i = 0; i < 6; ++i)
      if (face[i] >= 0)
      {
        int64_t f[3] = { c[0], c[1], c[2] };
        f[i >> 1] += side[i];
        push(Entry{ uint64_t(rank[i]) * 32 + ((word[i] >> 4) & 31), pack(f) });
      }
  }
  __device__ void push(const Entry& e)
  {
    if (Size == T.heapCapacity)
    {
      Overflow = true;
      return;
    }
    int i = Size++;
    while (i > 0)
    {
      const int parent = (i - 1) >> 1;
      if (Heap[parent].key >= e.key)
        break;
      Heap[i] = Heap[parent];
      i = parent;
    }
    Heap[i] = e;
  }
  __device__ Entry pop()
  {
    const Entry top = Heap[0];
    const Entry last = Heap[--Size];
    int i = 0;
    for (;;)
    {
      int child = 2 * i + 1;
      if (child >= Size)
        break;
      if (child + 1 < Size && Heap[child + 1].key > Heap[child].key)
        ++child;
      if (Heap[child].key <= last.key)
        break;
      Heap[i] = Heap[child];
      i = child;
    }
    if (Size > 0)
      Heap[i] = last;
    return top;
  }

  const Traversal& T;
  int64_t CellBase, VoxelBase;
  Entry* Heap;
  uint32_t* Out;
  int Size = 0, Count = 0;
  bool Overflow = false;
};

// Records go to `flat` as MorsePiece::boundaries lays them out (cell,
// count, entries), each at a place taken atomically; cells whose traversal
// or record does not fit go to `left`. sizes: [0] places taken, [1] cells
// left, [2] the first place taken that did not fit (records below it are
// all written; set to all ones before the launch).
__global__ void boundaryKernel(const int64_t* __restrict__ cells, int64_t count, int64_t image, Traversal t,
  Entry* heaps, uint32_t* outs, int64_t* flat, unsigned long long flatCapacity, unsigned long long* sizes,
  int64_t* left)
{
  const int64_t threads = int64_t(gridDim.x) * blockDim.x, me = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  Entry* heap = heaps + me * t.heapCapacity;
  uint32_t* out = outs + me * t.outCapacity;
  for (int64_t k = me; k < count; k += threads)
  {
    const int64_t cell = cells[k];
    const int64_t c[3] = { cell % t.grid.cellDims[0], (cell / t.grid.cellDims[0]) % t.grid.cellDims[1],
      cell / (t.grid.cellDims[0] * t.grid.cellDims[1]) };
    // Not critical (a caller's mistake): the CPU path reports it.
    Chain chain(t, image, heap, out);
    const int n = (t.cellWord[image * t.grid.cells + cell] & 15) == kCritical ? chain.run(c) : -1;
    unsigned long long at = flatCapacity;
    if (n >= 0)
      at = atomicAdd(&sizes[0], 2ull + unsigned(n));
    if (n < 0 || at + 2 + n > flatCapacity)
    {
      if (n >= 0)
        atomicMin(&sizes[2], at);
      left[atomicAdd(&sizes[1], 1ull)] = cell;
      continue;
    }
    flat[at] = cell;
    flat[at + 1] = n;
    for (int i = 0; i < n; ++i)
      flat[at + 2 + i] = out[i];
  }
}

template <typename T>
__global__ void orientedKernel(const T* __restrict__ data, int64_t n, bool super, double* out, uint32_t* index)
{
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
  {
    // -0.0 and 0.0 are one value to the CPU's comparisons, but the radix
    // sort's bit order puts -0.0 first: both become 0.0, so that ties go by
    // index as on the CPU.
    const double v = static_cast<double>(data[i]);
    out[i] = v == 0 ? 0.0 : super ? -v : v;
    index[i] = static_cast<uint32_t>(i);
  }
}

__global__ void scatterRanks(const uint32_t* __restrict__ sorted, int64_t n, uint32_t* rank)
{
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    rank[sorted[i]] = static_cast<uint32_t>(i);
}

__global__ void packKernel(const uint8_t* __restrict__ state, const uint8_t* __restrict__ step,
  const uint8_t* __restrict__ owner, int64_t n, uint16_t* word)
{
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    word[i] = static_cast<uint16_t>(state[i] | (step[i] << 4) | (owner[i] << 9));
}

int envOr(const char* name, int fallback)
{
  const char* v = std::getenv(name);
  return v && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}
} // namespace

cuda::PooledArray<uint32_t> voxelRanks(const void* data, ScalarType type, int64_t n, bool super)
{
  if (n >= int64_t(UINT32_MAX))
    throw std::runtime_error("too many voxels for 32-bit ranks");
  const size_t count = static_cast<size_t>(n);
  cuda::PooledArray<double> keys(count), sortedKeys(count);
  cuda::PooledArray<uint32_t> index(count), sorted(count), rank(count);
  const unsigned blocks = cuda::blocksFor(n, 256, int64_t(cuda::multiprocessorCount()) * 16);
  dispatchScalarType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    orientedKernel<T><<<blocks, 256>>>(static_cast<const T*>(data), n, super, keys.ptr, index.ptr);
  });
  check(cudaGetLastError(), "oriented values launch");
  size_t tempBytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, tempBytes, keys.ptr, sortedKeys.ptr, index.ptr, sorted.ptr, n),
    "cub::DeviceRadixSort::SortPairs");
  {
    cuda::PooledArray<char> temp(tempBytes);
    check(cub::DeviceRadixSort::SortPairs(temp.ptr, tempBytes, keys.ptr, sortedKeys.ptr, index.ptr, sorted.ptr, n),
      "cub::DeviceRadixSort::SortPairs");
  }
  scatterRanks<<<blocks, 256>>>(sorted.ptr, n, rank.ptr);
  check(cudaGetLastError(), "ranks launch");
  return rank;
}

cuda::PooledArray<uint16_t> cellWords(
  const cuda::PooledArray<uint8_t>& state, const cuda::PooledArray<uint8_t>& step,
  const cuda::PooledArray<uint8_t>& owner, int64_t n)
{
  cuda::PooledArray<uint16_t> word(static_cast<size_t>(n));
  packKernel<<<cuda::blocksFor(n, 256, int64_t(cuda::multiprocessorCount()) * 16), 256>>>(
    state.ptr, step.ptr, owner.ptr, n, word.ptr);
  check(cudaGetLastError(), "cell words launch");
  return word;
}

namespace
{
// One launch over `cells`: records for those that fit, the others in *left.
// Scratch a thread: a heap of heapCapacity entries and an output list of
// outCapacity; `room` entries a cell on average for the records.
std::vector<int64_t> boundaryPass(const DeviceGradient& g, int64_t image, const std::vector<int64_t>& cells,
  int heapCapacity, int outCapacity, int room, int64_t maxBlocks, std::vector<int64_t>* left)
{
  const int64_t count = static_cast<int64_t>(cells.size());
  const Traversal t{ g.cellWord.ptr, g.rank.ptr, g.grid, heapCapacity, outCapacity };
  const int perBlock = 128;
  const unsigned blocks = cuda::blocksFor(count, perBlock, maxBlocks);
  const int64_t threads = int64_t(blocks) * perBlock;
  const unsigned long long flatCapacity =
    static_cast<unsigned long long>(room) * static_cast<unsigned long long>(count);
  cuda::PooledArray<int64_t> onDevice(cells.size()), flat(flatCapacity), leftCells(cells.size());
  cuda::PooledArray<Entry> heaps(static_cast<size_t>(threads * t.heapCapacity));
  cuda::PooledArray<uint32_t> outs(static_cast<size_t>(threads * t.outCapacity));
  cuda::PooledArray<unsigned long long> sizes(3, true);
  check(cudaMemsetAsync(sizes.ptr + 2, 0xFF, sizeof(unsigned long long), 0), "cudaMemsetAsync");
  check(cudaMemcpyAsync(onDevice.ptr, cells.data(), cells.size() * sizeof(int64_t), cudaMemcpyHostToDevice, 0),
    "cudaMemcpyAsync");
  boundaryKernel<<<blocks, perBlock>>>(onDevice.ptr, count, image, t, heaps.ptr, outs.ptr, flat.ptr, flatCapacity,
    sizes.ptr, leftCells.ptr);
  check(cudaGetLastError(), "boundary kernel launch");
  unsigned long long used[3];
  check(cudaMemcpy(used, sizes.ptr, sizeof used, cudaMemcpyDeviceToHost), "cudaMemcpy");
  const size_t written = static_cast<size_t>(std::min(used[0], used[2]));
  std::vector<int64_t> records(written);
  cuda::copyToHost(records.data(), flat.ptr, written * sizeof(int64_t), defaultThreadCount());
  left->resize(static_cast<size_t>(used[1]));
  if (used[1])
    check(cudaMemcpy(left->data(), leftCells.ptr, left->size() * sizeof(int64_t), cudaMemcpyDeviceToHost),
      "cudaMemcpy");
  return records;
}
} // namespace

std::vector<int64_t> boundariesGPU(
  const DeviceGradient& g, int64_t image, const std::vector<int64_t>& cells, std::vector<int64_t>* left)
{
  left->clear();
  if (cells.empty())
    return {};
  if (g.grid.cells >= int64_t(UINT32_MAX) || g.grid.cellDims[0] >= (1 << 21) || g.grid.cellDims[1] >= (1 << 21) ||
    g.grid.cellDims[2] >= (1 << 21))
  {
    *left = cells;
    return {};
  }
  // Pass 1, every cell: a scratch for heaps of 384 (the largest heaps:
  // bonsai_256 150, colin27_t1 163, engine_256x256x128 267; 99.9% of them
  // under 75), room for 14 entries a boundary on average (bonsai_256: 5),
  // 256 threads a multiprocessor (the bulk of the traversals take well
  // under a millisecond; the time is the longest one's). Pass 2, what did
  // not fit: a scratch ten times larger for a thousand threads at most. A
  // cell retried there runs after pass 1's longest, so pass 1 must fit the
  // common ones; the CPU, which then needs the whole gradient copied to the
  // host, gets almost nothing. The tests shrink pass 1
  // (TOPOVOX_GPU_BOUNDARY_HEAP, _OUT, _ROOM) and turn pass 2 off
  // (TOPOVOX_GPU_BOUNDARY_RETRY=0) to send traversals on.
  const int64_t sms = cuda::multiprocessorCount();
  std::vector<int64_t> records = boundaryPass(g, image, cells, envOr("TOPOVOX_GPU_BOUNDARY_HEAP", 384),
    envOr("TOPOVOX_GPU_BOUNDARY_OUT", 128), envOr("TOPOVOX_GPU_BOUNDARY_ROOM", 16), sms * 2, left);
  const char* retry = std::getenv("TOPOVOX_GPU_BOUNDARY_RETRY");
  if (left->empty() || (retry && std::atoi(retry) == 0))
    return records;
  const std::vector<int64_t> again = *left;
  const std::vector<int64_t> more = boundaryPass(g, image, again, 4096, 1024, 1026, 8, left);
  records.insert(records.end(), more.begin(), more.end());
  return records;
}

void gradientToHost(const DeviceGradient& g, int64_t image, Gradient& out)
{
  const size_t n = static_cast<size_t>(g.grid.cells), at = static_cast<size_t>(image * g.grid.cells);
  const int threads = defaultThreadCount();
  out.state = LargeArray<uint8_t>(n);
  out.step = LargeArray<uint8_t>(n);
  out.ownerCode = LargeArray<uint8_t>(n);
  cuda::copyToHost(out.state.data(), g.state.ptr + at, n, threads);
  cuda::copyToHost(out.step.data(), g.step.ptr + at, n, threads);
  cuda::copyToHost(out.ownerCode.data(), g.owner.ptr + at, n, threads);
}
}
}
