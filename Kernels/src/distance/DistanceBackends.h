// DistanceBackends.h - the GPU path of the distance transforms.
#pragma once

#include "topovox/DistanceTransform.h"

namespace topovox
{
namespace distance
{
#ifdef TOPOVOX_WITH_CUDA
// The exact Euclidean transform of the foreground `fg` (host, one byte per
// voxel, x fastest, at least one background voxel) into out.distances and,
// when asked, out.indices. Throws std::runtime_error on a CUDA failure.
void edtGPU(const uint8_t* fg, const int64_t dims[3], const double sampling[3], bool withIndices, DistanceTransform& out);
#endif
}
}
