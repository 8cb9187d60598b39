// MorseGradient.cpp - the discrete gradient, group by group (see the header).
#include "MorseGradient.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"
#include "../euler/EulerCells.h"

#include <algorithm>

namespace topovox
{
namespace morse
{
namespace
{
using euler::choiceAxis;
using euler::cornerMask;
using euler::kCenterBit;

// One group in "corner space": corner c (0..26) of voxel p is the cell at
// doubled coordinates 2p + d (V) or 2p + 1 + d (T) on the image's axes, with
// d = choiceAxis(c, .). A cell's faces inside p's group are then fixed by the
// construction - V: the corner with one nonzero d set to 0 (the other face
// does not contain p); T: the corners with one spanned axis's d set to -1 or
// +1 (faces of p's cube) - so a group is a 27-bit mask and its matching runs
// on masks and tables, with no cell coordinates or searches.
struct CornerTables
{
  int order[27];       // the corners along the image's axes, by (dimension, corner)
  int count = 0;
  uint32_t faces[27];        // in-group face corners
  uint32_t facesAcross[27][3]; // ... across axis a
  uint32_t withChoice[3][3]; // corners with d_a = -1, 0, +1
  int64_t cellOffset[27];    // doubled-grid index offset from the base cell
  uint8_t negative[27];      // axes with d_a < 0

  CornerTables(const cubical::CellGrid& cg)
  {
    const bool t = cg.tConstruction;
    const int64_t stride[3] = { 1, cg.dims[0], cg.dims[0] * cg.dims[1] };
    int dimension[27];
    for (int a = 0; a < 3; ++a)
      for (int d = 0; d < 3; ++d)
        withChoice[a][d] = 0;
    for (int c = 0; c < 27; ++c)
    {
      faces[c] = 0;
      negative[c] = 0;
      cellOffset[c] = 0;
      dimension[c] = 0;
      bool along = true;
      for (int a = 0; a < 3; ++a)
      {
        const int d = choiceAxis(c, a);
        facesAcross[c][a] = 0;
        along = along && (cg.active[a] || d == 0);
        withChoice[a][d + 1] |= 1u << c;
        cellOffset[c] += d * stride[a];
        if (d < 0)
          negative[c] |= static_cast<uint8_t>(1u << a);
        const bool spans = t ? cg.active[a] && d == 0 : d != 0;
        if (!spans)
          continue;
        ++dimension[c];
        int f[3] = { choiceAxis(c, 0), choiceAxis(c, 1), choiceAxis(c, 2) };
        for (int side : { -1, 1 })
        {
          f[a] = t ? side : 0;
          const int corner = (f[0] + 1) + 3 * (f[1] + 1) + 9 * (f[2] + 1);
          facesAcross[c][a] |= 1u << corner;
        }
      }
      for (int a = 0; a < 3; ++a)
        faces[c] |= facesAcross[c][a];
      if (along)
        order[count++] = c;
    }
    std::stable_sort(order, order + count, [&](int a, int b) { return dimension[a] < dimension[b]; });
  }
};

inline int lowestBit(uint32_t m)
{
  return __builtin_ctz(m);
}
inline bool oneBit(uint32_t m)
{
  return m && !(m & (m - 1));
}

// Matches the group `owned` (a corner mask) of the voxel whose base cell is
// `base`, by elementary collapses, lower strata first (see the header):
// a cell is paired with its one open face in its stratum; when no cell has
// one, the first open cell with none is critical. onCut[a]: the corners
// lying in a cut plane across axis a.
void matchGroup(Gradient& g, const CornerTables& tab, uint32_t owned, int64_t base,
  uint8_t ownerAxes, const uint32_t onCut[3])
{
  uint32_t cross[27]; // faces in another stratum, per corner (with cuts only)
  uint32_t levelMask[4] = { owned, 0, 0, 0 };
  int topLevel = 0;
  const bool cuts = (onCut[0] | onCut[1] | onCut[2]) & owned;
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
      topLevel = std::max(topLevel, level);
    }
  }
  auto openFaces = [&](int c, uint32_t done) {
    return tab.faces[c] & owned & ~done & (cuts ? ~cross[c] : ~0u);
  };
  auto at = [&](int c) { return static_cast<size_t>(base + tab.cellOffset[c]); };
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
        const uint32_t open = openFaces(c, done);
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
        while (choiceAxis(chosen, axis) == choiceAxis(face, axis))
          ++axis;
        const int axisSign = 2 * axis + (choiceAxis(face, axis) > choiceAxis(chosen, axis) ? 1 : 0);
        g.state[at(face)] = static_cast<uint8_t>(kUp + (axisSign ^ 1));
        g.state[at(chosen)] = static_cast<uint8_t>(kDown + axisSign);
        g.step[at(face)] = g.step[at(chosen)] = step++;
        g.ownerCode[at(face)] = tab.negative[face] & ownerAxes;
        g.ownerCode[at(chosen)] = tab.negative[chosen] & ownerAxes;
        done |= (1u << chosen) | (1u << face);
        continue;
      }
      for (int k = 0; k < tab.count; ++k)
      {
        const int c = tab.order[k];
        if (((mine & ~done) >> c & 1u) && openFaces(c, done) == 0)
        {
          g.state[at(c)] = kCritical;
          g.step[at(c)] = step++;
          g.ownerCode[at(c)] = tab.negative[c] & ownerAxes;
          done |= 1u << c;
          break;
        }
      }
    }
  }
}

template <typename T, bool Super>
void buildTyped(const GridView& image, Gradient& g, int threads)
{
  const T* data = static_cast<const T*>(image.data);
  const cubical::CellGrid& cg = g.cells;
  const bool tc = cg.tConstruction;
  const CornerTables tab(cg);
  // The corners each neighbour set decides: V owns corner c when all of
  // cornerMask(c) precede p, T when none does.
  uint32_t cornerNeeds[27];
  for (int c = 0; c < 27; ++c)
    cornerNeeds[c] = cornerMask(c);
  const int64_t stride[3] = { 1, cg.dims[0], cg.dims[0] * cg.dims[1] };
  // Groups are independent (each writes only the cells its voxel owns):
  // rows of voxels go to threads as they come.
  const int64_t rows = image.dims[1] * image.dims[2];
  parallelFor(rows, threads, [&](int, int64_t r0, int64_t r1) {
  constexpr uint32_t kAllNeighbours = ((1u << 27) - 1) & ~(1u << kCenterBit);
  int64_t offset[27];
  for (int b = 0; b < 27; ++b)
    offset[b] = choiceAxis(b, 0) * image.strides[0] + choiceAxis(b, 1) * image.strides[1] +
      choiceAxis(b, 2) * image.strides[2];
  // Only the neighbours along the image's axes (8 of 26 in 2D).
  int bits[27], nBits = 0;
  for (int b = 0; b < 27; ++b)
  {
    bool along = true;
    for (int a = 0; a < 3; ++a)
      along = along && (cg.active[a] || choiceAxis(b, a) == 0);
    if (along && b != kCenterBit)
      bits[nBits++] = b;
  }
  int64_t p[3];
  for (int64_t r = r0; r < r1; ++r)
  {
    p[1] = r % image.dims[1];
    p[2] = r / image.dims[1];
    // The cut planes this row's voxels touch (V: 2p; T: 2p and 2p + 2).
    uint32_t rowCut[3] = { 0, 0, 0 };
    for (int a = 1; a < 3; ++a)
      if (!g.cut[a].empty())
      {
        const size_t lo = static_cast<size_t>(2 * p[a]);
        if (g.cut[a][lo])
          rowCut[a] |= tab.withChoice[a][tc ? 0 : 1];
        if (tc && lo + 2 < g.cut[a].size() && g.cut[a][lo + 2])
          rowCut[a] |= tab.withChoice[a][2];
      }
    uint8_t rowAxes = 0; // T: axes along which p has a cube below
    for (int a = 1; a < 3; ++a)
      if (p[a] > 0)
        rowAxes |= static_cast<uint8_t>(1u << a);
    for (p[0] = 0; p[0] < image.dims[0]; ++p[0])
    {
      const T* at = data + p[0] * image.strides[0] + p[1] * image.strides[1] + p[2] * image.strides[2];
      const T v = *at;
      if (euler::isNan(v))
        continue; // a NaN voxel owns only absent cells
      uint32_t valid = kAllNeighbours;
      for (int a = 0; a < 3; ++a)
      {
        if (p[a] == 0)
          valid &= ~euler::sideBits(a, -1);
        if (p[a] + 1 >= image.dims[a])
          valid &= ~euler::sideBits(a, 1);
      }
      uint32_t preceding = 0;
      if (valid == kAllNeighbours)
        preceding = euler::interiorPrecedingMask<Super>(at, offset, v, std::make_integer_sequence<int, 27>{});
      else
        for (int k = 0; k < nBits; ++k)
        {
          const int b = bits[k];
          if (((valid >> b) & 1u) && euler::precedes<Super>(at[offset[b]], v, b))
            preceding |= 1u << b;
        }
      uint32_t owned = 0;
      for (int k = 0; k < tab.count; ++k)
      {
        const int c = tab.order[k];
        const uint32_t m = cornerNeeds[c];
        // V: every other vertex precedes p. T: no other cube containing the
        // face precedes p (cubes outside the image do not exist).
        if (tc ? (preceding & m) == 0 : (preceding & m) == m)
          owned |= 1u << c;
      }
      int64_t base = 0;
      for (int a = 0; a < 3; ++a)
        if (cg.active[a])
          base += (tc ? 2 * p[a] + 1 : 2 * p[a]) * stride[a];
      uint32_t onCut[3] = { 0, rowCut[1], rowCut[2] };
      if (!g.cut[0].empty())
      {
        const size_t lo = static_cast<size_t>(2 * p[0]);
        if (g.cut[0][lo])
          onCut[0] |= tab.withChoice[0][tc ? 0 : 1];
        if (tc && lo + 2 < g.cut[0].size() && g.cut[0][lo + 2])
          onCut[0] |= tab.withChoice[0][2];
      }
      const uint8_t ownerAxes = tc ? static_cast<uint8_t>(rowAxes | (p[0] > 0 ? 1u : 0u)) : 7u;
      matchGroup(g, tab, owned, base, ownerAxes, onCut);
    }
  }
  });
}
} // namespace

Gradient buildGradient(const GridView& image, const cubical::CellGrid& grid, Filtration filtration,
  const std::vector<int64_t> cuts[3], int threads)
{
  Gradient g{ grid };
  for (int a = 0; a < 3; ++a)
    if (!cuts[a].empty())
    {
      g.cut[a].assign(static_cast<size_t>(grid.dims[a]), 0);
      for (int64_t c : cuts[a])
        if (c >= 0 && c < grid.dims[a])
          g.cut[a][static_cast<size_t>(c)] = 1;
    }
  const size_t n = static_cast<size_t>(g.cells.cellCount());
  g.state.assign(n, kAbsent);
  g.ownerCode.assign(n, 0);
  g.step.assign(n, 0);
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (filtration == Filtration::Superlevel)
      buildTyped<T, true>(image, g, threads);
    else
      buildTyped<T, false>(image, g, threads);
  });
  return g;
}
}
}
