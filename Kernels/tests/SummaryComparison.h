// SummaryComparison.h - how the persistence tests compare what two runs
// give: diagrams pair by pair, and Morse summaries as sets (the order of a
// summary's lists is free: the GPU may list a whole image's cells in the
// filtration order, the CPU lists them by index; and an edge's two path
// ends may come either way round).
#pragma once

#include "topovox/Persistence.h"
#include "topovox/PersistencePieces.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <vector>

namespace kernel_check
{
// The same pairs: dimension, birth, death, essential, and with `voxels`
// the birth and death voxels too. Cut planes (slabs, blocks, MPI ranks)
// change the gradient, and so which of several voxels of equal value a
// pair reports: those are compared by value only.
inline bool samePairs(
  const std::vector<topovox::PersistencePair>& a, const std::vector<topovox::PersistencePair>& b, bool voxels = true)
{
  if (a.size() != b.size())
    return false;
  for (size_t k = 0; k < a.size(); ++k)
  {
    const topovox::PersistencePair &p = a[k], &q = b[k];
    if (p.dimension != q.dimension || p.birth != q.birth || p.death != q.death || p.essential != q.essential)
      return false;
    if (voxels &&
      (!std::equal(p.birthVoxel, p.birthVoxel + 3, q.birthVoxel) ||
        !std::equal(p.deathVoxel, p.deathVoxel + 3, q.deathVoxel)))
      return false;
  }
  return true;
}
inline bool sameDiagram(const topovox::PersistenceDiagram& a, const topovox::PersistenceDiagram& b, bool voxels = true)
{
  return samePairs(a.pairs, b.pairs, voxels);
}

// A summary's cells, (edge, minimum, minimum) ends and (cell, maximum)
// dual ends as sorted sets, and whether it has NaN.
struct CanonicalSummary
{
  std::vector<std::tuple<int64_t, int64_t, double, int32_t>> cells;
  std::vector<std::array<int64_t, 3>> edgeEnds;
  std::vector<std::array<int64_t, 2>> dualEnds;
  bool hasNan;

  explicit CanonicalSummary(const topovox::MorsePieceSummary& s)
    : hasNan(s.hasNan)
  {
    for (const topovox::MorseCriticalCell& c : s.critical)
      cells.emplace_back(c.cell, c.voxel, c.value, c.dimension);
    for (size_t k = 0; k + 2 < s.edgeEnds.size(); k += 3)
    {
      std::array<int64_t, 3> e = { { s.edgeEnds[k], s.edgeEnds[k + 1], s.edgeEnds[k + 2] } };
      std::sort(e.begin() + 1, e.end());
      edgeEnds.push_back(e);
    }
    for (size_t k = 0; k + 1 < s.dualEnds.size(); k += 2)
      dualEnds.push_back({ { s.dualEnds[k], s.dualEnds[k + 1] } });
    std::sort(cells.begin(), cells.end());
    std::sort(edgeEnds.begin(), edgeEnds.end());
    std::sort(dualEnds.begin(), dualEnds.end());
  }
  bool operator==(const CanonicalSummary& o) const
  {
    return cells == o.cells && edgeEnds == o.edgeEnds && dualEnds == o.dualEnds && hasNan == o.hasNan;
  }
};
} // namespace kernel_check
