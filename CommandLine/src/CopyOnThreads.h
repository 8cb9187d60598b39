// CopyOnThreads.h - a large memcpy shared among threads: parts of 4 MiB
// taken in turn. Into fresh memory (a result image, a mapped output file)
// one thread also takes every page fault of the destination; the threads
// take them together.
#pragma once

#include <cstddef>

namespace topovox
{
namespace cli
{

// Copies `bytes` from `from` to `to` (not overlapping) on up to `threads`
// threads; a copy under two parts runs on the calling thread.
void copyOnThreads(void* to, const void* from, size_t bytes, int threads);

} // namespace cli
} // namespace topovox
