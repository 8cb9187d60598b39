// HostCopy.h - device-to-host copies of hundreds of megabytes at the bus's
// speed. A plain cudaMemcpy into pageable memory stages through the
// driver's small pinned buffer and takes the page faults of fresh host
// memory on one thread: 1.2 GB/s measured on an H200 machine for the 400 MB
// gradient of a 256^3 volume. Here the DMA fills two pinned chunks in turn
// while all CPU threads copy the other one out (and fault its pages in);
// smaller copies have their pages faulted in by the threads first.
#pragma once

#include <cstddef>

namespace topovox
{
namespace cuda
{
// Copies `bytes` from device memory to host memory, in order after the work
// already queued on the legacy default stream. `threads`: CPU threads for
// the host side. Throws std::runtime_error on any CUDA failure.
void copyToHost(void* host, const void* device, size_t bytes, int threads);
}
}
