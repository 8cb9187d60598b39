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

// One group: the cells a voxel owns, as doubled-grid indices, matched by
// elementary collapses. Faces and cofaces are looked up among the group's
// cells only: cells of earlier groups are done and count as paired.
class GroupMatcher
{
public:
  GroupMatcher(Gradient& g)
    : G(g)
  {
  }

  void add(int64_t cell, int dimension, uint8_t ownerCode)
  {
    Cells[Count] = cell;
    Dims[Count] = dimension;
    Done[Count] = false;
    Level[Count] = 0;
    G.ownerCode[static_cast<size_t>(cell)] = ownerCode;
    ++Count;
  }

  void match()
  {
    // Faces within the group, by local id, and the count of each cell's
    // faces in the group that are still open (neither paired nor critical).
    for (int i = 0; i < Count; ++i)
      FaceCount[i] = CofaceCount[i] = 0;
    const bool cuts = G.hasCuts();
    int topLevel = 0;
    for (int i = 0; i < Count; ++i)
    {
      int64_t c[3];
      G.cells.coordinates(Cells[i], c);
      if (cuts)
      {
        // The stratum's level: how many cut planes the cell lies in.
        for (int a = 0; a < 3; ++a)
          if (!G.cut[a].empty() && !(c[a] & 1) && G.cut[a][static_cast<size_t>(c[a])])
            ++Level[i];
        topLevel = std::max(topLevel, Level[i]);
      }
      for (int a = 0; a < 3; ++a)
        if (G.cells.active[a] && (c[a] & 1))
          for (int s = 0; s < 2; ++s)
          {
            int64_t f[3] = { c[0], c[1], c[2] };
            f[a] += s ? 1 : -1;
            if (cuts && !G.cut[a].empty() && G.cut[a][static_cast<size_t>(f[a])])
              continue; // the face lies in a cut plane the cell crosses: another stratum
            const int j = find(G.cells.index(f));
            if (j >= 0)
            {
              Faces[i][FaceCount[i]] = j;
              FaceAxis[i][FaceCount[i]] = static_cast<uint8_t>(2 * a + s);
              ++FaceCount[i];
              Cofaces[j][CofaceCount[j]++] = i;
            }
          }
      Open[i] = FaceCount[i];
    }
    // Lower dimensions first: a collapse pairs a cell with a coface whose
    // only open face it is; when none is possible, the lowest open cell
    // whose faces are all closed is critical.
    int order[27];
    for (int i = 0; i < Count; ++i)
      order[i] = i;
    std::stable_sort(order, order + Count, [this](int a, int b) { return Dims[a] < Dims[b]; });
    // Strata in more cut planes first (their cells are faces of the others,
    // never cofaces), so steps decrease along V-paths across strata too.
    uint8_t step = 0;
    for (int level = topLevel; level >= 0; --level)
    {
    int remaining = 0;
    for (int i = 0; i < Count; ++i)
      remaining += Level[i] == level ? 1 : 0;
    while (remaining > 0)
    {
      bool paired = false;
      for (int k = 0; k < Count && !paired; ++k)
      {
        const int i = order[k];
        if (Done[i] || Open[i] != 1 || Level[i] != level)
          continue;
        int open = 0;
        while (Done[Faces[i][open]])
          ++open;
        const int j = Faces[i][open];
        const uint8_t axisSign = FaceAxis[i][open]; // face = cell -/+ e_axis
        // The face's coface is at the opposite sign from the face.
        G.state[static_cast<size_t>(Cells[j])] = static_cast<uint8_t>(kUp + (axisSign ^ 1));
        G.state[static_cast<size_t>(Cells[i])] = static_cast<uint8_t>(kDown + axisSign);
        G.step[static_cast<size_t>(Cells[j])] = G.step[static_cast<size_t>(Cells[i])] = step++;
        close(i);
        close(j);
        remaining -= 2;
        paired = true;
      }
      if (paired)
        continue;
      for (int k = 0; k < Count; ++k)
      {
        const int i = order[k];
        if (Done[i] || Open[i] != 0 || Level[i] != level)
          continue;
        G.state[static_cast<size_t>(Cells[i])] = kCritical;
        G.step[static_cast<size_t>(Cells[i])] = step++;
        close(i);
        --remaining;
        break;
      }
    }
    }
    Count = 0;
  }

private:
  int find(int64_t cell) const
  {
    for (int i = 0; i < Count; ++i)
      if (Cells[i] == cell)
        return i;
    return -1;
  }

  Gradient& G;
  int Count = 0;
  int64_t Cells[27];
  int Dims[27];
  bool Done[27];
  int Faces[27][6];
  uint8_t FaceAxis[27][6];
  int FaceCount[27];
  int Cofaces[27][6];
  int CofaceCount[27];
  int Open[27]; // faces in the group and stratum not yet closed
  int Level[27]; // number of cut planes the cell lies in

  void close(int i)
  {
    Done[i] = true;
    for (int k = 0; k < CofaceCount[i]; ++k)
      --Open[Cofaces[i][k]];
  }
};

template <typename T, bool Super>
void buildTyped(const GridView& image, Gradient& g, int threads)
{
  const T* data = static_cast<const T*>(image.data);
  const cubical::CellGrid& cg = g.cells;
  const bool tc = cg.tConstruction;
  unsigned axes = 0;
  for (int a = 0; a < 3; ++a)
    axes |= cg.active[a] ? 1u << a : 0u;
  // Groups are independent (each writes only the cells its voxel owns):
  // rows of voxels go to threads as they come.
  const int64_t rows = image.dims[1] * image.dims[2];
  parallelFor(rows, threads, [&](int, int64_t r0, int64_t r1) {
  GroupMatcher matcher(g);
  constexpr uint32_t kAllNeighbours = ((1u << 27) - 1) & ~(1u << kCenterBit);
  int64_t offset[27];
  for (int b = 0; b < 27; ++b)
    offset[b] = choiceAxis(b, 0) * image.strides[0] + choiceAxis(b, 1) * image.strides[1] +
      choiceAxis(b, 2) * image.strides[2];
  // Only the neighbours and cells along the image's axes (9 of 27 in 2D).
  int bits[27], nBits = 0, corners[27], nCorners = 0;
  for (int b = 0; b < 27; ++b)
  {
    bool along = true;
    for (int a = 0; a < 3; ++a)
      along = along && (cg.active[a] || choiceAxis(b, a) == 0);
    if (along && b != kCenterBit)
      bits[nBits++] = b;
    if (along)
      corners[nCorners++] = b;
  }
  int64_t p[3];
  for (int64_t r = r0; r < r1; ++r)
  {
    p[1] = r % image.dims[1];
    p[2] = r / image.dims[1];
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
        for (int k = 0; k < nCorners; ++k)
        {
          const int c = corners[k];
          const uint32_t m = cornerMask(c);
          int64_t cell[3];
          uint8_t ownerCode = 0;
          if (!tc)
          {
            if ((preceding & m) != m)
              continue;
            // p is the vertex at the cell's lower (choice +1) or upper end.
            for (int a = 0; a < 3; ++a)
            {
              const int d = choiceAxis(c, a);
              cell[a] = 2 * p[a] + d;
              if (d < 0)
                ownerCode |= static_cast<uint8_t>(1u << a);
            }
          }
          else
          {
            if (!euler::faceExistsT(c, axes) || (preceding & m) != 0)
              continue;
            for (int a = 0; a < 3; ++a)
            {
              const int d = choiceAxis(c, a);
              cell[a] = cg.active[a] ? 2 * p[a] + 1 + d : 0;
              // The face's cubes along a: p alone (d == 0), or p and p + d;
              // p is the second of them when it lies above the face (d < 0)
              // and the cube below exists.
              if (d < 0 && p[a] > 0)
                ownerCode |= static_cast<uint8_t>(1u << a);
            }
          }
          matcher.add(cg.index(cell), cg.dimension(cell), ownerCode);
        }
        matcher.match();
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
