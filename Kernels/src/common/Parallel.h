// Parallel.h - the CPU paths' threading: parallelFor (topovox/ParallelFor.h,
// on std::thread) and what is built on it.
#pragma once

#include "topovox/ParallelFor.h"
#include "topovox/UninitializedAllocator.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <vector>

namespace topovox
{
// parallelFor and parallelForDynamic: topovox/ParallelFor.h.

// How many chunks to split [0, n) into for forEachChunk: at most `most`,
// each of at least `least` items (one chunk when n is smaller).
inline int64_t chunksOf(int64_t n, int64_t most, int64_t least)
{
  return std::max<int64_t>(1, std::min<int64_t>(most, n / least));
}

// Runs body(begin, end, c) for each chunk c of `chunks` equal chunks of
// [0, n), [n c / chunks, n (c + 1) / chunks), on up to `threads` threads.
// The chunks depend only on n and chunks, so that the two passes of a
// parallel compaction (each chunk counts its items, then writes them after
// the counts of the chunks before it) see the same ones.
inline void forEachChunk(
  int64_t n, int64_t chunks, int threads, const std::function<void(int64_t, int64_t, int64_t)>& body)
{
  parallelFor(chunks, threads, [&](int, int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c)
      body(n * c / chunks, n * (c + 1) / chunks, c);
  });
}

// The pages of a vector's room past its values (size() to capacity())
// made present on `threads` threads (detail::populateBytes), before one
// thread fills it: a diagram's 3 GB of pairs, value-initialised by
// std::vector on one thread, took that thread 0.8 to 1.0 s on the H200
// machine, half of it page faults (thirtieth session).
template <typename Vector>
void populateOnThreads(Vector& v, int threads)
{
  constexpr int64_t kPart = int64_t(2) << 20;
  using Value = typename Vector::value_type;
  char* const room = reinterpret_cast<char*>(v.data()) + v.size() * sizeof(Value);
  const int64_t bytes = static_cast<int64_t>((v.capacity() - v.size()) * sizeof(Value));
  parallelFor((bytes + kPart - 1) / kPart, threads, [&](int, int64_t p0, int64_t p1) {
    detail::populateBytes(room + p0 * kPart, static_cast<size_t>(std::min(bytes, p1 * kPart) - p0 * kPart));
  });
}

// Appends the parts to `out` in order, copied on `threads` threads, each
// part freed once copied: for lists built a part per chunk or group of
// work on the threads (a field's millions of critical cells or Morse
// boundaries), which one thread's copy made a stage's tail.
template <typename Out, typename Part>
void appendParts(Out& out, std::vector<Part>& parts, int threads)
{
  std::vector<size_t> at(parts.size() + 1, out.size());
  for (size_t k = 0; k < parts.size(); ++k)
    at[k + 1] = at[k] + parts[k].size();
  resizeOnHugePages(out, at.back());
  parallelFor(static_cast<int64_t>(parts.size()), threads, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
    {
      Part& part = parts[static_cast<size_t>(k)];
      std::copy(part.begin(), part.end(), out.begin() + static_cast<std::ptrdiff_t>(at[static_cast<size_t>(k)]));
      Part().swap(part);
    }
  });
}

namespace detail
{
// The merge path: how many of the first k outputs of merging sorted
// a[0, na) and b[0, nb) come from a, a's elements going first among equal
// ones (as std::merge puts them). A binary search: a[i] is among the first
// k exactly when it does not come after b[k - i - 1].
template <typename T, typename Less>
int64_t mergeSplit(const T* a, int64_t na, const T* b, int64_t nb, int64_t k, Less& less)
{
  int64_t lo = std::max<int64_t>(0, k - nb), hi = std::min(k, na);
  while (lo < hi)
  {
    const int64_t i = lo + (hi - lo) / 2;
    if (!less(b[k - i - 1], a[i]))
      lo = i + 1;
    else
      hi = i;
  }
  return lo;
}

// Outputs [k0, k1) of merging sorted a[0, na) and b[0, nb) (std::merge's
// order), written at out + k0: one thread's part of a merge cut by the
// merge path.
template <typename T, typename Less>
void mergePart(const T* a, int64_t na, const T* b, int64_t nb, int64_t k0, int64_t k1, T* out, Less& less)
{
  const int64_t i0 = mergeSplit(a, na, b, nb, k0, less), i1 = mergeSplit(a, na, b, nb, k1, less);
  std::merge(a + i0, a + i1, b + (k0 - i0), b + (k1 - i1), out + k0, less);
}
}

// Whether v[0, n) is sorted by `less` (no element less than the one before
// it), checked on the threads, each chunk from the element before it on.
// (The persistence pairing asks twice of a 512^3 field's 85 million
// critical cells, which one thread took most of a second to scan.)
template <typename T, typename Less>
bool isSortedOnThreads(const T* v, int64_t n, int threads, Less less)
{
  const int64_t chunks = chunksOf(n, threads, int64_t(1) << 15);
  std::atomic<bool> sorted{ true };
  forEachChunk(n, chunks, static_cast<int>(chunks), [&](int64_t j0, int64_t j1, int64_t) {
    for (int64_t j = std::max<int64_t>(j0, 1); j < j1 && sorted.load(std::memory_order_relaxed); ++j)
      if (less(v[j], v[j - 1]))
        sorted = false;
  });
  return sorted;
}

// An exclusive scan over the chunks of [0, n), on the threads: share(j0,
// j1) says what chunk [j0, j1) adds, sized(total) runs once all are known,
// then fill(j0, j1, before) runs with the sum of the shares of the chunks
// before the chunk. Returns the total. For what is made on the threads but
// must come out in order: lists of the items kept, running counts, the
// places of variable-length records.
template <typename Share, typename Sized, typename Fill>
int64_t scanChunks(int64_t n, int threads, Share share, Sized sized, Fill fill)
{
  const int64_t chunks = chunksOf(n, threads, int64_t(1) << 15);
  std::vector<int64_t> before(static_cast<size_t>(chunks) + 1, 0);
  forEachChunk(n, chunks, static_cast<int>(chunks), [&](int64_t j0, int64_t j1, int64_t c) {
    before[static_cast<size_t>(c) + 1] = share(j0, j1);
  });
  for (size_t c = 1; c < before.size(); ++c)
    before[c] += before[c - 1];
  sized(before.back());
  forEachChunk(n, chunks, static_cast<int>(chunks), [&](int64_t j0, int64_t j1, int64_t c) {
    fill(j0, j1, before[static_cast<size_t>(c)]);
  });
  return before.back();
}

// A list of positions made on the threads: sized unwritten
// (UninitializedAllocator.h), as each is written once by its chunk. (A
// std::vector zeroed the 680 MB of a 512^3 field's lists of critical cells
// on one thread first.)
using PositionList = UninitializedVector<int64_t>;

// The j in [0, n) where keep(j) holds, in increasing order, found on the
// threads (scanChunks). (The persistence pairing's lists of the critical
// cells of one kind, tens of millions on a 512^3 field, were one thread's
// loops.)
template <typename Keep>
PositionList positionsWhere(int64_t n, int threads, Keep keep)
{
  PositionList out;
  scanChunks(
    n, threads,
    [&](int64_t j0, int64_t j1) {
      int64_t k = 0;
      for (int64_t j = j0; j < j1; ++j)
        k += keep(j) ? 1 : 0;
      return k;
    },
    [&](int64_t total) { resizeOnHugePages(out, static_cast<size_t>(total)); },
    [&](int64_t j0, int64_t j1, int64_t at) {
      for (int64_t j = j0; j < j1; ++j)
        if (keep(j))
          out[static_cast<size_t>(at++)] = j;
    });
  return out;
}

// positionsWhere for several lists in one pass: out[b] holds the j in
// [0, n) with key(j) == b, in increasing order, for b in [0, K); j with a
// key outside [0, K) go nowhere. Each chunk counts its own per key, then
// writes them after the counts of the chunks before it. (The persistence
// pairing's lists of the critical cells of each dimension: one pass each
// read the 2.7 GB of a 512^3 field's cells twice.)
template <size_t K, typename Key>
std::array<PositionList, K> positionsByKey(int64_t n, int threads, Key key)
{
  const int64_t chunks = chunksOf(n, threads, int64_t(1) << 15);
  std::vector<std::array<int64_t, K>> count(static_cast<size_t>(chunks) + 1);
  for (auto& c : count)
    c.fill(0);
  forEachChunk(n, chunks, static_cast<int>(chunks), [&](int64_t j0, int64_t j1, int64_t c) {
    std::array<int64_t, K>& mine = count[static_cast<size_t>(c) + 1];
    for (int64_t j = j0; j < j1; ++j)
    {
      const auto b = key(j);
      if (b >= 0 && static_cast<size_t>(b) < K)
        ++mine[static_cast<size_t>(b)];
    }
  });
  for (size_t c = 1; c < count.size(); ++c)
    for (size_t b = 0; b < K; ++b)
      count[c][b] += count[c - 1][b];
  std::array<PositionList, K> out;
  for (size_t b = 0; b < K; ++b)
    resizeOnHugePages(out[b], static_cast<size_t>(count.back()[b]));
  forEachChunk(n, chunks, static_cast<int>(chunks), [&](int64_t j0, int64_t j1, int64_t c) {
    std::array<int64_t, K> at = count[static_cast<size_t>(c)];
    for (int64_t j = j0; j < j1; ++j)
    {
      const auto b = key(j);
      if (b >= 0 && static_cast<size_t>(b) < K)
        out[static_cast<size_t>(b)][static_cast<size_t>(at[static_cast<size_t>(b)]++)] = j;
    }
  });
  return out;
}

// Sorted a[0, na) and b[0, nb) merged into out[0, na + nb) (apart from
// both) on `threads` threads, each its part of the output, cut by the
// merge path; a's elements first among equal ones, as std::merge puts them.
template <typename T, typename Less>
void mergeOnThreads(const T* a, int64_t na, const T* b, int64_t nb, T* out, int threads, Less less)
{
  const int64_t n = na + nb;
  const int64_t parts = chunksOf(n, std::max(threads, 1), 16384);
  parallelFor(parts, threads, [&](int, int64_t p0, int64_t p1) {
    for (int64_t part = p0; part < p1; ++part)
      detail::mergePart(a, na, b, nb, n * part / parts, n * (part + 1) / parts, out, less);
  });
}

// std::sort on `threads` threads: contiguous chunks sorted in parallel, then
// merged pairwise, round after round. The result is the same as std::sort's
// for a strict weak order with no equal elements (ties may come out in
// another order). For trivially copyable values every round runs on all the
// threads: each merge is cut by the merge path into as many parts as there
// are threads for it, written into a spare array (the two swap roles each
// round). In place (std::inplace_merge, a merge a thread) the last round
// ran on one thread: for the 42.7 million 40-byte entries of a 512^3
// field's diagram, it moved every entry on one core.
template <typename T, typename Allocator, typename Less>
void parallelSort(std::vector<T, Allocator>& v, int threads, Less less)
{
  const int64_t n = static_cast<int64_t>(v.size());
  // Chunks of at least 16,384 elements (65,536 before: a diagram of 192,465
  // pairs was sorted in two chunks on 16 threads).
  int chunks = 1;
  while (chunks < threads && n / (2 * chunks) >= 16384)
    chunks *= 2;
  if (chunks == 1)
  {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  auto at = [&](int64_t k) { return n * k / chunks; }; // where chunk k starts
  parallelFor(chunks, chunks, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
      std::sort(v.begin() + at(k), v.begin() + at(k + 1), less);
  });
  if constexpr (std::is_trivially_copyable<T>::value)
  {
    const detail::Block<T> spare = detail::allocateBlock<T>(static_cast<size_t>(n));
    T* from = v.data();
    T* to = spare.get();
    for (int width = 1; width < chunks; width *= 2)
    {
      const int merges = chunks / (2 * width), parts = std::max(1, threads / merges);
      parallelFor(int64_t(merges) * parts, threads, [&](int, int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t)
        {
          const int64_t m = t / parts, part = t % parts, first = 2 * width * m;
          const int64_t lo = at(first), mid = at(first + width), hi = at(first + 2 * width);
          const int64_t na = mid - lo, nb = hi - mid;
          detail::mergePart(from + lo, na, from + mid, nb, (na + nb) * part / parts, (na + nb) * (part + 1) / parts,
            to + lo, less);
        }
      });
      std::swap(from, to);
    }
    if (from != v.data())
      parallelFor(n, threads, [&](int, int64_t k0, int64_t k1) { std::copy(from + k0, from + k1, v.data() + k0); });
  }
  else
  {
    for (int width = 1; width < chunks; width *= 2)
    {
      const int merges = chunks / (2 * width);
      parallelFor(merges, merges, [&](int, int64_t m0, int64_t m1) {
        for (int64_t m = m0; m < m1; ++m)
        {
          const int64_t first = 2 * width * m;
          std::inplace_merge(v.begin() + at(first), v.begin() + at(first + width),
            v.begin() + at(first + 2 * width), less);
        }
      });
    }
  }
}
}
