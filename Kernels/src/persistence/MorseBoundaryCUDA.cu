// MorseBoundaryCUDA.cu - Morse boundaries on the GPU, from a gradient the
// summary left there (MorseDevice.cuh), each traversal as MorsePiece's
// (MorseChain.cuh), so the boundaries are the same.
//
// Two passes. On a 256^3 volume 65,000 boundaries take 100 steps on
// average, and the largest chain holds 150 cells (bonsai_256): pass 1 runs
// one thread a cell, each with a small heap of its own, and stops a
// traversal after 1,024 steps. A few take thousands (the longest:
// bonsai_256 11,000, colin27_t1 28,000, engine_256x256x128 35,000; 2-cells
// whose chains sweep plateaus), where a thread's step took about 2 us and
// the longest traversal was the kernel's time: pass 2 runs those stopped,
// and those whose heap or record did not fit, one warp a cell (WarpChain).
// What still does not fit is handed back to the CPU, which computes it from
// the gradient copied to the host.
#include "MorseChain.cuh"

#include "../common/HostCopy.h"
#include "../common/LargeArray.h"
#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <type_traits>

namespace topovox
{
namespace morse
{
namespace
{
using cuda::check;

// Records go to `flat` as MorsePiece::boundaries lays them out (cell,
// count, entries), each at a place taken atomically, which goes to
// `starts`; cells whose traversal or record does not fit go to `left`.
// sizes: [0] places taken, [1] cells left, [2] the first place taken that
// did not fit (records below it are all written; set to all ones before
// the launch), [3] records written.
struct Records
{
  int64_t* flat;
  unsigned long long capacity;
  unsigned long long* sizes;
  int64_t* left;
  unsigned long long* starts;
  // Where the records are held for translation (boundariesGPU): each
  // critical cell's position, and per position the slot (BoundaryRows);
  // null: the records hold cells.
  const uint32_t* position;
  const int32_t* slotOf;
};

// A record's first entry, and a face, as the records hold them: held, the
// slot and the face's position tagged as -1 - position (heads and counts
// are never negative), which heldRowsKernel turns into the face's row once
// the rows are known.
__device__ inline int64_t recordHead(const Records& r, int64_t cell)
{
  return r.position ? r.slotOf[r.position[cell]] : cell;
}
__device__ inline int64_t recordFace(const Records& r, uint32_t cell)
{
  return r.position ? -1 - int64_t(r.position[cell]) : int64_t(cell);
}

// Where cell's record of n entries goes (taken by one thread), or
// `capacity` when it goes to `left` (n < 0: it did not fit the scratch).
__device__ unsigned long long placeRecord(const Records& r, int64_t cell, int n)
{
  unsigned long long at = r.capacity;
  if (n >= 0)
    at = atomicAdd(&r.sizes[0], 2ull + unsigned(n));
  if (n >= 0 && at + 2 + n <= r.capacity)
  {
    r.starts[atomicAdd(&r.sizes[3], 1ull)] = at;
    return at;
  }
  if (n >= 0)
    atomicMin(&r.sizes[2], at);
  r.left[atomicAdd(&r.sizes[1], 1ull)] = cell;
  return r.capacity;
}

// A thread a cell (Chain), its heap in `heaps`; a traversal stopped after
// maxSteps steps goes to `left`.
__global__ void boundaryKernel(const int64_t* __restrict__ cells, int64_t count, int64_t image, Traversal t,
  int maxSteps, Entry* heaps, uint32_t* outs, Records r)
{
  const int64_t threads = int64_t(gridDim.x) * blockDim.x, me = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  Entry* heap = heaps + me * t.heapCapacity;
  uint32_t* out = outs + me * t.outCapacity;
  for (int64_t k = me; k < count; k += threads)
  {
    const int64_t cell = cells[k];
    int64_t c[3];
    cellCoordinates(t.grid, cell, c);
    // Not critical (a caller's mistake): the CPU path reports it.
    Chain chain(t, image, heap, out);
    const int n = (t.cellWord[image * t.grid.cells + cell] & 15) == kCritical ? chain.run(c, maxSteps) : -1;
    const unsigned long long at = placeRecord(r, cell, n);
    if (at == r.capacity)
      continue;
    r.flat[at] = recordHead(r, cell);
    r.flat[at + 1] = n;
    for (int i = 0; i < n; ++i)
      r.flat[at + 2 + i] = recordFace(r, out[i]);
  }
}

// A warp a cell (WarpChain), its heaps in the block's shared memory.
__global__ void warpBoundaryKernel(
  const int64_t* __restrict__ cells, int64_t count, int64_t image, Traversal t, uint32_t* outs, Records r)
{
  extern __shared__ uint64_t pools[];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t warps = int64_t(gridDim.x) * (blockDim.x >> 5), me = blockIdx.x * int64_t(blockDim.x >> 5) + warp;
  uint64_t* keys = pools + int64_t(warp) * 2 * t.heapCapacity;
  uint32_t* out = outs + me * t.outCapacity;
  for (int64_t k = me; k < count; k += warps)
  {
    const int64_t cell = cells[k];
    int64_t c[3];
    cellCoordinates(t.grid, cell, c);
    WarpChain chain(t, image, keys, keys + t.heapCapacity, out);
    const int n = (t.cellWord[image * t.grid.cells + cell] & 15) == kCritical ? chain.run(c) : -1;
    unsigned long long at = 0;
    if (lane == 0)
      at = placeRecord(r, cell, n);
    at = __shfl_sync(~0u, at, 0);
    if (at == r.capacity)
      continue;
    if (lane == 0)
    {
      r.flat[at] = recordHead(r, cell);
      r.flat[at + 1] = n;
    }
    for (int i = lane; i < n; i += 32)
      r.flat[at + 2 + i] = recordFace(r, out[i]);
    __syncwarp();
  }
}

// The key a voxel's rank is sorted by: its value in filtration
// orientation, in an order the radix sort's bits follow. Integer types of
// up to 32 bits keep their width (the value with its sign bit flipped,
// complemented for the superlevel filtration: equal values stay equal, so
// ties still go by index), which takes one radix pass for 8 bits instead
// of eight for a double, and 2 + 4 bytes of sort buffers a voxel for uint8
// instead of 16. Floating types (and 64-bit integers) keep a double.
template <typename T, bool kNarrow = std::is_integral<T>::value && sizeof(T) <= 4>
struct RankKey
{
  using type = double;
  __device__ static double of(T value, bool super)
  {
    // -0.0 and 0.0 are one value to the CPU's comparisons, but the radix
    // sort's bit order puts -0.0 first: both become 0.0, so that ties go
    // by index as on the CPU.
    const double v = static_cast<double>(value);
    return v == 0 ? 0.0 : super ? -v : v;
  }
};
template <typename T>
struct RankKey<T, true>
{
  using type = typename std::make_unsigned<T>::type;
  __device__ static type of(T value, bool super) { return orderedIntegerKey(value, super); }
};

template <typename T>
__global__ void orientedKernel(const T* __restrict__ data, int64_t n, bool super,
  typename RankKey<T>::type* out, uint32_t* index)
{
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
  {
    out[i] = RankKey<T>::of(data[i], super);
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

// Each cell's key, rank * 32 + step, from its word and its owner's rank (0
// for cells no traversal takes: neither critical nor paired upwards).
__global__ void keyKernel(const uint16_t* __restrict__ word, const uint32_t* __restrict__ rank, BatchGrid grid,
  int64_t images, uint32_t* key)
{
  const int64_t n = images * grid.cells;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
  {
    const uint16_t w = word[i];
    const uint8_t state = w & 15;
    if (state != kCritical && !(state >= kUp && state < kDown))
    {
      key[i] = 0;
      continue;
    }
    const int64_t b = i / grid.cells;
    int64_t c[3];
    cellCoordinates(grid, i - b * grid.cells, c);
    key[i] = static_cast<uint32_t>(keyOf(rank[b * grid.voxels + ownerVoxel(grid, c, w)], w));
  }
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
  cuda::PooledArray<uint32_t> rank(count);
  const unsigned blocks = cuda::blocksFor(n, 256, int64_t(cuda::multiprocessorCount()) * 16);
  dispatchScalarType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Key = typename RankKey<T>::type;
    cuda::PooledArray<Key> keys(count), sortedKeys(count);
    cuda::PooledArray<uint32_t> index(count), sorted(count);
    orientedKernel<T><<<blocks, 256>>>(static_cast<const T*>(data), n, super, keys.ptr, index.ptr);
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
  });
  return rank;
}

cuda::PooledArray<uint32_t> cellKeys(const cuda::PooledArray<uint16_t>& word, const cuda::PooledArray<uint32_t>& rank,
  const BatchGrid& grid, int64_t images)
{
  if (!cellKeysWanted(images * grid.voxels))
    return cuda::PooledArray<uint32_t>(0);
  const int64_t n = images * grid.cells;
  cuda::PooledArray<uint32_t> key(static_cast<size_t>(n));
  keyKernel<<<cuda::blocksFor(n, 256, int64_t(cuda::multiprocessorCount()) * 16), 256>>>(
    word.ptr, rank.ptr, grid, images, key.ptr);
  check(cudaGetLastError(), "cell keys launch");
  return key;
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
// How one launch runs: a thread's (or warp's) scratch (a heap, or pool, of
// heapCapacity entries and an output list of outCapacity), `room` entries
// a cell on average for the records, the steps after which a thread's
// traversal is handed on, whether a warp runs each traversal, threads a
// block and blocks at most.
struct PassShape
{
  int heapCapacity, outCapacity, room, maxSteps;
  bool warps;
  int perBlock;
  int64_t maxBlocks;
};

} // namespace

// Records a launch wrote on the device: its first `written` entries, the
// records starting at its first `records` starts.
struct DeviceRecords
{
  cuda::PooledArray<int64_t> flat{ 0 };
  size_t written = 0;
  cuda::PooledArray<unsigned long long> starts{ 0 };
  size_t records = 0;
};

// Records held on the device (boundariesGPU): each launch's.
struct HeldRecords
{
  std::vector<DeviceRecords> parts;
  int64_t positions = 0;
};

namespace
{
// Records brought to the host (gigabytes at 512^3, written by the copy).
template <typename List>
List recordsToHost(const std::vector<DeviceRecords>& parts)
{
  size_t total = 0;
  for (const DeviceRecords& d : parts)
    total += d.written;
  List records;
  resizeOnHugePages(records, total);
  size_t at = 0;
  for (const DeviceRecords& d : parts)
  {
    cuda::copyToHost(records.data() + at, d.flat.ptr, d.written * sizeof(int64_t), defaultThreadCount());
    at += d.written;
  }
  return records;
}

// One launch over `cells`: records for those that fit, the others in *left.
DeviceRecords boundaryPass(const DeviceGradient& g, int64_t image, const std::vector<int64_t>& cells,
  const PassShape& shape, std::vector<int64_t>* left, const Records& translation)
{
  const int64_t count = static_cast<int64_t>(cells.size());
  const Traversal t{ g.cellWord.ptr, g.cellKey.ptr, g.rank.ptr, g.grid, shape.heapCapacity, shape.outCapacity };
  const int perBlock = shape.perBlock, perTraversal = shape.warps ? 32 : 1;
  const unsigned blocks = cuda::blocksFor(count * perTraversal, perBlock, shape.maxBlocks);
  const int64_t traversals = int64_t(blocks) * perBlock / perTraversal;
  const unsigned long long flatCapacity =
    static_cast<unsigned long long>(shape.room) * static_cast<unsigned long long>(count);
  cuda::PooledArray<int64_t> onDevice(cells.size()), flat(flatCapacity), leftCells(cells.size());
  cuda::PooledArray<unsigned long long> starts(cells.size());
  cuda::PooledArray<Entry> heaps(shape.warps ? 0 : static_cast<size_t>(traversals * t.heapCapacity));
  cuda::PooledArray<uint32_t> outs(static_cast<size_t>(traversals * t.outCapacity));
  cuda::PooledArray<unsigned long long> sizes(4, true);
  check(cudaMemsetAsync(sizes.ptr + 2, 0xFF, sizeof(unsigned long long), 0), "cudaMemsetAsync");
  check(cudaMemcpyAsync(onDevice.ptr, cells.data(), cells.size() * sizeof(int64_t), cudaMemcpyHostToDevice, 0),
    "cudaMemcpyAsync");
  const Records r{ flat.ptr, flatCapacity, sizes.ptr, leftCells.ptr, starts.ptr, translation.position,
    translation.slotOf };
  if (shape.warps)
  {
    const size_t sharedBytes = size_t(perBlock / 32) * 2 * t.heapCapacity * sizeof(uint64_t);
    if (sharedBytes > 48 * 1024)
      check(cudaFuncSetAttribute(warpBoundaryKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(sharedBytes)),
        "cudaFuncSetAttribute");
    warpBoundaryKernel<<<blocks, perBlock, sharedBytes>>>(onDevice.ptr, count, image, t, outs.ptr, r);
  }
  else
    boundaryKernel<<<blocks, perBlock>>>(onDevice.ptr, count, image, t, shape.maxSteps, heaps.ptr, outs.ptr, r);
  check(cudaGetLastError(), "boundary kernel launch");
  unsigned long long used[4];
  check(cudaMemcpy(used, sizes.ptr, sizeof used, cudaMemcpyDeviceToHost), "cudaMemcpy");
  DeviceRecords out;
  out.written = static_cast<size_t>(std::min(used[0], used[2]));
  out.flat = std::move(flat);
  out.records = static_cast<size_t>(used[3]);
  out.starts = std::move(starts);
  left->resize(static_cast<size_t>(used[1]));
  if (used[1])
    check(cudaMemcpy(left->data(), leftCells.ptr, left->size() * sizeof(int64_t), cudaMemcpyDeviceToHost),
      "cudaMemcpy");
  return out;
}

// Each critical cell's position, from the cells kept in the filtration
// order: position[sorted[k]] = k.
__global__ void positionKernel(const uint32_t* __restrict__ sorted, int64_t k, uint32_t* position)
{
  for (int64_t j = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; j < k; j += int64_t(gridDim.x) * blockDim.x)
    position[sorted[j]] = static_cast<uint32_t>(j);
}

// Held records' faces (-1 - position) turned into their rows (rowOf per
// position; -1 for none); a position past the cells into INT64_MAX, which
// the pairing refuses as a row past the matrix.
__global__ void heldRowsKernel(int64_t* flat, int64_t n, int64_t positions, const int32_t* __restrict__ rowOf)
{
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
  {
    const int64_t v = flat[i];
    if (v < 0)
      flat[i] = -1 - v < positions ? int64_t(rowOf[-1 - v]) : int64_t(INT64_MAX);
  }
}

} // namespace

std::vector<int64_t> boundariesGPU(const DeviceGradient& g, int64_t image, const std::vector<int64_t>& cells,
  std::vector<int64_t>* left, const BoundaryRows& rows, std::shared_ptr<HeldRecords>* held)
{
  left->clear();
  held->reset();
  if (cells.empty())
    return {};
  if (g.grid.cells >= int64_t(UINT32_MAX) || g.grid.cellDims[0] >= (1 << 21) || g.grid.cellDims[1] >= (1 << 21) ||
    g.grid.cellDims[2] >= (1 << 21))
  {
    *left = cells;
    return {};
  }
  // Pass 1, every cell: heaps of 384 (the largest: bonsai_256 150,
  // colin27_t1 163, engine_256x256x128 267; 99.9% of them under 75), room
  // for 16 entries a boundary on average (bonsai_256: 5), 256 threads a
  // multiprocessor, and 1,024 steps a traversal (of the 2-cells' boundaries
  // the three volumes need, 1.4%, 0.4% and 1.6% take more). Pass 2, what
  // pass 1 handed on (a few hundred cells): a warp a cell, its 32 heaps of
  // 64 cells in the block's 32 kB of shared memory, no limit on steps. The
  // CPU, which then needs the whole gradient copied to the host, gets what
  // still does not fit. The tests shrink pass 1 (TOPOVOX_GPU_BOUNDARY_HEAP,
  // _OUT, _ROOM, _STEPS) and turn pass 2 off (TOPOVOX_GPU_BOUNDARY_RETRY=0)
  // to send traversals on.
  const int64_t sms = cuda::multiprocessorCount();
  const PassShape first{ envOr("TOPOVOX_GPU_BOUNDARY_HEAP", 384), envOr("TOPOVOX_GPU_BOUNDARY_OUT", 128),
    envOr("TOPOVOX_GPU_BOUNDARY_ROOM", 16), envOr("TOPOVOX_GPU_BOUNDARY_STEPS", 1024), false, 128, sms * 2 };
  // Records held as slots and positions: the map of every cell to its
  // position (4 bytes a cell of the complex, written for the critical ones)
  // and the pairing's slots per position, uploaded; the records stay on the
  // device until heldRecordsToRows has the rows, which are known only once
  // dimension 0's union-find is done (MorsePairing::BoundaryRequest: the
  // traversals run meanwhile). Skipped when the device cannot spare the
  // room, or with TOPOVOX_GPU_BOUNDARY_ROWS=0. On the host, looking up a
  // 512^3 field's 21.8 M boundaries and their faces in the pairing's table
  // of 85 M cells took most of 2.3 s of its 16 threads (twenty-eighth
  // session), and reading their rows at their positions 1.7 s (twenty-ninth).
  Records translation{};
  const char* wanted = std::getenv("TOPOVOX_GPU_BOUNDARY_ROWS"); // (0: off, for the tests)
  const bool translate = rows.positions > 0 && rows.positions == g.sortedCount && g.images == 1 && image == 0 &&
    rows.slotOf && !(wanted && std::atoi(wanted) == 0);
  const size_t mapBytes = translate ? static_cast<size_t>(g.grid.cells) * sizeof(uint32_t) : 0,
               perPosition = translate ? static_cast<size_t>(rows.positions) * sizeof(int32_t) : 0;
  OptionalRoom room(translate ? mapBytes + perPosition : 0);
  if (translate && room.ptr)
  {
    uint32_t* position = reinterpret_cast<uint32_t*>(room.ptr);
    int32_t* slotOf = reinterpret_cast<int32_t*>(room.ptr + mapBytes);
    cuda::copyToDevice(slotOf, rows.slotOf, perPosition, defaultThreadCount());
    positionKernel<<<cuda::blocksFor(rows.positions, 256, sms * 16), 256>>>(
      g.sortedCells.ptr, rows.positions, position);
    check(cudaGetLastError(), "position map launch");
    translation.position = position;
    translation.slotOf = slotOf;
  }
  std::vector<DeviceRecords> parts;
  parts.push_back(boundaryPass(g, image, cells, first, left, translation));
  const char* retry = std::getenv("TOPOVOX_GPU_BOUNDARY_RETRY");
  if (!left->empty() && !(retry && std::atoi(retry) == 0))
  {
    const std::vector<int64_t> again = *left;
    const PassShape second{ 2048, 1024, 1026, INT_MAX, true, 32, sms * 6 };
    parts.push_back(boundaryPass(g, image, again, second, left, translation));
  }
  if (!translation.position)
    return recordsToHost<std::vector<int64_t>>(parts);
  auto kept = std::make_shared<HeldRecords>();
  kept->parts = std::move(parts);
  kept->positions = rows.positions;
  *held = std::move(kept);
  return {};
}

BoundaryRecords heldRecordsToRows(HeldRecords& held, const int32_t* rowOf, RecordStarts* starts)
{
  // (Test switch: "host" reads the rows on the host, as where the device
  // cannot spare their room; "fail" fails as a lost device would.)
  const char* how = std::getenv("TOPOVOX_GPU_HELD_ROWS");
  if (how && std::string(how) == "fail")
    throw std::runtime_error("the held boundaries were refused (TOPOVOX_GPU_HELD_ROWS=fail)");
  const size_t perPosition = static_cast<size_t>(held.positions) * sizeof(int32_t);
  OptionalRoom room(how && std::string(how) == "host" ? 0 : perPosition);
  if (room.ptr)
  {
    const int32_t* onDevice = reinterpret_cast<const int32_t*>(room.ptr);
    cuda::copyToDevice(room.ptr, rowOf, perPosition, defaultThreadCount());
    for (const DeviceRecords& d : held.parts)
      if (d.written)
      {
        heldRowsKernel<<<cuda::blocksFor(static_cast<int64_t>(d.written), 256,
                           int64_t(cuda::multiprocessorCount()) * 16),
          256>>>(d.flat.ptr, static_cast<int64_t>(d.written), held.positions, onDevice);
        check(cudaGetLastError(), "held rows launch");
      }
  }
  BoundaryRecords records = recordsToHost<BoundaryRecords>(held.parts);
  // Where each record starts (each launch's after the ones before), so
  // that the host need not walk the records one after another to find
  // them (0.45 s for a 512^3 field's 21.8 M records, twenty-ninth session).
  size_t count = 0;
  for (const DeviceRecords& d : held.parts)
    count += d.records;
  starts->resize(count);
  size_t at = 0, base = 0;
  for (const DeviceRecords& d : held.parts)
  {
    static_assert(sizeof(size_t) == sizeof(unsigned long long), "starts are copied as they are");
    if (d.records)
      cuda::copyToHost(starts->data() + at, d.starts.ptr, d.records * sizeof(size_t), defaultThreadCount());
    for (size_t k = at; k < at + d.records && base; ++k)
      (*starts)[k] += base;
    at += d.records;
    base += d.written;
  }
  held.parts.clear();
  if (!room.ptr)
    parallelFor(static_cast<int64_t>(records.size()), defaultThreadCount(), [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        int64_t& v = records[static_cast<size_t>(k)];
        if (v < 0)
          v = -1 - v < held.positions ? rowOf[-1 - v] : int64_t(INT64_MAX);
      }
    });
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
