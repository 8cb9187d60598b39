// test_parallel.cpp - Parallel.h's parallelFor, which serves one call at a
// time from a pool of kept threads and starts threads of its own for the
// others: every index covered once, on the workers said; worker 0 the
// calling thread; a body's exception rethrown after all workers finished
// (and the pool usable afterwards); calls nested in a body and calls from
// several threads at once; parallelForDynamic, parallelSort and
// isSortedOnThreads on top; a child process made by fork() with a pool of
// its own.
#include "../src/common/Parallel.h"

#include "KernelCheck.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef __unix__
#include <sys/wait.h>
#include <unistd.h>
#endif

using namespace topovox;
using kernel_check::expect;

namespace
{
// parallelFor over n items on `threads`: each item counted once, ranges
// contiguous and in worker order, worker 0 on the calling thread.
bool coversOnce(int64_t n, int threads)
{
  std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
  std::vector<int64_t> begins(static_cast<size_t>(threads), -1);
  std::atomic<bool> zeroHere(false);
  const std::thread::id caller = std::this_thread::get_id();
  const int workers = parallelFor(n, threads, [&](int w, int64_t k0, int64_t k1) {
    begins[static_cast<size_t>(w)] = k0;
    if (w == 0)
      zeroHere = std::this_thread::get_id() == caller;
    for (int64_t k = k0; k < k1; ++k)
      seen[static_cast<size_t>(k)]++;
  });
  bool ok = workers == static_cast<int>(std::min<int64_t>(threads, n)) && zeroHere;
  for (const auto& s : seen)
    ok = ok && s == 1;
  for (int w = 1; w < workers; ++w)
    ok = ok && begins[static_cast<size_t>(w)] > begins[static_cast<size_t>(w - 1)];
  return ok;
}

void sequentialCalls()
{
  for (int64_t n : { 1, 2, 7, 1000, 100003 })
    for (int threads : { 1, 2, 3, 8, 16, 33 })
      expect(coversOnce(n, threads), "n " + std::to_string(n) + " threads " + std::to_string(threads));
  // Many calls in a row: the kept threads serve each once.
  bool ok = true;
  for (int r = 0; r < 2000; ++r)
    ok = ok && coversOnce(64, 8);
  expect(ok, "2000 calls in a row");
}

void exceptions()
{
  for (int thrower : { 0, 3 })
  {
    std::atomic<int> finished(0);
    std::string what;
    try
    {
      parallelFor(8, 8, [&](int w, int64_t, int64_t) {
        if (w == thrower)
          throw std::runtime_error("worker " + std::to_string(w));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        finished++;
      });
    }
    catch (const std::runtime_error& e)
    {
      what = e.what();
    }
    expect(what == "worker " + std::to_string(thrower) && finished == 7,
      "worker " + std::to_string(thrower) + " throws: rethrown after the others (" + what + ")");
    expect(coversOnce(100, 8), "a call after an exception");
  }
}

void nestedAndConcurrent()
{
  // Nested: each outer worker's range summed by an inner call.
  std::vector<int64_t> values(100000);
  std::iota(values.begin(), values.end(), 0);
  std::atomic<int64_t> total(0);
  parallelFor(4, 4, [&](int, int64_t o0, int64_t o1) {
    for (int64_t o = o0; o < o1; ++o)
    {
      std::atomic<int64_t> part(0);
      parallelFor(25000, 4, [&](int, int64_t k0, int64_t k1) {
        int64_t s = 0;
        for (int64_t k = k0; k < k1; ++k)
          s += values[static_cast<size_t>(o * 25000 + k)];
        part += s;
      });
      total += part;
    }
  });
  expect(total == int64_t(99999) * 100000 / 2, "nested calls: " + std::to_string(total.load()));
  // Eight threads calling at once, each many times: one is served by the
  // pool, the others start their own.
  std::atomic<int> bad(0);
  std::vector<std::thread> callers;
  for (int c = 0; c < 8; ++c)
    callers.emplace_back([&, c] {
      for (int r = 0; r < 100; ++r)
        if (!coversOnce(37 + c, 1 + (c + r) % 6))
          bad++;
    });
  for (auto& t : callers)
    t.join();
  expect(bad == 0, "8 threads calling at once: " + std::to_string(bad.load()) + " wrong calls");
}

void builtOnTop()
{
  std::vector<std::atomic<int>> seen(10007);
  parallelForDynamic(10007, 6, 13, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
      seen[static_cast<size_t>(k)]++;
  });
  bool once = true;
  for (const auto& s : seen)
    once = once && s == 1;
  expect(once, "parallelForDynamic covers every item once");
  std::mt19937_64 rng(3);
  std::vector<uint64_t> v(1 << 20);
  for (auto& x : v)
    x = rng();
  std::vector<uint64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  parallelSort(v, 8, std::less<uint64_t>());
  expect(v == sorted, "parallelSort equals std::sort");
  // Many equal keys (the merge path's ties), thread counts that are not
  // powers of two, and sizes that leave uneven chunks: sorted by key, and
  // every element once.
  struct Item
  {
    uint32_t key;
    uint32_t id;
  };
  for (const int threads : { 2, 3, 5, 16 })
    for (const size_t size : { size_t(40000), size_t(100003), size_t(1) << 19 })
    {
      std::vector<Item> items(size);
      for (size_t k = 0; k < size; ++k)
        items[k] = Item{ static_cast<uint32_t>(rng() % 97), static_cast<uint32_t>(k) };
      parallelSort(items, threads, [](const Item& x, const Item& y) { return x.key < y.key; });
      bool ordered = true;
      std::vector<char> seen(size, 0);
      for (size_t k = 0; k < size; ++k)
      {
        ordered = ordered && (k == 0 || items[k - 1].key <= items[k].key);
        seen[items[k].id]++;
      }
      expect(ordered && std::all_of(seen.begin(), seen.end(), [](char c) { return c == 1; }),
        "parallelSort with ties: sorted, a permutation (" + std::to_string(threads) + " threads, " +
          std::to_string(size) + " items)");
    }
  // appendParts: the parts after what `out` held, in order, as one
  // thread's concatenation gives them; the parts emptied.
  for (const int threads : { 1, 3, 8 })
  {
    std::vector<std::vector<int64_t>> parts(37);
    std::vector<int64_t> out = { -1, -2 }, serial = out;
    for (size_t k = 0; k < parts.size(); ++k)
      for (uint64_t m = rng() % 50; m > 0; --m)
        parts[k].push_back(static_cast<int64_t>(rng() % 1000));
    for (const auto& part : parts)
      serial.insert(serial.end(), part.begin(), part.end());
    appendParts(out, parts, threads);
    expect(out == serial && std::all_of(parts.begin(), parts.end(), [](const auto& p) { return p.empty(); }),
      "appendParts equals a serial concatenation (" + std::to_string(threads) + " threads)");
  }
  // Values that are not trivially copyable take the in-place merges.
  std::vector<std::string> words(70000);
  for (auto& w : words)
    w = std::to_string(rng() % 100000);
  std::vector<std::string> wordsSorted = words;
  std::sort(wordsSorted.begin(), wordsSorted.end());
  parallelSort(words, 4, std::less<std::string>());
  expect(words == wordsSorted, "parallelSort of strings equals std::sort");

  // scanChunks: a running sum of random shares, as one thread's.
  for (const int threads : { 1, 3, 8 })
    for (const int64_t size : { int64_t(0), int64_t(1000), int64_t(200003) })
    {
      std::vector<int64_t> share(static_cast<size_t>(size)), serial(static_cast<size_t>(size)), ours;
      int64_t sum = 0;
      for (size_t j = 0; j < share.size(); ++j)
      {
        share[j] = static_cast<int64_t>(rng() % 5);
        serial[j] = sum;
        sum += share[j];
      }
      int64_t sizedWith = -1;
      const int64_t total = scanChunks(
        size, threads,
        [&](int64_t j0, int64_t j1) { return std::accumulate(share.begin() + j0, share.begin() + j1, int64_t(0)); },
        [&](int64_t t) {
          sizedWith = t;
          ours.resize(static_cast<size_t>(size));
        },
        [&](int64_t j0, int64_t j1, int64_t at) {
          for (int64_t j = j0; j < j1; ++j)
          {
            ours[static_cast<size_t>(j)] = at;
            at += share[static_cast<size_t>(j)];
          }
        });
      expect(total == sum && sizedWith == sum && ours == serial,
        "scanChunks equals a serial exclusive scan (" + std::to_string(threads) + " threads, " +
          std::to_string(size) + " items)");
    }
  // positionsByKey: each list positionsWhere's for its key, keys out of
  // range in none (sizes that make one chunk and several).
  for (const int threads : { 1, 3, 8 })
    for (const int64_t size : { int64_t(0), int64_t(1000), int64_t(200003) })
    {
      std::vector<int> key(static_cast<size_t>(size));
      for (int& k : key)
        k = static_cast<int>(rng() % 7) - 1; // -1 .. 5: -1, 4 and 5 outside
      const auto lists = positionsByKey<4>(size, threads, [&](int64_t j) { return key[static_cast<size_t>(j)]; });
      bool same = true;
      for (int b = 0; b < 4; ++b)
        same = same &&
          lists[static_cast<size_t>(b)] ==
            positionsWhere(size, 1, [&](int64_t j) { return key[static_cast<size_t>(j)] == b; });
      expect(same, "positionsByKey equals positionsWhere per key (" + std::to_string(threads) + " threads, " +
          std::to_string(size) + " items)");
    }

  // populateOnThreads: the room past a vector's values made present (on
  // huge pages too: 12 MiB), the values before it kept as they were.
  for (const int threads : { 1, 3, 8 })
    for (const size_t held : { size_t(0), size_t(5), size_t(700001) })
    {
      std::vector<int64_t> v(held);
      for (size_t k = 0; k < held; ++k)
        v[k] = static_cast<int64_t>(k * 7 + 3);
      reserveOnHugePages(v, size_t(3) << 20);
      populateOnThreads(v, threads);
      bool kept = v.size() == held;
      for (size_t k = 0; k < held && kept; ++k)
        kept = v[k] == static_cast<int64_t>(k * 7 + 3);
      v.resize(v.capacity(), 1);
      expect(kept && v.back() == 1, "populateOnThreads keeps the values before the room (" +
          std::to_string(threads) + " threads, " + std::to_string(held) + " held)");
    }
  {
    std::vector<int64_t> full(10, 4);
    full.shrink_to_fit();
    populateOnThreads(full, 4); // no room: nothing to do
    expect(full == std::vector<int64_t>(10, 4), "populateOnThreads without room");
  }

  // isSortedOnThreads against std::is_sorted: sorted lists, and one
  // descent put anywhere, at the chunks' seams too (chunks of at least 2^15
  // items: 200,000 items make several).
  std::vector<int> ordered(200000);
  std::iota(ordered.begin(), ordered.end(), 0);
  for (const int threads : { 1, 3, 8 })
  {
    expect(isSortedOnThreads(ordered.data(), static_cast<int64_t>(ordered.size()), threads, std::less<int>()),
      "isSortedOnThreads: a sorted list (" + std::to_string(threads) + " threads)");
    expect(isSortedOnThreads(ordered.data(), 1, threads, std::less<int>()) &&
        isSortedOnThreads(ordered.data(), 0, threads, std::less<int>()),
      "isSortedOnThreads: one item, none");
    for (const size_t at : { size_t(1), size_t(32767), size_t(32768), size_t(65536), size_t(66666), size_t(199999) })
    {
      std::vector<int> v = ordered;
      std::swap(v[at - 1], v[at]);
      const bool expected = std::is_sorted(v.begin(), v.end());
      expect(isSortedOnThreads(v.data(), static_cast<int64_t>(v.size()), threads, std::less<int>()) == expected,
        "isSortedOnThreads: a descent at " + std::to_string(at) + " (" + std::to_string(threads) + " threads)");
    }
  }
}

void forkedChild()
{
#ifdef __unix__
  expect(coversOnce(1000, 8), "before fork");
  const pid_t child = fork();
  if (child == 0)
    _exit(coversOnce(1000, 8) && coversOnce(5000, 3) ? 0 : 1);
  int status = -1;
  waitpid(child, &status, 0);
  expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a forked child's calls");
  expect(coversOnce(1000, 8), "the parent's calls after the fork");
#endif
}
} // namespace

int main()
{
  sequentialCalls();
  exceptions();
  nestedAndConcurrent();
  builtOnTop();
  forkedChild();
  return kernel_check::finish();
}
