// MorsePersistence.cpp - persistence through the Morse complex: the discrete
// gradient (MorseGradient.cpp), the Morse boundary of every critical cell by
// the parity of V-paths, and PHAT's reduction of the (much smaller) Morse
// boundary matrix.
//
// Morse boundary of a critical k-cell c: start from the chain of its faces;
// repeatedly take the largest cell of the chain (in the order below): a
// critical cell stays in the result; a cell paired with a coface is replaced
// by the other faces of that coface (the V-path goes on); a cell paired with
// a face drops out. Coefficients are Z/2, so a cell reached an even number of
// times cancels: the count of V-paths is never enumerated, only its parity.
// The order - owner voxel first (value, then index), then the step at which
// the cell was matched within its group - strictly decreases along every
// V-path, so each cell is taken at most once.
#include "topovox/Persistence.h"

#include "DiagramAssembly.h"
#include "MorseGradient.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <phat/algorithms/twist_reduction.h>
#include <phat/compute_persistence_pairs.h>
#include <phat/representations/default_representations.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace topovox
{
namespace
{

// The image in filtration orientation, as doubles, NaN kept.
std::vector<double> orientedValues(const GridView& g, bool super)
{
  std::vector<double> out(static_cast<size_t>(g.voxelCount()));
  dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = static_cast<const T*>(g.data);
    size_t i = 0;
    for (int64_t z = 0; z < g.dims[2]; ++z)
      for (int64_t y = 0; y < g.dims[1]; ++y)
        for (int64_t x = 0; x < g.dims[0]; ++x)
        {
          const double v = static_cast<double>(d[x * g.strides[0] + y * g.strides[1] + z * g.strides[2]]);
          out[i++] = super ? -v : v;
        }
  });
  return out;
}

} // namespace

PersistenceDiagram computePersistence(const GridView& grid, const PersistenceOptions& options)
{
  persistence::checkInput(grid, options);

  PersistenceDiagram out;
  out.dimension = grid.dimension();
  out.device = Device::CPU;
  if (resolveDevice(options.device, &out.warnings) == Device::GPU)
    out.warnings += std::string(out.warnings.empty() ? "" : "\n") +
      "persistence runs on the CPU in this version (the GPU path is not written yet)";
  persistence::StageLog stages(options);
  const bool super = options.filtration == Filtration::Superlevel;

  // 1. The gradient.
  const int threads = options.threads > 0 ? options.threads : defaultThreadCount();
  const morse::Gradient g =
    morse::buildGradient(grid, options.construction, options.filtration, threads);
  const std::vector<double> value = orientedValues(grid, super);
  const cubical::CellGrid& cg = g.cells;
  stages.lap("gradient");
  stages.progress(0.3);

  // 2. Critical cells in filtration order: value, dimension, then owner and
  // cell index (any order compatible with faces would do).
  struct Critical
  {
    double value;
    int dimension;
    int64_t owner, cell;
  };
  std::vector<Critical> critical;
  for (int64_t cell = 0; cell < cg.cellCount(); ++cell)
    if (g.state[static_cast<size_t>(cell)] == morse::kCritical)
    {
      int64_t c[3];
      cg.coordinates(cell, c);
      const int64_t owner = g.owner(cell);
      critical.push_back(Critical{ value[static_cast<size_t>(owner)], cg.dimension(c), owner, cell });
    }
  std::sort(critical.begin(), critical.end(), [](const Critical& a, const Critical& b) {
    return std::tie(a.value, a.dimension, a.owner, a.cell) <
      std::tie(b.value, b.dimension, b.owner, b.cell);
  });
  // Position of a critical cell in that order, by binary search over the
  // critical cells sorted by cell index (less memory than a hash map).
  std::vector<std::pair<int64_t, int64_t>> byCell(critical.size());
  for (size_t j = 0; j < critical.size(); ++j)
    byCell[j] = { critical[j].cell, static_cast<int64_t>(j) };
  std::sort(byCell.begin(), byCell.end());
  auto columnOf = [&byCell](int64_t cell) {
    const auto it = std::lower_bound(byCell.begin(), byCell.end(), std::make_pair(cell, int64_t(-1)));
    return it->second;
  };
  stages.lap("critical cells");

  // 3. Morse boundaries by V-path parity.
  // Key of a cell in the descent order: the rank of its owner among the
  // voxels (value, then index; NaN voxels own no cell), then its step.
  std::vector<int64_t> rank;
  auto computeRanks = [&]() {
    rank.resize(value.size());
    std::vector<int64_t> byValue(value.size());
    for (size_t i = 0; i < byValue.size(); ++i)
      byValue[i] = static_cast<int64_t>(i);
    std::sort(byValue.begin(), byValue.end(), [&value](int64_t a, int64_t b) {
      const double va = value[static_cast<size_t>(a)], vb = value[static_cast<size_t>(b)];
      const bool na = va != va, nb = vb != vb; // NaN last (they own no cell)
      if (na || nb)
        return na && nb ? a < b : nb;
      return va < vb || (va == vb && a < b);
    });
    for (size_t r = 0; r < byValue.size(); ++r)
      rank[static_cast<size_t>(byValue[r])] = static_cast<int64_t>(r);
  };
  using Key = std::pair<uint64_t, int64_t>; // (rank * 32 + step, cell)
  auto keyOf = [&](int64_t cell) {
    const int64_t owner = g.owner(cell);
    return Key{ static_cast<uint64_t>(rank[static_cast<size_t>(owner)]) * 32u +
        g.step[static_cast<size_t>(cell)],
      cell };
  };
  auto facesOf = [&cg](int64_t cell, int64_t* faces) {
    int64_t c[3];
    cg.coordinates(cell, c);
    int n = 0;
    for (int a = 0; a < 3; ++a)
      if (cg.active[a] && (c[a] & 1))
        for (int s : { -1, 1 })
        {
          int64_t f[3] = { c[0], c[1], c[2] };
          f[a] += s;
          faces[n++] = cg.index(f);
        }
    return n;
  };
  // 3a. The top dimension by union-find in the dual (Alexander duality, as
  // CubicalRipser and TTK's Discrete Morse Sandwich do): critical
  // (d-1)-cells in decreasing order join the maxima (critical d-cells) their
  // dual V-paths reach, the outside of the image being one more, oldest,
  // maximum. A cell that joins two components creates a (d-1)-class that the
  // younger maximum kills; the others go to the matrix. Maxima and the
  // (d-1)-cells paired here need no Morse boundary at all. With NaN voxels
  // the holes they leave would each be an outside of their own: the matrix
  // does everything then.
  const int top = grid.dimension();
  const int64_t nCritical = static_cast<int64_t>(critical.size());
  std::vector<char> skip(critical.size(), 0); // columns left out of the matrix
  std::vector<std::pair<int64_t, int64_t>> dualPairs; // (saddle, maximum) positions
  bool anyNan = false;
  for (double v : value)
    anyNan = anyNan || v != v;
  if (top >= 1 && !anyNan)
  {
    const int64_t outside = nCritical;
    persistence::UnionFind maxima(critical.size() + 1);
    // Top cells sit at odd coordinates on the image's axes.
    int64_t tdim[3];
    for (int a = 0; a < 3; ++a)
      tdim[a] = cg.active[a] ? (cg.dims[a] - 1) / 2 : 1;
    auto topNumber = [&](const int64_t c[3]) {
      int64_t n[3];
      for (int a = 0; a < 3; ++a)
        n[a] = cg.active[a] ? (c[a] - 1) >> 1 : 0;
      return n[0] + tdim[0] * (n[1] + tdim[1] * n[2]);
    };
    // Where the dual path entering each top cell ends, found once (as for
    // the vertices below): -1 unknown, else a maximum's position or outside.
    std::vector<int64_t> maximumOf(static_cast<size_t>(tdim[0] * tdim[1] * tdim[2]), -1);
    std::vector<int64_t> path;
    // From a (d-1)-cell through one of its cofaces, along the dual V-path,
    // to a maximum (its position) or the outside.
    auto reach = [&](int64_t cell, int axis, int side) {
      path.clear();
      int64_t end = outside;
      for (;;)
      {
        int64_t c[3];
        cg.coordinates(cell, c);
        c[axis] += side;
        if (c[axis] < 0 || c[axis] >= cg.dims[axis])
          break;
        const int64_t coface = cg.index(c);
        const uint8_t state = g.state[static_cast<size_t>(coface)];
        if (state == morse::kAbsent)
          break;
        const int64_t number = topNumber(c);
        if (maximumOf[static_cast<size_t>(number)] >= 0)
        {
          end = maximumOf[static_cast<size_t>(number)];
          break;
        }
        path.push_back(number);
        if (state == morse::kCritical)
        {
          end = columnOf(coface);
          break;
        }
        // The coface is paired with one of its faces: go through that face
        // to its other coface.
        const int64_t face = morse::partner(cg, coface, state);
        int64_t f[3];
        cg.coordinates(face, f);
        for (int a = 0; a < 3; ++a)
          if (cg.active[a] && !(f[a] & 1))
          {
            axis = a;
            side = f[a] < c[a] ? -1 : 1; // away from the coface we came from
          }
        cell = face;
      }
      for (int64_t number : path)
        maximumOf[static_cast<size_t>(number)] = end;
      return end;
    };
    for (int64_t j = nCritical - 1; j >= 0; --j)
    {
      if (critical[static_cast<size_t>(j)].dimension != top - 1)
        continue;
      int64_t c[3];
      cg.coordinates(critical[static_cast<size_t>(j)].cell, c);
      int axis = 0;
      for (int a = 0; a < 3; ++a)
        if (cg.active[a] && !(c[a] & 1))
          axis = a;
      const int64_t r1 = maxima.find(reach(critical[static_cast<size_t>(j)].cell, axis, -1));
      const int64_t r2 = maxima.find(reach(critical[static_cast<size_t>(j)].cell, axis, 1));
      if (r1 == r2)
        continue;
      // The older maximum is the later one in filtration order (the outside last).
      const int64_t l1 = maxima.label(r1), l2 = maxima.label(r2);
      const int64_t younger = std::min(l1, l2), older = std::max(l1, l2);
      maxima.merge(r1, r2, older);
      dualPairs.emplace_back(j, younger);
      skip[static_cast<size_t>(j)] = 1;
    }
    for (int64_t j = 0; j < nCritical; ++j)
      if (critical[static_cast<size_t>(j)].dimension == top)
        skip[static_cast<size_t>(j)] = 1;
  }

  // 3b. Dimension 0 by union-find along the gradient (from 2D up; in 1D the
  // dual above already does it): critical edges in increasing order join
  // the minima their two endpoints descend to; an edge that joins two
  // components kills the younger minimum. Minima leave the matrix; so do
  // the edges that create 1-cycles, as empty columns (they are positive: a
  // reduction would zero them), so no edge needs a Morse boundary.
  std::vector<std::pair<int64_t, int64_t>> minimumPairs; // (minimum, edge) positions
  std::vector<char> emptyColumn(critical.size(), 0);
  if (top >= 2)
  {
    persistence::UnionFind minima(critical.size());
    // Down the gradient from a vertex to a minimum (its position).
    // Vertices sit at even coordinates: (dims + 1) / 2 of them per axis.
    const int64_t vx = (cg.dims[0] + 1) / 2, vy = (cg.dims[1] + 1) / 2, vz = (cg.dims[2] + 1) / 2;
    auto vertexNumber = [&](int64_t vertex) {
      int64_t c[3];
      cg.coordinates(vertex, c);
      return (c[0] >> 1) + vx * ((c[1] >> 1) + vy * (c[2] >> 1));
    };
    // Where each vertex's gradient path ends, found once: a path is walked
    // until a vertex already known, then every vertex on it learns the end.
    std::vector<int64_t> minimumOf(static_cast<size_t>(vx * vy * vz), -1);
    std::vector<int64_t> path;
    auto descend = [&](int64_t vertex) {
      path.clear();
      int64_t end = -1;
      for (;;)
      {
        const int64_t number = vertexNumber(vertex);
        if (minimumOf[static_cast<size_t>(number)] >= 0)
        {
          end = minimumOf[static_cast<size_t>(number)];
          break;
        }
        path.push_back(number);
        const uint8_t state = g.state[static_cast<size_t>(vertex)];
        if (state == morse::kCritical)
        {
          end = columnOf(vertex);
          break;
        }
        const int64_t edge = morse::partner(cg, vertex, state);
        vertex = 2 * edge - vertex; // the edge's other end
      }
      for (int64_t number : path)
        minimumOf[static_cast<size_t>(number)] = end;
      return end;
    };
    for (int64_t j = 0; j < nCritical; ++j)
    {
      const Critical& e = critical[static_cast<size_t>(j)];
      if (e.dimension == 0)
        skip[static_cast<size_t>(j)] = 1;
      if (e.dimension != 1)
        continue;
      int64_t c[3];
      cg.coordinates(e.cell, c);
      int64_t ends[2];
      for (int a = 0; a < 3; ++a)
        if (cg.active[a] && (c[a] & 1))
          for (int s = 0; s < 2; ++s)
          {
            int64_t v[3] = { c[0], c[1], c[2] };
            v[a] += s ? 1 : -1;
            ends[s] = cg.index(v);
          }
      const int64_t r1 = minima.find(descend(ends[0])), r2 = minima.find(descend(ends[1]));
      const int64_t l1 = minima.label(r1), l2 = minima.label(r2);
      if (r1 == r2)
      {
        emptyColumn[static_cast<size_t>(j)] = 1; // creates a 1-cycle
        continue;
      }
      if (skip[static_cast<size_t>(j)])
        throw std::logic_error("persistence: an edge is both positive and negative");
      // The older minimum is the earlier one in filtration order.
      const int64_t younger = std::max(l1, l2), older = std::min(l1, l2);
      minima.merge(r1, r2, older);
      minimumPairs.emplace_back(younger, j);
      skip[static_cast<size_t>(j)] = 1;
    }
  }

  // 3c. Critical cells are independent: their boundaries are computed in
  // parallel (the gradient is only read), then put in the matrix in order.
  std::vector<std::vector<phat::index>> boundaries(critical.size());
  bool anyBoundary = false;
  for (size_t j = 0; j < critical.size() && !anyBoundary; ++j)
    anyBoundary = !skip[j] && !emptyColumn[j] && critical[j].dimension > 0;
  if (anyBoundary)
    computeRanks(); // the descent order, needed by boundaries only
  parallelFor(static_cast<int64_t>(critical.size()), threads, [&](int worker, int64_t j0, int64_t j1) {
    std::priority_queue<Key> chain;
    int64_t faces[6];
    for (int64_t j = j0; j < j1; ++j)
    {
      if (skip[static_cast<size_t>(j)] || emptyColumn[static_cast<size_t>(j)])
        continue;
      std::vector<phat::index>& entries = boundaries[static_cast<size_t>(j)];
      const int n = facesOf(critical[static_cast<size_t>(j)].cell, faces);
      for (int k = 0; k < n; ++k)
        chain.push(keyOf(faces[k]));
      while (!chain.empty())
      {
        const Key top = chain.top();
        chain.pop();
        int parity = 1;
        while (!chain.empty() && chain.top() == top)
        {
          chain.pop();
          ++parity;
        }
        if (!(parity & 1))
          continue;
        const int64_t cell = top.second;
        const uint8_t state = g.state[static_cast<size_t>(cell)];
        if (state == morse::kCritical)
          entries.push_back(static_cast<phat::index>(columnOf(cell)));
        else if (state >= morse::kUp && state < morse::kDown)
        {
          const int64_t coface = morse::partner(cg, cell, state);
          const int m = facesOf(coface, faces);
          for (int k = 0; k < m; ++k)
            if (faces[k] != cell)
              chain.push(keyOf(faces[k]));
        }
        // Paired with a face: not part of the Morse complex.
      }
      std::sort(entries.begin(), entries.end());
      if (worker == 0 && ((j - j0) & 4095) == 0)
        stages.progress(0.35 + 0.4 * static_cast<double>(j - j0) / static_cast<double>(j1 - j0));
    }
  });
  // The matrix holds the columns not settled in the dual, renumbered.
  std::vector<int64_t> matrixColumn(critical.size(), -1), positionOf;
  for (size_t j = 0; j < critical.size(); ++j)
    if (!skip[j])
    {
      matrixColumn[j] = static_cast<int64_t>(positionOf.size());
      positionOf.push_back(static_cast<int64_t>(j));
    }
  phat::boundary_matrix<phat::vector_vector> matrix;
  matrix.set_num_cols(static_cast<phat::index>(positionOf.size()));
  for (size_t m = 0; m < positionOf.size(); ++m)
  {
    // Rows of cells settled by union-find are dropped: those of negative
    // edges are never the lowest entry of a 2-column during a reduction (an
    // edge cannot both kill a component and be born as a 1-cycle), so they
    // never steer it (clearing, as in Ripser and CubicalRipser).
    auto& entries = boundaries[static_cast<size_t>(positionOf[m])];
    size_t kept = 0;
    for (auto e : entries)
      if (matrixColumn[static_cast<size_t>(e)] >= 0)
        entries[kept++] = static_cast<phat::index>(matrixColumn[static_cast<size_t>(e)]);
    entries.resize(kept);
    matrix.set_dim(static_cast<phat::index>(m),
      static_cast<phat::dimension>(critical[static_cast<size_t>(positionOf[m])].dimension));
    matrix.set_col(static_cast<phat::index>(m), entries);
    std::vector<phat::index>().swap(entries);
  }
  stages.lap("morse boundaries");

  // 4. Reduction and pairs.
  phat::persistence_pairs pairs;
  phat::compute_persistence_pairs<phat::twist_reduction>(pairs, matrix);
  stages.lap("reduction");
  persistence::DiagramBuilder diagram(grid, options);
  auto cellOf = [&critical](int64_t j) {
    const Critical& c = critical[static_cast<size_t>(j)];
    return persistence::PairCell{ c.value, c.dimension, c.owner };
  };
  std::vector<char> paired(critical.size(), 0);
  std::vector<std::pair<int64_t, int64_t>> all = dualPairs;
  all.insert(all.end(), minimumPairs.begin(), minimumPairs.end());
  for (phat::index k = 0; k < pairs.get_num_pairs(); ++k)
  {
    const auto pr = pairs.get_pair(k);
    all.emplace_back(positionOf[static_cast<size_t>(pr.first)], positionOf[static_cast<size_t>(pr.second)]);
  }
  for (const auto& pr : all)
  {
    paired[static_cast<size_t>(pr.first)] = paired[static_cast<size_t>(pr.second)] = 1;
    diagram.pair(cellOf(pr.first), cellOf(pr.second));
  }
  // Unpaired critical cells are essential: components (the roots of the
  // union-find on minima), and whatever the matrix leaves.
  for (size_t j = 0; j < critical.size(); ++j)
    if (!paired[j])
      diagram.essential(cellOf(static_cast<int64_t>(j)));
  out.pairs = diagram.finish();
  out.timings = stages.text();
  out.criticalCells = static_cast<int64_t>(critical.size());
  out.cells = cg.cellCount();
  stages.progress(1.0);
  return out;
}
}
