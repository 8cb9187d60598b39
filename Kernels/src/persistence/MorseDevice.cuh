// MorseDevice.cuh - what the CUDA files of the Morse engine share: the
// geometry of a batch of images of one size on the device, and the gradient
// kept there for the Morse boundaries (MorseBoundaryCUDA.cu).
#pragma once

#include "MorseSummaryGPU.h"

#include "../common/CudaUtil.cuh"

#include <cstdint>
#include <cstdlib>
#include <type_traits>

namespace topovox
{
namespace morse
{
// The geometry every image of the batch shares. Images are packed on the
// device (x fastest); vertices and top cells are counted per axis.
struct BatchGrid
{
  int64_t voxelDims[3];
  int64_t voxelStrides[3];
  int64_t offset[27]; // neighbour offsets in the packed image (GradientGroups.h)
  int64_t voxels;
  int64_t cellDims[3];
  int64_t cells;
  int64_t vertexDims[3]; // even coordinates per axis
  int64_t vertices;
  int64_t topDims[3]; // odd coordinates per active axis, 1 on the others
  int64_t tops;
  bool active[3];
  bool tConstruction;
  int top; // dimension of the complex
};

inline BatchGrid batchGrid(const GridView& image, const cubical::CellGrid& cg)
{
  BatchGrid g{};
  g.voxels = g.cells = g.vertices = g.tops = 1;
  g.top = 0;
  g.tConstruction = cg.tConstruction;
  for (int a = 0; a < 3; ++a)
  {
    g.voxelDims[a] = image.dims[a];
    g.voxelStrides[a] = a == 0 ? 1 : g.voxelStrides[a - 1] * image.dims[a - 1];
    g.cellDims[a] = cg.dims[a];
    g.active[a] = cg.active[a];
    g.vertexDims[a] = (cg.dims[a] + 1) / 2;
    g.topDims[a] = cg.active[a] ? (cg.dims[a] - 1) / 2 : 1;
    g.top += cg.active[a] ? 1 : 0;
    g.voxels *= g.voxelDims[a];
    g.cells *= g.cellDims[a];
    g.vertices *= g.vertexDims[a];
    g.tops *= g.topDims[a];
  }
  for (int b = 0; b < 27; ++b)
    g.offset[b] = euler::choiceAxis(b, 0) * g.voxelStrides[0] + euler::choiceAxis(b, 1) * g.voxelStrides[1] +
      euler::choiceAxis(b, 2) * g.voxelStrides[2];
  return g;
}

// An integer value's place in the filtration order as an unsigned key of
// its width, for the radix sorts (a voxel's rank, MorseBoundaryCUDA.cu; the
// critical cells' order, MorseSummaryCUDA.cu): the sign bit flipped, so
// that negative values come first, and the key complemented for the
// superlevel filtration. Equal values keep equal keys, so a stable sort
// leaves ties in index order, as the CPU's comparisons do.
template <typename T>
__device__ inline typename std::make_unsigned<T>::type orderedIntegerKey(T value, bool super)
{
  static_assert(std::is_integral<T>::value, "integer values");
  using U = typename std::make_unsigned<T>::type;
  constexpr U flip = std::is_signed<T>::value ? U(U(1) << (8 * sizeof(T) - 1)) : U(0);
  const U key = static_cast<U>(static_cast<U>(value) ^ flip);
  return super ? static_cast<U>(~key) : key;
}

// Device memory that may be refused, for work that has a way without it:
// ptr stays null when the pool cannot give it (cudaMallocAsync's refusal
// leaves no error behind once read). On the legacy default stream.
struct OptionalRoom
{
  char* ptr = nullptr;
  explicit OptionalRoom(size_t bytes)
  {
    cuda::keepPoolWarm();
    if (cudaMallocAsync(reinterpret_cast<void**>(&ptr), bytes, 0) != cudaSuccess)
    {
      ptr = nullptr;
      cudaGetLastError();
    }
  }
  ~OptionalRoom()
  {
    if (ptr)
      cudaFreeAsync(ptr, 0);
  }
  OptionalRoom(const OptionalRoom&) = delete;
  OptionalRoom& operator=(const OptionalRoom&) = delete;
  // Hands the room to an owner that frees it (a PooledArray).
  char* release()
  {
    char* p = ptr;
    ptr = nullptr;
    return p;
  }
};

// A batch's gradient left on the device, with each voxel's rank in the
// filtration order (value, then linear index in the batch): rank * 32 +
// step orders a batch's cells as MorsePiece's Keys do, in one integer.
struct DeviceGradient
{
  BatchGrid grid;
  int64_t images = 0;
  cuda::PooledArray<uint8_t> state, step, owner;
  cuda::PooledArray<uint32_t> rank;
  // state | step << 4 | owner << 9 per cell: one load where the traversal
  // needs all three.
  cuda::PooledArray<uint16_t> cellWord;
  // rank * 32 + step per cell, when that fits 32 bits (a batch of at most
  // kMostVoxelsForCellKeys voxels), else empty: a traversal's step then
  // waits for one round of loads, not two (the word, then the rank).
  cuda::PooledArray<uint32_t> cellKey;
  // A single image whose summary was numbered (MorseSummaryCUDA.cu): its
  // critical cells in the filtration order, so that its boundaries can be
  // given by position (MorseBoundaryCUDA.cu); empty otherwise.
  cuda::PooledArray<uint32_t> sortedCells{ 0 };
  int64_t sortedCount = 0;
};
constexpr int64_t kMostVoxelsForCellKeys = int64_t(1) << 27;
// Whether cellKeys makes the keys for a batch of `voxels` voxels: up to
// kMostVoxelsForCellKeys, unless the tests turn them off
// (TOPOVOX_GPU_CELL_KEYS=0) to run the path of batches too large for them.
inline bool cellKeysWanted(int64_t voxels)
{
  const char* wanted = std::getenv("TOPOVOX_GPU_CELL_KEYS");
  return voxels <= kMostVoxelsForCellKeys && !(wanted && std::atoi(wanted) == 0);
}

// The ranks of n voxels of type `type` on the device, oriented (superlevel:
// negated) as OrientedValues orders them; ties by index (CUB's stable radix
// sort). Throws std::runtime_error on CUDA failures.
cuda::PooledArray<uint32_t> voxelRanks(const void* data, ScalarType type, int64_t n, bool super);

// The cell keys of a batch's cells (DeviceGradient::cellKey), empty when
// they do not fit 32 bits.
cuda::PooledArray<uint32_t> cellKeys(const cuda::PooledArray<uint16_t>& word, const cuda::PooledArray<uint32_t>& rank,
  const BatchGrid& grid, int64_t images);
// The cell words of n cells.
cuda::PooledArray<uint16_t> cellWords(const cuda::PooledArray<uint8_t>& state,
  const cuda::PooledArray<uint8_t>& step, const cuda::PooledArray<uint8_t>& owner, int64_t n);
}
}
