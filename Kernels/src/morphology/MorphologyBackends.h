// MorphologyBackends.h - the GPU path of the morphology operators.
#pragma once

#include "ElementOffsets.h"

namespace topovox
{
namespace morphology
{
#ifdef TOPOVOX_WITH_CUDA
// The minimum or maximum over the element at every voxel of `image` (host
// memory), into `out` (host, the image's type, x fastest). Throws
// std::runtime_error on a CUDA failure.
void greyGPU(const GridView& image, const ElementOffsets& e, bool minimum, const GreyOptions& o, unsigned char* out);
// `iterations` passes of erosion (invert: dilation by the reflected element
// the caller gives) from `start`, or until stable when < 1.
BinaryImage binaryGPU(const BinaryImage& start, const int64_t dims[3], const ElementOffsets& e, bool center,
  const uint8_t* mask, bool border, bool invert, int iterations);
#endif
}
}
