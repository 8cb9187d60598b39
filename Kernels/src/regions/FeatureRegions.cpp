// FeatureRegions.cpp - feature regions (FeatureRegions.h) by one union-find
// sweep per kind. Each component keeps its voxels as a linked list; when a
// component dies its list is spliced, whole, after the survivor's, so every
// dead component stays a contiguous run of the final lists. A region is then
// a range of positions in those lists, the ranges are nested or disjoint,
// and one pass with a stack labels every voxel with its innermost (or
// outermost) range.
#include "topovox/FeatureRegions.h"

#include "../common/GridValues.h"
#include "../common/Parallel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace topovox
{
namespace
{
// I: the voxel index type, int32_t below 2^31 voxels (half the memory),
// else int64_t.
template <typename I>
struct Run
{
  I first = -1, last = -1; // voxels at the ends of the run
};

// Neighbour offsets (x, y, z) over the image's non-flat axes: face
// neighbours, or every voxel of the 3x3x3 block.
std::vector<std::array<int64_t, 3>> neighbourOffsets(const int64_t dims[3], bool full)
{
  std::vector<std::array<int64_t, 3>> out;
  for (int64_t dz = -1; dz <= 1; ++dz)
    for (int64_t dy = -1; dy <= 1; ++dy)
      for (int64_t dx = -1; dx <= 1; ++dx)
      {
        const int64_t d[3] = { dx, dy, dz };
        int nonzero = 0;
        bool flat = false;
        for (int a = 0; a < 3; ++a)
        {
          nonzero += d[a] != 0;
          flat = flat || (d[a] != 0 && dims[a] == 1);
        }
        if (nonzero == 0 || flat || (!full && nonzero != 1))
          continue;
        out.push_back({ dx, dy, dz });
      }
  return out;
}

// One sweep over `order` (voxel ids, oldest first). `withOutside`: a node
// older than every voxel joins the voxels on the image's border. Fills
// runs[v] for every voxel v that was the oldest of a component that died,
// or is of one alive at the end (except the outside's), and position[v].
template <typename I>
class Sweep
{
public:
  std::vector<Run<I>> runs; // per voxel: the run of the component it was the oldest of
  std::vector<I> position;  // per voxel: its place in the final lists (-1: never swept)

  Sweep(const int64_t dims[3], bool full, bool withOutside, const std::vector<I>& order, const std::vector<I>& level)
    : runs(static_cast<size_t>(dims[0] * dims[1] * dims[2]))
    , position(runs.size(), -1)
    , n_(static_cast<I>(runs.size()))
    , parent_(runs.size() + 1, -1)
    , size_(runs.size() + 1, 1)
    , oldest_(runs.size() + 1, -1)
    , age_(runs.size(), -1)
    , next_(runs.size(), -1)
    , run_(runs.size() + 1)
    , before_(runs.size() + 1)
    , stamp_(runs.size() + 1, -1)
  {
    if (withOutside)
    {
      parent_[at(n_)] = n_;
      oldest_[at(n_)] = n_;
    }
    const auto offsets = neighbourOffsets(dims, full);
    for (size_t i = 0; i < order.size(); ++i)
    {
      const I v = order[i];
      level_ = level[i];
      parent_[at(v)] = v;
      oldest_[at(v)] = v;
      age_[at(v)] = static_cast<I>(i);
      run_[at(v)] = Run<I>{}; // v joins its list after the merges it causes
      const int64_t c[3] = { v % dims[0], (v / dims[0]) % dims[1], v / (dims[0] * dims[1]) };
      bool border = false;
      for (int a = 0; a < 3; ++a)
        border = border || (dims[a] > 1 && (c[a] == 0 || c[a] == dims[a] - 1));
      if (withOutside && border)
        unite(v, n_);
      for (const auto& o : offsets)
      {
        const int64_t q[3] = { c[0] + o[0], c[1] + o[1], c[2] + o[2] };
        if (q[0] < 0 || q[1] < 0 || q[2] < 0 || q[0] >= dims[0] || q[1] >= dims[1] || q[2] >= dims[2])
          continue;
        const I u = static_cast<I>(q[0] + dims[0] * (q[1] + dims[1] * q[2]));
        if (parent_[at(u)] >= 0)
          unite(v, u);
      }
      Run<I>& joined = run_[at(find(v))];
      if (joined.first < 0)
        joined.first = v;
      else
        next_[at(joined.last)] = v;
      joined.last = v;
    }
    // The components alive at the end: essential classes, except the
    // outside's; then every final list gets its positions.
    I next = 0;
    auto place = [&](I root) {
      for (I w = run_[at(root)].first; w >= 0; w = next_[at(w)])
        position[at(w)] = next++;
    };
    for (const I v : order)
      if (find(v) == v)
      {
        if (oldest_[at(v)] != n_)
          runs[at(oldest_[at(v)])] = run_[at(v)];
        place(v);
      }
    if (withOutside && find(n_) == n_)
      place(n_);
  }

private:
  static size_t at(I i) { return static_cast<size_t>(i); }

  I find(I v)
  {
    while (parent_[at(v)] != v)
    {
      const I p = parent_[at(v)];
      parent_[at(v)] = parent_[at(p)]; // path halving
      v = p;
    }
    return v;
  }

  I ageOf(I root) const
  {
    const I o = oldest_[at(root)];
    return o == n_ ? -1 : age_[at(o)];
  }

  void unite(I a, I b)
  {
    const I ra = find(a), rb = find(b);
    if (ra == rb)
      return;
    // The elder rule: the component whose oldest voxel came first survives;
    // the other's list is its region, and goes after the survivor's.
    const I survivor = ageOf(ra) <= ageOf(rb) ? ra : rb, dying = survivor == ra ? rb : ra;
    snapshot(ra);
    snapshot(rb);
    const Run<I> dead = run_[at(dying)];
    runs[at(oldest_[at(dying)])] = before_[at(dying)];
    Run<I> merged = run_[at(survivor)];
    if (merged.first < 0)
      merged = dead;
    else if (dead.first >= 0)
    {
      next_[at(merged.last)] = dead.first;
      merged.last = dead.last;
    }
    const I keepOldest = oldest_[at(survivor)];
    I root = ra, child = rb; // union by size
    if (size_[at(root)] < size_[at(child)])
      std::swap(root, child);
    parent_[at(child)] = root;
    size_[at(root)] += size_[at(child)];
    run_[at(root)] = merged;
    before_[at(root)] = before_[at(survivor)];
    oldest_[at(root)] = keepOldest;
  }

  // A component's region is its voxels strictly below the level at which
  // it dies: the list as it was when the level began. Merges only append,
  // so that is a prefix of the list, noted the first time the level
  // touches the component.
  void snapshot(I root)
  {
    if (stamp_[at(root)] != level_)
    {
      stamp_[at(root)] = level_;
      before_[at(root)] = run_[at(root)];
    }
  }

  I n_; // voxels; node n_ is the outside
  std::vector<I> parent_, size_, oldest_, age_, next_;
  std::vector<Run<I>> run_;    // per root: its component's list
  std::vector<Run<I>> before_; // per root: that list when the current level began
  std::vector<I> stamp_;
  I level_ = -1;
};

// Filtration values: the image's (negated for a superlevel filtration, so
// that "older" is always "lower"), NaN kept.
std::vector<double> keysOf(const GridView& g, bool super)
{
  std::vector<double> out = valuesAsDouble(g);
  if (super)
    for (double& v : out)
      v = -v;
  return out;
}

struct Interval
{
  int64_t start, end; // positions, inclusive
  int32_t pair;
};

// Every swept voxel gets the pair of the innermost (or outermost) interval
// holding its position (intervals are nested or disjoint).
template <typename I>
void paint(std::vector<Interval>& iv, const std::vector<I>& position, bool innermost, std::vector<int32_t>& labels)
{
  std::sort(iv.begin(), iv.end(), [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<I> voxelAt(position.size(), -1);
  int64_t used = 0;
  for (size_t v = 0; v < position.size(); ++v)
    if (position[v] >= 0)
    {
      voxelAt[static_cast<size_t>(position[v])] = static_cast<I>(v);
      ++used;
    }
  std::vector<const Interval*> open;
  size_t next = 0;
  for (int64_t p = 0; p < used; ++p)
  {
    while (!open.empty() && open.back()->end < p)
      open.pop_back();
    while (next < iv.size() && iv[next].start == p)
      open.push_back(&iv[next++]);
    if (!open.empty())
      labels[static_cast<size_t>(voxelAt[static_cast<size_t>(p)])] = (innermost ? open.back() : open.front())->pair;
  }
}
// One kind's sweep (0: components, 1: the top dimension) and labels.
template <typename I>
void regionsOfKind(int kind, const int64_t dims[3], const std::vector<double>& key, const PersistenceDiagram& diagram,
  const std::vector<char>& chosen, int top, const FeatureRegionOptions& o, int threads, FeatureRegions& out)
{
  const int64_t n = dims[0] * dims[1] * dims[2];
  // Components: upwards from the lowest voxel, NaN absent. The top
  // dimension: downwards from the highest, NaN first (never in the
  // complex, so inside every complement), with the outside. Sorted as
  // (key, voxel) pairs, not voxels compared through the key array: the
  // comparisons then stay in the cache. Downwards, NaN first, then the
  // negated key, ties by descending voxel (the negated index).
  struct Keyed
  {
    bool nan;
    double key;
    I voxel;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k)
  {
    const double x = key[static_cast<size_t>(k)];
    if (kind == 0 && !std::isnan(x))
      keyed.push_back({ false, x, static_cast<I>(k) });
    else if (kind == 1)
      keyed.push_back({ std::isnan(x), std::isnan(x) ? 0.0 : -x, static_cast<I>(-k) });
  }
  parallelSort(keyed, threads, [](const Keyed& a, const Keyed& b) {
    if (a.nan != b.nan)
      return a.nan;
    return a.key != b.key ? a.key < b.key : a.voxel < b.voxel;
  });
  std::vector<I> order(keyed.size());
  for (size_t i = 0; i < keyed.size(); ++i)
    order[i] = kind == 0 ? keyed[i].voxel : static_cast<I>(-keyed[i].voxel);
  keyed.clear();
  keyed.shrink_to_fit();
  // Voxels of equal value (NaN with NaN) form one level.
  std::vector<I> level(order.size());
  for (size_t i = 0; i < order.size(); ++i)
  {
    const double a = key[static_cast<size_t>(order[i])];
    const double b = i ? key[static_cast<size_t>(order[i - 1])] : a;
    const bool same = i && (a == b || (std::isnan(a) && std::isnan(b)));
    level[i] = i == 0 ? 0 : static_cast<I>(level[i - 1] + (same ? 0 : 1));
  }
  // V: components by face neighbours, enclosed regions by the full block;
  // T the other way round.
  const bool v = o.construction == Construction::V;
  const bool full = kind == 0 ? !v : v;
  const Sweep<I> sweep(dims, full, kind == 1, order, level);
  std::vector<I>().swap(order);
  std::vector<I>().swap(level);
  std::vector<Interval> intervals;
  for (size_t i = 0; i < diagram.pairs.size(); ++i)
  {
    const PersistencePair& p = diagram.pairs[i];
    if (p.dimension != (kind == 0 ? 0 : top) || !chosen[i])
      continue;
    const int64_t* voxel = kind == 0 ? p.birthVoxel : p.deathVoxel;
    const Run<I> r = voxel[0] >= 0 ? sweep.runs[static_cast<size_t>(voxel[0] + dims[0] * (voxel[1] + dims[1] * voxel[2]))]
                                   : Run<I>{};
    if (r.first < 0)
    {
      ++out.unmatched;
      continue;
    }
    const Interval iv{ sweep.position[static_cast<size_t>(r.first)], sweep.position[static_cast<size_t>(r.last)],
      static_cast<int32_t>(i) };
    out.voxels[i] = iv.end - iv.start + 1;
    intervals.push_back(iv);
  }
  out.labels[kind].assign(static_cast<size_t>(n), -1);
  paint(intervals, sweep.position, o.innermost, out.labels[kind]);
}
} // namespace

FeatureRegions featureRegions(const GridView& image, const PersistenceDiagram& diagram, const FeatureRegionOptions& o)
{
  const std::string why = validateGrid(image);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (image.memory != MemorySpace::Host)
    throw std::invalid_argument("feature regions need the image in host memory");
  const int64_t* dims = image.dims;
  const int64_t n = image.voxelCount();
  const int complexDim = (dims[0] > 1) + (dims[1] > 1) + (dims[2] > 1);
  const int top = complexDim >= 2 ? complexDim - 1 : -1;
  std::vector<char> chosen(diagram.pairs.size(), 0);
  if (o.pairs.empty())
  {
    for (size_t i = 0; i < diagram.pairs.size(); ++i)
      chosen[i] = diagram.pairs[i].essential ? o.includeEssential : diagram.pairs[i].persistence() > o.minPersistence;
  }
  else
    for (const int64_t i : o.pairs)
    {
      if (i < 0 || i >= static_cast<int64_t>(diagram.pairs.size()))
        throw std::invalid_argument("pair " + std::to_string(i) + " is not in the diagram (it has " +
          std::to_string(diagram.pairs.size()) + " pairs)");
      chosen[static_cast<size_t>(i)] = 1;
    }
  for (const auto& p : diagram.pairs)
    for (int a = 0; a < 3; ++a)
      if (p.birthVoxel[a] >= dims[a] || p.deathVoxel[a] >= dims[a])
        throw std::invalid_argument("the diagram's voxels lie outside the image: was it computed from this image?");

  const std::vector<double> key = keysOf(image, o.filtration == Filtration::Superlevel);
  const int threads = threadCount(o.threads);
  FeatureRegions out;
  out.voxels.assign(diagram.pairs.size(), -1);

  for (int kind = 0; kind < (top > 0 ? 2 : 1); ++kind)
  {
    if (!(kind == 0 ? o.components : o.enclosed))
      continue; // not asked for: empty labels
    // No selected pair of this kind: no sweep, no label.
    bool wanted = false;
    for (size_t i = 0; i < diagram.pairs.size() && !wanted; ++i)
      wanted = chosen[i] && diagram.pairs[i].dimension == (kind == 0 ? 0 : top);
    if (!wanted)
    {
      out.labels[kind].assign(static_cast<size_t>(n), -1);
      continue;
    }
    if (n < std::numeric_limits<int32_t>::max() - 1)
      regionsOfKind<int32_t>(kind, image.dims, key, diagram, chosen, top, o, threads, out);
    else
      regionsOfKind<int64_t>(kind, image.dims, key, diagram, chosen, top, o, threads, out);
  }
  return out;
}
} // namespace topovox
