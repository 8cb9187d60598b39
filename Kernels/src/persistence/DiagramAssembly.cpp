#include "DiagramAssembly.h"

#include "../common/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace topovox
{
double PersistencePair::persistence() const
{
  return essential ? std::numeric_limits<double>::infinity() : std::fabs(death - birth);
}

namespace persistence
{
void checkInput(const GridView& grid, const PersistenceOptions& options)
{
  const std::string why = validateGrid(grid);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (grid.memory != MemorySpace::Host)
    throw std::invalid_argument("persistence needs the image in host memory");
  if (options.maxDimension < 0)
    throw std::invalid_argument("the maximum dimension must be at least 0");
  if (!(options.minPersistence >= 0))
    throw std::invalid_argument("the minimum persistence must be at least 0");
}

DiagramBuilder::DiagramBuilder(const int64_t dims[3], const PersistenceOptions& options)
  : Dims{ dims[0], dims[1], dims[2] }
  , Options(options)
  , Super(options.filtration == Filtration::Superlevel)
{
}

namespace
{
void coordinates(const int64_t dims[3], int64_t voxel, int64_t out[3])
{
  out[0] = voxel % dims[0];
  out[1] = (voxel / dims[0]) % dims[1];
  out[2] = voxel / (dims[0] * dims[1]);
}
}

bool DiagramBuilder::make(const PairCell& birth, const PairCell& death, PersistencePair& p) const
{
  const double sign = Super ? -1.0 : 1.0;
  p = PersistencePair();
  p.dimension = birth.dimension;
  p.birth = sign * birth.key;
  p.death = sign * death.key;
  if (p.birth == p.death || p.dimension > Options.maxDimension || !(p.persistence() > Options.minPersistence))
    return false;
  coordinates(Dims, birth.voxel, p.birthVoxel);
  coordinates(Dims, death.voxel, p.deathVoxel);
  return true;
}

void DiagramBuilder::pair(const PairCell& birth, const PairCell& death)
{
  PersistencePair p;
  if (make(birth, death, p))
    Pairs.push_back(p);
}

void DiagramBuilder::essential(const PairCell& birth)
{
  if (birth.dimension > Options.maxDimension)
    return;
  PersistencePair p;
  p.dimension = birth.dimension;
  p.birth = (Super ? -1.0 : 1.0) * birth.key;
  p.death = Super ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  p.essential = true;
  coordinates(Dims, birth.voxel, p.birthVoxel);
  Pairs.push_back(p);
}

namespace
{
// A value as an unsigned key in the same order, descending when `down`:
// the float's bits with the sign's order folded in; -0 and +0 one key, as
// they compare equal.
uint64_t orderKey(double v, bool down)
{
  if (v == 0)
    v = 0.0;
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  b = (b >> 63) ? ~b : b | (uint64_t(1) << 63);
  return down ? ~b : b;
}

// A pair's place in the diagram's order, without the pair: what the sort
// moves and compares (the voxels, for equal values only, from the pair).
struct OrderKey
{
  uint64_t birth, death;
  uint32_t index;
  int32_t dimension;
};
} // namespace

std::vector<PersistencePair> DiagramBuilder::finish()
{
  // Dimension, birth, death, then the voxels: a total order, so that the
  // rows come out the same whatever the number of threads. The pairs are
  // 88 bytes each: keys of their dimension and values (24 bytes, birth and
  // death as integers in the same order) are sorted on the threads and
  // the order applied in place, one move a pair. (Sorting 4-byte indices
  // that compare the pairs themselves read two pairs at random a step:
  // 4.3 million pairs of a 256^3 Gaussian field took 1.8 s on this
  // repository's 2 cores.)
  const bool super = Super;
  auto voxelsBefore = [](const PersistencePair& a, const PersistencePair& b) {
    return std::lexicographical_compare(a.birthVoxel, a.birthVoxel + 3, b.birthVoxel, b.birthVoxel + 3) ||
      (std::equal(a.birthVoxel, a.birthVoxel + 3, b.birthVoxel) &&
        std::lexicographical_compare(a.deathVoxel, a.deathVoxel + 3, b.deathVoxel, b.deathVoxel + 3));
  };
  const int threads = Options.threads > 0 ? Options.threads : defaultThreadCount();
  const size_t n = Pairs.size();
  if (n > size_t(UINT32_MAX))
  {
    parallelSort(Pairs, threads, [&](const PersistencePair& a, const PersistencePair& b) {
      if (a.dimension != b.dimension)
        return a.dimension < b.dimension;
      if (a.birth != b.birth)
        return super ? a.birth > b.birth : a.birth < b.birth;
      if (a.death != b.death)
        return super ? a.death > b.death : a.death < b.death;
      return voxelsBefore(a, b);
    });
    return std::move(Pairs);
  }
  std::vector<OrderKey> keys(n);
  parallelFor(static_cast<int64_t>(n), threads, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
    {
      const PersistencePair& p = Pairs[static_cast<size_t>(k)];
      keys[static_cast<size_t>(k)] =
        OrderKey{ orderKey(p.birth, super), orderKey(p.death, super), static_cast<uint32_t>(k), p.dimension };
    }
  });
  parallelSort(keys, threads, [&](const OrderKey& a, const OrderKey& b) {
    if (a.dimension != b.dimension)
      return a.dimension < b.dimension;
    if (a.birth != b.birth)
      return a.birth < b.birth;
    if (a.death != b.death)
      return a.death < b.death;
    return voxelsBefore(Pairs[a.index], Pairs[b.index]);
  });
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = keys[i].index;
  std::vector<OrderKey>().swap(keys);
  // Position i takes the pair at order[i]: each cycle of the permutation
  // is walked once, holding its first pair aside.
  for (size_t start = 0; start < n; ++start)
  {
    if (order[start] == start)
      continue;
    PersistencePair held = std::move(Pairs[start]);
    size_t at = start;
    while (order[at] != start)
    {
      const size_t from = order[at];
      Pairs[at] = std::move(Pairs[from]);
      order[at] = static_cast<uint32_t>(at);
      at = from;
    }
    Pairs[at] = std::move(held);
    order[at] = static_cast<uint32_t>(at);
  }
  return std::move(Pairs);
}

StageLog::StageLog(const PersistenceOptions& options)
  : Options(options)
  , Since(std::chrono::steady_clock::now())
{
}

void StageLog::lap(const char* name)
{
  const auto now = std::chrono::steady_clock::now();
  Text += std::string(name) + ": " +
    std::to_string(std::chrono::duration<double>(now - Since).count()) + "\n";
  Since = now;
}

void StageLog::progress(double fraction) const
{
  if (Options.progress && !Options.progress(fraction))
    throw Aborted{};
}

UnionFind::UnionFind(size_t n)
  : Parent(n)
  , Label(n)
  , Rank(n, 0)
{
  std::iota(Parent.begin(), Parent.end(), int64_t(0));
  std::iota(Label.begin(), Label.end(), int64_t(0));
}

void UnionFind::merge(int64_t a, int64_t b, int64_t label)
{
  if (Rank[static_cast<size_t>(a)] < Rank[static_cast<size_t>(b)])
    std::swap(a, b);
  Parent[static_cast<size_t>(b)] = a;
  if (Rank[static_cast<size_t>(a)] == Rank[static_cast<size_t>(b)])
    ++Rank[static_cast<size_t>(a)];
  Label[static_cast<size_t>(a)] = label;
}

int64_t UnionFind::find(int64_t x)
{
  while (Parent[static_cast<size_t>(x)] != x)
  {
    Parent[static_cast<size_t>(x)] = Parent[static_cast<size_t>(Parent[static_cast<size_t>(x)])];
    x = Parent[static_cast<size_t>(x)];
  }
  return x;
}
}
}
