// PersistenceReference.cpp - the reference engine: every cell, its value by
// definition, the full boundary matrix in filtration order, PHAT's twist
// reduction. Obvious rather than fast: it is the oracle the Morse engine is
// tested against, and serves small images.
#include "topovox/Persistence.h"

#include "CubicalCells.h"
#include "DiagramAssembly.h"

#include "../common/ScalarDispatch.h"

#include <phat/algorithms/twist_reduction.h>
#include <phat/compute_persistence_pairs.h>
#include <phat/representations/default_representations.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace topovox
{
namespace
{

struct Cell
{
  double key;    // value in filtration order (negated for superlevel)
  int64_t index; // on the doubled grid
  int64_t voxel; // linear index of the voxel that attains the value
  int dimension;
};

// Value and attaining voxel of every present cell, in grid order.
template <typename T>
std::vector<Cell> presentCells(const GridView& g, const cubical::CellGrid& cg, bool super)
{
  const T* data = static_cast<const T*>(g.data);
  std::vector<Cell> cells;
  cells.reserve(static_cast<size_t>(cg.cellCount()));
  int64_t c[3];
  for (c[2] = 0; c[2] < cg.dims[2]; ++c[2])
    for (c[1] = 0; c[1] < cg.dims[1]; ++c[1])
      for (c[0] = 0; c[0] < cg.dims[0]; ++c[0])
      {
        int64_t first[3];
        int count[3];
        for (int a = 0; a < 3; ++a)
          cg.touched(c, a, first[a], count[a]);
        // V: the cell is the last of its vertices (max; absent with a NaN).
        // T: the first of the cubes containing it (min over the numbers).
        bool present = cg.tConstruction ? false : true;
        bool have = false;
        double best = 0;
        int64_t bestVoxel = -1;
        for (int k = 0; k < count[2]; ++k)
          for (int j = 0; j < count[1]; ++j)
            for (int i = 0; i < count[0]; ++i)
            {
              const int64_t x = first[0] + i, y = first[1] + j, z = first[2] + k;
              const T raw = data[x * g.strides[0] + y * g.strides[1] + z * g.strides[2]];
              const double v = static_cast<double>(raw);
              if (v != v)
              {
                if (!cg.tConstruction)
                  present = false;
                continue;
              }
              const double key = super ? -v : v;
              const bool better = !have || (cg.tConstruction ? key < best : key > best);
              if (better)
              {
                best = key;
                bestVoxel = x + g.dims[0] * (y + g.dims[1] * z);
                have = true;
              }
              if (cg.tConstruction)
                present = true;
            }
        if (present && have)
          cells.push_back(Cell{ best, cg.index(c), bestVoxel, cg.dimension(c) });
      }
  return cells;
}

} // namespace

PersistenceDiagram computePersistenceReference(const GridView& grid, const PersistenceOptions& options)
{
  persistence::checkInput(grid, options);

  persistence::StageLog stages(options);
  const bool super = options.filtration == Filtration::Superlevel;
  const cubical::CellGrid cg(grid, options.construction);

  // 1. Every present cell with its value, then the filtration order.
  std::vector<Cell> cells = dispatchScalarType(grid.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return presentCells<T>(grid, cg, super);
  });
  std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) {
    return a.key < b.key || (a.key == b.key && a.dimension < b.dimension);
  });
  stages.lap("cells");
  stages.progress(0.2);

  // 2. The boundary matrix: column j is the j-th cell in filtration order.
  std::vector<int64_t> position(static_cast<size_t>(cg.cellCount()), -1);
  for (size_t j = 0; j < cells.size(); ++j)
    position[static_cast<size_t>(cells[j].index)] = static_cast<int64_t>(j);
  phat::boundary_matrix<phat::vector_vector> matrix; // columns as sorted vectors
  matrix.set_num_cols(static_cast<phat::index>(cells.size()));
  std::vector<phat::index> column;
  for (size_t j = 0; j < cells.size(); ++j)
  {
    int64_t c[3];
    cg.coordinates(cells[j].index, c);
    column.clear();
    for (int a = 0; a < 3; ++a)
      if (cg.active[a] && (c[a] & 1))
        for (int s : { -1, 1 })
        {
          int64_t f[3] = { c[0], c[1], c[2] };
          f[a] += s;
          column.push_back(position[static_cast<size_t>(cg.index(f))]);
        }
    std::sort(column.begin(), column.end());
    matrix.set_dim(static_cast<phat::index>(j), static_cast<phat::dimension>(cells[j].dimension));
    matrix.set_col(static_cast<phat::index>(j), column);
  }
  std::vector<int64_t>().swap(position);
  stages.lap("boundary matrix");
  stages.progress(0.4);

  // 3. Reduction.
  phat::persistence_pairs pairs;
  phat::compute_persistence_pairs<phat::twist_reduction>(pairs, matrix);
  stages.lap("reduction");
  stages.progress(0.9);

  // 4. Pairs back to values and voxels; unpaired cells are essential.
  PersistenceDiagram out;
  out.dimension = grid.dimension();
  out.device = Device::CPU;
  persistence::DiagramBuilder diagram(grid.dims, options);
  auto cellOf = [&cells](phat::index j) {
    const Cell& c = cells[static_cast<size_t>(j)];
    return persistence::PairCell{ c.key, c.dimension, c.voxel };
  };
  std::vector<char> paired(cells.size(), 0);
  for (phat::index k = 0; k < pairs.get_num_pairs(); ++k)
  {
    const auto pr = pairs.get_pair(k);
    paired[static_cast<size_t>(pr.first)] = paired[static_cast<size_t>(pr.second)] = 1;
    diagram.pair(cellOf(pr.first), cellOf(pr.second));
  }
  for (size_t j = 0; j < cells.size(); ++j)
    if (!paired[j])
      diagram.essential(cellOf(static_cast<phat::index>(j)));
  out.pairs = diagram.finish();
  out.timings = stages.text();
  stages.progress(1.0);
  return out;
}
}
