// HostCopy.h - copies of hundreds of megabytes between host and device
// memory at the bus's speed. A plain cudaMemcpy from or into pageable
// memory stages through the driver's small pinned buffer on one thread (and
// takes the page faults of fresh host memory): 1.2 GB/s measured on an H200
// machine for the 400 MB gradient of a 256^3 volume. Here the DMA empties or
// fills two pinned chunks in turn while all CPU threads fill or empty the
// other one (32 MB chunks from 64 MB on, 4 MB ones from 8 MB); copies
// below 8 MB go through cudaMemcpy (device to host with their pages faulted
// in by the threads first).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace topovox
{
namespace cuda
{
// Copies `bytes` from device memory to host memory, in order after the work
// already queued on the legacy default stream. `threads`: CPU threads for
// the host side. Throws std::runtime_error on any CUDA failure.
void copyToHost(void* host, const void* device, size_t bytes, int threads);

// Copies `bytes` from host memory to device memory. Work queued on the
// legacy default stream after the call runs after the copy; the host memory
// may be freed once the call returns. Throws std::runtime_error on any CUDA
// failure.
void copyToDevice(void* device, const void* host, size_t bytes, int threads);

// A pinned host buffer of at least `bytes` for the calling thread, kept for
// its later calls and grown when too small, for inputs of a few megabytes
// that a solver uploads at every call (a copy from pinned memory runs at
// the bus's speed and does not block the host; from pageable memory the
// driver stages it on one thread: 0.6 to 1.2 ms for 8 MB measured on an
// H200 machine, against 0.19 ms). The first call pays the pinning. The
// caller makes sure that no copy of its earlier calls still reads the
// buffer before writing to it. Throws std::runtime_error on CUDA failure.
void* pinnedScratch(size_t bytes);

// Copies `bytes` from pageable host memory to device memory through
// `pinned` (as many bytes, e.g. pinnedScratch's), queued on `stream`: a few
// threads copy a slice each and queue its upload at once, so that the bus
// carries the first slices while the others are copied. For inputs of a few
// megabytes on a solver's own stream (copyToDevice's chunks are for
// hundreds, on the legacy stream). `pinned` may be reused once the stream
// has run the copies. Measured on the H200 machine for 8 MB: from pageable
// memory 0.71 ms; into pinned memory on one thread 0.73 ms, then 0.16 ms of
// DMA; four threads with an upload a slice 0.52 ms, sixteen 0.91 ms
// (threads started for the call, 30 us each there; the copy itself gains
// little past four). With the threads kept (Parallel.cpp), 4, 8 and 16
// slices measured the same in a whole dense Sinkhorn call (bench/README,
// twenty-second session). Nor does queueing a slice's upload in parts as
// they are copied gain (thirty-third session, 30 alternating rounds, 8 MB:
// whole slices 0.44 ms median, parts of 1 MB 0.42, 512 KB 0.47, 256 KB
// 0.54, 128 KB 0.70; a plain cudaMemcpyAsync from pageable memory 0.69):
// each upload queued costs the host more than the overlap saves. Throws
// std::runtime_error on CUDA failure.
void copyToDeviceThrough(
  void* pinned, void* device, const void* host, size_t bytes, int threads, cudaStream_t stream);
}
}
