// LockFreeReduction.h - the Morse matrix reduced on all threads at once,
// without locks, after Morozov and Nigmetov ("Towards lockfree persistent
// homology", SPAA 2020).
//
// Why not PHAT's chunk reduction for large matrices: it reduces chunks of
// columns in parallel, then the columns still unpaired in one global pass
// on one thread, and on a 512^3 Gaussian field that pass did 80% of the
// additions (bench/README.md, twenty-third session). The work is small (33
// M column additions, 131 M rows at 512^3 k^-1); its time is waits for
// memory, a pivot lookup and a column read at random per step, which many
// threads overlap where one thread cannot.
//
// How: every thread takes columns in turn. pivot[r] is the column whose
// lowest row is r (or none). A thread holding column j looks at its lowest
// row r: owned by an earlier column i, it adds column i (as i last showed
// its rows) and looks again; free, or owned by a later column, it takes r
// by compare-and-swap, and a later column it took r from is now its to
// reduce. A column shows its rows by publishing a copy (never written
// again) before it takes a row, so another thread always reads a whole
// column: one whose lowest row is not r any more has been taken over, and
// the reader looks at pivot[r] again. Each copy is the column plus earlier
// columns, so every addition is one a serial reduction may make, and the
// pivots at the end are those of any reduction of the matrix: the pairs do
// not depend on the order (test_morse_matrix checks them against PHAT's
// twist reduction).
//
// Columns of dimension d are reduced after those of d + 1, without the
// columns a (d+1)-column has taken as its lowest row (clearing, as PHAT's
// twist reduction does).
#pragma once

#include "MorseMatrix.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace topovox
{
namespace morse
{
// The persistence pairs (birth column, death column) of `matrix`, reduced
// on `threads` threads, appended to *pairs in no particular order, each
// column j written as renumber[j] where `renumber` is given (the caller's
// own numbers: one pass over the pairs, not two); the matrix is not
// changed.
void reduceLockFree(const MorseColumns& matrix, int threads, std::vector<std::pair<int64_t, int64_t>>& pairs,
  const int64_t* renumber = nullptr);

// The same, as a list of its own.
inline std::vector<std::pair<int64_t, int64_t>> reduceLockFree(const MorseColumns& matrix, int threads)
{
  std::vector<std::pair<int64_t, int64_t>> pairs;
  reduceLockFree(matrix, threads, pairs);
  return pairs;
}
} // namespace morse
} // namespace topovox
