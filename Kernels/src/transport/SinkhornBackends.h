// SinkhornBackends.h - the GPU path of Sinkhorn.cpp.
#pragma once

#include "topovox/Sinkhorn.h"

namespace topovox
{
namespace transport
{
#ifdef TOPOVOX_WITH_CUDA
// The longest histograms the GPU path takes: its scalings live in a thread
// block's 48 KB of shared memory.
constexpr int64_t kMaxGpuLength = 1200;
bool sinkhornFitsGPU(int64_t d);

// Every pair on the GPU, one thread block each, all iterations on the
// device. Throws std::runtime_error on a CUDA failure or too long
// histograms (the caller runs the CPU path).
SinkhornResult sinkhornGPU(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& M,
  int64_t pairs, int64_t d, const SinkhornOptions& options);
#endif
}
}
