// Parallel.h - the CPU paths' one threading primitive, on std::thread.
#pragma once

#include <cstdint>
#include <functional>

namespace topovox
{
// Splits [0, n) into about `threads` contiguous ranges and runs
// body(worker, begin, end) for each on its own thread (worker in
// [0, threads)); worker 0 runs on the calling thread. Returns the number of workers used. Exceptions thrown by a
// body are rethrown in the caller after every worker has finished.
int parallelFor(int64_t n, int threads, const std::function<void(int, int64_t, int64_t)>& body);
}
