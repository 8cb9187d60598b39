#include "Parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#ifdef __unix__
#include <pthread.h>
#endif

namespace topovox
{
namespace
{
// Threads kept between calls. Starting and joining a thread costs about
// 30 us on the H200 machine's host (16 threads: 0.52 ms a call, measured),
// and a persistence diagram makes about twenty calls on all threads, a
// solve of 100 Sinkhorn iterations one: spawned per call, the threads were
// a tenth of the host's part of either. The pool serves one call at a
// time: a call made while it is busy (from another thread, or nested in a
// body) starts threads of its own, as every call did before.
class WorkerPool
{
public:
  // Runs run(1) .. run(workers - 1) on the pool's threads and run(0) on the
  // caller's, returning when all are done; false (nothing run) when the
  // pool is busy or the caller is one of its threads.
  bool tryRun(int workers, const std::function<void(int)>& run)
  {
    bool idle = false;
    if (insidePool() || !busy_.compare_exchange_strong(idle, true))
      return false;
    {
      std::lock_guard<std::mutex> hold(lock_);
      try
      {
        while (static_cast<int>(threads_.size()) < workers - 1)
        {
          const int index = static_cast<int>(threads_.size()) + 1;
          threads_.emplace_back([this, index] { serve(index); });
        }
      }
      catch (...) // no more threads to be had: the caller's own attempt reports it
      {
        busy_ = false;
        return false;
      }
      job_ = &run;
      jobWorkers_ = workers;
      remaining_ = workers - 1;
      ++generation_;
    }
    wake_.notify_all();
    run(0);
    std::unique_lock<std::mutex> hold(lock_);
    done_.wait(hold, [this] { return remaining_ == 0; });
    job_ = nullptr;
    busy_ = false;
    return true;
  }

private:
  static bool& insidePool()
  {
    static thread_local bool inside = false;
    return inside;
  }
  void serve(int index)
  {
    insidePool() = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> hold(lock_);
    for (;;)
    {
      wake_.wait(hold, [&] { return generation_ != seen; });
      seen = generation_;
      if (index >= jobWorkers_)
        continue;
      const std::function<void(int)>* job = job_;
      hold.unlock();
      (*job)(index); // run() catches what a body throws
      hold.lock();
      if (--remaining_ == 0)
        done_.notify_one();
    }
  }

  std::atomic<bool> busy_{ false }; // a call is being served
  std::mutex lock_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* job_ = nullptr;
  int jobWorkers_ = 0, remaining_ = 0;
  uint64_t generation_ = 0;
};

// The process's pool, never destroyed (its threads wait for work until the
// process ends; the hosts of this library, ParaView's plugin loader and
// Python, never unload it). A child made by fork() has none of its
// parent's threads: it starts a pool of its own (the parent's, with a lock
// perhaps held at the fork, is left alone).
WorkerPool*& processPool()
{
  static WorkerPool* pool = [] {
#ifdef __unix__
    pthread_atfork(nullptr, nullptr, [] { processPool() = new WorkerPool; });
#endif
    return new WorkerPool;
  }();
  return pool;
}
} // namespace

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
  const std::function<void(int)> run = [&](int w) {
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
  // Worker 0 is the calling thread: progress callbacks, which only worker 0
  // makes, then reach VTK/ParaView from the thread that called the kernel.
  if (!processPool()->tryRun(workers, run))
  {
    std::vector<std::thread> pool;
    pool.reserve(workers);
    for (int w = 1; w < workers; ++w)
      pool.emplace_back(run, w);
    run(0);
    for (auto& t : pool)
      t.join();
  }
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
