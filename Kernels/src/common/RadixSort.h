// RadixSort.h - a stable LSD radix sort on the CPU threads, of records that
// carry a 64-bit key (and whatever else the caller needs to follow them).
//
// Each pass sorts by one byte of the key: every chunk counts its own
// records' digits, then writes them where the counts of the digits before
// and of the chunks before put them, which keeps the sort stable. Only the
// bytes in which some key differs from the first get a pass. For the
// persistence engine's lists of tens of millions of cells or pairs, whose
// keys are a value's bits or a few small ranks: a comparison sort of such
// lists was one of its longest steps (bench/README.md).
#pragma once

#include "Parallel.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace topovox
{
// Records in `from` sorted in place by digit(record) (in [0, 256)), stably,
// through `to` (as long; its contents are lost) on up to `threads` threads.
template <typename Record, typename Digit>
void radixPass(UninitializedVector<Record>& from,
  UninitializedVector<Record>& to, int threads, Digit digit)
{
  // Chunks of at least 2^15 records: below that the threads cost more
  // than the pass.
  const int64_t total = static_cast<int64_t>(from.size()), chunks = chunksOf(total, threads, int64_t(1) << 15);
  std::vector<std::array<size_t, 256>> count(static_cast<size_t>(chunks));
  forEachChunk(total, chunks, static_cast<int>(chunks), [&](int64_t i0, int64_t i1, int64_t c) {
    std::array<size_t, 256>& mine = count[static_cast<size_t>(c)];
    mine.fill(0);
    for (size_t i = size_t(i0); i < size_t(i1); ++i)
      ++mine[digit(from[i])];
  });
  size_t at = 0; // digit-major, chunk-minor: each chunk's first slot per digit
  for (size_t d = 0; d < 256; ++d)
    for (auto& mine : count)
    {
      const size_t here = mine[d];
      mine[d] = at;
      at += here;
    }
  forEachChunk(total, chunks, static_cast<int>(chunks), [&](int64_t i0, int64_t i1, int64_t c) {
    std::array<size_t, 256>& next = count[static_cast<size_t>(c)];
    for (size_t i = size_t(i0); i < size_t(i1); ++i)
      to[next[digit(from[i])]++] = from[i];
  });
  from.swap(to);
}

// The bits in which some record's key differs from the first record's.
template <typename Record>
uint64_t differingKeyBits(const UninitializedVector<Record>& records, int threads)
{
  if (records.empty())
    return 0;
  const uint64_t first = records[0].key;
  const int64_t total = static_cast<int64_t>(records.size()), chunks = chunksOf(total, threads, int64_t(1) << 15);
  std::vector<uint64_t> differs(static_cast<size_t>(chunks), 0);
  forEachChunk(total, chunks, static_cast<int>(chunks), [&](int64_t i0, int64_t i1, int64_t c) {
    uint64_t d = 0;
    for (size_t i = size_t(i0); i < size_t(i1); ++i)
      d |= records[i].key ^ first;
    differs[static_cast<size_t>(c)] = d;
  });
  uint64_t differ = 0;
  for (const uint64_t d : differs)
    differ |= d;
  return differ;
}

// Records sorted by their `key` (a uint64_t member), stably, a pass for each
// byte in which the keys differ (`differ`: differingKeyBits's), through `to`.
template <typename Record>
void radixSortByKey(UninitializedVector<Record>& records,
  UninitializedVector<Record>& to, uint64_t differ, int threads)
{
  // (`to`'s pages made present on the threads first, in order: a pass's
  // scattered writes would otherwise fault them in at random, contending
  // for the process's page tables.)
  if (to.capacity() < records.size())
  {
    UninitializedVector<Record>().swap(to);
    to.reserve(records.size());
    populateOnThreads(to, threads);
  }
  to.resize(records.size());
  for (int byte = 0; byte < 8; ++byte)
    if ((differ >> (8 * byte)) & 255)
      radixPass(records, to, threads, [byte](const Record& r) { return static_cast<size_t>((r.key >> (8 * byte)) & 255); });
}
}
