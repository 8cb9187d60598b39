// SinkhornBackends.h - the GPU path of Sinkhorn.cpp.
#pragma once

#include "topovox/Sinkhorn.h"

namespace topovox
{
namespace transport
{
#ifdef TOPOVOX_WITH_CUDA
// Every pair on the GPU at once, all iterations on the device
// (SinkhornCUDA.cu). Throws std::runtime_error on a CUDA failure or when the
// device's free memory cannot hold the cost matrices and scalings (the
// caller runs the CPU path); std::invalid_argument when M has a value that
// is not finite (found on the device: the caller does not scan M).
SinkhornResult sinkhornGPU(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& M,
  int64_t pairs, int64_t d, const SinkhornOptions& options);
#endif
}
}
