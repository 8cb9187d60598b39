// FeatureRegions.cpp - feature regions (FeatureRegions.h) by one union-find
// sweep per kind. Each component keeps its voxels as a linked list; when a
// component dies its list is spliced, whole, after the survivor's, so every
// dead component stays a contiguous run of the final lists. A region is then
// a range of positions in those lists, the ranges are nested or disjoint,
// and one pass with a stack labels every voxel with its innermost (or
// outermost) range.
#include "topovox/FeatureRegions.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

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
struct Run
{
  int64_t first = -1, last = -1; // voxels at the ends of the run
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
class Sweep
{
public:
  std::vector<Run> runs;         // per voxel: the run of the component it was the oldest of
  std::vector<int64_t> position; // per voxel: its place in the final lists (-1: never swept)

  Sweep(const int64_t dims[3], bool full, bool withOutside, const std::vector<int64_t>& order,
    const std::vector<int64_t>& level)
    : runs(static_cast<size_t>(dims[0] * dims[1] * dims[2]))
    , position(runs.size(), -1)
    , n_(static_cast<int64_t>(runs.size()))
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
      const int64_t v = order[i];
      level_ = level[i];
      parent_[at(v)] = v;
      oldest_[at(v)] = v;
      age_[at(v)] = static_cast<int64_t>(i);
      run_[at(v)] = Run{}; // v joins its list after the merges it causes
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
        const int64_t u = q[0] + dims[0] * (q[1] + dims[1] * q[2]);
        if (parent_[at(u)] >= 0)
          unite(v, u);
      }
      Run& joined = run_[at(find(v))];
      if (joined.first < 0)
        joined.first = v;
      else
        next_[at(joined.last)] = v;
      joined.last = v;
    }
    // The components alive at the end: essential classes, except the
    // outside's; then every final list gets its positions.
    int64_t next = 0;
    auto place = [&](int64_t root) {
      for (int64_t w = run_[at(root)].first; w >= 0; w = next_[at(w)])
        position[at(w)] = next++;
    };
    for (const int64_t v : order)
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
  static size_t at(int64_t i) { return static_cast<size_t>(i); }

  int64_t find(int64_t v)
  {
    while (parent_[at(v)] != v)
    {
      const int64_t p = parent_[at(v)];
      parent_[at(v)] = parent_[at(p)]; // path halving
      v = p;
    }
    return v;
  }

  int64_t ageOf(int64_t root) const
  {
    const int64_t o = oldest_[at(root)];
    return o == n_ ? -1 : age_[at(o)];
  }

  void unite(int64_t a, int64_t b)
  {
    const int64_t ra = find(a), rb = find(b);
    if (ra == rb)
      return;
    // The elder rule: the component whose oldest voxel came first survives;
    // the other's list is its region, and goes after the survivor's.
    const int64_t survivor = ageOf(ra) <= ageOf(rb) ? ra : rb, dying = survivor == ra ? rb : ra;
    snapshot(ra);
    snapshot(rb);
    const Run dead = run_[at(dying)];
    runs[at(oldest_[at(dying)])] = before_[at(dying)];
    Run merged = run_[at(survivor)];
    if (merged.first < 0)
      merged = dead;
    else if (dead.first >= 0)
    {
      next_[at(merged.last)] = dead.first;
      merged.last = dead.last;
    }
    const int64_t keepOldest = oldest_[at(survivor)];
    int64_t root = ra, child = rb; // union by size
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
  void snapshot(int64_t root)
  {
    if (stamp_[at(root)] != level_)
    {
      stamp_[at(root)] = level_;
      before_[at(root)] = run_[at(root)];
    }
  }

  int64_t n_; // voxels; node n_ is the outside
  std::vector<int64_t> parent_, size_, oldest_, age_, next_;
  std::vector<Run> run_;    // per root: its component's list
  std::vector<Run> before_; // per root: that list when the current level began
  std::vector<int64_t> stamp_;
  int64_t level_ = -1;
};

// Filtration values: the image's (negated for a superlevel filtration, so
// that "older" is always "lower"), NaN kept.
std::vector<double> keysOf(const GridView& g, bool super)
{
  std::vector<double> out(static_cast<size_t>(g.voxelCount()));
  dispatchScalarType(g.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = static_cast<const T*>(g.data);
    size_t k = 0;
    for (int64_t z = 0; z < g.dims[2]; ++z)
      for (int64_t y = 0; y < g.dims[1]; ++y)
        for (int64_t x = 0; x < g.dims[0]; ++x)
        {
          const double v = static_cast<double>(d[x * g.strides[0] + y * g.strides[1] + z * g.strides[2]]);
          out[k++] = super ? -v : v;
        }
  });
  return out;
}

struct Interval
{
  int64_t start, end; // positions, inclusive
  int32_t pair;
};

// Every swept voxel gets the pair of the innermost (or outermost) interval
// holding its position (intervals are nested or disjoint).
void paint(std::vector<Interval>& iv, const std::vector<int64_t>& position, bool innermost,
  std::vector<int32_t>& labels)
{
  std::sort(iv.begin(), iv.end(), [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<int64_t> voxelAt(position.size(), -1);
  int64_t used = 0;
  for (size_t v = 0; v < position.size(); ++v)
    if (position[v] >= 0)
    {
      voxelAt[static_cast<size_t>(position[v])] = static_cast<int64_t>(v);
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
  const int threads = o.threads > 0 ? o.threads : defaultThreadCount();
  FeatureRegions out;
  out.voxels.assign(diagram.pairs.size(), -1);
  const bool v = o.construction == Construction::V;
  auto linear = [&](const int64_t c[3]) { return c[0] + dims[0] * (c[1] + dims[1] * c[2]); };

  for (int kind = 0; kind < (top > 0 ? 2 : 1); ++kind)
  {
    // No selected pair of this kind: no sweep, no label.
    bool wanted = false;
    for (size_t i = 0; i < diagram.pairs.size() && !wanted; ++i)
      wanted = chosen[i] && diagram.pairs[i].dimension == (kind == 0 ? 0 : top);
    if (!wanted)
    {
      out.labels[kind].assign(static_cast<size_t>(n), -1);
      continue;
    }
    // Components: upwards from the lowest voxel, NaN absent. The top
    // dimension: downwards from the highest, NaN first (never in the
    // complex, so inside every complement), with the outside.
    // Sorted as (key, voxel) pairs, not voxels compared through the key
    // array: the comparisons then stay in the cache. Downwards, NaN first,
    // then the negated key, ties by descending voxel (the negated index).
    struct Keyed
    {
      bool nan;
      double key;
      int64_t voxel;
    };
    std::vector<Keyed> keyed;
    keyed.reserve(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k)
    {
      const double x = key[static_cast<size_t>(k)];
      if (kind == 0 && !std::isnan(x))
        keyed.push_back({ false, x, k });
      else if (kind == 1)
        keyed.push_back({ std::isnan(x), std::isnan(x) ? 0.0 : -x, -k });
    }
    parallelSort(keyed, threads, [](const Keyed& a, const Keyed& b) {
      if (a.nan != b.nan)
        return a.nan;
      return a.key != b.key ? a.key < b.key : a.voxel < b.voxel;
    });
    std::vector<int64_t> order(keyed.size());
    for (size_t i = 0; i < keyed.size(); ++i)
      order[i] = kind == 0 ? keyed[i].voxel : -keyed[i].voxel;
    keyed.clear();
    keyed.shrink_to_fit();
    // V: components by face neighbours, enclosed regions by the full block;
    // T the other way round.
    const bool full = kind == 0 ? !v : v;
    // Voxels of equal value (NaN with NaN) form one level.
    std::vector<int64_t> level(order.size());
    for (size_t i = 0; i < order.size(); ++i)
    {
      const double a = key[static_cast<size_t>(order[i])];
      const double b = i ? key[static_cast<size_t>(order[i - 1])] : a;
      const bool same = i && (a == b || (std::isnan(a) && std::isnan(b)));
      level[i] = i == 0 ? 0 : level[i - 1] + (same ? 0 : 1);
    }
    const Sweep sweep(dims, full, kind == 1, order, level);
    std::vector<Interval> intervals;
    for (size_t i = 0; i < diagram.pairs.size(); ++i)
    {
      const PersistencePair& p = diagram.pairs[i];
      if (p.dimension != (kind == 0 ? 0 : top) || !chosen[i])
        continue;
      const int64_t* voxel = kind == 0 ? p.birthVoxel : p.deathVoxel;
      const Run r = voxel[0] >= 0 ? sweep.runs[static_cast<size_t>(linear(voxel))] : Run{};
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
  return out;
}
} // namespace topovox
