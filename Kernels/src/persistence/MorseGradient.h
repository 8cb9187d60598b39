// MorseGradient.h - a discrete gradient of the cubical complex of an image,
// built group by group, where a group is the set of cells owned by one voxel
// (the voxel that attains the cell's value in the total order of
// EulerCells.h: the last vertex in V, the first cube containing it in T).
//
// Why groups: every cell of a group has the group's value, and a face lies in
// the same group or an earlier one. So pairing cells only within a group keeps
// the gradient compatible with the filtration (paired cells have equal
// values), and a V-path can only stay in its group or move to an earlier one:
// the gradient is acyclic as soon as each group's matching is. Within a group
// the matching is built by elementary collapses (Robins, Wood and Sheppard's
// lower-star algorithm: a cell is paired with a coface only when it is that
// coface's one unpaired face in the group), which is acyclic.
//
// Strata (the specification's stratification-aware matching): when the
// image is cut into blocks by planes at even doubled-grid coordinates, a
// cell lying in a cut plane belongs to the border stratum of that plane, and
// cells are paired only within one group AND one stratum. A face and its
// coface along axis a are in different strata exactly when the face lies in
// a cut plane across a, so that pairing is simply not offered. Consequences:
// a V-path that enters a cut plane stays in it, no V-path crosses from one
// block into another, and each block (with the voxels its closure touches)
// builds its part of the gradient, critical cells and Morse boundaries
// alone, identical to what any neighbouring block computes for the shared
// planes. Within a group, cells in more cut planes are matched first, so the
// steps below still decrease along every V-path. The price: extra critical
// cells on the cuts, which only add zero-persistence pairs.
#pragma once

#include "CubicalCells.h"
#include "GradientGroups.h"

#include "../common/LargeArray.h"

#include "topovox/Device.h"
#include "topovox/PersistencePieces.h"

#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{
namespace morse
{
// Per cell: kAbsent (not in the complex: a NaN cell), kCritical, or the
// partner: kUp + 2 * axis + (sign > 0) when paired with the coface at +-1
// along axis, kDown + 2 * axis + (sign > 0) when paired with the face
// (GradientGroups.h).
struct Gradient
{
  cubical::CellGrid cells;
  LargeArray<uint8_t> state; // one per cell of the doubled grid
  // Which of the voxels the cell touches owns it: bit a set = the second of
  // the (at most two) voxels along axis a (CellGrid::touched).
  LargeArray<uint8_t> ownerCode;
  // When, within its group, the cell was paired or found critical (0..26):
  // with the owner's rank this orders cells so that every V-path descends.
  LargeArray<uint8_t> step;
  // Per axis, per doubled-grid coordinate: 1 where a cut plane lies.
  // Empty when the image is not cut.
  std::vector<uint8_t> cut[3];
  GradientArrays arrays() // raw pointers for GradientGroups.h
  {
    GradientArrays a;
    a.state = state.data();
    a.step = step.data();
    a.ownerCode = ownerCode.data();
    for (int k = 0; k < 3; ++k)
    {
      a.cut[k] = cut[k].empty() ? nullptr : cut[k].data();
      a.cutSize[k] = static_cast<int64_t>(cut[k].size());
    }
    return a;
  }
  bool hasCuts() const { return !cut[0].empty() || !cut[1].empty() || !cut[2].empty(); }
  explicit Gradient(const cubical::CellGrid& cg)
    : cells(cg)
  {
  }
  // Linear index of the voxel owning `cell` (image dims from cells.voxels).
  int64_t owner(int64_t cell) const
  {
    int64_t v[3];
    ownerCoordinates(cell, v);
    return v[0] + cells.voxels[0] * (v[1] + cells.voxels[1] * v[2]);
  }
  void ownerCoordinates(int64_t cell, int64_t v[3]) const
  {
    int64_t c[3];
    cells.coordinates(cell, c);
    ownerCoordinates(cell, c, v);
  }
  // The same from the cell's coordinates c as well (no divisions).
  void ownerCoordinates(int64_t cell, const int64_t c[3], int64_t v[3]) const
  {
    for (int a = 0; a < 3; ++a)
    {
      int64_t first;
      int count;
      cells.touched(c, a, first, count);
      v[a] = first + ((ownerCode[static_cast<size_t>(cell)] >> a) & 1);
    }
  }
};

// Builds the gradient of an image: one pass over the voxels, rows of voxels
// shared among `threads` threads. `grid` gives the image's doubled grid (see
// CellGrid's wholeDims for pieces); `cuts[a]` lists the doubled-grid
// coordinates (even) of the cut planes across axis a, none for no blocks.
// `device`: CPU, or GPU (CUDA builds; a CUDA failure falls back to the CPU
// and says why in *warnings). Both give the same gradient, bit for bit.
Gradient buildGradient(const GridView& image, const cubical::CellGrid& grid, Filtration filtration,
  const std::vector<int64_t> cuts[3], int threads, Device device = Device::CPU,
  std::string* warnings = nullptr, Device* used = nullptr);

// A piece's gradient built before its MorsePiece, with where it was built
// and why not where asked.
struct PieceGradient
{
  Gradient gradient;
  Device used = Device::CPU;
  std::string warnings;
};

// The gradient a MorsePiece of (local, region, options) builds first: its
// cut planes, on options' device (MorsePiece.cpp).
PieceGradient pieceGradient(const GridView& local, const PieceRegion& region, const PersistenceOptions& options);

#ifdef TOPOVOX_WITH_CUDA
// The GPU path (MorseGradientCUDA.cu): fills g's arrays, already sized and
// zeroed; throws std::runtime_error on any CUDA failure.
void buildGradientGPU(const GridView& image, Gradient& g, Filtration filtration);
#endif

inline int64_t partner(const cubical::CellGrid& cg, int64_t cell, uint8_t state)
{
  const int code = state >= kDown ? state - kDown : state - kUp;
  const int axis = code >> 1;
  const int64_t step = axis == 0 ? 1 : (axis == 1 ? cg.dims[0] : cg.dims[0] * cg.dims[1]);
  return cell + ((code & 1) ? step : -step);
}
}
}
