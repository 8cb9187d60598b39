// Parallel.h - the CPU paths' one threading primitive, on std::thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace topovox
{
// Splits [0, n) into about `threads` contiguous ranges and runs
// body(worker, begin, end) for each on its own thread (worker in
// [0, threads)); worker 0 runs on the calling thread. Returns the number of workers used. Exceptions thrown by a
// body are rethrown in the caller after every worker has finished.
int parallelFor(int64_t n, int threads, const std::function<void(int, int64_t, int64_t)>& body);

// The same for work of uneven cost (traversals of very different lengths,
// clustered in [0, n)): the workers take ranges of `grain` items in turn
// from a shared counter, so that no one is left with a run of long items.
// body(worker, begin, end) is called once per range taken.
int parallelForDynamic(int64_t n, int threads, int64_t grain, const std::function<void(int, int64_t, int64_t)>& body);

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

// std::sort on `threads` threads: contiguous chunks sorted in parallel, then
// merged pairwise (std::inplace_merge), the merges of a round in parallel.
// The result is the same as std::sort's for a strict weak order with no
// equal elements (ties may come out in another order).
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
  auto bound = [&](int64_t k) { return v.begin() + n * k / chunks; };
  parallelFor(chunks, chunks, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
      std::sort(bound(k), bound(k + 1), less);
  });
  for (int width = 1; width < chunks; width *= 2)
  {
    const int merges = chunks / (2 * width);
    parallelFor(merges, merges, [&](int, int64_t m0, int64_t m1) {
      for (int64_t m = m0; m < m1; ++m)
      {
        const int64_t first = 2 * width * m;
        std::inplace_merge(bound(first), bound(first + width), bound(first + 2 * width), less);
      }
    });
  }
}
}
