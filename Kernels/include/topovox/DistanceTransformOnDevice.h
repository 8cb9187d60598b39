// DistanceTransformOnDevice.h - the exact Euclidean distance transform of
// DistanceTransform.h (distanceTransformEdt) on data that stays in GPU
// memory, for callers whose arrays already live there (cupy, torch).
//
// Same conventions and the same bits as the host call: foreground is
// nonzero (NaN included), float64 distances computed from the nearest
// background voxel as scipy computes them, scipy's answer for an image
// without background. `image` is a GridView in MemorySpace::Device (any
// scalar type, any positive strides); `distances` a GPU array of
// image.voxelCount() doubles, x fastest; `indices`, when not null, a GPU
// array of 3 * image.voxelCount() int32: the nearest background voxel's x
// for every voxel, then its y, then its z. Synchronous on the legacy default
// stream. Throws std::invalid_argument on bad arguments, std::runtime_error
// when this build has no CUDA or a CUDA call fails.
#pragma once

#include "topovox/Grid.h"

#include <cstdint>

namespace topovox
{

void distanceTransformEdtOnDevice(const GridView& image, const double sampling[3], double* distances, int32_t* indices);

} // namespace topovox
