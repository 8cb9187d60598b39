// LockFreeReduction.cpp - see LockFreeReduction.h.
#include "LockFreeReduction.h"

#include "../common/LargeArray.h"
#include "../common/Parallel.h"

#include "topovox/UninitializedAllocator.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>

namespace topovox
{
namespace morse
{
namespace
{
using Row = MorseColumns::Row;

// One thread's published columns: each its size, then its rows, written
// once and read by any thread until the reduction ends (nothing is freed
// before: a reader may still hold a copy its column has moved on from).
class PublishedColumns
{
public:
  const Row* publish(const std::vector<Row>& rows)
  {
    const size_t n = rows.size() + 1;
    if (static_cast<size_t>(Limit - Top) < n)
    {
      const size_t room = std::max(n, kBlockRows);
      Blocks.push_back(detail::allocateBlock<Row>(room));
      Top = Blocks.back().get();
      Limit = Top + room;
    }
    Row* at = Top;
    at[0] = static_cast<Row>(rows.size());
    std::copy(rows.begin(), rows.end(), at + 1);
    Top += n;
    return at;
  }

private:
  static constexpr size_t kBlockRows = size_t(1) << 20; // 4 MiB
  std::vector<detail::Block<Row>> Blocks;
  Row* Top = nullptr;
  Row* Limit = nullptr;
};

// What one thread keeps: the column it holds, room for a sum, its copies.
// Spaced apart: the threads write their own.
struct alignas(64) Worker
{
  std::vector<Row> column, sum;
  PublishedColumns published;
};

class Reducer
{
public:
  Reducer(const MorseColumns& matrix, int threads)
    : M(matrix)
    , N(static_cast<int64_t>(matrix._get_num_cols()))
    , Threads(threads)
    , Pivot(static_cast<size_t>(N), -1, threads)
    , Current(static_cast<size_t>(N), nullptr, threads)
    , Workers(static_cast<size_t>(std::max(threads, 1)))
  {
  }

  void reduceDimension(phat::dimension d)
  {
    parallelForDynamic(N, Threads, kGrain, [&](int worker, int64_t j0, int64_t j1) {
      Worker& w = Workers[static_cast<size_t>(worker)];
      for (int64_t j = j0; j < j1; ++j)
      {
        // (A column some (d+1)-column has taken as its lowest row reduces
        // to nothing: cleared. The (d+1)-columns are done, so this read
        // races with no write.)
        if (M._get_dim(j) != d || __atomic_load_n(&Pivot[static_cast<size_t>(j)], __ATOMIC_RELAXED) >= 0)
          continue;
        int32_t size;
        M.rowsOf(j, size);
        if (size > 0)
          reduce(static_cast<Row>(j), w);
      }
    });
  }

  // Appended to `out`, renumbered where `renumber` is given.
  void pairs(std::vector<std::pair<int64_t, int64_t>>& out, const int64_t* renumber) const
  {
    const PositionList rows = positionsWhere(N, Threads, [&](int64_t r) { return Pivot[static_cast<size_t>(r)] >= 0; });
    const size_t at = out.size();
    resizeOnHugePages(out, at + rows.size());
    parallelFor(static_cast<int64_t>(rows.size()), Threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        const int64_t r = rows[static_cast<size_t>(k)], c = Pivot[static_cast<size_t>(r)];
        out[at + static_cast<size_t>(k)] =
          renumber ? std::pair<int64_t, int64_t>{ renumber[r], renumber[c] } : std::pair<int64_t, int64_t>{ r, c };
      }
    });
  }

private:
  // Columns a thread takes at once from the shared counter.
  static constexpr int64_t kGrain = 1024;

  // Column j's rows as another thread may see them: its last published
  // copy, or as given.
  const Row* read(Row j, int32_t& size) const
  {
    if (const Row* p = __atomic_load_n(&Current[static_cast<size_t>(j)], __ATOMIC_ACQUIRE))
    {
      size = p[0];
      return p + 1;
    }
    return M.rowsOf(j, size);
  }

  void load(Row j, std::vector<Row>& into) const
  {
    int32_t size;
    const Row* rows = read(j, size);
    into.assign(rows, rows + size);
  }

  // Reduces column j, and the later columns it takes lowest rows from.
  void reduce(Row j, Worker& w)
  {
    load(j, w.column);
    bool changed = false; // since last published (or as given)
    while (!w.column.empty())
    {
      const Row low = w.column.back();
      Row* pivot = &Pivot[static_cast<size_t>(low)];
      Row owner = __atomic_load_n(pivot, __ATOMIC_ACQUIRE);
      if (owner >= 0 && owner < j)
      {
        int32_t size;
        const Row* rows = read(owner, size);
        if (size == 0 || rows[size - 1] != low)
          continue; // the owner has been taken over since: look again
        w.sum.resize(w.column.size() + static_cast<size_t>(size));
        const auto end = std::set_symmetric_difference(w.column.begin(), w.column.end(), rows, rows + size, w.sum.begin());
        w.sum.resize(static_cast<size_t>(end - w.sum.begin()));
        std::swap(w.column, w.sum);
        changed = true;
        continue;
      }
      // The row is free or a later column's: j takes it, its rows shown
      // first.
      if (changed)
      {
        __atomic_store_n(&Current[static_cast<size_t>(j)], w.published.publish(w.column), __ATOMIC_RELEASE);
        changed = false;
      }
      if (!__atomic_compare_exchange_n(pivot, &owner, j, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        continue; // another thread came first: look again
      if (owner < 0)
        return;
      // The later column now has to go on: it is this thread's alone.
      j = owner;
      load(j, w.column);
    }
  }

  const MorseColumns& M;
  const int64_t N;
  const int Threads;
  LargeArray<Row> Pivot;           // row -> the column whose lowest row it is (-1: none)
  LargeArray<const Row*> Current;  // column -> its last published copy (nullptr: as given)
  std::vector<Worker> Workers;
};
} // namespace

void reduceLockFree(const MorseColumns& matrix, int threads, std::vector<std::pair<int64_t, int64_t>>& pairs,
  const int64_t* renumber)
{
  const int64_t n = static_cast<int64_t>(matrix._get_num_cols());
  threads = std::max(threads, 1);
  // The highest dimension first (clearing needs its pivots).
  std::vector<phat::dimension> top(static_cast<size_t>(threads), 0);
  parallelFor(n, threads, [&](int worker, int64_t j0, int64_t j1) {
    phat::dimension d = 0;
    for (int64_t j = j0; j < j1; ++j)
      d = std::max(d, matrix._get_dim(j));
    top[static_cast<size_t>(worker)] = d;
  });
  Reducer reducer(matrix, threads);
  for (phat::dimension d = *std::max_element(top.begin(), top.end()); d >= 1; --d)
    reducer.reduceDimension(d);
  reducer.pairs(pairs, renumber);
}
} // namespace morse
} // namespace topovox
