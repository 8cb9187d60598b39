// Batch.h - many images through one kernel: a training batch, a stack of
// slices, the blocks of a data set. The per-image kernels stay as they are;
// this decides who runs which image.
//
// On the CPU a batch of small images is faster one image per thread than
// each image on every thread (no per-image fork/join, no false sharing), so
// the images are shared among the threads; a batch smaller than the threads
// gives the spare threads to its images. On the GPU the images run one after
// the other, each with the device to itself.
#pragma once

#include "topovox/Device.h"

#include <cstdint>
#include <functional>

namespace topovox
{

// Calls work(k, threads) once for every image k in [0, count), with the
// number of CPU threads image k may use. `threads` 0: every core (or
// TOPOVOX_NUM_THREADS). `device` as the kernels take it: when it resolves to
// the GPU the images run in order on the calling thread, each told every
// thread. work returns false to stop the batch (images not started are
// skipped). The first exception a work throws is rethrown once every image
// in flight has finished. Returns the number of images run.
int64_t forEachImage(int64_t count, int threads, Device device, const std::function<bool(int64_t, int)>& work);

} // namespace topovox
