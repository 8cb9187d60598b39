// DiagramAssembly.h - what both persistence engines do around their
// algorithm: check the input, turn paired and unpaired cells into reported
// pairs (values back in the image's orientation, zero-persistence pairs and
// options applied, voxels as coordinates), sort the diagram; and the
// union-find both the Morse engine's pairing steps use.
#pragma once

#include "topovox/Persistence.h"

#include "../common/Parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{
namespace persistence
{
// Throws std::invalid_argument with a user-facing reason.
void checkInput(const GridView& grid, const PersistenceOptions& options);

// A cell that creates or destroys a class: its value in filtration
// orientation (negated for superlevel), dimension and owning voxel.
struct PairCell
{
  double key;
  int dimension;
  int64_t voxel;
};

// Collects pairs as the options ask; finish() sorts and returns them.
class DiagramBuilder
{
public:
  // `dims`: the image's voxels per axis (to turn voxel indices into
  // coordinates).
  DiagramBuilder(const int64_t dims[3], const PersistenceOptions& options);
  // Room for `count` pairs (a diagram of millions grows without copies).
  void reserve(size_t count) { Pairs.reserve(count); }
  void pair(const PairCell& birth, const PairCell& death);
  // Pairs 0 .. n-1, get(k, birth, death) filling pair k's cells, on
  // `threads` threads (the order before finish() does not matter: it sorts
  // by a total order).
  template <typename Get>
  void pairMany(int64_t n, int threads, Get get)
  {
    std::vector<std::vector<PersistencePair>> parts(static_cast<size_t>(std::max(1, threads)));
    parallelFor(n, threads, [&](int w, int64_t k0, int64_t k1) {
      std::vector<PersistencePair>& mine = parts[static_cast<size_t>(w)];
      mine.reserve(static_cast<size_t>(k1 - k0));
      PairCell birth, death;
      PersistencePair p;
      for (int64_t k = k0; k < k1; ++k)
      {
        get(k, birth, death);
        if (make(birth, death, p))
          mine.push_back(p);
      }
    });
    for (auto& part : parts)
      Pairs.insert(Pairs.end(), part.begin(), part.end());
  }
  void essential(const PairCell& birth);
  std::vector<PersistencePair> finish();

private:
  // The pair of the two cells, false when it is not reported (zero
  // persistence, above maxDimension, below minPersistence).
  bool make(const PairCell& birth, const PairCell& death, PersistencePair& p) const;

  int64_t Dims[3];
  const PersistenceOptions& Options;
  bool Super;
  std::vector<PersistencePair> Pairs;
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

// Union-find over 0..n-1 (union by rank, path halving). Each set carries a
// label, the element that stands for it: the oldest, by the elder rule,
// which the caller gives at each merge. Trees stay shallow whatever the
// labels.
class UnionFind
{
public:
  explicit UnionFind(size_t n);
  int64_t find(int64_t x);                   // the set's root
  int64_t label(int64_t root) const { return Label[static_cast<size_t>(root)]; }
  void merge(int64_t rootA, int64_t rootB, int64_t label);

private:
  std::vector<int64_t> Parent, Label;
  std::vector<uint8_t> Rank;
};
}
}
