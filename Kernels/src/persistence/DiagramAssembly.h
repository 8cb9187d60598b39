// DiagramAssembly.h - what both persistence engines do around their
// algorithm: check the input, turn paired and unpaired cells into reported
// pairs (values back in the image's orientation, zero-persistence pairs and
// options applied, voxels as coordinates), sort the diagram; and the
// union-find both the Morse engine's pairing steps use.
#pragma once

#include "topovox/Persistence.h"
#include "topovox/UninitializedAllocator.h"

#include "../common/LargeArray.h"
#include "../common/Parallel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

namespace topovox
{
namespace persistence
{
// Throws std::invalid_argument with a user-facing reason.
void checkInput(const GridView& grid, const PersistenceOptions& options);

// A cell that creates or destroys a class: its value in filtration
// orientation (negated for superlevel), dimension and owning voxel; and,
// where the engine knows it, the rank of its value among the distinct
// values of all cells in filtration order (0 the first; -1 unknown): with
// every cell's rank known, the diagram is sorted by these small integers.
struct PairCell
{
  double key;
  int dimension;
  int64_t voxel;
  int64_t rank = -1;
};

// Collects pairs as the options ask; finish() sorts and returns them.
class DiagramBuilder
{
public:
  // `dims`: the image's voxels per axis (to turn voxel indices into
  // coordinates).
  DiagramBuilder(const int64_t dims[3], const PersistenceOptions& options);
  // Room for `count` pairs (a diagram of millions grows without copies).
  void reserve(size_t count) { Entries.reserve(count); }
  // Starts making finish()'s output for up to `atMost` pairs, beside the
  // caller's work: std::vector value-initialises its pairs on one thread
  // (80 bytes each: 2.8 GB for a 512^3 field's 34.5 M pairs, 0.6 s of
  // that thread on the H200 machine, which finish() had come to wait
  // for). From a million pairs on, the room's pages made present on the
  // threads first; finish() gives back what the pairs kept do not need
  // where that is more than an eighth.
  void prepareOutput(size_t atMost);
  void pair(const PairCell& birth, const PairCell& death);
  // Pairs 0 .. n-1, get(k, birth, death) filling pair k's cells, on
  // `threads` threads (the order before finish() does not matter: it sorts
  // by a total order).
  template <typename Get>
  void pairMany(int64_t n, int threads, Get get)
  {
    // Written in place (millions of pairs on noise: a copy per thread and
    // then into Entries touched twice the memory): each worker packs the
    // pairs it keeps at the start of its own range (parallelFor's ranges
    // are contiguous and in worker order), then the ranges close up.
    const size_t base = Entries.size();
    Entries.resize(base + static_cast<size_t>(n));
    std::vector<std::array<int64_t, 2>> kept(static_cast<size_t>(std::max(1, threads))); // start, pairs kept
    const int workers = parallelFor(n, threads, [&](int w, int64_t k0, int64_t k1) {
      PairCell birth, death;
      int64_t next = k0;
      bool ranked = true;
      for (int64_t k = k0; k < k1; ++k)
      {
        get(k, birth, death);
        Entry& e = Entries[base + static_cast<size_t>(next)];
        if (make(birth, death, e))
        {
          ++next;
          ranked = ranked && e.birthRank != kNoRank && e.deathRank != kNoRank;
        }
      }
      kept[static_cast<size_t>(w)] = { k0, next - k0 };
      if (!ranked)
        Unranked = true;
    });
    size_t end = base;
    for (int w = 0; w < workers; ++w)
    {
      const auto& range = kept[static_cast<size_t>(w)];
      const auto from = Entries.begin() + static_cast<std::ptrdiff_t>(base + static_cast<size_t>(range[0]));
      if (base + static_cast<size_t>(range[0]) != end)
        std::move(from, from + range[1], Entries.begin() + static_cast<std::ptrdiff_t>(end));
      end += static_cast<size_t>(range[1]);
    }
    Entries.resize(end);
  }
  void essential(const PairCell& birth);
  std::vector<PersistencePair> finish();
  // Whether finish() found the entries in the diagram's order already (all
  // ranked, the essential classes last) and so merged rather than sorted.
  // Only diagrams whose keys hold the dimension and the birth's rank alone
  // can be (2^19 distinct values or more: the keys then have no room for
  // the death's). The Morse pairing gives its pairs in the order that
  // needs (promiseOrder), which TOPOVOX_DIAGRAM_ORDER=require (the tests)
  // checks at any size: finish() then refuses pairs not given by
  // dimension and birth value, the essential classes last.
  bool sortSkipped() const { return SortSkipped; }
  // The engine gives its pairs by dimension and birth, the essential
  // classes last (the Morse pairing): TOPOVOX_DIAGRAM_ORDER=require then
  // has finish() check it.
  void promiseOrder() { OrderPromised = true; }

private:
  // A reported pair until finish() places it: values in the image's
  // orientation, voxels as linear indices (-1: none, an essential class's
  // death). 48 bytes against a PersistencePair's 80: the diagram's sort
  // moves these, and each pair is written out once, in order.
  struct Entry
  {
    double birth, death;
    int64_t birthVoxel, deathVoxel;
    // The birth's and the death's value ranks (PairCell::rank), kNoRank
    // where unknown (or too large); an essential class's death rank is
    // kEssentialRank, after all others.
    uint32_t birthRank, deathRank;
    int32_t dimension;
    bool essential;
  };
  static constexpr uint32_t kNoRank = ~uint32_t(0), kEssentialRank = kNoRank - 1;
  static uint32_t rankOf(const PairCell& c)
  {
    return c.rank >= 0 && c.rank < int64_t(kEssentialRank) ? static_cast<uint32_t>(c.rank) : kNoRank;
  }
  // Whether a before b in the diagram's order.
  bool before(const Entry& a, const Entry& b) const;
  // TOPOVOX_DIAGRAM_ORDER=require: throws std::logic_error where an
  // engine that promised the order (promiseOrder) gave entries not by
  // dimension and birth value, the essential last; require-all: any
  // engine's (the reference engine's come in its reduction's order: the
  // tests' control that the check can fire).
  void refuseOutOfOrder(int threads) const;
  // The entry of the two cells, false when it is not reported (zero
  // persistence, above maxDimension, below minPersistence).
  bool make(const PairCell& birth, const PairCell& death, Entry& e) const;

  int64_t Dims[3];
  const PersistenceOptions& Options;
  bool Super;
  // Unwritten when grown (pairMany writes the entries it keeps; the kernel's
  // huge pages from 4 MiB: a field's millions of pairs were zeroed on one
  // thread, then written again on all of them).
  UninitializedVector<Entry> Entries;
  std::atomic<bool> Unranked{ false }; // some entry has no order
  bool SortSkipped = false;
  bool OrderPromised = false;
  // finish()'s output, made on a thread of its own (prepareOutput).
  std::vector<PersistencePair> Out;
  std::future<void> OutMade;
};

// The stages of an engine: lap(name) records the time since the previous
// lap (or the start) as a "name: seconds" line for PersistenceDiagram::
// timings; progress(f) reports to the caller and throws Aborted when asked.
class StageLog
{
public:
  explicit StageLog(const PersistenceOptions& options);
  void lap(const char* name);
  void progress(double fraction) const;
  std::string text() const { return Text; }

private:
  const PersistenceOptions& Options;
  std::chrono::steady_clock::time_point Since;
  std::string Text;
};

// Asks the cache for what p points to, ahead of its reading (GCC and
// Clang; nothing elsewhere).
inline void prefetch(const void* p)
{
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// Union-find over 0..n-1 (union by rank, path halving). Each set carries a
// label, the element that stands for it: the oldest, by the elder rule,
// which the caller gives at each merge. Trees stay shallow whatever the
// labels.
// An element's parent (for a root: its rank, as -1 - rank) and label are
// one 8-byte record, the records on huge pages (LargeArray): a 512^3
// Gaussian field's 16.5 million minima are read at random, and a find
// misses the cache once a step, a merge not at all beyond its finds (a
// separate array of ranks was two more misses a merge). n is below 2^31
// (refused otherwise).
class UnionFind
{
public:
  UnionFind(size_t n, int threads); // n singletons, made on `threads` threads
  int64_t find(int64_t x);                   // the set's root
  // A root x's set had without shortening the path there: for several
  // threads at once, also beside one thread's merges and finds. Its
  // parent links are read atomically (merge() and find() write them so):
  // each leads to an ancestor, in the same set, and a node's ancestors stay
  // its ancestors, so the walk ends, at the root of x's set or of a set
  // that has since been merged into it.
  int64_t root(int64_t x) const
  {
    for (int32_t up; (up = __atomic_load_n(&Node[static_cast<size_t>(x)].up, __ATOMIC_RELAXED)) >= 0;)
      x = up;
    return x;
  }
  int64_t label(int64_t root) const { return Node[static_cast<size_t>(root)].label; }
  int64_t size() const { return static_cast<int64_t>(Node.size()); }
  void merge(int64_t rootA, int64_t rootB, int64_t label);
  // Asks for x's record early (a find of x follows soon).
  void prefetch(int64_t x) const { persistence::prefetch(&Node[static_cast<size_t>(x)]); }

private:
  struct Record
  {
    int32_t up; // the parent, or -1 - rank for a root
    int32_t label;
  };
  LargeArray<Record> Node;
};
}
}
