// DiagramAssembly.h - what both persistence engines do around their
// algorithm: check the input, turn paired and unpaired cells into reported
// pairs (values back in the image's orientation, zero-persistence pairs and
// options applied, voxels as coordinates), sort the diagram; and the
// union-find both the Morse engine's pairing steps use.
#pragma once

#include "topovox/Persistence.h"

#include <cstdint>
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
  DiagramBuilder(const GridView& grid, const PersistenceOptions& options);
  void pair(const PairCell& birth, const PairCell& death);
  void essential(const PairCell& birth);
  std::vector<PersistencePair> finish();

private:
  const GridView& Grid;
  const PersistenceOptions& Options;
  bool Super;
  std::vector<PersistencePair> Pairs;
};

// Union-find over 0..n-1 with path halving; the caller decides which root
// survives a merge (the elder rule).
class UnionFind
{
public:
  explicit UnionFind(size_t n);
  int64_t find(int64_t x);
  void attach(int64_t child, int64_t root) { Parent[static_cast<size_t>(child)] = root; }

private:
  std::vector<int64_t> Parent;
};
}
}
