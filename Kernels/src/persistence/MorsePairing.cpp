// MorsePairing.cpp - pairs the critical cells of all pieces (see
// PersistencePieces.h): dimension 0 and the top dimension by union-find, as
// TTK's Discrete Morse Sandwich does, and only what is left - the middle
// dimension of a 3D image - by PHAT's reduction of the Morse boundary matrix.
#include "topovox/PersistencePieces.h"

#include "DiagramAssembly.h"

#include "topovox/UninitializedAllocator.h"

#include "LockFreeReduction.h"
#include "MorseMatrix.h"

#include "../common/LargeArray.h"
#include "../common/Parallel.h"
#include "../common/RadixSort.h"

#include <phat/algorithms/chunk_reduction.h>
#include <phat/algorithms/twist_reduction.h>
#include <phat/compute_persistence_pairs.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <stdexcept>
#include <string>
#include <tuple>

namespace topovox
{
namespace
{
// The filtration order of Persistence.h: value, dimension, cell index.
bool filtrationLess(const MorseCriticalCell& a, const MorseCriticalCell& b)
{
  return std::tie(a.value, a.dimension, a.cell) < std::tie(b.value, b.dimension, b.cell);
}

// Sorts critical cells into the filtration order. One piece lists its cells
// in increasing index order: a stable LSD radix sort on (value, dimension)
// then gives the order in a few passes over the bytes that differ (the high
// ones of an 8-bit or 16-bit image's values; RadixSort.h), over 16-byte
// records that carry the key and the cell's place, so that every pass
// reads and writes in order (560,399
// cells of colin27_t1 took 31 to 35 ms on the GPU machine as one thread's
// passes over an index array, gathering from the cells at every pass); the
// cells are gathered once, after the last pass (256^3 k^-1 field, 10.7 M
// cells on this repository's 2 cores: 1.53 s with the 40-byte cells in
// the records, 1.23 s so). Lists in another order (several pieces) go to
// parallelSort.
void sortCritical(SummaryArray<MorseCriticalCell>& cells, int threads)
{
  const size_t n = cells.size();
  // Already in order: a whole image's cells from the GPU, which sorts them
  // there (MorseSummaryCUDA.cu, sortInFiltrationOrder).
  if (n < 2 || isSortedOnThreads(cells.data(), static_cast<int64_t>(n), threads, filtrationLess))
    return;
  const bool byIndex = isSortedOnThreads(cells.data(), static_cast<int64_t>(n), threads,
    [](const MorseCriticalCell& a, const MorseCriticalCell& b) { return a.cell < b.cell; });
  // (The records number the cells in 32 bits.)
  if (!byIndex || n >= (size_t(1) << 32))
  {
    parallelSort(cells, threads, filtrationLess);
    return;
  }
  // 16-byte records (the key, the cell's place in the list, its dimension)
  // go through the passes (RadixSort.h); the cells follow once, at the end.
  struct Record
  {
    uint64_t key; // the value's bits in the doubles' order
    uint32_t from; // the cell's index in `cells`
    int32_t dimension;
  };
  const int64_t total = static_cast<int64_t>(n), chunks = chunksOf(total, threads, int64_t(1) << 15);
  const int workers = static_cast<int>(chunks);
  // Unwritten until the threads fill them (UninitializedAllocator.h: a
  // zeroed vector's page faults would all land on one thread).
  UninitializedVector<Record> from(n), to(n);
  auto keyOf = [](double value) {
    // No NaN here; -0.0 folded into 0.0, which the comparison holds equal.
    const double v = value + 0.0;
    uint64_t b;
    std::memcpy(&b, &v, sizeof b);
    return (b >> 63) ? ~b : (b | (uint64_t(1) << 63));
  };
  std::atomic<bool> dimensions{ false }; // whether the dimensions differ: only then a pass for them
  forEachChunk(total, chunks, workers, [&](int64_t i0, int64_t i1, int64_t) {
    bool differ = false;
    for (size_t i = size_t(i0); i < size_t(i1); ++i)
    {
      from[i] = Record{ keyOf(cells[i].value), static_cast<uint32_t>(i), cells[i].dimension };
      differ = differ || cells[i].dimension != cells[0].dimension;
    }
    if (differ)
      dimensions = true;
  });
  // Least significant first: the dimension, then the value's bytes.
  if (dimensions)
    radixPass(from, to, threads, [](const Record& r) { return static_cast<size_t>(r.dimension & 255); });
  radixSortByKey(from, to, differingKeyBits(from, threads), threads);
  // The cells gathered in their order into a new list (sized unwritten:
  // SummaryArray), which takes the old one's place.
  SummaryArray<MorseCriticalCell> sorted(n);
  forEachChunk(total, chunks, workers, [&](int64_t i0, int64_t i1, int64_t) {
    for (size_t i = size_t(i0); i < size_t(i1); ++i)
      sorted[i] = cells[from[i].from];
  });
  cells.swap(sorted);
}

// Critical cell -> position in filtration order. Open addressing with
// linear probing at load <= 1/2: pairing looks up several cells per
// critical cell (millions on noise), and a binary search over them was the
// slowest step of the pairing.
class CellPositions
{
public:
  void build(const SummaryArray<MorseCriticalCell>& critical, int threads)
  {
    size_t capacity = 16;
    while (capacity < 2 * critical.size())
      capacity *= 2;
    Mask = capacity - 1;
    Slots = LargeArray<Slot>(capacity, Slot{ -1, 0 }, threads);
    // Inserted on all threads: a slot is claimed by swapping its key from
    // -1 to the cell (a lost race probes on, as a taken slot does); the
    // values are read only after the threads have joined. Which slot a
    // cell lands in depends on the race, what find() returns does not.
    std::atomic<bool> twice{ false };
    parallelFor(static_cast<int64_t>(critical.size()), threads, [&](int, int64_t j0, int64_t j1) {
      for (int64_t j = j0; j < j1; ++j)
      {
        const int64_t cell = critical[static_cast<size_t>(j)].cell;
        for (size_t at = slot(cell);; at = (at + 1) & Mask)
        {
          int64_t expected = -1;
          if (__atomic_compare_exchange_n(
                &Slots[at].key, &expected, cell, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
          {
            Slots[at].value = j;
            break;
          }
          if (expected == cell)
          {
            twice = true;
            break;
          }
        }
      }
    });
    if (twice)
      throw std::logic_error("persistence: two pieces reported the same critical cell");
  }
  int64_t find(int64_t cell) const
  {
    for (size_t at = slot(cell);; at = (at + 1) & Mask)
    {
      if (Slots[at].key == cell)
        return Slots[at].value;
      if (Slots[at].key < 0)
        throw std::logic_error("persistence: a piece named a critical cell no piece reported");
    }
  }

private:
  size_t slot(int64_t cell) const
  {
    return static_cast<size_t>((static_cast<uint64_t>(cell) * 0x9E3779B97F4A7C15ull) >> 20) & Mask;
  }
  // Key and value side by side: a lookup reads one cache line.
  struct Slot
  {
    int64_t key; // -1: empty
    int64_t value;
  };
  LargeArray<Slot> Slots;
  size_t Mask = 0;
};
}

struct MorsePairing::Impl
{
  int64_t Dims[3];
  PersistenceOptions Options;
  int Top = 0;
  bool HasNan = false;
  SummaryArray<MorseCriticalCell> Critical; // filtration order once sorted
  CellPositions Positions; // built where first needed (positionsNeeded)
  bool PositionsBuilt = false;
  SummaryArray<int64_t> EdgeEnds, DualEnds;        // as the summaries give them
  // Or numbered (MorsePieceSummary::numberedEnds: one whole image's, from
  // the GPU), per position.
  SummaryArray<std::array<int32_t, 2>> EdgeEndNumbers, DualEndNumbers;
  bool Numbered = false;
  // The positions of the critical cells of each dimension, in order (made
  // for the union-finds, in one pass over the cells).
  std::array<PositionList, 4> ByDimension;
  std::vector<char> Skip;        // columns left out of the matrix
  std::vector<char> EmptyColumn; // positive edges: no boundary needed
  std::vector<std::pair<int64_t, int64_t>> Pairs; // (birth, death) positions
  // The runs of Pairs that each step left in increasing birth order: the
  // dual's, dimension 0's and the reduction's. finish() gives the diagram
  // the runs by dimension, so that its sort can be skipped
  // (DiagramBuilder::finish checks).
  struct Run
  {
    size_t start, count;
  };
  std::vector<Run> Runs;
  // Whether the reduction's pairs are all of one dimension: its columns
  // with a boundary (the only ones that can be deaths) are (in 3D, the
  // 2-cells, where the dual's union-find took the 3-cells). Otherwise its
  // run is split by dimension (splitLastRunByDimension), so that every
  // run holds one dimension and the diagram's entries come in its order.
  bool ReductionOneDimension = true;
  // The Morse boundaries asked for (positions), one slot each: SlotOf maps
  // a position to its slot (-1: none). Nothing at all when none is needed
  // (2D), rather than a vector per critical cell (millions, on noise).
  LargeArray<int32_t> SlotOf; // (filled on the threads: one per critical cell)
  std::vector<char> Given; // per slot: its boundary has come
  // The matrix PHAT reduces: the columns union-find did not settle,
  // renumbered (MatrixColumn: position -> column, -1 when left out;
  // PositionOf: the reverse), made once union-find is done so that each
  // boundary goes into its column as it comes (MorseMatrix.h).
  morse::MorseMatrix Matrix;
  // OpenMP's thread count when Matrix was made: the matrix sized its
  // per-thread arenas by it, so no reduction may run on more threads.
  int MatrixThreads = omp_get_max_threads();
  // (Filled on the threads: one per critical cell. The matrix's rows are
  // 32-bit, so are its columns.)
  LargeArray<int32_t> MatrixColumn;
  LargeArray<int32_t> SlotColumn; // per slot, its cell's column
  PositionList PositionOf;
  bool Reduced = false; // reduce() has run: the reduction's pairs are in Pairs

  int64_t columnOf(int64_t cell) const { return Positions.find(cell); }
  // Marks the slots of records 0 .. n-1 (slotOf(r)) given, on the
  // threads; false when one is not a slot asked for, or was given before
  // (by these records or earlier ones: whichever thread comes second sees
  // it).
  template <typename SlotOf>
  bool markGiven(int64_t n, SlotOf slotOf)
  {
    std::atomic<bool> fine{ true };
    parallelFor(n, threads(), [&](int, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
      {
        const int64_t slot = slotOf(r);
        if (slot < 0 || static_cast<size_t>(slot) >= Given.size() ||
          __atomic_exchange_n(&Given[static_cast<size_t>(slot)], char(1), __ATOMIC_RELAXED))
          fine = false;
      }
    });
    return fine;
  }
  // Boundary records [head, count, entries...] (flat) into the matrix:
  // slotOf(head) is the slot of the record's cell among those asked for
  // (-1: none), rowOf(entry) the entry's matrix row (-1: none, dropped).
  // The records are found in order (their counts only), or taken from
  // `given` starts (checked on the threads); their slots looked up and
  // marked on the threads (a slot given twice is refused, so no two
  // threads fill one column); their rows set as their columns, sorted, on
  // the threads.
  template <typename Flat, typename SlotOf, typename RowOf>
  void addRecords(const Flat& flat, SlotOf slotOf, RowOf rowOf, const RecordStarts& given = {})
  {
    auto whole = [&flat](size_t k) {
      return k + 2 <= flat.size() && flat[k + 1] >= 0 && k + 2 + static_cast<size_t>(flat[k + 1]) <= flat.size();
    };
    RecordStarts found;
    if (given.empty())
      for (size_t k = 0; k < flat.size();)
      {
        if (!whole(k))
          throw std::invalid_argument("persistence: malformed boundary list");
        found.push_back(k);
        k += 2 + static_cast<size_t>(flat[k + 1]);
      }
    else
    {
      std::atomic<bool> fine{ true };
      parallelFor(static_cast<int64_t>(given.size()), threads(), [&](int, int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          if (!whole(given[static_cast<size_t>(r)]))
            fine = false;
      });
      if (!fine)
        throw std::invalid_argument("persistence: malformed boundary list");
    }
    const RecordStarts& starts = given.empty() ? found : given;
    const int64_t n = static_cast<int64_t>(starts.size());
    std::vector<int32_t> slots(starts.size());
    parallelFor(n, threads(), [&](int, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        slots[static_cast<size_t>(r)] = slotOf(flat[starts[static_cast<size_t>(r)]]);
    });
    if (!markGiven(n, [&](int64_t r) { return slots[static_cast<size_t>(r)]; }))
      throw std::invalid_argument("persistence: a boundary that was not asked for, or given twice");
    Matrix.columns().setColumns(
      n, threads(), [&](int64_t r) { return SlotColumn[static_cast<size_t>(slots[static_cast<size_t>(r)])]; },
      [&](int64_t r) { return flat[starts[static_cast<size_t>(r)] + 1]; },
      [&](int64_t r, morse::MorseColumns::Row* to) {
        const size_t start = starts[static_cast<size_t>(r)];
        const int64_t* entry = flat.data() + start + 2;
        morse::MorseColumns::Row* end = to;
        for (int64_t e = 0; e < flat[start + 1]; ++e)
        {
          const int32_t row = rowOf(entry[e]);
          if (row >= 0)
            *end++ = static_cast<morse::MorseColumns::Row>(row);
        }
        std::sort(to, end);
        return end;
      });
  }
  // Whether the matrix needs position j's boundary: a column left by
  // union-find (Skip) and not an empty one.
  bool boundaryWanted(size_t j) const { return !Skip[j] && !EmptyColumn[j]; }
  // Positions k of `list` (ByDimension's) whose boundary is wanted.
  PositionList wantedIn(const PositionList& list, int threads) const
  {
    return positionsWhere(static_cast<int64_t>(list.size()), threads,
      [&](int64_t k) { return boundaryWanted(static_cast<size_t>(list[static_cast<size_t>(k)])); });
  }
  // Whether some position of `list` has its boundary wanted: one pass, no
  // list made (wantedIn's two passes and list took 0.04 s of a 512^3
  // field's union-find stage, this 0.02 s, for a check that finds none).
  bool anyWantedIn(const PositionList& list, int threads) const
  {
    std::atomic<bool> found{ false };
    parallelFor(static_cast<int64_t>(list.size()), threads, [&](int, int64_t k0, int64_t k1) {
      bool mine = false;
      for (int64_t k = k0; k < k1 && !mine; ++k)
        mine = boundaryWanted(static_cast<size_t>(list[static_cast<size_t>(k)]));
      if (mine)
        found = true;
    });
    return found;
  }
  // The boundaries wanted (boundaryWanted) among the critical cells of
  // dimensions [from, to), sorted by cell; each gets a slot (SlotOf,
  // Given; SlotColumn sized, filled once the columns are known). Called
  // once with cells wanted (pairByUnionFind); on `threads` threads.
  std::vector<int64_t> wantBoundaries(int from, int to, int threads)
  {
    // As (cell, position) records, radix-sorted by cell (RadixSort.h): the
    // cells' indices take four of the key's bytes. A comparison sort of a
    // 512^3 field's 21.8 M took about 1 s of 8 threads, on the critical path
    // of the union-find stage once the boundaries were asked for early
    // (H200 machine, twenty-ninth session).
    struct Wanted
    {
      uint64_t key; // the cell
      uint64_t index; // its position
    };
    UninitializedVector<Wanted> wanted, spare;
    for (int d = std::max(from, 1); d < to && d < static_cast<int>(ByDimension.size()); ++d)
    {
      const PositionList& list = ByDimension[static_cast<size_t>(d)];
      const PositionList kept = wantedIn(list, threads);
      const size_t at = wanted.size();
      resizeOnHugePages(wanted, at + kept.size());
      parallelFor(static_cast<int64_t>(kept.size()), threads, [&](int, int64_t k0, int64_t k1) {
        for (int64_t k = k0; k < k1; ++k)
        {
          const int64_t j = list[static_cast<size_t>(kept[static_cast<size_t>(k)])];
          wanted[at + static_cast<size_t>(k)] =
            Wanted{ static_cast<uint64_t>(Critical[static_cast<size_t>(j)].cell), static_cast<uint64_t>(j) };
        }
      });
    }
    radixSortByKey(wanted, spare, differingKeyBits(wanted, threads), threads);
    decltype(spare)().swap(spare);
    std::vector<int64_t> need;
    if (wanted.empty())
      return need;
    if (wanted.size() > static_cast<size_t>(INT32_MAX))
      throw std::length_error("persistence: too many Morse boundaries");
    if (!SlotOf.empty())
      throw std::logic_error("persistence: boundaries wanted twice");
    resizeOnHugePages(need, wanted.size());
    // Each cell its own position, so the threads never write one slot.
    SlotOf = LargeArray<int32_t>(Critical.size(), -1, threads);
    SlotColumn = LargeArray<int32_t>(need.size());
    parallelFor(static_cast<int64_t>(need.size()), threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        need[static_cast<size_t>(k)] = static_cast<int64_t>(wanted[static_cast<size_t>(k)].key);
        SlotOf[static_cast<size_t>(wanted[static_cast<size_t>(k)].index)] = static_cast<int32_t>(k);
      }
    });
    assignOnHugePages(Given, need.size(), 0);
    return need;
  }
  // The slots boundaries may be given by (BoundaryRows without rows): a
  // single numbered summary's, once slots are given out and until the
  // reduction.
  BoundaryRows offered() const
  {
    BoundaryRows b;
    if (Numbered && !Reduced && SlotOf.size() == Critical.size())
    {
      b.slotOf = SlotOf.data();
      b.positions = static_cast<int64_t>(Critical.size());
    }
    return b;
  }
  void positionsNeeded()
  {
    if (!PositionsBuilt)
      Positions.build(Critical, threads());
    PositionsBuilt = true;
  }
  int threads() const { return threadCount(Options.threads); }

  // The last run (the reduction's) split into one run per dimension of its
  // births, each still in birth order: a stable partition, counted and
  // then scattered by chunks on the threads. For a reduction of several
  // dimensions (3D with NaN: the dual's union-find does not run), whose
  // pairs come by birth across dimensions; the diagram's entries then come
  // in its order all the same.
  void splitLastRunByDimension(int threads)
  {
    const Run run = Runs.back();
    Runs.pop_back();
    const int64_t n = static_cast<int64_t>(run.count);
    const int64_t chunks = chunksOf(n, 4 * int64_t(threads), int64_t(1) << 14);
    std::vector<std::array<int64_t, 4>> counts(static_cast<size_t>(chunks), std::array<int64_t, 4>{});
    auto dimensionAt = [&](int64_t k) {
      return Critical[static_cast<size_t>(Pairs[run.start + static_cast<size_t>(k)].first)].dimension;
    };
    forEachChunk(n, chunks, threads, [&](int64_t k0, int64_t k1, int64_t c) {
      for (int64_t k = k0; k < k1; ++k)
        ++counts[static_cast<size_t>(c)][static_cast<size_t>(dimensionAt(k))];
    });
    // Each chunk's place in each dimension's run: the dimensions in order,
    // the chunks in order within each.
    std::array<int64_t, 4> runStart{};
    int64_t at = 0;
    for (int d = 0; d < 4; ++d)
    {
      runStart[static_cast<size_t>(d)] = at;
      for (std::array<int64_t, 4>& c : counts)
      {
        const int64_t here = c[static_cast<size_t>(d)];
        c[static_cast<size_t>(d)] = at;
        at += here;
      }
    }
    UninitializedVector<std::pair<int64_t, int64_t>> parted(static_cast<size_t>(n));
    forEachChunk(n, chunks, threads, [&](int64_t k0, int64_t k1, int64_t c) {
      std::array<int64_t, 4>& next = counts[static_cast<size_t>(c)];
      for (int64_t k = k0; k < k1; ++k)
        parted[static_cast<size_t>(next[static_cast<size_t>(dimensionAt(k))]++)] =
          Pairs[run.start + static_cast<size_t>(k)];
    });
    parallelFor(n, threads, [&](int, int64_t k0, int64_t k1) {
      std::copy(parted.begin() + k0, parted.begin() + k1,
        Pairs.begin() + static_cast<std::ptrdiff_t>(run.start + static_cast<size_t>(k0)));
    });
    for (int d = 0; d < 4; ++d)
    {
      const int64_t end = d < 3 ? runStart[static_cast<size_t>(d + 1)] : n;
      if (end > runStart[static_cast<size_t>(d)])
        Runs.push_back({ run.start + static_cast<size_t>(runStart[static_cast<size_t>(d)]),
          static_cast<size_t>(end - runStart[static_cast<size_t>(d)]) });
    }
  }

  // Cells -> positions, in place, on `threads` threads (the table is only
  // read); negative entries (the outside) are kept.
  void translate(SummaryArray<int64_t>& cells, int threads) const
  {
    parallelFor(static_cast<int64_t>(cells.size()), threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
        if (cells[static_cast<size_t>(k)] >= 0)
          cells[static_cast<size_t>(k)] = columnOf(cells[static_cast<size_t>(k)]);
    });
  }

  // The top dimension by union-find in the dual (Alexander duality, as
  // CubicalRipser does): critical (d-1)-cells in decreasing order join the
  // maxima their two dual V-paths reach, the outside of the image being one
  // more, oldest, maximum. A cell that joins two components creates a
  // (d-1)-class that the younger maximum kills; the others go to the
  // matrix. Maxima and the (d-1)-cells paired here need no Morse boundary.
  // With NaN voxels the holes they leave would each be an outside of their
  // own: the matrix does everything then. The pairs go to `pairs`; the
  // parallel steps run on `threads` threads.
  void pairTopDimension(std::vector<std::pair<int64_t, int64_t>>& pairs, int threads)
  {
    const PositionList& maximumAt = numbered(Top, threads); // the maxima's positions, in order
    if (Numbered)
    {
      // The GPU has numbered the ends as below (the outside after every
      // maximum).
      if (DualEndNumbers.size() != Critical.size())
        throw std::logic_error("persistence: a summary without its dual paths' ends");
      persistence::UnionFind maxima(maximumAt.size() + 1, threads);
      pairTopDimensionLoop(pairs, maxima, DualEndNumbers.data(), maximumAt, threads);
      SummaryArray<std::array<int32_t, 2>>().swap(DualEndNumbers);
      return;
    }
    const LargeArray<int64_t> dense = denseIndices(maximumAt, threads);
    const int64_t outside = static_cast<int64_t>(maximumAt.size()); // after every maximum: the oldest
    persistence::UnionFind maxima(maximumAt.size() + 1, threads); // (refuses 2^31 maxima)
    // Per (d-1)-cell position, the ends of its two dual paths (maxima's
    // dense indices; 32 bits, as the union-find's).
    LargeArray<std::array<int32_t, 2>> ends(Critical.size(), { { -1, -1 } }, threads);
    translate(DualEnds, threads);
    // Filled on the threads: a path's end takes the cell's first free slot
    // by compare-and-swap (which of the two a path lands in does not
    // matter: the loop below treats them alike). A cell's two paths come
    // one after the other, so the threads rarely meet on one (a 512^3
    // field's 52 M path ends took 0.9 s on one thread).
    std::atomic<bool> third{ false };
    parallelFor(static_cast<int64_t>(DualEnds.size() / 2), threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = 2 * k0; k < 2 * k1; k += 2)
      {
        int32_t* e = ends[static_cast<size_t>(DualEnds[static_cast<size_t>(k)])].data();
        const int64_t to = DualEnds[static_cast<size_t>(k + 1)];
        const int32_t end = static_cast<int32_t>(to < 0 ? outside : numberOf(dense, to));
        int32_t free0 = -1, free1 = -1;
        if (!__atomic_compare_exchange_n(e, &free0, end, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) &&
          !__atomic_compare_exchange_n(e + 1, &free1, end, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
          third = true;
      }
    });
    if (third)
      throw std::logic_error("persistence: a (d-1)-cell with more than two dual paths");
    SummaryArray<int64_t>().swap(DualEnds);
    pairTopDimensionLoop(pairs, maxima, ends.data(), maximumAt, threads);
  }

  // The dual's loop, from each (d-1)-cell's two ends (`ends`, per
  // position: the maxima's numbers, the outside after them) on.
  void pairTopDimensionLoop(std::vector<std::pair<int64_t, int64_t>>& pairs, persistence::UnionFind& maxima,
    const std::array<int32_t, 2>* ends, const PositionList& maximumAt, int threads)
  {
    const int64_t n = static_cast<int64_t>(Critical.size());
    reserveOnHugePages(pairs, pairs.size() + maximumAt.size()); // a pair kills a maximum
    const PositionList& cells = ByDimension[static_cast<size_t>(Top - 1)];
    const size_t first = pairs.size();
    elderRuleLoop(maxima, ends, cells, true, threads, "persistence: a (d-1)-cell without its two dual paths",
      [&](int64_t j, int64_t r1, int64_t r2) {
        // The older maximum is the later one in filtration order (the outside last).
        const int64_t l1 = maxima.label(r1), l2 = maxima.label(r2);
        maxima.merge(r1, r2, std::max(l1, l2));
        pairs.emplace_back(j, std::min(l1, l2)); // (the maximum's number: its position below)
        Skip[static_cast<size_t>(j)] = 1;
      },
      [](int64_t) {});
    numbersToPositions(pairs, first, maximumAt, false, threads);
    // (The loop went down the cells: its pairs turned round into increasing
    // birth order, the diagram's.)
    const int64_t count = static_cast<int64_t>(pairs.size() - first);
    parallelFor(count / 2, threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
        std::swap(pairs[first + static_cast<size_t>(k)], pairs[first + static_cast<size_t>(count - 1 - k)]);
    });
  }

  // The elder rule's loop, both union-finds': over `cells` (positions; in
  // increasing order, or decreasing where `backward`), each joining the
  // components its two path ends (`ends`, per position) reach:
  // join(j, r1, r2) for a cell whose ends are in two components (roots r1
  // and r2), cycle(j) for one whose ends are in one. `missing`: what is
  // thrown for a cell without its two ends.
  //
  // In blocks of kLoopBlock cells. First, on the threads, each cell's two
  // roots (read only: UnionFind::root); a cell whose two are one is a cycle
  // for good, since components only grow. Then one thread goes through the
  // block in order, finding the current roots of the other cells from
  // those (a step or two: only the joins since lie between) and joining.
  // The serial part reads what the threads have just read, and skips the
  // cycles. A 512^3 Gaussian field's dimension-0 loop (38.3 M edges, 16.6 M
  // minima: each edge two finds at random in 133 MB) took 3.6 to 4.5 s as
  // one thread's loop on the H200 machine; in blocks, 17.2 M of its edges
  // reached the serial part, which took 2.2 s, after 0.8 s of roots on 8
  // threads (bench/README.md, twenty-seventh session). The other threads
  // find the next block's roots while one thread joins this block's
  // (root() reads beside the joins' writes; roots found before the
  // block's joins are still in the right components): at 512^3 k^-2 the
  // roots had taken 0.52 s and the serial part 0.75 s one after the other,
  // the loop 1.27 to 1.41 s; so it takes 0.97 to 1.14 s, most of it the
  // serial part, slowed by the threads beside it (thirty-first session).
  // Blocks whose serial part found its cells' roots from the path ends
  // again (twenty-fifth session) gained nothing and were reverted: the
  // roots must be kept. Nor did a serial part on a
  // small union-find of the block's roots, numbered on the threads and
  // written back by them after (twenty-eighth session: 3.65 and 4.08 s for
  // the stage against 3.51 and 3.72 s).
  static constexpr int64_t kLoopBlock = int64_t(1) << 17;
  // The serial part asks for records this many joins early, not cells
  // (512^3 k^-2 field, H200 machine, thirty-first session: dimension 0's
  // joins took 0.99 to 1.10 s so; 1.12 to 1.18 s asking 8 cells early, as
  // before, or 8 joins early).
  static constexpr int64_t kAhead = 16;
  // kLoopBlock, or TOPOVOX_UNION_FIND_BLOCK cells (for the tests: small
  // images in many blocks).
  static int64_t loopBlock()
  {
    const char* env = std::getenv("TOPOVOX_UNION_FIND_BLOCK");
    const int64_t wanted = env ? std::atoll(env) : 0;
    return wanted > 0 ? std::min<int64_t>(wanted, int64_t(1) << 28) : kLoopBlock;
  }
  template <typename Join, typename Cycle>
  static void elderRuleLoop(persistence::UnionFind& uf, const std::array<int32_t, 2>* ends,
    const PositionList& cells, bool backward, int threads, const char* missing, Join join, Cycle cycle)
  {
    using Roots = std::array<int32_t, 2>;
    const int64_t n = static_cast<int64_t>(cells.size());
    auto cellAt = [&](int64_t k) { return cells[static_cast<size_t>(backward ? n - 1 - k : k)]; };
    const int64_t blockCells = loopBlock(), blocks = (n + blockCells - 1) / blockCells;
    auto cellsIn = [&](int64_t b) { return std::min(n - b * blockCells, blockCells); };
    // Block b's cells [i0, i1): their roots into `into` ({-1, -1}: a cycle).
    auto findRoots = [&](int64_t b, int64_t i0, int64_t i1, Roots* into) {
      for (int64_t i = i0; i < i1; ++i)
      {
        const auto& e = ends[static_cast<size_t>(cellAt(b * blockCells + i))];
        if (e[0] < 0 || e[1] < 0 || e[0] >= uf.size() || e[1] >= uf.size())
          throw std::logic_error(missing);
        const int32_t r1 = static_cast<int32_t>(uf.root(e[0])), r2 = static_cast<int32_t>(uf.root(e[1]));
        into[i] = r1 == r2 ? Roots{ { -1, -1 } } : Roots{ { r1, r2 } };
      }
    };
    auto joinBlock = [&](int64_t b, const Roots* roots) {
      const int64_t m = cellsIn(b);
      // The records of the cells [i, ahead) that are not cycles already
      // (`asked` of them) asked for: kAhead such cells ahead of i, not
      // kAhead cells, as the cycles between (half of dimension 0's cells)
      // need none.
      int64_t ahead = 0, asked = 0;
      for (int64_t i = 0; i < m; ++i)
      {
        for (; ahead < m && asked < kAhead; ++ahead)
          if (roots[ahead][0] >= 0)
          {
            uf.prefetch(roots[ahead][0]);
            uf.prefetch(roots[ahead][1]);
            ++asked;
          }
        const int64_t j = cellAt(b * blockCells + i);
        const Roots& r = roots[i];
        if (r[0] < 0)
        {
          cycle(j);
          continue;
        }
        --asked; // (this cell's, asked for in an earlier step or just now)
        const int64_t r1 = uf.find(r[0]), r2 = uf.find(r[1]);
        if (r1 == r2)
          cycle(j);
        else
          join(j, r1, r2);
      }
    };
    if (n == 0)
      return;
    std::vector<Roots> roots[2] = { std::vector<Roots>(static_cast<size_t>(cellsIn(0))),
      std::vector<Roots>(static_cast<size_t>(std::min(n, blockCells))) };
    parallelFor(cellsIn(0), threads, [&](int, int64_t i0, int64_t i1) { findRoots(0, i0, i1, roots[0].data()); });
    for (int64_t b = 0; b < blocks; ++b)
    {
      const Roots* mine = roots[b & 1].data();
      Roots* next = roots[(b + 1) & 1].data();
      const int64_t following = b + 1 < blocks ? cellsIn(b + 1) : 0;
      if (threads < 2 || following == 0)
      {
        joinBlock(b, mine);
        parallelFor(following, threads, [&](int, int64_t i0, int64_t i1) { findRoots(b + 1, i0, i1, next); });
        continue;
      }
      // Worker 0 joins this block; the others find the next one's roots.
      const int64_t helpers = threads - 1;
      parallelFor(threads, threads, [&](int w, int64_t, int64_t) {
        if (w == 0)
          joinBlock(b, mine);
        else
          findRoots(b + 1, following * (w - 1) / helpers, following * w / helpers, next);
      });
    }
  }

  // Dimension 0 (from 2D up; in 1D the dual above does it): critical edges
  // in increasing order join the minima their two ends descend to; an edge
  // that joins two components kills the younger minimum. Minima leave the
  // matrix; so do the edges that create 1-cycles, as empty columns (they
  // are positive: a reduction would zero them). As pairTopDimension.
  void pairDimensionZero(std::vector<std::pair<int64_t, int64_t>>& pairs, int threads)
  {
    const PositionList& minimumAt = numbered(0, threads); // the minima's positions, in order
    if (Numbered)
    {
      if (EdgeEndNumbers.size() != Critical.size())
        throw std::logic_error("persistence: a summary without its edges' ends");
      persistence::UnionFind minima(minimumAt.size(), threads); // (the GPU has numbered the ends so)
      pairDimensionZeroLoop(pairs, minima, EdgeEndNumbers.data(), minimumAt, threads);
      SummaryArray<std::array<int32_t, 2>>().swap(EdgeEndNumbers);
      return;
    }
    const LargeArray<int64_t> dense = denseIndices(minimumAt, threads);
    // Per edge position, the minima (dense indices, 32 bits as the
    // union-find's) its two paths reach.
    persistence::UnionFind minima(minimumAt.size(), threads); // (refuses 2^31 minima)
    LargeArray<std::array<int32_t, 2>> ends(Critical.size(), { { -1, -1 } }, threads);
    translate(EdgeEnds, threads);
    parallelFor(static_cast<int64_t>(EdgeEnds.size() / 3), threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = 3 * k0; k < 3 * k1; k += 3)
        ends[static_cast<size_t>(EdgeEnds[static_cast<size_t>(k)])] = { { static_cast<int32_t>(numberOf(
          dense, EdgeEnds[static_cast<size_t>(k + 1)])), static_cast<int32_t>(numberOf(dense, EdgeEnds[static_cast<size_t>(k + 2)])) } };
    });
    SummaryArray<int64_t>().swap(EdgeEnds);
    pairDimensionZeroLoop(pairs, minima, ends.data(), minimumAt, threads);
  }

  // Dimension 0's loop, from each edge's two ends (`ends`, per position:
  // the minima's numbers) on.
  void pairDimensionZeroLoop(std::vector<std::pair<int64_t, int64_t>>& pairs, persistence::UnionFind& minima,
    const std::array<int32_t, 2>* ends, const PositionList& minimumAt, int threads)
  {
    const int64_t n = static_cast<int64_t>(Critical.size());
    if (pairs.capacity() < pairs.size() + minimumAt.size())
    {
      reserveOnHugePages(pairs, pairs.size() + minimumAt.size()); // a pair kills a minimum
      populateOnThreads(pairs, threads); // (as pairByUnionFind's)
    }
    const PositionList& edges = ByDimension[1];
    const size_t first = pairs.size();
    elderRuleLoop(minima, ends, edges, false, threads, "persistence: a critical edge without its gradient paths",
      [&](int64_t j, int64_t r1, int64_t r2) {
        if (Skip[static_cast<size_t>(j)])
          throw std::logic_error("persistence: an edge is both positive and negative");
        // The older minimum is the earlier one in filtration order.
        const int64_t l1 = minima.label(r1), l2 = minima.label(r2);
        minima.merge(r1, r2, std::min(l1, l2));
        pairs.emplace_back(std::max(l1, l2), j); // (the minimum's number: its position below)
        Skip[static_cast<size_t>(j)] = 1;
      },
      [&](int64_t j) { EmptyColumn[static_cast<size_t>(j)] = 1; }); // creates a 1-cycle
    inBirthOrder(pairs, first, minimumAt, threads);
  }

  // The union-finds' loops pair cells with the numbers of the minima
  // (maxima) they kill: pairs[first...]'s birth (death, where `birth` is
  // false) becomes that number's position, on the threads, after the loop
  // (inside it, one more read at random per pair on its one thread).
  static void numbersToPositions(std::vector<std::pair<int64_t, int64_t>>& pairs, size_t first,
    const PositionList& positionOfNumber, bool birth, int threads)
  {
    parallelFor(static_cast<int64_t>(pairs.size() - first), threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        auto& pr = pairs[first + static_cast<size_t>(k)];
        int64_t& number = birth ? pr.first : pr.second;
        number = positionOfNumber[static_cast<size_t>(number)];
      }
    });
  }

  // Dimension 0's pairs[first...] (the killed minimum's number, the edge),
  // which the loop gives in the edges' order, put in the minima's order
  // (their numbers' and positions' order: the diagram's, which then need
  // not be sorted), the numbers made positions; on the threads. A minimum
  // is killed once (checked).
  static void inBirthOrder(std::vector<std::pair<int64_t, int64_t>>& pairs, size_t first,
    const PositionList& positionOfNumber, int threads)
  {
    const int64_t killed = static_cast<int64_t>(pairs.size() - first),
                  minima = static_cast<int64_t>(positionOfNumber.size());
    LargeArray<int64_t> killer(static_cast<size_t>(minima), -1, threads); // per minimum, its edge
    std::atomic<bool> twice{ false };
    parallelFor(killed, threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        const auto& pr = pairs[first + static_cast<size_t>(k)];
        if (__atomic_exchange_n(&killer[static_cast<size_t>(pr.first)], pr.second, __ATOMIC_RELAXED) >= 0)
          twice = true;
      }
    });
    if (twice)
      throw std::logic_error("persistence: a minimum killed twice");
    scanChunks(
      minima, threads,
      [&](int64_t m0, int64_t m1) {
        int64_t c = 0;
        for (int64_t m = m0; m < m1; ++m)
          c += killer[static_cast<size_t>(m)] >= 0 ? 1 : 0;
        return c;
      },
      [](int64_t) {},
      [&](int64_t m0, int64_t m1, int64_t at) {
        for (int64_t m = m0; m < m1; ++m)
          if (killer[static_cast<size_t>(m)] >= 0)
            pairs[first + static_cast<size_t>(at++)] = { positionOfNumber[static_cast<size_t>(m)],
              killer[static_cast<size_t>(m)] };
      });
  }

  // The number of each cell at the positions `at` (numbered()'s), per
  // position (-1 at the other positions).
  LargeArray<int64_t> denseIndices(const PositionList& at, int threads)
  {
    LargeArray<int64_t> dense(Critical.size(), -1, threads);
    parallelFor(static_cast<int64_t>(at.size()), threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
        dense[static_cast<size_t>(at[static_cast<size_t>(k)])] = k;
    });
    return dense;
  }

  // The critical cells of `dimension`, numbered 0, 1, ... in filtration
  // order: their positions, number k at the k-th; taken out of the matrix.
  // The union-find runs on these numbers: its arrays then hold a fraction
  // of the critical cells, and the order of the numbers is that of the
  // positions, which the elder rule compares.
  const PositionList& numbered(int dimension, int threads)
  {
    const PositionList& at = ByDimension[static_cast<size_t>(dimension)];
    parallelFor(static_cast<int64_t>(at.size()), threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
        Skip[static_cast<size_t>(at[static_cast<size_t>(k)])] = 1;
    });
    return at;
  }

  // The number of the critical cell at `position` (denseIndices); a
  // summary whose paths end at a cell of another dimension is refused.
  static int64_t numberOf(const LargeArray<int64_t>& dense, int64_t position)
  {
    const int64_t k = dense[static_cast<size_t>(position)];
    if (k < 0)
      throw std::logic_error("persistence: a gradient path ends at a cell of the wrong dimension");
    return k;
  }
};

MorsePairing::MorsePairing(const int64_t wholeDims[3], const PersistenceOptions& options)
  : P(new Impl)
{
  for (int a = 0; a < 3; ++a)
  {
    P->Dims[a] = wholeDims[a];
    P->Top += wholeDims[a] > 1 ? 1 : 0;
  }
  P->Options = options;
}

MorsePairing::~MorsePairing() = default;

void MorsePairing::add(MorsePieceSummary&& piece)
{
  Impl& p = *P;
  p.HasNan = p.HasNan || piece.hasNan;
  // (A piece may give path ends of cells another piece reports.)
  if (piece.critical.empty() && piece.edgeEnds.empty() && piece.dualEnds.empty()) // nothing to add
  {
    piece = MorsePieceSummary();
    return;
  }
  // Numbered ends are one whole image's, alone: beside another piece's
  // cells or ends, they are written out as cells first.
  if (p.Critical.empty() && p.EdgeEnds.empty() && p.DualEnds.empty() && piece.numberedEnds)
  {
    p.Critical.swap(piece.critical);
    p.EdgeEndNumbers.swap(piece.edgeEndNumbers);
    p.DualEndNumbers.swap(piece.dualEndNumbers);
    p.Numbered = true;
    piece = MorsePieceSummary();
    return;
  }
  piece.expandNumberedEnds(p.Top, p.threads());
  if (p.Numbered)
  {
    MorsePieceSummary held;
    held.critical.swap(p.Critical);
    held.edgeEndNumbers.swap(p.EdgeEndNumbers);
    held.dualEndNumbers.swap(p.DualEndNumbers);
    held.numberedEnds = true;
    held.expandNumberedEnds(p.Top, p.threads());
    p.Critical.swap(held.critical);
    p.EdgeEnds.swap(held.edgeEnds);
    p.DualEnds.swap(held.dualEnds);
    p.Numbered = false;
  }
  // The first piece's arrays are taken as they are (one piece: no copy of
  // hundreds of megabytes); later ones appended.
  auto append = [](auto& to, auto& from) {
    if (to.empty())
      to.swap(from);
    else
      to.insert(to.end(), from.begin(), from.end());
  };
  append(p.Critical, piece.critical);
  append(p.EdgeEnds, piece.edgeEnds);
  append(p.DualEnds, piece.dualEnds);
  piece = MorsePieceSummary();
}

int64_t MorsePairing::criticalCellCount() const
{
  return static_cast<int64_t>(P->Critical.size());
}

// From how many critical cells the two union-finds of a 3D image run at
// once: below it the thread started for the second costs more than the
// overlap saves.
constexpr size_t kTwoUnionFindsCells = size_t(1) << 16;

std::vector<int64_t> MorsePairing::pairByUnionFind(const BoundaryRequest& early)
{
  Impl& p = *P;
  const int threads = p.threads();
  // The cells' positions (a hash table of 16 bytes a slot at load 1/2:
  // 2.7 GB for a 512^3 field's 85 M cells) are for looking up cells: the
  // path ends given as cells, and boundaries given as cells. Numbered ends
  // need none, nor boundaries translated on the GPU (addBoundaryRows): the
  // table is then built only if boundaries come as cells.
  if (p.Numbered)
  {
    if (!isSortedOnThreads(p.Critical.data(), static_cast<int64_t>(p.Critical.size()), threads, filtrationLess))
      throw std::logic_error("persistence: numbered path ends with the cells out of filtration order");
  }
  else
  {
    sortCritical(p.Critical, threads);
    p.positionsNeeded();
  }
  // Room for every pair from the start (a pair is two critical cells): the
  // union-finds' and the reduction's pairs then go in without a copy, into
  // pages made present here on the threads rather than by the loops'
  // single threads.
  reserveOnHugePages(p.Pairs, p.Critical.size() / 2 + 1);
  populateOnThreads(p.Pairs, threads);
  assignOnHugePages(p.Skip, p.Critical.size(), 0);
  assignOnHugePages(p.EmptyColumn, p.Critical.size(), 0);
  p.ByDimension = positionsByKey<4>(static_cast<int64_t>(p.Critical.size()), threads,
    [&p](int64_t j) { return p.Critical[static_cast<size_t>(j)].dimension; });
  const bool top = p.Top >= 1 && !p.HasNan, zero = p.Top >= 2;
  // In 3D, with both union-finds, the boundaries the matrix needs are the
  // 2-cells' that the dual leaves: every critical edge is settled by
  // dimension 0 (it joins two components, or closes a cycle and stays as an
  // empty column) and every 3-cell is a maximum. So they are known once the
  // dual is done, and asked for then, while dimension 0's union-find, the
  // longer of the two, runs (512^3 field on the H200 machine, twenty-ninth
  // session: the GPU's boundaries then took place beside its serial loop).
  // Only a numbered summary's (the GPU's): boundaries the CPU computes gained
  // nothing so, as they and dimension 0 took each other's threads (the
  // same field's CPU path on the H200 machine's 16 threads: the two stages
  // 13.5 s against 13.4 s one after the other).
  const bool askEarly = early && top && zero && p.Top == 3 && p.Numbered;
  auto dual = [&](std::vector<std::pair<int64_t, int64_t>>& pairs, int t) {
    p.pairTopDimension(pairs, t);
    if (askEarly)
    {
      const std::vector<int64_t> need = p.wantBoundaries(2, 3, t); // (gives out the slots offered)
      early(need, p.offered());
    }
  };
  if (top && zero && p.Top >= 3 && threads > 1 && p.Critical.size() >= kTwoUnionFindsCells)
  {
    // In 3D the two union-finds share no cell: the dual's are the 2- and
    // 3-cells, dimension 0's the 0- and 1-cells (their flags in Skip are
    // separate bytes). So they run at once, on half the threads each: each
    // ends in a loop whose serial part runs on one thread (elderRuleLoop;
    // 512^3 k^-1 field on the H200 machine, twenty-seventh session: 0.66
    // and 2.2 s of those parts in the stage's 6 s).
    std::vector<std::pair<int64_t, int64_t>> zeroPairs;
    const size_t before = p.Pairs.size();
    auto first = std::async(std::launch::async, [&] { dual(p.Pairs, threads / 2); });
    p.pairDimensionZero(zeroPairs, threads - threads / 2);
    first.get();
    p.Runs.push_back({ before, p.Pairs.size() - before });
    p.Runs.push_back({ p.Pairs.size(), zeroPairs.size() });
    p.Pairs.insert(p.Pairs.end(), zeroPairs.begin(), zeroPairs.end());
  }
  else
  {
    // In 2D an edge is the dual's (d-1)-cell and dimension 0's edge: the
    // dual first, as dimension 0 checks that no edge is paired twice.
    if (top)
    {
      const size_t from = p.Pairs.size();
      dual(p.Pairs, threads);
      p.Runs.push_back({ from, p.Pairs.size() - from });
    }
    if (zero)
    {
      const size_t from = p.Pairs.size();
      p.pairDimensionZero(p.Pairs, threads);
      p.Runs.push_back({ from, p.Pairs.size() - from });
    }
  }
  // The matrix holds the columns not settled by union-find, renumbered.
  // Rows of cells settled by union-find are dropped: those of negative
  // edges are never the lowest entry of a 2-column during a reduction (an
  // edge cannot both kill a component and be born as a 1-cycle), so they
  // never steer it (clearing, as in Ripser and CubicalRipser).
  const int64_t n = static_cast<int64_t>(p.Critical.size());
  p.PositionOf = positionsWhere(n, threads, [&](int64_t j) { return !p.Skip[static_cast<size_t>(j)]; });
  if (p.PositionOf.size() > static_cast<size_t>(INT32_MAX))
    throw std::length_error("persistence: a Morse matrix of 2^31 columns or more");
  p.MatrixColumn = LargeArray<int32_t>(p.Critical.size(), -1, threads);
  p.Matrix.columns().setThreads(threads);
  p.Matrix.set_num_cols(static_cast<phat::index>(p.PositionOf.size()));
  // The dimensions of the columns that can kill a class (those with a
  // boundary), a bit each, by worker.
  std::vector<unsigned> deathDimensions(static_cast<size_t>(std::max(threads, 1)), 0u);
  parallelFor(static_cast<int64_t>(p.PositionOf.size()), threads, [&](int w, int64_t m0, int64_t m1) {
    unsigned seen = 0;
    for (int64_t m = m0; m < m1; ++m)
    {
      const size_t j = static_cast<size_t>(p.PositionOf[static_cast<size_t>(m)]);
      p.MatrixColumn[j] = static_cast<int32_t>(m);
      p.Matrix.set_dim(static_cast<phat::index>(m), static_cast<phat::dimension>(p.Critical[j].dimension));
      seen |= p.EmptyColumn[j] ? 0u : 1u << p.Critical[j].dimension;
    }
    deathDimensions[static_cast<size_t>(w)] |= seen;
  });
  unsigned anyDeath = 0;
  for (unsigned seen : deathDimensions)
    anyDeath |= seen;
  p.ReductionOneDimension = (anyDeath & (anyDeath - 1)) == 0;
  std::vector<int64_t> need;
  if (askEarly)
  {
    // (Edges and 3-cells all settled, as above.)
    if (p.anyWantedIn(p.ByDimension[1], threads) || p.anyWantedIn(p.ByDimension[3], threads))
      throw std::logic_error("persistence: an edge or a 3-cell left unpaired by union-find");
  }
  else
    need = p.wantBoundaries(1, 4, threads);
  for (auto& list : p.ByDimension)
    PositionList().swap(list);
  // Each slot's column, now that the columns are known.
  if (!p.SlotOf.empty())
    parallelFor(n, threads, [&](int, int64_t j0, int64_t j1) {
      for (int64_t j = j0; j < j1; ++j)
      {
        const int32_t slot = p.SlotOf[static_cast<size_t>(j)];
        if (slot >= 0)
          p.SlotColumn[static_cast<size_t>(slot)] = p.MatrixColumn[static_cast<size_t>(j)];
      }
    });
  return need;
}

void MorsePairing::addBoundaries(const std::vector<int64_t>& flat)
{
  // Records [cell, count, faces...]: each cell's slot and each face's row
  // through the cells' position table.
  Impl& p = *P;
  if (!flat.empty())
    p.positionsNeeded();
  p.addRecords(
    flat,
    [&p](int64_t cell) {
      const int64_t position = p.columnOf(cell);
      return p.SlotOf.empty() ? int32_t(-1) : p.SlotOf[static_cast<size_t>(position)];
    },
    [&p](int64_t face) { return p.MatrixColumn[static_cast<size_t>(p.columnOf(face))]; });
}

BoundaryRows MorsePairing::boundaryRows() const
{
  const Impl& p = *P;
  BoundaryRows rows = p.offered();
  if (rows.positions > 0 && p.MatrixColumn.size() == p.Critical.size())
    rows.rowOf = p.MatrixColumn.data();
  else
    rows = BoundaryRows();
  return rows;
}

void MorsePairing::addBoundaryRows(const BoundaryRecords& flat, const RecordStarts& starts)
{
  // Records [slot, count, rows...]: as given (-1: no row).
  Impl& p = *P;
  const int64_t columns = static_cast<int64_t>(p.PositionOf.size());
  p.addRecords(
    flat, [](int64_t slot) { return slot >= 0 && slot <= INT32_MAX ? static_cast<int32_t>(slot) : int32_t(-1); },
    [columns](int64_t row) {
      if (row >= columns)
        throw std::logic_error("persistence: a translated boundary names a row past the matrix");
      return static_cast<int32_t>(row < 0 ? -1 : row);
    },
    starts);
}

namespace
{
// How the Morse matrix is reduced: PHAT's twist reduction (one thread),
// its chunk reduction (OpenMP's threads) or the lock-free reduction
// (LockFreeReduction.h, any threads).
enum class Reduction
{
  Twist,
  Chunk,
  LockFree
};

// The lock-free reduction on several threads from kParallelColumns
// columns on, else twist. TOPOVOX_PHAT_REDUCTION=twist|chunk|lockfree
// overrides, for benchmarks (chunk and lockfree on one thread are allowed:
// the same reductions, serial; chunk falls back to twist in a build
// without OpenMP).
//
// Below kParallelColumns, twist: on the H200 machine with two cores kept
// busy, the stage "reduction and diagram" took 91 to 107 ms with PHAT's
// chunk reduction on bonsai_256, engine_256x256x128 and colin27_t1
// (131,334, 61,708 and 300,994 columns), 13 to 52 ms with twist: an OpenMP
// team waits at each of the chunk reduction's barriers for its slowest
// thread (bench/README.md, twenty-third session).
constexpr int64_t kParallelColumns = int64_t(1) << 18;

Reduction reductionFor(int threads, int64_t columns)
{
  if (const char* e = std::getenv("TOPOVOX_PHAT_REDUCTION"))
  {
    const std::string name(e);
#ifdef _OPENMP
    if (name == "chunk")
      return Reduction::Chunk;
#endif
    if (name == "lockfree")
      return Reduction::LockFree;
    if (name == "twist" || name == "chunk")
      return Reduction::Twist;
  }
  return threads > 1 && columns >= kParallelColumns ? Reduction::LockFree : Reduction::Twist;
}
} // namespace

void MorsePairing::reduce()
{
  Impl& p = *P;
  if (p.Reduced)
    return;
  p.Reduced = true;
  p.SlotOf = LargeArray<int32_t>();
  p.SlotColumn = LargeArray<int32_t>();
  std::vector<char>().swap(p.Given);
  p.MatrixColumn = LargeArray<int32_t>();
  const PositionList& positionOf = p.PositionOf;
  morse::MorseMatrix& matrix = p.Matrix;
  // The reduction's pairs (matrix columns) go after union-find's, as
  // positions, on the threads (a 512^3 field's 43 million pairs took this
  // 1.2 s on one thread, H200 machine, twenty-third session).
  const size_t unionFindPairs = p.Pairs.size();
  auto append = [&](int64_t count, auto pairAt) {
    resizeOnHugePages(p.Pairs, unionFindPairs + static_cast<size_t>(count));
    parallelFor(count, p.threads(), [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        const std::pair<int64_t, int64_t> pr = pairAt(k);
        p.Pairs[unionFindPairs + static_cast<size_t>(k)] = { positionOf[static_cast<size_t>(pr.first)],
          positionOf[static_cast<size_t>(pr.second)] };
      }
    });
  };
  const Reduction how = reductionFor(p.threads(), static_cast<int64_t>(matrix.get_num_cols()));
  if (how == Reduction::LockFree)
  {
    // 512^3 k^-1 field on the H200 machine's 16 cores: PHAT's chunk
    // reduction took 11.5 s, one pass of it serial (bench/README.md,
    // twenty-seventh session).
    // (Its pairs go straight after union-find's, as positions.)
    morse::reduceLockFree(matrix.columns(), p.threads(), p.Pairs, positionOf.data());
    // (By birth: the pivots' rows in increasing order.)
    p.Runs.push_back({ unionFindPairs, p.Pairs.size() - unionFindPairs });
  }
  else
  {
    phat::persistence_pairs pairs;
    if (how == Reduction::Chunk)
    {
      // PHAT's chunk reduction on OpenMP's threads. The thread count is set
      // for the call and put back after (also when the reduction throws):
      // the reduction itself drops it to 1 on small matrices; no more than
      // the matrix sized its per-thread arenas for.
      struct OmpThreads
      {
        int before = omp_get_max_threads();
        explicit OmpThreads(int n) { omp_set_num_threads(n); }
        ~OmpThreads() { omp_set_num_threads(before); }
      } scoped(std::min(p.threads(), p.MatrixThreads));
      phat::compute_persistence_pairs<phat::chunk_reduction>(pairs, matrix);
    }
    else
      phat::compute_persistence_pairs<phat::twist_reduction>(pairs, matrix);
    pairs.sort(); // by birth (PHAT lists them by death)
    append(pairs.get_num_pairs(), [&](int64_t k) {
      const auto pr = pairs.get_pair(k);
      return std::pair<int64_t, int64_t>(pr.first, pr.second);
    });
    p.Runs.push_back({ unionFindPairs, p.Pairs.size() - unionFindPairs });
  }
  if (!p.ReductionOneDimension && p.Runs.back().count > 0)
    p.splitLastRunByDimension(p.threads());
  // The matrix's memory goes before the diagram's comes.
  p.Matrix = morse::MorseMatrix();
  PositionList().swap(p.PositionOf);
}

PersistenceDiagram MorsePairing::finish()
{
  reduce();
  Impl& p = *P;
  persistence::DiagramBuilder diagram(p.Dims, p.Options);
  diagram.promiseOrder(); // pairMany below gives them by dimension and birth
  diagram.reserve(p.Pairs.size() + 16); // the pairs, and a few essential classes
  // The output's room, made meanwhile: every pair, and every cell left
  // unpaired (an essential class), at most.
  diagram.prepareOutput(p.Critical.size() - std::min(p.Critical.size(), p.Pairs.size()));
  // Each position's value rank among the distinct values (the cells are
  // in filtration order: a new rank where the value changes), so that the
  // diagram sorts by ranks (DiagramBuilder::finish). In one pass over the
  // cells (a count, then the ranks, had read a 512^3 field's 2.2 GB twice):
  // each block of 2^kRankShift positions counted from its own start, the
  // blocks' bases added where a rank is read.
  constexpr int kRankShift = 16;
  LargeArray<uint32_t> rank;
  std::vector<uint64_t> rankBase;
  if (p.Critical.size() < (size_t(1) << 32))
  {
    const int64_t n = static_cast<int64_t>(p.Critical.size()), blocks = (n + (int64_t(1) << kRankShift) - 1) >> kRankShift;
    rank = LargeArray<uint32_t>(p.Critical.size());
    rankBase.assign(static_cast<size_t>(blocks) + 1, 0);
    parallelFor(blocks, p.threads(), [&](int, int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
      {
        uint32_t local = 0;
        for (int64_t j = b << kRankShift; j < std::min(n, (b + 1) << kRankShift); ++j)
        {
          local += j > 0 && p.Critical[static_cast<size_t>(j)].value != p.Critical[static_cast<size_t>(j - 1)].value;
          rank[static_cast<size_t>(j)] = local;
        }
        rankBase[static_cast<size_t>(b) + 1] = local;
      }
    });
    for (size_t b = 1; b < rankBase.size(); ++b)
      rankBase[b] += rankBase[b - 1];
  }
  auto cellOf = [&p, &rank, &rankBase](int64_t j) {
    const MorseCriticalCell& c = p.Critical[static_cast<size_t>(j)];
    return persistence::PairCell{ c.value, c.dimension, c.voxel,
      rank.empty() ? int64_t(-1)
                   : static_cast<int64_t>(rank[static_cast<size_t>(j)] + rankBase[static_cast<size_t>(j >> kRankShift)]) };
  };
  LargeArray<char> paired(p.Critical.size(), 0, p.threads());
  parallelFor(static_cast<int64_t>(p.Pairs.size()), p.threads(), [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
    {
      const auto& pr = p.Pairs[static_cast<size_t>(k)];
      paired[static_cast<size_t>(pr.first)] = paired[static_cast<size_t>(pr.second)] = 1;
    }
  });
  // The pairs given run by run (Runs, each in increasing birth order), the
  // runs by their pairs' dimension: where each run holds one dimension,
  // the diagram's entries then come in its order, and its sort is skipped
  // (DiagramBuilder::finish checks that they do). Where the runs do not
  // cover the pairs, as they are.
  std::vector<Impl::Run> runs;
  size_t covered = 0;
  for (const Impl::Run& r : p.Runs)
    if (r.count > 0)
    {
      runs.push_back(r);
      covered += r.count;
    }
  if (covered != p.Pairs.size())
    runs = { Impl::Run{ 0, p.Pairs.size() } };
  auto dimensionOf = [&p](const Impl::Run& r) {
    return r.count ? p.Critical[static_cast<size_t>(p.Pairs[r.start].first)].dimension : 0;
  };
  std::stable_sort(runs.begin(), runs.end(),
    [&](const Impl::Run& a, const Impl::Run& b) { return dimensionOf(a) < dimensionOf(b); });
  std::vector<size_t> runFrom(runs.size() + 1, 0); // where each run starts in the order given
  for (size_t r = 0; r < runs.size(); ++r)
    runFrom[r + 1] = runFrom[r] + runs[r].count;
  auto pairAt = [&](int64_t k) -> const std::pair<int64_t, int64_t>& {
    size_t r = 0;
    while (runFrom[r + 1] <= static_cast<size_t>(k))
      ++r;
    return p.Pairs[runs[r].start + (static_cast<size_t>(k) - runFrom[r])];
  };
  // The cells of pairs kAheadPairs on asked for first: a run's births come
  // in order, its deaths at random in the cells (2.2 GB for a 512^3
  // field's 69 M), and the loop had waited for each (512^3 k^-2 field on
  // the H200 machine: 0.29 to 0.36 s so, 0.45 to 0.50 s before).
  constexpr int64_t kAheadPairs = 16;
  const int64_t pairCount = static_cast<int64_t>(p.Pairs.size());
  diagram.pairMany(pairCount, p.threads(),
    [&](int64_t k, persistence::PairCell& birth, persistence::PairCell& death) {
      if (k + kAheadPairs < pairCount)
      {
        const size_t later = static_cast<size_t>(pairAt(k + kAheadPairs).second);
        persistence::prefetch(&p.Critical[later]);
        if (!rank.empty())
          persistence::prefetch(&rank[later]);
      }
      const std::pair<int64_t, int64_t>& pr = pairAt(k);
      birth = cellOf(pr.first);
      death = cellOf(pr.second);
    });
  // Unpaired critical cells are essential: components (the roots of the
  // union-find on minima), and whatever the matrix leaves.
  const PositionList unpaired = positionsWhere(
    static_cast<int64_t>(p.Critical.size()), p.threads(), [&](int64_t j) { return !paired[static_cast<size_t>(j)]; });
  for (const int64_t j : unpaired)
    diagram.essential(cellOf(j));
  PersistenceDiagram out;
  out.dimension = p.Top;
  out.pairs = diagram.finish();
  out.criticalCells = static_cast<int64_t>(p.Critical.size());
  out.cells = 1;
  for (int a = 0; a < 3; ++a)
  {
    const int64_t n = p.Dims[a];
    out.cells *= n <= 1 ? 1 : (p.Options.construction == Construction::T ? 2 * n + 1 : 2 * n - 1);
  }
  return out;
}

// Summaries as bytes: a tag, the counts, then the arrays field by field.
namespace
{
constexpr uint32_t kSummaryTag = 0x54564d53; // "TVMS"

template <typename T>
void put(std::vector<uint8_t>& out, const T& v)
{
  const uint8_t* b = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), b, b + sizeof(T));
}

struct Reader
{
  const uint8_t* At;
  size_t Left;
  template <typename T>
  T get()
  {
    if (Left < sizeof(T))
      throw std::invalid_argument("persistence: a piece summary is truncated");
    T v;
    std::copy(At, At + sizeof(T), reinterpret_cast<uint8_t*>(&v));
    At += sizeof(T);
    Left -= sizeof(T);
    return v;
  }
};
}

void MorsePieceSummary::expandNumberedEnds(int top, int threads)
{
  if (!numberedEnds)
    return;
  const int64_t n = static_cast<int64_t>(critical.size());
  auto cellsOf = [&](int dimension) {
    PositionList at =
      positionsWhere(n, threads, [&](int64_t j) { return critical[static_cast<size_t>(j)].dimension == dimension; });
    for (int64_t& j : at)
      j = critical[static_cast<size_t>(j)].cell;
    return at;
  };
  // A numbered list's cells of `dimension` written out in order, each as
  // the summaries of cells lay them out: (edge, minimum, minimum), or
  // (cell, maximum) twice for the dual (`outside`: -1 for the outside).
  auto expand = [&](const SummaryArray<std::array<int32_t, 2>>& numbers, int dimension, int endDimension,
                  bool outside, SummaryArray<int64_t>& out) {
    if (numbers.empty())
      return;
    const PositionList ends = cellsOf(endDimension);
    if (numbers.size() != critical.size())
      throw std::logic_error("persistence: numbered path ends of the wrong length");
    const PositionList cells =
      positionsWhere(n, threads, [&](int64_t j) { return critical[static_cast<size_t>(j)].dimension == dimension; });
    const size_t width = outside ? 4 : 3;
    resizeOnHugePages(out, width * cells.size());
    auto endCell = [&](int32_t number) -> int64_t {
      if (number >= 0 && static_cast<size_t>(number) < ends.size())
        return ends[static_cast<size_t>(number)];
      if (outside && static_cast<size_t>(number) == ends.size())
        return -1;
      throw std::logic_error("persistence: a numbered path end that names no cell");
    };
    parallelFor(static_cast<int64_t>(cells.size()), threads, [&](int, int64_t k0, int64_t k1) {
      for (int64_t k = k0; k < k1; ++k)
      {
        const size_t j = static_cast<size_t>(cells[static_cast<size_t>(k)]);
        int64_t* to = out.data() + width * static_cast<size_t>(k);
        const int64_t cell = critical[j].cell;
        if (outside) // (cell, end) twice: the dual's layout
          for (int s = 0; s < 2; ++s)
          {
            *to++ = cell;
            *to++ = endCell(numbers[j][static_cast<size_t>(s)]);
          }
        else // (edge, end, end)
        {
          *to++ = cell;
          *to++ = endCell(numbers[j][0]);
          *to++ = endCell(numbers[j][1]);
        }
      }
    });
  };
  expand(edgeEndNumbers, 1, 0, false, edgeEnds);
  expand(dualEndNumbers, top - 1, top, true, dualEnds);
  SummaryArray<std::array<int32_t, 2>>().swap(edgeEndNumbers);
  SummaryArray<std::array<int32_t, 2>>().swap(dualEndNumbers);
  numberedEnds = false;
}

std::vector<uint8_t> MorsePieceSummary::toBytes() const
{
  std::vector<uint8_t> out;
  out.reserve(40 + critical.size() * 28 + (edgeEnds.size() + dualEnds.size()) * 8 +
    (edgeEndNumbers.size() + dualEndNumbers.size()) * 8);
  put(out, kSummaryTag);
  put(out, static_cast<uint8_t>(hasNan));
  put(out, static_cast<uint8_t>(numberedEnds));
  put(out, static_cast<uint64_t>(critical.size()));
  put(out, static_cast<uint64_t>(edgeEnds.size()));
  put(out, static_cast<uint64_t>(dualEnds.size()));
  put(out, static_cast<uint64_t>(edgeEndNumbers.size()));
  put(out, static_cast<uint64_t>(dualEndNumbers.size()));
  for (const MorseCriticalCell& c : critical)
  {
    put(out, c.cell);
    put(out, c.voxel);
    put(out, c.value);
    put(out, c.dimension);
  }
  for (int64_t v : edgeEnds)
    put(out, v);
  for (int64_t v : dualEnds)
    put(out, v);
  for (const auto& e : edgeEndNumbers)
    put(out, e);
  for (const auto& e : dualEndNumbers)
    put(out, e);
  return out;
}

MorsePieceSummary MorsePieceSummary::fromBytes(const uint8_t* bytes, size_t size)
{
  Reader r{ bytes, size };
  if (r.get<uint32_t>() != kSummaryTag)
    throw std::invalid_argument("persistence: not a piece summary");
  MorsePieceSummary s;
  s.hasNan = r.get<uint8_t>() != 0;
  s.numberedEnds = r.get<uint8_t>() != 0;
  const uint64_t nc = r.get<uint64_t>(), ne = r.get<uint64_t>(), nd = r.get<uint64_t>(), nen = r.get<uint64_t>(),
                 ndn = r.get<uint64_t>();
  if (nc > size / 28 || ne > size / 8 || nd > size / 8 || nen > size / 8 || ndn > size / 8)
    throw std::invalid_argument("persistence: a piece summary is truncated");
  s.critical.resize(nc);
  for (MorseCriticalCell& c : s.critical)
  {
    c.cell = r.get<int64_t>();
    c.voxel = r.get<int64_t>();
    c.value = r.get<double>();
    c.dimension = r.get<int32_t>();
  }
  s.edgeEnds.resize(ne);
  for (int64_t& v : s.edgeEnds)
    v = r.get<int64_t>();
  s.dualEnds.resize(nd);
  for (int64_t& v : s.dualEnds)
    v = r.get<int64_t>();
  s.edgeEndNumbers.resize(nen);
  for (auto& e : s.edgeEndNumbers)
    e = r.get<std::array<int32_t, 2>>();
  s.dualEndNumbers.resize(ndn);
  for (auto& e : s.dualEndNumbers)
    e = r.get<std::array<int32_t, 2>>();
  if (r.Left != 0)
    throw std::invalid_argument("persistence: a piece summary has trailing bytes");
  return s;
}

} // namespace topovox
