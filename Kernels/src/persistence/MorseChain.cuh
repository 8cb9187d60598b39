// MorseChain.cuh - one Morse boundary's traversal on the GPU, as MorsePiece
// runs it on the CPU: the chain of a critical cell's faces, its largest
// cell taken with the parity of its copies, a critical cell kept, a cell
// paired upwards replaced by the other faces of its coface, in the order of
// MorsePiece's Keys (rank * 32 + step), so the boundaries are the same.
//
// Two ways to hold the chain: Chain, one thread's binary max-heap (the bulk
// of the traversals: about 100 steps each), and WarpChain, a warp's 32
// small heaps in shared memory, for the few long ones (thousands of steps
// through plateaus), where one thread's step, a deep heap's chain of
// dependent loads and compares, is the time.
#pragma once
#include "MorseDevice.cuh"

#include <cstdint>

namespace topovox
{
namespace morse
{
// A chain cell: its order key (rank * 32 + step) times 16 plus its state,
// and its coordinates, 21 bits an axis. The state rides along so that a
// cell taken from the chain needs no load of its own. Keys are unique to a
// cell (an owner voxel's lower star numbers its cells), so equal keys are
// copies of one cell.
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

// What a traversal reads, and the scratch a thread (or warp) has.
struct Traversal
{
  const uint16_t* cellWord; // DeviceGradient::cellWord
  const uint32_t* cellKey;  // DeviceGradient::cellKey, or null
  const uint32_t* rank;
  BatchGrid grid;
  int heapCapacity, outCapacity;
};

__device__ __forceinline__ int64_t cellIndex(const BatchGrid& g, const int64_t c[3])
{
  return c[0] + g.cellDims[0] * (c[1] + g.cellDims[1] * c[2]);
}

// Face i of the cell at c (index `cell`): along axis i / 2, on the side
// -1 or +1 by i % 2; -1 where there is none, or where it is `except`.
__device__ __forceinline__ int64_t faceOf(const BatchGrid& g, const int64_t c[3], int64_t cell, int i, int64_t except)
{
  const int a = i >> 1;
  if (!g.active[a] || !(c[a] & 1))
    return -1;
  const int64_t stride = a == 0 ? 1 : a == 1 ? g.cellDims[0] : g.cellDims[0] * g.cellDims[1];
  const int64_t face = cell + ((i & 1) ? stride : -stride);
  return face == except ? -1 : face;
}

// Whether a cell in this state can reach a critical cell: critical, or
// paired with a coface. Any other (paired with a face, absent) drops out of
// the chain whatever its parity, so it never enters it.
__device__ __forceinline__ bool entersChain(uint16_t word)
{
  const uint8_t state = word & 15;
  return state == kCritical || (state >= kUp && state < kDown);
}

// The coordinates of an image's cell from its index.
__device__ __forceinline__ void cellCoordinates(const BatchGrid& g, int64_t cell, int64_t c[3])
{
  c[0] = cell % g.cellDims[0];
  c[1] = (cell / g.cellDims[0]) % g.cellDims[1];
  c[2] = cell / (g.cellDims[0] * g.cellDims[1]);
}

// The index in its image of the voxel owning the cell at c (its word's
// owner code says which of the voxels it touches, as CellGrid::touched).
__device__ __forceinline__ int64_t ownerVoxel(const BatchGrid& g, const int64_t c[3], uint16_t word)
{
  const uint8_t code = (word >> 9) & 7;
  int64_t v[3];
  for (int a = 0; a < 3; ++a)
    v[a] = g.active[a] ? cubical::firstTouched(c[a], g.tConstruction) + ((code >> a) & 1) : 0;
  return v[0] + g.voxelDims[0] * (v[1] + g.voxelDims[1] * v[2]);
}

// A cell's key, rank * 32 + step, from its word and its owner's rank.
__device__ __forceinline__ uint64_t keyOf(uint32_t ownerRank, uint16_t word)
{
  return uint64_t(ownerRank) * 32 + ((word >> 4) & 31);
}

// The key of face i of the cell at c from its owner voxel's rank (when the
// gradient has no cellKey).
__device__ __forceinline__ uint64_t keyFromRank(
  const Traversal& T, int64_t voxelBase, const int64_t c[3], int i, uint16_t word)
{
  int64_t f[3] = { c[0], c[1], c[2] };
  f[i >> 1] += (i & 1) ? 1 : -1;
  return keyOf(__ldg(&T.rank[voxelBase + ownerVoxel(T.grid, f, word)]), word);
}

// The coface a cell in state s (paired upwards) is paired with: its
// coordinates from the cell's.
__device__ __forceinline__ void cofaceOf(uint8_t s, int64_t f[3])
{
  const int code = s - kUp;
  f[code >> 1] += (code & 1) ? 1 : -1;
}

// Sorts a few entries in place (insertion sort).
__device__ __forceinline__ void sortEntries(uint32_t* out, int count)
{
  for (int i = 1; i < count; ++i)
  {
    const uint32_t v = out[i];
    int j = i - 1;
    for (; j >= 0 && out[j] > v; --j)
      out[j + 1] = out[j];
    out[j + 1] = v;
  }
}

// One thread's traversal of image b's cell at c, with a binary max-heap.
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
  // The number of entries written to out (sorted), or -1 on overflow or
  // after maxSteps steps.
  __device__ int run(const int64_t c[3], int maxSteps)
  {
    pushFaces(c, -1);
    for (int steps = 0; Size > 0 && !Overflow; ++steps)
    {
      if (steps == maxSteps)
        return -1;
      const Entry top = pop();
      int parity = 1;
      while (Size > 0 && Heap[0].key == top.key)
      {
        pop();
        ++parity;
      }
      if (!(parity & 1))
        continue;
      int64_t f[3];
      unpack(top.at, f);
      const uint8_t s = top.key & 15;
      if (s == kCritical)
      {
        if (Count == T.outCapacity)
          return -1;
        Out[Count++] = static_cast<uint32_t>(cellIndex(T.grid, f));
      }
      else
      {
        const int64_t cell = cellIndex(T.grid, f);
        cofaceOf(s, f);
        pushFaces(f, cell);
      }
    }
    if (Overflow)
      return -1;
    sortEntries(Out, Count);
    return Count;
  }

private:
  // The faces of the cell at c but `except` that enter the chain. Why in
  // rounds: a long traversal is a chain of dependent loads, and loading all
  // faces' words (and keys) at once keeps up to twelve loads in flight
  // instead of one. With cellKey, a step waits for one round of loads;
  // without, for two (the words, then their owners' ranks).
  __device__ void pushFaces(const int64_t c[3], int64_t except)
  {
    const int64_t cell = cellIndex(T.grid, c);
    int64_t face[6];
    uint16_t word[6];
    uint64_t key[6];
#pragma unroll
    for (int i = 0; i < 6; ++i)
      face[i] = faceOf(T.grid, c, cell, i, except);
#pragma unroll
    for (int i = 0; i < 6; ++i)
    {
      word[i] = face[i] >= 0 ? __ldg(&T.cellWord[CellBase + face[i]]) : 0;
      key[i] = face[i] >= 0 && T.cellKey ? __ldg(&T.cellKey[CellBase + face[i]]) : 0;
    }
#pragma unroll
    for (int i = 0; i < 6; ++i)
    {
      if (face[i] >= 0 && !entersChain(word[i]))
        face[i] = -1;
      if (face[i] >= 0 && !T.cellKey)
        key[i] = keyFromRank(T, VoxelBase, c, i, word[i]);
    }
#pragma unroll
    for (int i = 0; i < 6; ++i)
      if (face[i] >= 0)
      {
        int64_t f[3] = { c[0], c[1], c[2] };
        f[i >> 1] += (i & 1) ? 1 : -1;
        push(Entry{ key[i] * 16 + (word[i] & 15), pack(f) });
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

// One warp's traversal of image b's cell at c, in the same order as
// Chain's. The chain is split among the lanes: each lane keeps a binary
// max-heap of up to T.heapCapacity / 32 cells in shared memory (its slot i
// at i * 32 + lane, so the lanes' accesses fall in distinct banks) and its
// largest key in a register. A step: two warp reductions find the largest
// key, the lanes holding it pop every copy of it (the parity is the warp's
// count), lanes 0 to 5 load the coface's six faces at once (issued before
// the pops, whose shared-memory work then overlaps them), and the faces
// entering the chain go one to a lane, round robin, each lane pushing at
// most one: two shallow heap operations a step instead of one deep one.
// Measured on an H200, engine_256x256x128's longest traversal (34,900
// steps) bounds the pass: 42 ms, against 65 ms for one thread with its heap
// in global memory, 58 ms with its heap in shared memory, and 44 ms for a
// warp scanning an unordered pool; a step still costs about 1.2 us (the
// faces' loads, the reductions), so this is a gain, not the end of it.
class WarpChain
{
public:
  // keys and ats: T.heapCapacity slots each (a multiple of 32).
  __device__ WarpChain(const Traversal& t, int64_t b, uint64_t* keys, uint64_t* ats, uint32_t* out)
    : T(t)
    , CellBase(b * t.grid.cells)
    , VoxelBase(b * t.grid.voxels)
    , Keys(keys)
    , Ats(ats)
    , Out(out)
    , Lane(threadIdx.x & 31)
    , PerLane(t.heapCapacity / 32)
  {
  }
  // As Chain::run, with no limit on steps; every lane returns the same.
  __device__ int run(const int64_t c[3])
  {
    if (!append(c, look(c, cellIndex(T.grid, c), -1)))
      return -1;
    for (;;)
    {
      const uint32_t high = __reduce_max_sync(~0u, uint32_t(Top >> 32));
      const uint32_t low = __reduce_max_sync(~0u, uint32_t(Top >> 32) == high ? uint32_t(Top) : 0u);
      const uint64_t largest = (uint64_t(high) << 32) | low;
      if (largest == 0)
        break;
      // Its coface's faces are loaded before its copies are popped, so
      // that the pops' work in shared memory overlaps the loads.
      const unsigned holders = __ballot_sync(~0u, Top == largest);
      const uint64_t at = __shfl_sync(~0u, Top == largest ? Ats[slot(0)] : 0, __ffs(holders) - 1);
      int64_t f[3];
      unpack(at, f);
      const uint8_t s = largest & 15;
      const int64_t cell = cellIndex(T.grid, f);
      const bool replaced = s >= kUp && s < kDown;
      if (replaced)
        cofaceOf(s, f);
      Face face = look(f, replaced ? cellIndex(T.grid, f) : -1, cell);
      int copies = 0;
      while (Top == largest)
      {
        pop();
        ++copies;
      }
      copies = __reduce_add_sync(~0u, unsigned(copies));
      if (!(copies & 1))
        continue;
      if (s == kCritical)
      {
        if (Count == T.outCapacity)
          return -1;
        if (Lane == 0)
          Out[Count] = static_cast<uint32_t>(cell);
        ++Count;
        continue;
      }
      if (!append(f, face))
        return -1;
    }
    __syncwarp();
    if (Lane == 0)
      sortEntries(Out, Count);
    __syncwarp();
    return Count;
  }

private:
  // A lane's face: its index (-1: none), word and key as loaded.
  struct Face
  {
    int64_t index;
    uint16_t word;
    uint64_t key;
  };
  // Lane i < 6 loads face i of the cell at c (index `cell`, -1 for none).
  __device__ Face look(const int64_t c[3], int64_t cell, int64_t except) const
  {
    Face f{ Lane < 6 && cell >= 0 ? faceOf(T.grid, c, cell, Lane, except) : -1, 0, 0 };
    if (f.index >= 0)
    {
      f.word = __ldg(&T.cellWord[CellBase + f.index]);
      if (T.cellKey)
        f.key = __ldg(&T.cellKey[CellBase + f.index]);
    }
    return f;
  }
  // The faces of the cell at c that lanes 0 to 5 looked at and that enter
  // the chain: the j-th goes to lane (Next + j) % 32. False when a lane's
  // heap is full.
  __device__ bool append(const int64_t c[3], const Face& seen)
  {
    const bool enters = seen.index >= 0 && entersChain(seen.word);
    uint64_t key = 0, at = 0;
    if (enters)
    {
      key = T.cellKey ? seen.key : keyFromRank(T, VoxelBase, c, Lane, seen.word);
      key = key * 16 + (seen.word & 15);
      int64_t f[3] = { c[0], c[1], c[2] };
      f[Lane >> 1] += (Lane & 1) ? 1 : -1;
      at = pack(f);
    }
    const unsigned entering = __ballot_sync(~0u, enters);
    const int n = __popc(entering);
    const int j = (Lane - Next) & 31;
    unsigned rest = entering;
    for (int k = 0; k < j && k < n; ++k)
      rest &= rest - 1;
    const int from = rest ? __ffs(rest) - 1 : 0;
    const uint64_t mine = __shfl_sync(~0u, key, from), mineAt = __shfl_sync(~0u, at, from);
    const bool receives = j < n;
    Next = (Next + n) & 31;
    if (__any_sync(~0u, receives && Size == PerLane))
      return false;
    if (receives)
      push(mine, mineAt);
    return true;
  }
  __device__ int slot(int i) const { return i * 32 + Lane; }
  __device__ void push(uint64_t key, uint64_t at)
  {
    int i = Size++;
    while (i > 0)
    {
      const int parent = (i - 1) >> 1;
      const uint64_t above = Keys[slot(parent)];
      if (above >= key)
        break;
      Keys[slot(i)] = above;
      Ats[slot(i)] = Ats[slot(parent)];
      i = parent;
    }
    Keys[slot(i)] = key;
    Ats[slot(i)] = at;
    Top = Keys[slot(0)];
  }
  // Removes the lane's largest cell.
  __device__ void pop()
  {
    --Size;
    const uint64_t lastKey = Keys[slot(Size)], lastAt = Ats[slot(Size)];
    int i = 0;
    for (;;)
    {
      int child = 2 * i + 1;
      if (child >= Size)
        break;
      uint64_t childKey = Keys[slot(child)];
      if (child + 1 < Size)
      {
        const uint64_t other = Keys[slot(child + 1)];
        if (other > childKey)
        {
          ++child;
          childKey = other;
        }
      }
      if (childKey <= lastKey)
        break;
      Keys[slot(i)] = childKey;
      Ats[slot(i)] = Ats[slot(child)];
      i = child;
    }
    if (Size > 0)
    {
      Keys[slot(i)] = lastKey;
      Ats[slot(i)] = lastAt;
    }
    Top = Size > 0 ? Keys[slot(0)] : 0;
  }

  const Traversal& T;
  int64_t CellBase, VoxelBase;
  uint64_t* Keys;
  uint64_t* Ats;
  uint32_t* Out;
  int Lane, PerLane;
  int Size = 0, Next = 0, Count = 0;
  uint64_t Top = 0;
};
}
}
