// test_diagram_order.cpp - DiagramBuilder's two sorts give one order: the
// same pairs given with their values' ranks (a radix sort by ranks, then
// each run of equal ranks by the voxels) and without (a comparison sort of
// the whole diagram) come out pair for pair, voxels included. Inputs with
// few values (long runs of equal birth and death, one longer than the
// runs sorted on one thread), with many, essential classes among them,
// both filtration directions, several thread counts; and a rank too large
// to pack, which sends the whole diagram to the comparison sort; and pairs
// given in order, which are not sorted again.
#include "../src/persistence/DiagramAssembly.h"

#include "KernelCheck.h"
#include "SummaryComparison.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <stdlib.h>
#include <string>
#include <tuple>
#include <vector>

using namespace topovox;

namespace
{
using kernel_check::expect;

struct Given
{
  persistence::PairCell birth, death;
  bool essential;
};

// `count` pairs over `levels` values (value v has rank v), dimensions 0
// to 2, voxels at random in a 40 x 30 x 20 image; one in 50 essential.
std::vector<Given> randomPairs(std::mt19937_64& rng, size_t count, int levels)
{
  std::vector<Given> out(count);
  for (Given& g : out)
  {
    int64_t b = static_cast<int64_t>(rng() % static_cast<uint64_t>(levels - 1));
    int64_t d = b + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(levels - 1 - b));
    const int dimension = static_cast<int>(rng() % 3);
    // Keys in filtration orientation: rank order is key order.
    g.birth = persistence::PairCell{ static_cast<double>(b), dimension, static_cast<int64_t>(rng() % 24000), b };
    g.death = persistence::PairCell{ static_cast<double>(d), dimension + 1, static_cast<int64_t>(rng() % 24000), d };
    g.essential = rng() % 50 == 0;
  }
  return out;
}

// The diagram of `given`; *skipped: whether finish() found it in order.
std::vector<PersistencePair> build(const std::vector<Given>& given, bool ranked, bool super, int threads,
  int64_t spoilAt = -1, bool* skipped = nullptr, bool promise = false)
{
  const int64_t dims[3] = { 40, 30, 20 };
  PersistenceOptions po;
  po.filtration = super ? Filtration::Superlevel : Filtration::Sublevel;
  po.threads = threads;
  po.maxDimension = 3;
  persistence::DiagramBuilder b(dims, po);
  if (promise)
    b.promiseOrder();
  std::vector<int64_t> finite;
  for (size_t k = 0; k < given.size(); ++k)
    if (!given[k].essential)
      finite.push_back(static_cast<int64_t>(k));
  b.pairMany(static_cast<int64_t>(finite.size()), threads,
    [&](int64_t k, persistence::PairCell& birth, persistence::PairCell& death) {
      birth = given[static_cast<size_t>(finite[static_cast<size_t>(k)])].birth;
      death = given[static_cast<size_t>(finite[static_cast<size_t>(k)])].death;
      if (!ranked)
        birth.rank = death.rank = -1;
      if (k == spoilAt)
        death.rank = int64_t(1) << 40;
    });
  for (const Given& g : given)
    if (g.essential)
    {
      persistence::PairCell birth = g.birth;
      if (!ranked)
        birth.rank = -1;
      b.essential(birth);
    }
  std::vector<PersistencePair> out = b.finish();
  if (skipped)
    *skipped = b.sortSkipped();
  return out;
}

using kernel_check::samePairs;

// The oracle, written from the diagram's documented order
// (PersistenceDiagram::pairs), independently of DiagramBuilder: the pairs
// sorted by dimension, birth and death in filtration order, then the
// birth's and the death's voxel coordinates (x, y, z; an essential class's
// death voxel is -1, -1, -1), each given pair there once.
bool inDocumentedOrder(const std::vector<PersistencePair>& pairs, const std::vector<Given>& given, bool super)
{
  const double sign = super ? -1.0 : 1.0;
  auto key = [sign](const PersistencePair& p) {
    return std::make_tuple(p.dimension, sign * p.birth, sign * p.death, p.birthVoxel[0], p.birthVoxel[1],
      p.birthVoxel[2], p.deathVoxel[0], p.deathVoxel[1], p.deathVoxel[2]);
  };
  for (size_t k = 1; k < pairs.size(); ++k)
    if (key(pairs[k]) < key(pairs[k - 1]))
      return false;
  // The same pairs: (dimension, essential, birth voxel, death voxel) as
  // linear indices in the 40 x 30 x 20 image.
  auto linear = [](const int64_t* c) { return c[0] < 0 ? int64_t(-1) : c[0] + 40 * (c[1] + 30 * c[2]); };
  std::vector<std::tuple<int, bool, int64_t, int64_t>> got, want;
  for (const PersistencePair& p : pairs)
    got.emplace_back(p.dimension, p.essential, linear(p.birthVoxel), linear(p.deathVoxel));
  for (const Given& g : given)
    want.emplace_back(g.birth.dimension, g.essential, g.birth.voxel, g.essential ? int64_t(-1) : g.death.voxel);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  return got == want;
}

// `given` by dimension and the birth's and the death's ranks, as the Morse
// pairing gives a float field's pairs (the essential classes come last
// from build()).
std::vector<Given> inKeyOrder(std::vector<Given> given)
{
  std::stable_sort(given.begin(), given.end(), [](const Given& a, const Given& b) {
    return std::make_tuple(a.birth.dimension, a.birth.rank, a.death.rank) <
      std::make_tuple(b.birth.dimension, b.birth.rank, b.death.rank);
  });
  return given;
}
}

int main()
{
  std::mt19937_64 rng(91);
  for (const bool super : { false, true })
    for (const int levels : { 3, 40, 1000000 })
      for (const int threads : { 1, 4 })
      {
        // 3 levels: the runs of one (dimension, birth, death) exceed the
        // 2^16 that are sorted on one thread.
        const size_t count = levels == 3 ? 600000 : 150000;
        const std::vector<Given> given = randomPairs(rng, count, levels);
        const std::string what = std::string(super ? "superlevel" : "sublevel") + ", " + std::to_string(levels) +
          " levels, " + std::to_string(threads) + " threads";
        const std::vector<PersistencePair> byComparison = build(given, false, super, threads);
        expect(inDocumentedOrder(byComparison, given, super),
          what + ": every pair once, in the documented order (an oracle of the test's own)");
        bool skipped = true;
        expect(samePairs(build(given, true, super, threads, -1, &skipped), byComparison),
          what + ": sorted by ranks, the comparison sort's order");
        expect(!skipped, what + ": pairs out of order are sorted");
        expect(samePairs(build(given, true, super, threads, 777), byComparison),
          what + ": a rank too large to pack: the comparison sort, the same order");
        // Given in the keys' order (as the Morse pairing gives a float
        // field's pairs), the essential classes after them: not sorted
        // again, the essential ones merged in.
        const std::vector<Given> ordered = inKeyOrder(given);
        skipped = false;
        expect(samePairs(build(ordered, true, super, threads, -1, &skipped), byComparison),
          what + ": given in order, the essential classes merged in: the same order");
        expect(skipped, what + ": given in order, not sorted again");
      }
  // TOPOVOX_DIAGRAM_ORDER: `require` checks the diagrams whose engine
  // promised the order (the Morse pairing's: the test suites run under it),
  // `require-all` every diagram; unset, none.
  for (const bool super : { false, true })
  {
    const std::vector<Given> given = randomPairs(rng, 20000, 1000000), ordered = inKeyOrder(given);
    const std::string what = super ? "superlevel" : "sublevel";
    auto refused = [&](const std::vector<Given>& pairs, bool promise) {
      try
      {
        build(pairs, true, super, 3, -1, nullptr, promise);
        return false;
      }
      catch (const std::logic_error&)
      {
        return true;
      }
    };
    setenv("TOPOVOX_DIAGRAM_ORDER", "require", 1);
    expect(refused(given, true), what + ", require: promised, out of order: refused");
    expect(!refused(ordered, true), what + ", require: promised, in order: accepted");
    expect(!refused(given, false), what + ", require: not promised: not checked");
    setenv("TOPOVOX_DIAGRAM_ORDER", "require-all", 1);
    expect(refused(given, false), what + ", require-all: not promised, out of order: refused");
    expect(!refused(ordered, false), what + ", require-all: in order: accepted");
    unsetenv("TOPOVOX_DIAGRAM_ORDER");
    expect(!refused(given, true), what + ", unset: promised, out of order: not checked");
  }
  return kernel_check::finish();
}
