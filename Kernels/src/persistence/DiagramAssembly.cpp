#include "DiagramAssembly.h"

#include "../common/Parallel.h"
#include "../common/RadixSort.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
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
  e.birthRank = rankOf(birth);
  e.deathRank = rankOf(death);
  return true;
}

void DiagramBuilder::pair(const PairCell& birth, const PairCell& death)
{
  Entry e;
  if (make(birth, death, e))
  {
    Entries.push_back(e);
    if (e.birthRank == kNoRank || e.deathRank == kNoRank)
      Unranked = true;
  }
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
  e.birthRank = rankOf(birth);
  e.deathRank = kEssentialRank;
  if (e.birthRank == kNoRank)
    Unranked = true;
  Entries.push_back(e);
}

bool DiagramBuilder::before(const Entry& a, const Entry& b) const
{
  // Dimension, birth, death (in filtration order), then the birth and the
  // death voxel's coordinates: a total order, so that the rows come out the
  // same whatever the number of threads (the voxels' coordinates worked
  // out only for equal values).
  if (a.dimension != b.dimension)
    return a.dimension < b.dimension;
  if (a.birth != b.birth)
    return Super ? a.birth > b.birth : a.birth < b.birth;
  if (a.death != b.death)
    return Super ? a.death > b.death : a.death < b.death;
  auto coordinatesBefore = [this](int64_t u, int64_t v) {
    int64_t cu[3] = { -1, -1, -1 }, cv[3] = { -1, -1, -1 };
    if (u >= 0)
      coordinates(Dims, u, cu);
    if (v >= 0)
      coordinates(Dims, v, cv);
    return std::lexicographical_compare(cu, cu + 3, cv, cv + 3);
  };
  if (a.birthVoxel != b.birthVoxel)
    return coordinatesBefore(a.birthVoxel, b.birthVoxel);
  return a.deathVoxel != b.deathVoxel && coordinatesBefore(a.deathVoxel, b.deathVoxel);
}

// From how many pairs the output's room is made on a thread of its own
// (prepareOutput), beside the making and the sort of the entries.
constexpr size_t kPairsMadeAside = size_t(1) << 20;
// From how many entries finish() sorts by their ranks where it can, and
// from how long a run of equal keys is sorted on all threads.
constexpr size_t kRankedSortFrom = size_t(1) << 15;
constexpr int64_t kLongRun = int64_t(1) << 16;
// Up to how many bits the keys include the death's rank (five passes).
constexpr int kKeyWithDeathBits = 40;
// Up to how many essential classes after entries in order are merged in
// rather than sorted with them.
constexpr int64_t kFewEssential = int64_t(1) << 20;

void DiagramBuilder::prepareOutput(size_t atMost)
{
  if (OutMade.valid() || Out.capacity() > 0)
    return;
  auto make = [this, atMost] { Out.resize(atMost); };
  const int threads = threadCount(Options.threads);
  reserveOnHugePages(Out, atMost);
  if (atMost >= kPairsMadeAside && threads > 1)
  {
    populateOnThreads(Out, threads);
    OutMade = std::async(std::launch::async, make);
  }
  else
    make();
}

void DiagramBuilder::refuseOutOfOrder(int threads) const
{
  // Read at each diagram (the test of the check sets it in turn).
  const char* env = std::getenv("TOPOVOX_DIAGRAM_ORDER");
  const bool required = env && ((std::strcmp(env, "require") == 0 && OrderPromised) ||
    std::strcmp(env, "require-all") == 0);
  if (!required)
    return;
  int64_t head = static_cast<int64_t>(Entries.size());
  while (head > 0 && Entries[static_cast<size_t>(head - 1)].essential)
    --head;
  const double sign = Super ? -1.0 : 1.0; // (filtration order: the values' or their negatives')
  auto byBirth = [sign](const Entry& a, const Entry& b) {
    return a.dimension < b.dimension || (a.dimension == b.dimension && sign * a.birth < sign * b.birth);
  };
  if (!isSortedOnThreads(Entries.data(), head, threads, byBirth) ||
    std::any_of(Entries.begin(), Entries.begin() + head, [](const Entry& e) { return e.essential; }))
    throw std::logic_error("persistence: the diagram's pairs did not come in order (TOPOVOX_DIAGRAM_ORDER=require)");
}

std::vector<PersistencePair> DiagramBuilder::finish()
{
  // The entries in the diagram's order (before()), then written out as
  // pairs in that order, on the threads. Where every entry's ranks are
  // known (the Morse engine's), a stable radix sort of 16-byte records by
  // their order keys (dimension and the birth's and the death's ranks:
  // RadixSort.h), then each run of equal keys, whose entries differ only
  // in their voxels, by before(). With many distinct values (a float
  // field's tens of millions) the keys hold the dimension and the birth's
  // rank only, which take half the passes, and the runs of equal keys are
  // then sorted by before() (a float field's are a few entries long; an
  // 8-bit image's values fit the whole key). Otherwise the 48-byte entries by
  // before() (sorting 4-byte indices by the 80-byte pairs and permuting
  // the pairs in place read them at random: with the 4.3 million pairs of
  // a 256^3 Gaussian field, the stage that ends here took 3.0 to 3.3 s on
  // this repository's 2 cores, 2.4 to 2.5 s so; bench/README.md,
  // twenty-first session). The 42.7 M pairs of a 512^3 field took 1.8 s of
  // the H200 machine's 16 threads by before() (twenty-eighth session).
  const int threads = threadCount(Options.threads);
  const int64_t n = static_cast<int64_t>(Entries.size());
  refuseOutOfOrder(threads);
  // The output's room is made while the entries sort, or from
  // prepareOutput on, on a thread of its own (a thread's start costs tens
  // of microseconds: from a million pairs on), its pages made present on
  // all threads first: that thread's page faults had made it outlast the
  // sort by 0.45 to 0.65 s (512^3 fields, H200 machine, thirtieth session).
  prepareOutput(Entries.size());
  std::vector<PersistencePair>& pairs = Out;
  auto made = [&] {
    if (OutMade.valid())
      OutMade.get(); // (rethrows the thread's bad_alloc)
    if (pairs.size() < Entries.size())
      resizeOnHugePages(pairs, Entries.size()); // (more than prepareOutput was told)
    pairs.resize(Entries.size());
    if (pairs.capacity() - pairs.size() > pairs.size() / 8)
      pairs.shrink_to_fit(); // (many pairs not kept: a copy, rather than holding their room)
  };
  auto write = [this](const Entry& e, PersistencePair& p) {
    p.dimension = e.dimension;
    p.birth = e.birth;
    p.death = e.death;
    p.essential = e.essential;
    coordinates(Dims, e.birthVoxel, p.birthVoxel);
    if (e.deathVoxel >= 0)
      coordinates(Dims, e.deathVoxel, p.deathVoxel);
  };
  if (!Unranked && Entries.size() >= kRankedSortFrom)
  {
    struct Record
    {
      uint64_t key;
      uint64_t index; // into Entries
    };
    // The largest rank (the essential classes' deaths after it), and the
    // bits a rank takes in the keys.
    std::vector<uint32_t> largest(static_cast<size_t>(std::max(1, threads)), 0);
    parallelFor(n, threads, [&](int w, int64_t k0, int64_t k1) {
      uint32_t most = 0;
      for (int64_t k = k0; k < k1; ++k)
      {
        const Entry& e = Entries[static_cast<size_t>(k)];
        most = std::max(most, e.essential ? e.birthRank : std::max(e.birthRank, e.deathRank));
      }
      largest[static_cast<size_t>(w)] = std::max(largest[static_cast<size_t>(w)], most);
    });
    const uint64_t deathAfterAll = uint64_t(*std::max_element(largest.begin(), largest.end())) + 1;
    int bits = 1;
    while ((uint64_t(1) << bits) <= deathAfterAll)
      ++bits;
    const bool withDeath = 2 + 2 * bits <= kKeyWithDeathBits;
    UninitializedVector<Record> order(Entries.size()), spare;
    parallelFor(n, threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        const Entry& e = Entries[static_cast<size_t>(k)];
        const uint64_t byBirth = (uint64_t(e.dimension) << bits) | e.birthRank;
        order[static_cast<size_t>(k)] = Record{ withDeath
            ? (byBirth << bits) | (e.essential ? deathAfterAll : uint64_t(e.deathRank))
            : byBirth,
          static_cast<uint64_t>(k) };
      }
    });
    // Entries given in the diagram's order already, the essential classes
    // after them (MorsePairing::finish gives each dimension's pairs in
    // birth order: for a float field's keys of dimension and birth rank,
    // the order), need no sort: the essential ones are merged in, after the
    // entries of equal keys, where the stable radix sort puts them (which
    // took 0.31 s of the H200 machine's 16 threads for a 512^3 field's
    // 34.5 M entries; the check is one pass).
    auto byKey = [](const Record& a, const Record& b) { return a.key < b.key; };
    int64_t head = n;
    while (head > 0 && n - head <= kFewEssential && Entries[static_cast<size_t>(head - 1)].essential)
      --head;
    if (n - head <= kFewEssential && isSortedOnThreads(order.data(), head, threads, byKey))
    {
      SortSkipped = true;
      if (head < n)
      {
        std::stable_sort(order.begin() + head, order.end(), byKey);
        spare.reserve(order.size());
        populateOnThreads(spare, threads);
        spare.resize(order.size());
        mergeOnThreads(order.data(), head, order.data() + head, n - head, spare.data(), threads, byKey);
        order.swap(spare);
      }
    }
    else
      radixSortByKey(order, spare, differingKeyBits(order, threads), threads);
    decltype(spare)().swap(spare);
    auto byEntry = [this](const Record& a, const Record& b) {
      return before(Entries[static_cast<size_t>(a.index)], Entries[static_cast<size_t>(b.index)]);
    };
    // The runs of equal keys, each in the chunk where it starts; long ones
    // kept for all threads. Where each chunk's first run starts (past a run
    // from the chunk before) is found first, so that while a chunk sorts a
    // run that reaches into the next chunk, no thread reads it.
    const int64_t chunks = chunksOf(n, 8 * int64_t(threads), 4096);
    std::vector<int64_t> firstRun(static_cast<size_t>(chunks) + 1, n);
    forEachChunk(n, chunks, threads, [&](int64_t i0, int64_t, int64_t c) {
      int64_t i = i0;
      while (i0 > 0 && i < n && order[static_cast<size_t>(i)].key == order[static_cast<size_t>(i0 - 1)].key)
        ++i;
      firstRun[static_cast<size_t>(c)] = i;
    });
    std::vector<std::vector<std::pair<int64_t, int64_t>>> longRuns(static_cast<size_t>(chunks));
    forEachChunk(n, chunks, threads, [&](int64_t, int64_t, int64_t c) {
      // (A run that starts before the next chunk's first ends there.)
      for (int64_t i = firstRun[static_cast<size_t>(c)]; i < firstRun[static_cast<size_t>(c) + 1];)
      {
        int64_t j = i + 1;
        while (j < n && order[static_cast<size_t>(j)].key == order[static_cast<size_t>(i)].key)
          ++j;
        if (j - i >= kLongRun)
          longRuns[static_cast<size_t>(c)].emplace_back(i, j);
        else if (j - i > 1)
          std::sort(order.begin() + i, order.begin() + j, byEntry);
        i = j;
      }
    });
    for (const auto& runs : longRuns)
      for (const auto& run : runs)
      {
        std::vector<Record> part(order.begin() + run.first, order.begin() + run.second);
        parallelSort(part, threads, byEntry);
        std::copy(part.begin(), part.end(), order.begin() + run.first);
      }
    made();
    parallelFor(n, threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
        write(Entries[static_cast<size_t>(order[static_cast<size_t>(k)].index)], pairs[static_cast<size_t>(k)]);
    });
  }
  else
  {
    parallelSort(Entries, threads, [this](const Entry& a, const Entry& b) { return before(a, b); });
    made();
    parallelFor(n, threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
        write(Entries[static_cast<size_t>(k)], pairs[static_cast<size_t>(k)]);
    });
  }
  decltype(Entries)().swap(Entries);
  return std::move(Out);
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
  // (Links written atomically: root() may read them on other threads.)
  if (Node[static_cast<size_t>(a)].up == Node[static_cast<size_t>(b)].up)
    __atomic_store_n(&Node[static_cast<size_t>(a)].up, Node[static_cast<size_t>(a)].up - 1, __ATOMIC_RELAXED);
  __atomic_store_n(&Node[static_cast<size_t>(b)].up, static_cast<int32_t>(a), __ATOMIC_RELAXED);
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
    __atomic_store_n(&Node[static_cast<size_t>(x)].up, above, __ATOMIC_RELAXED); // (as merge's)
    x = above;
  }
  return x;
}
}
}
