#include "Parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace topovox
{
int parallelFor(int64_t n, int threads, const std::function<void(int, int64_t, int64_t)>& body)
{
  if (n <= 0)
    return 0;
  const int workers = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(threads, n)));
  if (workers == 1)
  {
    body(0, 0, n);
    return 1;
  }
  std::exception_ptr failure;
  std::mutex failureLock;
  std::vector<std::thread> pool;
  pool.reserve(workers);
  auto run = [&](int w) {
    try
    {
      body(w, n * w / workers, n * (w + 1) / workers);
    }
    catch (...)
    {
      std::lock_guard<std::mutex> hold(failureLock);
      if (!failure)
        failure = std::current_exception();
    }
  };
  for (int w = 1; w < workers; ++w)
    pool.emplace_back(run, w);
  // Worker 0 is the calling thread: progress callbacks, which only worker 0
  // makes, then reach VTK/ParaView from the thread that called the kernel.
  run(0);
  for (auto& t : pool)
    t.join();
  if (failure)
    std::rethrow_exception(failure);
  return workers;
}

int parallelForDynamic(int64_t n, int threads, int64_t grain, const std::function<void(int, int64_t, int64_t)>& body)
{
  if (n <= 0)
    return 0;
  grain = std::max<int64_t>(1, grain);
  std::atomic<int64_t> next{ 0 };
  const int64_t ranges = (n + grain - 1) / grain;
  return parallelFor(std::min<int64_t>(ranges, std::max(1, threads)), threads, [&](int worker, int64_t, int64_t) {
    for (int64_t at; (at = next.fetch_add(grain, std::memory_order_relaxed)) < n;)
      body(worker, at, std::min(n, at + grain));
  });
}
}
