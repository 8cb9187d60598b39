// test_morse_matrix.cpp - the Morse matrix's representation (MorseMatrix.h)
// against PHAT's own vector_vector: the same reduction on the same matrix
// must leave every column the same, row for row, in both. Random matrices
// whose columns of dimension d hold rows of dimension d - 1 (ragged, some
// empty, some long, so that sums grow, shrink to nothing and are added to
// again); the twist reduction on one thread and PHAT's chunk reduction on
// several (OpenMP builds); arenas of a few rows, so that sums cross blocks;
// columns given in several batches, as the pieces of an image give them;
// columns of up to 8 rows as given, about the six a column holds itself,
// so that sums and the chunk reduction's removals cross that size both
// ways (a removal that left the rows behind made the chunk reduction loop
// without end).
//
// The lock-free reduction (LockFreeReduction.h) on the same matrices, on 1
// to 8 threads (more than this repository's 2 cores: the threads are cut
// off mid-column and meet on the same rows): its pairs must be the twist
// reduction's, and it must leave the matrix as given.
#include "../src/persistence/LockFreeReduction.h"
#include "../src/persistence/MorseMatrix.h"

#include "KernelCheck.h"

#include <phat/algorithms/chunk_reduction.h>
#include <phat/algorithms/twist_reduction.h>
#include <phat/compute_persistence_pairs.h>
#include <phat/representations/default_representations.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace topovox;
using kernel_check::expect;

namespace
{
struct RandomMatrix
{
  std::vector<phat::dimension> dims;
  std::vector<std::vector<phat::index>> columns;
};

// n columns of dimensions 0 to top in random order; a column of dimension
// d > 0 gets up to `most` distinct rows among the earlier columns of
// dimension d - 1.
RandomMatrix randomMatrix(std::mt19937_64& rng, int64_t n, int top, int most)
{
  RandomMatrix m;
  std::vector<std::vector<phat::index>> byDim(static_cast<size_t>(top) + 1);
  std::uniform_int_distribution<int> dim(0, top), count(0, most);
  for (int64_t j = 0; j < n; ++j)
  {
    const int d = dim(rng);
    std::vector<phat::index> rows;
    if (d > 0 && !byDim[static_cast<size_t>(d - 1)].empty())
    {
      const auto& pool = byDim[static_cast<size_t>(d - 1)];
      // Rows near the column are likelier: long chains of additions.
      std::geometric_distribution<size_t> back(0.05);
      for (int k = count(rng); k > 0; --k)
        rows.push_back(pool[pool.size() - 1 - std::min(back(rng), pool.size() - 1)]);
      std::sort(rows.begin(), rows.end());
      rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    }
    m.dims.push_back(static_cast<phat::dimension>(d));
    m.columns.push_back(rows);
    byDim[static_cast<size_t>(d)].push_back(j);
  }
  return m;
}

// The matrix in MorseColumns, given in `batches` batches of interleaved
// columns (batch b: the columns j with j % batches == b).
void fill(morse::MorseMatrix& out, const RandomMatrix& m, int batches, int threads)
{
  const int64_t n = static_cast<int64_t>(m.columns.size());
  out.set_num_cols(n);
  for (int64_t j = 0; j < n; ++j)
    out.set_dim(j, m.dims[static_cast<size_t>(j)]);
  for (int b = 0; b < batches; ++b)
  {
    const int64_t count = (n - b + batches - 1) / batches;
    out.columns().setColumns(
      count, threads, [&](int64_t k) { return b + k * batches; },
      [&](int64_t k) { return static_cast<int64_t>(m.columns[static_cast<size_t>(b + k * batches)].size()); },
      [&](int64_t k, morse::MorseColumns::Row* to) {
        for (const phat::index row : m.columns[static_cast<size_t>(b + k * batches)])
          *to++ = static_cast<morse::MorseColumns::Row>(row);
        return to;
      });
  }
}

void fill(phat::boundary_matrix<phat::vector_vector>& out, const RandomMatrix& m)
{
  out.set_num_cols(static_cast<phat::index>(m.columns.size()));
  for (size_t j = 0; j < m.columns.size(); ++j)
  {
    out.set_dim(static_cast<phat::index>(j), m.dims[j]);
    out.set_col(static_cast<phat::index>(j), m.columns[j]);
  }
}

template <typename A, typename B>
bool sameColumns(const A& a, const B& b, std::string& first)
{
  if (a.get_num_cols() != b.get_num_cols())
  {
    first = "column counts";
    return false;
  }
  phat::column ca, cb;
  for (phat::index j = 0; j < a.get_num_cols(); ++j)
  {
    a.get_col(j, ca);
    b.get_col(j, cb);
    if (ca != cb || a.get_dim(j) != b.get_dim(j))
    {
      first = "column " + std::to_string(j);
      return false;
    }
  }
  return true;
}

template <typename Reduction>
void compare(const std::string& what, const RandomMatrix& m, size_t blockRows, int batches, int threads)
{
  phat::boundary_matrix<phat::vector_vector> reference;
  fill(reference, m);
  morse::MorseMatrix ours;
  ours.columns().setBlockRows(blockRows);
  fill(ours, m, batches, threads);
  std::string where; // (the check runs before its message is made)
  bool same = sameColumns(ours, reference, where);
  expect(same, what + ": columns as given (" + where + ")");
  phat::persistence_pairs pa, pb;
  phat::compute_persistence_pairs<Reduction>(pa, reference);
  phat::compute_persistence_pairs<Reduction>(pb, ours);
  same = sameColumns(ours, reference, where);
  expect(same, what + ": reduced columns (" + where + ")");
  pa.sort();
  pb.sort();
  expect(pa == pb, what + ": pairs");
}

void compareLockFree(const std::string& what, const RandomMatrix& m, int threads)
{
  phat::boundary_matrix<phat::vector_vector> reference;
  fill(reference, m);
  morse::MorseMatrix ours;
  fill(ours, m, 3, 2);
  const std::vector<std::pair<int64_t, int64_t>> lockFree = morse::reduceLockFree(ours.columns(), threads);
  std::string where;
  const bool kept = sameColumns(ours, reference, where);
  expect(kept, what + ": the matrix is left as given (" + where + ")");
  phat::persistence_pairs expected, got;
  phat::compute_persistence_pairs<phat::twist_reduction>(expected, reference);
  for (const auto& pr : lockFree)
    got.append_pair(pr.first, pr.second);
  expected.sort();
  got.sort();
  expect(got == expected,
    what + ": pairs (" + std::to_string(got.get_num_pairs()) + " against twist's " +
      std::to_string(expected.get_num_pairs()) + ")");
}
} // namespace

int main()
{
  std::mt19937_64 rng(2026);
  struct Case
  {
    int64_t n;
    int top, most;
    size_t blockRows;
    int batches;
  };
  const Case cases[] = {
    { 1, 2, 4, 1 << 20, 1 },   // one column
    { 200, 1, 2, 1 << 20, 1 }, // a graph
    { 3000, 2, 6, 1 << 20, 3 },
    { 3000, 3, 6, 7, 2 }, // sums cross blocks of 7 rows
    { 20000, 2, 12, 1, 5 }, // blocks of one row: every sum its own block
    { 100000, 2, 4, 64, 4 },
    { 5000, 2, 8, 1 << 20, 2 }, // about the rows a column holds itself
  };
  for (const Case& c : cases)
  {
    const RandomMatrix m = randomMatrix(rng, c.n, c.top, c.most);
    const std::string what = std::to_string(c.n) + " columns, dimensions to " + std::to_string(c.top) +
      ", blocks of " + std::to_string(c.blockRows) + " rows";
    compare<phat::twist_reduction>("twist, " + what, m, c.blockRows, c.batches, 3);
    // PHAT's chunk reduction on OpenMP's threads (one without OpenMP).
    const int before = omp_get_max_threads();
#ifdef _OPENMP
    omp_set_num_threads(4);
#endif
    compare<phat::chunk_reduction>("chunk, " + what, m, c.blockRows, c.batches, 2);
#ifdef _OPENMP
    omp_set_num_threads(before);
#else
    (void)before;
#endif
  }

  // The lock-free reduction, on matrices whose sums grow long (a tenth of
  // a column's rows near it) and on the cases above, with 1, 2, 4 and 8
  // threads, several times each (races differ from run to run).
  {
    std::vector<RandomMatrix> matrices;
    for (const Case& c : cases)
      matrices.push_back(randomMatrix(rng, c.n, c.top, c.most));
    matrices.push_back(randomMatrix(rng, 200000, 3, 5));
    matrices.push_back(randomMatrix(rng, 50000, 2, 20));
    for (size_t k = 0; k < matrices.size(); ++k)
      for (const int threads : { 1, 2, 4, 8 })
        for (int repeat = 0; repeat < (threads > 1 ? 3 : 1); ++repeat)
          compareLockFree("lock-free, matrix " + std::to_string(k) + " (" +
              std::to_string(matrices[k].columns.size()) + " columns), " + std::to_string(threads) + " threads",
            matrices[k], threads);
  }

  // A matrix with an empty column between two full ones keeps the rows of
  // both: a sum written over its target never reaches its neighbour.
  {
    RandomMatrix m;
    m.dims = { 0, 0, 0, 1, 1, 1, 1 };
    m.columns = { {}, {}, {}, { 0, 1 }, { 1, 2 }, {}, { 0, 2 } };
    compare<phat::twist_reduction>("hand-made triangle", m, 3, 1, 1);
  }

  bool threw = false;
  try
  {
    morse::MorseMatrix huge;
    huge.set_num_cols(phat::index(1) << 31);
  }
  catch (const std::length_error&)
  {
    threw = true;
  }
  expect(threw, "2^31 columns are refused before anything is allocated");
  return kernel_check::finish();
}
