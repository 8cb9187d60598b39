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
// The same rule will let blocks of the image (threads, GPU blocks, MPI ranks)
// build their parts independently: a group depends on the 3x3x3 neighbourhood
// of its voxel only.
#pragma once

#include "CubicalCells.h"

#include <cstdint>
#include <vector>

namespace topovox
{
namespace morse
{
// Per cell: 0 = not in the complex (a NaN cell), kCritical, or the partner:
// kUp + 2 * axis + (sign > 0) when paired with the coface at +-1 along axis,
// kDown + 2 * axis + (sign > 0) when paired with the face at +-1 along axis.
enum : uint8_t
{
  kAbsent = 0,
  kCritical = 1,
  kUp = 2,   // 2..7
  kDown = 8  // 8..13
};

struct Gradient
{
  cubical::CellGrid cells;
  std::vector<uint8_t> state; // one per cell of the doubled grid
  // Which of the voxels the cell touches owns it: bit a set = the second of
  // the (at most two) voxels along axis a (CellGrid::touched).
  std::vector<uint8_t> ownerCode;
  // When, within its group, the cell was paired or found critical (0..26):
  // with the owner's rank this orders cells so that every V-path descends.
  std::vector<uint8_t> step;
  explicit Gradient(const cubical::CellGrid& cg)
    : cells(cg)
  {
  }
  // Linear index of the voxel owning `cell` (image dims from cells.voxels).
  int64_t owner(int64_t cell) const
  {
    int64_t c[3], v[3];
    cells.coordinates(cell, c);
    for (int a = 0; a < 3; ++a)
    {
      int64_t first;
      int count;
      cells.touched(c, a, first, count);
      v[a] = first + ((ownerCode[static_cast<size_t>(cell)] >> a) & 1);
    }
    return v[0] + cells.voxels[0] * (v[1] + cells.voxels[1] * v[2]);
  }
};

// Builds the gradient of the whole image: one pass over the voxels, rows of
// voxels shared among `threads` threads.
Gradient buildGradient(
  const GridView& image, Construction construction, Filtration filtration, int threads);

inline int64_t partner(const cubical::CellGrid& cg, int64_t cell, uint8_t state)
{
  const int code = state >= kDown ? state - kDown : state - kUp;
  const int axis = code >> 1;
  const int64_t step = axis == 0 ? 1 : (axis == 1 ? cg.dims[0] : cg.dims[0] * cg.dims[1]);
  return cell + ((code & 1) ? step : -step);
}
}
}
