// MorseMatrix.h - the Morse boundary matrix as PHAT reduces it: a PHAT
// representation (the interface of PHAT's Uniform_representation) whose
// memory suits tens of millions of short columns.
//
// PHAT's vector_vector keeps each column in its own std::vector (32 bytes
// of column, 8 of dimension, a heap block of 8-byte rows) and reallocates a
// column each time it is finalized. A 512^3 Gaussian field (k^-1) gives a
// matrix of 43.6 M columns, 21.8 M of them non-empty, 66 M entries and 33 M
// column additions in the twist reduction, which is few operations: its 36 s
// on the H200 machine's cores were waits for memory (random rows of a few
// GiB on 4 KiB pages; the same run with glibc's heap on huge pages took
// 27.7 s, bench/README.md, twenty-fourth session). Here:
//
// * A column is 32 bytes, all columns in one array on huge pages, half a
//   cache line each: its size, its dimension, and either its rows
//   themselves (up to kInlineRows) or where they are. A column addition
//   waits for three reads at random: PHAT's pivot lookup, the source
//   column, the source's rows (perf on the 256^3 field's twist reduction:
//   32%, 25% and 24% of its samples at those loads); the source has at
//   most six rows in 90% of the additions there, and its rows then come
//   with the column. That reduction (this repository's 2 cores): 2.61 to
//   2.67 s with 16-byte columns, 1.89 s so.
// * Rows are 32-bit (PHAT's rows are column numbers; the pairing refuses
//   matrices of 2^31 columns or more) and live in arenas (their large
//   blocks on huge pages): the columns as given, batch by batch, one block
//   each; what the reduction writes in blocks per thread (OpenMP's thread
//   number, as PHAT's own per-thread buffers; doubling from 16 KiB to 16
//   MiB), so PHAT's chunk reduction may add to distinct columns at once.
// * A sum is written after the last thing the thread wrote; when that last
//   thing was the target column itself (the twist reduction adds to one
//   column until its lowest row is new), the sum moves down over it, so a
//   column reduced many times takes its room once.
// * Clearing and finalizing a column write nothing but its size.
//
// The pairs do not depend on the representation: the tests compare the
// diagrams with CubicalRipser's and with PHAT's own vector_vector in the
// reference path (PersistenceReference.cpp).
#pragma once

#include "topovox/Device.h"
#include "topovox/UninitializedAllocator.h"

#include "../common/LargeArray.h"
#include "../common/Parallel.h"

#include <phat/boundary_matrix.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace topovox
{
namespace morse
{
class MorseColumns
{
public:
  // Rows of the matrix (its column numbers) as stored.
  using Row = int32_t;

  MorseColumns()
    : Arenas(static_cast<size_t>(std::max(1, omp_get_max_threads())))
  {
  }

  // ---- PHAT's representation interface ----
  phat::index _get_num_cols() const { return static_cast<phat::index>(Columns.size()); }
  void _set_dimensions(phat::index /*rows*/, phat::index columns)
  {
    if (columns >= (phat::index(1) << 31))
      throw std::length_error("persistence: a Morse matrix of 2^31 columns or more");
    Columns = LargeArray<Column>(static_cast<size_t>(columns), Column{}, FillThreads);
  }
  phat::dimension _get_dim(phat::index j) const { return Columns[static_cast<size_t>(j)].dim; }
  void _set_dim(phat::index j, phat::dimension d) { Columns[static_cast<size_t>(j)].dim = d; }
  void _get_col(phat::index j, phat::column& out) const
  {
    const Column& c = Columns[static_cast<size_t>(j)];
    out.assign(c.data(), c.data() + c.size);
  }
  void _set_col(phat::index j, const phat::column& rows)
  {
    Column& c = Columns[static_cast<size_t>(j)];
    Row* to = arena().reserve(rows.size());
    for (size_t k = 0; k < rows.size(); ++k)
      to[k] = static_cast<Row>(rows[k]);
    c.place(to, to + rows.size());
    if (!c.isInline())
      arena().commit(to + rows.size());
  }
  bool _is_empty(phat::index j) const { return Columns[static_cast<size_t>(j)].size == 0; }
  phat::index _get_max_index(phat::index j) const
  {
    const Column& c = Columns[static_cast<size_t>(j)];
    return c.size == 0 ? -1 : c.data()[c.size - 1];
  }
  void _remove_max(phat::index j)
  {
    Column& c = Columns[static_cast<size_t>(j)];
    if (c.size == kInlineRows + 1)
    {
      const Row* rows = c.rows; // (the inline rows share its bytes)
      std::copy(rows, rows + kInlineRows, c.inlineRows);
    }
    --c.size;
  }
  void _add_to(phat::index source, phat::index target)
  {
    const Column& s = Columns[static_cast<size_t>(source)];
    Column& t = Columns[static_cast<size_t>(target)];
    Arena& a = arena();
    Row* out = a.reserve(static_cast<size_t>(t.size) + static_cast<size_t>(s.size));
    const Row* tr = t.data();
    const Row* sr = s.data();
    Row* end = std::set_symmetric_difference(tr, tr + t.size, sr, sr + s.size, out);
    // Whether the target's rows were this thread's last write: their room
    // is then the sum's, or given back.
    const bool last = !t.isInline() && t.rows + t.size == out && t.rows >= a.blockBegin();
    if (end - out <= kInlineRows)
    {
      t.place(out, end);
      if (last)
        a.commit(const_cast<Row*>(tr));
      return;
    }
    if (last)
    {
      end = std::copy(out, end, const_cast<Row*>(tr));
      out = const_cast<Row*>(tr);
    }
    a.commit(end);
    t.place(out, end);
  }
  void _clear(phat::index j) { Columns[static_cast<size_t>(j)].size = 0; }
  void _finalize(phat::index) {}
  void _sync() {}

  // ---- Filling, outside PHAT ----
  // The threads that make the column array (set_num_cols).
  void setThreads(int threads) { FillThreads = std::max(threads, 1); }
  // Rows per block of the reduction's arenas (tests make them small, so
  // that sums cross from block to block).
  void setBlockRows(size_t rows)
  {
    for (PaddedArena& a : Arenas)
      a.A.BlockRows = std::max<size_t>(rows, 1);
  }

  // One batch of n columns: column k is number columnOf(k), has at most
  // capacity(k) rows, and write(k, to) writes its rows in increasing order
  // from `to` and returns the end. The batch gets one block; the columns are
  // written on `threads` threads (distinct columns, distinct room).
  template <typename ColumnOf, typename Capacity, typename Write>
  void setColumns(int64_t n, int threads, ColumnOf columnOf, Capacity capacity, Write write)
  {
    if (n <= 0)
      return;
    // Where each column's rows go: a prefix sum of the capacities, by
    // chunks on the threads (21.8 M columns at 512^3).
    UninitializedVector<size_t> start(static_cast<size_t>(n) + 1);
    start[static_cast<size_t>(n)] = static_cast<size_t>(scanChunks(
      n, threads,
      [&](int64_t k0, int64_t k1) {
        int64_t sum = 0;
        for (int64_t k = k0; k < k1; ++k)
          sum += static_cast<int64_t>(capacity(k));
        return sum;
      },
      [](int64_t) {},
      [&](int64_t k0, int64_t k1, int64_t at) {
        for (int64_t k = k0; k < k1; ++k)
        {
          start[static_cast<size_t>(k)] = static_cast<size_t>(at);
          at += static_cast<int64_t>(capacity(k));
        }
      }));
    Batches.push_back(detail::allocateBlock<Row>(std::max<size_t>(start.back(), 1)));
    Row* block = Batches.back().get();
    parallelFor(n, threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        Row* to = block + start[static_cast<size_t>(k)];
        Columns[static_cast<size_t>(columnOf(k))].place(to, write(k, to));
      }
    });
  }

  // ---- Reading, outside PHAT ----
  // Column j's rows, *size of them (LockFreeReduction.cpp reads the
  // columns as given on several threads while nothing writes them).
  const Row* rowsOf(int64_t j, int32_t& size) const
  {
    const Column& c = Columns[static_cast<size_t>(j)];
    size = c.size;
    return c.data();
  }

private:
  // Up to this many rows live in the column itself.
  static constexpr int32_t kInlineRows = 6;
  // (32 bytes, on 32-byte boundaries where the array is on huge pages;
  // alignas is not asked for: small arrays come from malloc.)
  struct Column
  {
    int32_t size = 0;
    phat::dimension dim = 0;
    union
    {
      Row* rows; // more than kInlineRows: where they are
      Row inlineRows[kInlineRows] = {};
    };
    bool isInline() const { return size <= kInlineRows; }
    const Row* data() const { return isInline() ? inlineRows : rows; }
    // The rows [from, to): copied in when few (the room is then free
    // again), else kept where they are.
    void place(Row* from, Row* to)
    {
      size = static_cast<int32_t>(to - from);
      if (isInline())
        std::copy(from, to, inlineRows);
      else
        rows = from;
    }
  };
  static_assert(sizeof(Column) == 32, "a column is half a cache line");

  // One thread's room for the reduction's columns: blocks growing to
  // BlockRows rows, written front to back. reserve(n) returns room for n
  // rows; commit(end) says how far the writing went.
  class Arena
  {
  public:
    Row* reserve(size_t n)
    {
      if (static_cast<size_t>(Limit - Top) < n)
      {
        // Blocks double from 16 KiB to BlockRows: a small matrix (one
        // volume of a batch of 32^3 ones) takes no huge page of its own.
        const size_t rows = std::max(n, std::min(NextRows, BlockRows));
        NextRows = std::min(2 * NextRows, BlockRows);
        Blocks.push_back(detail::allocateBlock<Row>(rows));
        Top = Begin = Blocks.back().get();
        Limit = Top + rows;
      }
      return Top;
    }
    void commit(Row* end) { Top = end; }
    const Row* blockBegin() const { return Begin; }

    size_t BlockRows = size_t(1) << 22; // 16 MiB, the largest block

  private:
    std::vector<detail::Block<Row>> Blocks;
    size_t NextRows = size_t(1) << 12; // the next block's rows (16 KiB first)
    Row* Begin = nullptr;
    Row* Top = nullptr;
    Row* Limit = nullptr;
  };
  // Spaced a cache line apart: threads move their own arena's top.
  struct alignas(64) PaddedArena
  {
    Arena A;
  };

  Arena& arena() { return Arenas[static_cast<size_t>(omp_get_thread_num())].A; }

  LargeArray<Column> Columns;
  int FillThreads = defaultThreadCount();
  std::vector<detail::Block<Row>> Batches;
  std::vector<PaddedArena> Arenas;
};

// PHAT's boundary_matrix over MorseColumns, with the batch filling of
// MorseColumns::setColumns reachable (PHAT keeps its representation
// protected; its reductions take the matrix as a boundary_matrix).
class MorseMatrix : public phat::boundary_matrix<MorseColumns>
{
public:
  MorseColumns& columns() { return rep; }
  const MorseColumns& columns() const { return rep; }
};
} // namespace morse
} // namespace topovox
