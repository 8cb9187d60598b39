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
    G.ownerCode[static_cast<size_t>(cell)] = ownerCode;
    ++Count;
  }

  void match()
  {
    // Faces within the group, by local id.
    for (int i = 0; i < Count; ++i)
    {
      FaceCount[i] = 0;
      int64_t c[3];
      G.cells.coordinates(Cells[i], c);
      for (int a = 0; a < 3; ++a)
        if (G.cells.active[a] && (c[a] & 1))
          for (int s = 0; s < 2; ++s)
          {
            int64_t f[3] = { c[0], c[1], c[2] };
            f[a] += s ? 1 : -1;
            const int j = find(G.cells.index(f));
            if (j >= 0)
            {
              Faces[i][FaceCount[i]] = j;
              FaceAxis[i][FaceCount[i]] = static_cast<uint8_t>(2 * a + s);
              ++FaceCount[i];
            }
          }
    }
    // Lower dimensions first: a collapse pairs a cell with a coface whose
    // only open face it is; when none is possible, the lowest open cell is
    // critical.
    int order[27];
    for (int i = 0; i < Count; ++i)
      order[i] = i;
    std::stable_sort(order, order + Count, [this](int a, int b) { return Dims[a] < Dims[b]; });
    uint8_t step = 0;
    for (int remaining = Count; remaining > 0;)
    {
      bool paired = false;
      for (int k = 0; k < Count && !paired; ++k)
      {
        const int i = order[k];
        if (Done[i])
          continue;
        int open = -1, openCount = 0;
        for (int f = 0; f < FaceCount[i]; ++f)
          if (!Done[Faces[i][f]])
          {
            open = f;
            ++openCount;
          }
        if (openCount != 1)
          continue;
        const int j = Faces[i][open];
        const uint8_t axisSign = FaceAxis[i][open]; // face = cell -/+ e_axis
        // The face's coface is at the opposite sign from the face.
        G.state[static_cast<size_t>(Cells[j])] = static_cast<uint8_t>(kUp + (axisSign ^ 1));
        G.state[static_cast<size_t>(Cells[i])] = static_cast<uint8_t>(kDown + axisSign);
        G.step[static_cast<size_t>(Cells[j])] = G.step[static_cast<size_t>(Cells[i])] = step++;
        Done[i] = Done[j] = true;
        remaining -= 2;
        paired = true;
      }
      if (paired)
        continue;
      for (int k = 0; k < Count; ++k)
      {
        const int i = order[k];
        if (Done[i])
          continue;
        bool closed = true;
        for (int f = 0; f < FaceCount[i] && closed; ++f)
          closed = Done[Faces[i][f]];
        if (!closed)
          continue;
        G.state[static_cast<size_t>(Cells[i])] = kCritical;
        G.step[static_cast<size_t>(Cells[i])] = step++;
        Done[i] = true;
        --remaining;
        break;
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
        uint32_t preceding = 0;
        for (int b = 0; b < 27; ++b)
        {
          if (b == kCenterBit)
            continue;
          bool exists = true;
          int64_t off = 0;
          for (int a = 0; a < 3; ++a)
          {
            const int d = choiceAxis(b, a);
            exists = exists && p[a] + d >= 0 && p[a] + d < image.dims[a];
            off += d * image.strides[a];
          }
          if (exists && euler::precedes<Super>(at[off], v, b))
            preceding |= 1u << b;
        }
        for (int c = 0; c < 27; ++c)
        {
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

Gradient buildGradient(
  const GridView& image, Construction construction, Filtration filtration, int threads)
{
  Gradient g{ cubical::CellGrid(image, construction) };
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
