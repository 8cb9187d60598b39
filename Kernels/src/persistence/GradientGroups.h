// GradientGroups.h - one voxel's part of the discrete gradient (see
// MorseGradient.h), written once for the CPU loop (MorseGradient.cpp) and
// the CUDA kernel (MorseGradientCUDA.cu), so that both build bit-identical
// gradients.
//
// A group in "corner space": corner c (0..26) of voxel p is the cell at
// doubled coordinates 2p + d (V) or 2p + 1 + d (T) on the image's axes, with
// d = choiceAxis(c, .). A cell's faces inside p's group are then fixed by the
// construction - V: the corner with one nonzero d set to 0 (the other face
// does not contain p); T: the corners with one spanned axis's d set to -1 or
// +1 (faces of p's cube) - so a group is a 27-bit mask and its matching runs
// on masks and tables, with no cell coordinates and no searches.
#pragma once

#include "CubicalCells.h"
#include "../euler/EulerCells.h"

#include <cstdint>
#include <utility>

namespace topovox
{
namespace morse
{
// Partner codes of the gradient's state array (MorseGradient.h).
enum : uint8_t
{
  kAbsent = 0,
  kCritical = 1,
  kUp = 2,   // 2..7: paired with the coface at -/+1 along axis (2 axis + (sign > 0))
  kDown = 8  // 8..13: paired with the face at -/+1 along axis
};

// Built on the host for one complex; plain data, copied to the GPU as is.
struct CornerTables
{
  int order[27]; // the corners along the image's axes, by (dimension, corner)
  int count;
  uint32_t faces[27];          // in-group face corners
  uint32_t facesAcross[27][3]; // ... across axis a
  uint32_t withChoice[3][3];   // corners with d_a = -1, 0, +1
  int64_t cellOffset[27];      // doubled-grid index offset from the voxel's base cell
  uint8_t negative[27];        // axes with d_a < 0
  uint32_t needs[27];          // euler::cornerMask: the neighbours deciding ownership
  int64_t cellStride[3];       // of the doubled grid
  bool active[3];
  bool tConstruction;
};
CornerTables makeCornerTables(const cubical::CellGrid& cg);

// Where the gradient goes, and the cut planes (per axis, one byte per
// doubled-grid coordinate, null when none).
struct GradientArrays
{
  uint8_t* state;
  uint8_t* step;
  uint8_t* ownerCode;
  const uint8_t* cut[3];
  int64_t cutSize[3];
};

TV_HD int lowestBit(uint32_t m)
{
#if defined(__CUDA_ARCH__)
  return __ffs(m) - 1;
#else
  return __builtin_ctz(m);
#endif
}

TV_HD bool oneBit(uint32_t m)
{
  return m && !(m & (m - 1));
}

// Where a group's matching goes, corner by corner: the state code and the
// step of each cell. ArraySink writes them into the arrays at the voxel's
// cells (the owner code follows from the corner); the CPU's memo
// (MorseGradient.cpp) records them as well.
struct ArraySink
{
  const GradientArrays& g;
  const CornerTables& tab;
  int64_t base;
  uint8_t ownerAxes;
  TV_HD void cell(int corner, uint8_t state, uint8_t step) const
  {
    const int64_t at = base + tab.cellOffset[corner];
    g.state[at] = state;
    g.step[at] = step;
    g.ownerCode[at] = tab.negative[corner] & ownerAxes;
  }
};

// Matches the group `owned` (a corner mask) by elementary collapses
// (Robins, Wood and Sheppard), strata in more cut planes first: a cell is
// paired with its one open face of its stratum; when no cell has exactly
// one, the first open cell with none is critical. onCut[a]: the corners
// lying in a cut plane across axis a. The result goes to sink.cell(corner,
// state, step).
template <typename Sink>
TV_HD void matchGroup(const CornerTables& tab, uint32_t owned, const uint32_t onCut[3], Sink& sink)
{
  uint32_t cross[27]; // faces in another stratum, per corner (with cuts only)
  uint32_t levelMask[4] = { owned, 0, 0, 0 };
  int topLevel = 0;
  const bool cuts = ((onCut[0] | onCut[1] | onCut[2]) & owned) != 0;
  if (cuts)
  {
    levelMask[0] = 0;
    for (uint32_t m = owned; m; m &= m - 1)
    {
      const int c = lowestBit(m);
      int level = 0;
      cross[c] = 0;
      for (int a = 0; a < 3; ++a)
      {
        level += (onCut[a] >> c) & 1u;
        cross[c] |= tab.facesAcross[c][a] & onCut[a];
      }
      levelMask[level] |= 1u << c;
      topLevel = level > topLevel ? level : topLevel;
    }
  }
  uint32_t done = 0;
  uint8_t step = 0;
  for (int level = topLevel; level >= 0; --level)
  {
    const uint32_t mine = levelMask[level];
    while (mine & ~done)
    {
      int chosen = -1, face = -1;
      for (int k = 0; k < tab.count && chosen < 0; ++k)
      {
        const int c = tab.order[k];
        if (!((mine & ~done) >> c & 1u))
          continue;
        const uint32_t open = tab.faces[c] & owned & ~done & (cuts ? ~cross[c] : ~0u);
        if (oneBit(open))
        {
          chosen = c;
          face = lowestBit(open);
        }
      }
      if (chosen >= 0)
      {
        // axisSign = 2 axis + 1 when the face lies on the + side of the coface.
        int axis = 0;
        while (euler::choiceAxis(chosen, axis) == euler::choiceAxis(face, axis))
          ++axis;
        const int axisSign =
          2 * axis + (euler::choiceAxis(face, axis) > euler::choiceAxis(chosen, axis) ? 1 : 0);
        sink.cell(face, static_cast<uint8_t>(kUp + (axisSign ^ 1)), step);
        sink.cell(chosen, static_cast<uint8_t>(kDown + axisSign), step);
        ++step;
        done |= (1u << chosen) | (1u << face);
        continue;
      }
      for (int k = 0; k < tab.count; ++k)
      {
        const int c = tab.order[k];
        if (((mine & ~done) >> c & 1u) &&
          (tab.faces[c] & owned & ~done & (cuts ? ~cross[c] : ~0u)) == 0)
        {
          sink.cell(c, kCritical, step++);
          done |= 1u << c;
          break;
        }
      }
    }
  }
}

// The matching of a group, straight into the arrays (the GPU's way).
struct DirectMatch
{
  TV_HD void operator()(const GradientArrays& g, const CornerTables& tab, uint32_t owned, int64_t base,
    uint8_t ownerAxes, const uint32_t onCut[3]) const
  {
    const ArraySink sink{ g, tab, base, ownerAxes };
    matchGroup(tab, owned, onCut, sink);
  }
};

// The gradient of voxel p's group: which cells p owns (EulerCells.h's
// rule), where they are, which cut planes they lie in, then the matching,
// by match(g, tab, owned, base, ownerAxes, onCut). ownerAxes: the axes
// along which the owner may be the second voxel the cell touches (T: those
// where p has a cube below; V: all).
template <typename T, bool Super, typename Match = DirectMatch>
TV_HD void gradientOfVoxel(const T* data, const int64_t strides[3], const int64_t dims[3],
  const int64_t offset[27], const int64_t p[3], const CornerTables& tab, const GradientArrays& g,
  Match&& match = DirectMatch{})
{
  const T* at = data + p[0] * strides[0] + p[1] * strides[1] + p[2] * strides[2];
  const T v = *at;
  if (euler::isNan(v))
    return; // a NaN voxel owns only absent cells
  constexpr uint32_t kAll = ((1u << 27) - 1) & ~(1u << euler::kCenterBit);
  // Constants, not calls: sideBits with a run-time axis is a 27-step loop.
  constexpr uint32_t kLow[3] = { euler::sideBits(0, -1), euler::sideBits(1, -1), euler::sideBits(2, -1) };
  constexpr uint32_t kHigh[3] = { euler::sideBits(0, 1), euler::sideBits(1, 1), euler::sideBits(2, 1) };
  uint32_t valid = kAll;
  for (int a = 0; a < 3; ++a)
  {
    if (p[a] == 0)
      valid &= ~kLow[a];
    if (p[a] + 1 >= dims[a])
      valid &= ~kHigh[a];
  }
  // The 8 neighbours in p's z plane: an image of one z slice (a 2D image)
  // has no others, and its interior voxels take the branch-free path too.
  constexpr uint32_t kPlane = euler::sideBits(2, 0) & ~(1u << euler::kCenterBit);
  uint32_t preceding = 0;
  if (valid == kAll)
    preceding = euler::interiorPrecedingMask<Super>(at, offset, v, euler::NeighbourBits{});
  else if (valid == kPlane)
    preceding = euler::interiorPrecedingMask<Super>(at, offset, v, euler::PlaneNeighbourBits{});
  else
    for (int b = 0; b < 27; ++b)
      if (((valid >> b) & 1u) && euler::precedes<Super>(at[offset[b]], v, b))
        preceding |= 1u << b;
  // V: p owns the cell when every other vertex precedes it. T: when no other
  // cube containing the face precedes it (cubes outside the image do not
  // exist).
  uint32_t owned = 0;
  for (int k = 0; k < tab.count; ++k)
  {
    const int c = tab.order[k];
    const uint32_t m = tab.needs[c];
    if (tab.tConstruction ? (preceding & m) == 0 : (preceding & m) == m)
      owned |= 1u << c;
  }
  int64_t base = 0;
  uint32_t onCut[3] = { 0, 0, 0 };
  uint8_t ownerAxes = tab.tConstruction ? 0 : 7;
  for (int a = 0; a < 3; ++a)
  {
    if (!tab.active[a])
      continue;
    const int64_t lo = 2 * p[a]; // V: the plane through p; T: p's lower side
    base += (tab.tConstruction ? lo + 1 : lo) * tab.cellStride[a];
    if (tab.tConstruction && p[a] > 0)
      ownerAxes |= static_cast<uint8_t>(1u << a);
    if (g.cut[a])
    {
      if (g.cut[a][lo])
        onCut[a] |= tab.withChoice[a][tab.tConstruction ? 0 : 1];
      if (tab.tConstruction && lo + 2 < g.cutSize[a] && g.cut[a][lo + 2])
        onCut[a] |= tab.withChoice[a][2];
    }
  }
  match(g, tab, owned, base, ownerAxes, onCut);
}
}
}
