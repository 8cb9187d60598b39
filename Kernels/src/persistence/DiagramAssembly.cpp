#include "DiagramAssembly.h"

#include "../common/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <future>
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

bool DiagramBuilder::make(const PairCell& birth, const PairCell& death, Entry& e) const
{
  const double sign = Super ? -1.0 : 1.0;
  e.dimension = birth.dimension;
  e.birth = sign * birth.key;
  e.death = sign * death.key;
  e.essential = false;
  if (e.birth == e.death || e.dimension > Options.maxDimension || !(std::fabs(e.death - e.birth) > Options.minPersistence))
    return false;
  e.birthVoxel = birth.voxel;
  e.deathVoxel = death.voxel;
  return true;
}

void DiagramBuilder::pair(const PairCell& birth, const PairCell& death)
{
  Entry e;
  if (make(birth, death, e))
    Entries.push_back(e);
}

void DiagramBuilder::essential(const PairCell& birth)
{
  if (birth.dimension > Options.maxDimension)
    return;
  Entry e;
  e.dimension = birth.dimension;
  e.birth = (Super ? -1.0 : 1.0) * birth.key;
  e.death = Super ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  e.essential = true;
  e.birthVoxel = birth.voxel;
  e.deathVoxel = -1;
  Entries.push_back(e);
}

// From how many pairs finish() makes the output's room on a thread of its
// own while the entries sort.
constexpr size_t kPairsMadeAside = size_t(1) << 20;

std::vector<PersistencePair> DiagramBuilder::finish()
{
  // Dimension, birth, death (in filtration order), then the birth and the
  // death voxel's coordinates: a total order, so that the rows come out the
  // same whatever the number of threads. The 40-byte entries are sorted on
  // the threads (the voxels' coordinates worked out only for equal values),
  // then written out as pairs, in order, on the threads. (Sorting 4-byte
  // indices by the 88-byte pairs and permuting the pairs in place read them
  // at random:
  // with the 4.3 million pairs of a 256^3 Gaussian field, the stage that
  // ends here took 3.0 to 3.3 s on this repository's 2 cores; 2.4 to 2.5
  // s now. bench/README.md, twenty-first session.)
  const bool super = Super;
  const int threads = threadCount(Options.threads);
  auto coordinatesBefore = [this](int64_t a, int64_t b) {
    int64_t ca[3] = { -1, -1, -1 }, cb[3] = { -1, -1, -1 };
    if (a >= 0)
      coordinates(Dims, a, ca);
    if (b >= 0)
      coordinates(Dims, b, cb);
    return std::lexicographical_compare(ca, ca + 3, cb, cb + 3);
  };
  // The output's room is made while the entries sort: std::vector value-
  // initialises its pairs on one thread (88 bytes each: 3.8 GB for a 512^3
  // field's 42.7 M pairs; on huge pages), which needs nothing from the
  // sort. From a million pairs on (a thread's start costs tens of
  // microseconds).
  std::vector<PersistencePair> pairs;
  auto make = [&] { resizeOnHugePages(pairs, Entries.size()); };
  std::future<void> made;
  if (Entries.size() >= kPairsMadeAside && threads > 1)
    made = std::async(std::launch::async, make);
  else
    make();
  parallelSort(Entries, threads, [&](const Entry& a, const Entry& b) {
    if (a.dimension != b.dimension)
      return a.dimension < b.dimension;
    if (a.birth != b.birth)
      return super ? a.birth > b.birth : a.birth < b.birth;
    if (a.death != b.death)
      return super ? a.death > b.death : a.death < b.death;
    if (a.birthVoxel != b.birthVoxel)
      return coordinatesBefore(a.birthVoxel, b.birthVoxel);
    return a.deathVoxel != b.deathVoxel && coordinatesBefore(a.deathVoxel, b.deathVoxel);
  });
  if (made.valid())
    made.get(); // (rethrows the thread's bad_alloc)
  parallelFor(static_cast<int64_t>(Entries.size()), threads, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
    {
      const Entry& e = Entries[static_cast<size_t>(k)];
      PersistencePair& p = pairs[static_cast<size_t>(k)];
      p.dimension = e.dimension;
      p.birth = e.birth;
      p.death = e.death;
      p.essential = e.essential;
      coordinates(Dims, e.birthVoxel, p.birthVoxel);
      if (e.deathVoxel >= 0)
        coordinates(Dims, e.deathVoxel, p.deathVoxel);
    }
  });
  decltype(Entries)().swap(Entries);
  return pairs;
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

UnionFind::UnionFind(size_t n, int threads)
  : Node(n < (size_t(1) << 31) ? n : throw std::length_error("persistence: a union-find of 2^31 elements or more"))
{
  parallelFor(static_cast<int64_t>(n), threads, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
      Node[static_cast<size_t>(k)] = Record{ -1, static_cast<int32_t>(k) };
  });
}

void UnionFind::merge(int64_t a, int64_t b, int64_t label)
{
  // (A root's `up` is -1 - rank: the higher rank is the lower value.)
  if (Node[static_cast<size_t>(a)].up > Node[static_cast<size_t>(b)].up)
    std::swap(a, b);
  if (Node[static_cast<size_t>(a)].up == Node[static_cast<size_t>(b)].up)
    --Node[static_cast<size_t>(a)].up;
  Node[static_cast<size_t>(b)].up = static_cast<int32_t>(a);
  Node[static_cast<size_t>(a)].label = static_cast<int32_t>(label);
}

int64_t UnionFind::find(int64_t x)
{
  // Path halving: each element on the way points to its grandparent.
  for (int32_t up; (up = Node[static_cast<size_t>(x)].up) >= 0;)
  {
    const int32_t above = Node[static_cast<size_t>(up)].up;
    if (above < 0)
      return up;
    Node[static_cast<size_t>(x)].up = above;
    x = above;
  }
  return x;
}
}
}
