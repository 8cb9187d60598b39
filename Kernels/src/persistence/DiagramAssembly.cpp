#include "DiagramAssembly.h"

#include "../common/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

std::vector<PersistencePair> DiagramBuilder::finish()
{
  // Dimension, birth, death, then the voxels: a total order, so that the
  // rows come out the same whatever the number of threads. The pairs are
  // 88 bytes each: their order is sorted as 4-byte indices (on the threads)
  // and then applied in place, one move a pair, instead of moving the pairs
  // themselves at every step of the sort (colin27_t1's 192,465 pairs: 13 to
  // 17 ms on 16 threads that way).
  const bool super = Super;
  auto less = [super](const PersistencePair& a, const PersistencePair& b) {
    if (a.dimension != b.dimension)
      return a.dimension < b.dimension;
    if (a.birth != b.birth)
      return super ? a.birth > b.birth : a.birth < b.birth;
    if (a.death != b.death)
      return super ? a.death > b.death : a.death < b.death;
    return std::lexicographical_compare(a.birthVoxel, a.birthVoxel + 3, b.birthVoxel, b.birthVoxel + 3) ||
      (std::equal(a.birthVoxel, a.birthVoxel + 3, b.birthVoxel) &&
        std::lexicographical_compare(a.deathVoxel, a.deathVoxel + 3, b.deathVoxel, b.deathVoxel + 3));
  };
  const size_t n = Pairs.size();
  if (n > size_t(UINT32_MAX))
  {
    parallelSort(Pairs, Options.threads > 0 ? Options.threads : defaultThreadCount(), less);
    return std::move(Pairs);
  }
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), uint32_t(0));
  parallelSort(order, Options.threads > 0 ? Options.threads : defaultThreadCount(),
    [&](uint32_t a, uint32_t b) { return less(Pairs[a], Pairs[b]); });
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
