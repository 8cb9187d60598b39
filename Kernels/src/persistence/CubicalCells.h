// CubicalCells.h - the cubical complex of an image on the doubled grid.
//
// Each cell is a point of a grid with, per axis of the image that has n > 1
// samples, 2n - 1 points (V construction) or 2n + 1 points (T construction),
// and one point on axes with a single sample. A coordinate is "odd" when the
// cell spans that axis; a cell's dimension is its number of odd coordinates,
// and its faces are its neighbours at -1 and +1 along each odd axis.
//   V: coordinate c covers voxel c/2 (even) or voxels (c-1)/2, (c+1)/2 (odd).
//   T: coordinate c lies inside voxel (c-1)/2 (odd) or on the boundary
//      between voxels c/2 - 1 and c/2 (even), those that exist.
// Shared by the reference engine and the Morse engine, so that both index
// cells the same way.
#pragma once

#include "topovox/EulerCurve.h"
#include "topovox/Grid.h"

#include "../euler/EulerCells.h" // TV_HD

#include <cstdint>

namespace topovox
{
namespace cubical
{
// The first voxel coordinate that a cell at doubled coordinate c touches
// along an axis the image spans (CellGrid::touched's `first`); host and
// device code (the GPU summary and boundaries) share it.
TV_HD int64_t firstTouched(int64_t c, bool tConstruction)
{
  if (!tConstruction)
    return c >> 1;
  if (c & 1)
    return (c - 1) >> 1;
  return c >= 2 ? (c >> 1) - 1 : 0;
}

struct CellGrid
{
  int64_t dims[3] = { 1, 1, 1 };  // points of the doubled grid per axis
  int64_t voxels[3] = { 1, 1, 1 }; // image samples per axis
  bool active[3] = { false, false, false };
  bool tConstruction = false;

  // `wholeDims`: when the image is a piece of a larger one, the larger
  // one's voxels per axis, so that an axis the piece is one voxel thick
  // along still counts as spanned.
  CellGrid(const GridView& image, Construction construction, const int64_t* wholeDims = nullptr)
  {
    tConstruction = construction == Construction::T;
    for (int a = 0; a < 3; ++a)
    {
      voxels[a] = image.dims[a];
      active[a] = (wholeDims ? wholeDims[a] : image.dims[a]) > 1;
      dims[a] = !active[a] ? 1 : (tConstruction ? 2 * image.dims[a] + 1 : 2 * image.dims[a] - 1);
    }
  }
  int64_t cellCount() const { return dims[0] * dims[1] * dims[2]; }
  int64_t index(const int64_t c[3]) const { return c[0] + dims[0] * (c[1] + dims[1] * c[2]); }
  void coordinates(int64_t index, int64_t c[3]) const
  {
    c[0] = index % dims[0];
    c[1] = (index / dims[0]) % dims[1];
    c[2] = index / (dims[0] * dims[1]);
  }
  // Number of spanned (odd) axes.
  int dimension(const int64_t c[3]) const
  {
    int d = 0;
    for (int a = 0; a < 3; ++a)
      d += active[a] && (c[a] & 1) ? 1 : 0;
    return d;
  }
  // The voxel coordinates the cell touches along axis a: first and count
  // (1 or 2). V: the cell's vertices; T: the cubes containing the cell.
  void touched(const int64_t c[3], int a, int64_t& first, int& count) const
  {
    if (!active[a])
    {
      first = 0;
      count = 1;
      return;
    }
    first = firstTouched(c[a], tConstruction);
    if (!tConstruction)
      count = (c[a] & 1) ? 2 : 1;
    else if (c[a] & 1)
      count = 1;
    else
      count = (c[a] >= 2 && (c[a] >> 1) < voxels[a]) ? 2 : 1;
  }
};
}
}
