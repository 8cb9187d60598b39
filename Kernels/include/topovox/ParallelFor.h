// ParallelFor.h - the kernels' CPU threading primitive, for their callers
// too (the command line fills its tables of millions of rows with it).
#pragma once

#include <cstdint>
#include <functional>

namespace topovox
{
// Splits [0, n) into about `threads` contiguous ranges and runs
// body(worker, begin, end) for each on its own thread (worker in
// [0, threads)); worker 0 runs on the calling thread. Returns the number of
// workers used. Exceptions thrown by a body are rethrown in the caller
// after every worker has finished.
int parallelFor(int64_t n, int threads, const std::function<void(int, int64_t, int64_t)>& body);

// The same for work of uneven cost (traversals of very different lengths,
// clustered in [0, n)): the workers take ranges of `grain` items in turn
// from a shared counter, so that no one is left with a run of long items.
// body(worker, begin, end) is called once per range taken.
int parallelForDynamic(int64_t n, int threads, int64_t grain, const std::function<void(int, int64_t, int64_t)>& body);
} // namespace topovox
